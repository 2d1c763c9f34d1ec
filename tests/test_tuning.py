"""The tuning DB at run time (rlscan/tuning.py) and the tuner's CPU-side logic (tune/).

Everything here runs on a CPU: lookups ask about a GPU by name (``which_config(gpu=...)``) or
pretend the CPU is one (``_device_slug`` patched). The real CUDA-graph timing is covered by the
``gpu``-marked smoke test at the end.
"""
import itertools
import json
import multiprocessing
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

import rlscan
from rlscan import _problem as P
from rlscan import tuning
from rlscan.kernels import configs as C
from rlscan.kernels.heuristic import heuristic_config
from rlscan.kernels.launch import force_config
from rlscan.tune import db, grid, sweep
from rlscan.tune.workers import Workers, proxy

GPU = "NVIDIA H200"
SLUG = "nvidia-h200"
W = tuning.RLScanTuningWarning


def cfg(bn=16, bt=128, warps=4, stages=1):
    return {"strategy": "row_block", "BLOCK_N": bn, "BLOCK_T": bt, "num_warps": warps,
            "num_stages": stages}


def entry(N, T, config, dtype="float32", layout="time_last"):
    return {"dtype": dtype, "layout": layout, "rows": list(tuning.bucket(N)),
            "steps": list(tuning.bucket(T)), "config": config, "median_us": 1.0}


def first_window(*configs):
    """bounded_walk pairs of ``configs`` whose walks may reach the first window."""
    return tuple((c, C.LOOKBACK_FIRST_WINDOW) for c in configs)


def doc(kernels, name=GPU, source_hash=None, schema=tuning.SCHEMA):
    h = source_hash or tuning.kernel_source_hash()
    return {"schema": schema, "device": {"name": name, "capability": [9, 0]},
            "software": {"torch": "x", "triton": "y"},
            "kernels": {k: {"source_hash": h, "entries": e} for k, e in kernels.items()}}


def write(path: Path, document) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))
    return path


def ask(estimator="gae", N=4096, T=128, time_major=False, dtype=torch.float32, **coefficients):
    x = torch.empty(T, N, dtype=dtype, device="meta").t() if time_major else \
        torch.empty(N, T, dtype=dtype, device="meta")
    return rlscan.which_config(estimator, x, gpu=GPU, **coefficients)


def snapshot(path: Path):
    st = path.stat()
    return (path.read_bytes() if path.is_file() else None), st.st_mtime_ns, st.st_mode


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    """Empty shipped and overlay directories; the index reloaded from them around each test."""
    shipped, overlay = tmp_path / "shipped", tmp_path / "overlay"
    shipped.mkdir()
    overlay.mkdir()
    monkeypatch.setenv("RLSCAN_TUNING_DIR", str(overlay))

    def reload():
        tuning.load(shipped=shipped, overlay=overlay)
    yield shipped, overlay, reload
    monkeypatch.undo()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tuning.load()


def load_warnings(reload):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        reload()
    return [w for w in got if issubclass(w.category, W)]


# --------------------------------------------------------------------------- buckets and keys
def test_buckets_partition_every_positive_integer():
    edges = [1, 2, 3, 4, 7, 8, 9, 100, 4095, 4096, 4097, 2**20 - 1, 2**20, 2**31 + 5, 2**62]
    for n in list(range(1, 5000)) + edges:
        lo, hi = tuning.bucket(n)
        assert lo <= n <= hi and lo & (lo - 1) == 0 and hi == 2 * lo - 1
        assert tuning.bucket(hi + 1)[0] == hi + 1          # the next bucket starts right after
        assert tuning.bucket_index(n) == lo.bit_length() - 1
    with pytest.raises(ValueError):
        tuning.bucket(0)


def test_gpu_slug():
    assert tuning.gpu_slug("NVIDIA H200") == "nvidia-h200"
    assert tuning.gpu_slug("  NVIDIA H100 80GB HBM3 ") == "nvidia-h100-80gb-hbm3"
    assert tuning.gpu_slug("NVIDIA GeForce RTX 4090 (x)") == "nvidia-geforce-rtx-4090-x"


def test_entries_must_be_exact_power_of_two_buckets():
    good = entry(5000, 100, cfg())
    assert tuning.entry_key("gae", good) == ("gae", "float32", "time_last", 12, 6)
    for bad in ([4096, 8192], [4000, 8191], [0, 0], [3, 5], "4096", [4096.0, 8191.0],
                [True, True]):
        with pytest.raises(ValueError):
            tuning.entry_key("gae", dict(good, rows=bad))
    with pytest.raises(ValueError):
        tuning.entry_key("gae", dict(good, layout="diagonal"))


# --------------------------------------------------------------------------- lookup
def test_lookup_from_shipped_db(dirs):
    shipped, _, reload = dirs
    path = write(shipped / f"{SLUG}.json", doc({"gae": [
        entry(4096, 128, cfg(8, 128, 2)),
        entry(4096, 128, cfg(64, 16, 8, 3), layout="time_major"),
        entry(4096, 128, cfg(32, 128), dtype="bfloat16")]}))
    assert load_warnings(reload) == []
    got = ask(N=5000, T=200)                  # same buckets as 4096 x 128
    assert got.config == cfg(8, 128, 2) and got.source == f"db:{path}"
    assert (got.gpu, got.rows, got.steps, got.layout) == (SLUG, (4096, 8191), (128, 255),
                                                          "time_last")
    assert ask(time_major=True).config == cfg(64, 16, 8, 3)
    assert ask(dtype=torch.bfloat16).config == cfg(32, 128)
    other = ask(N=8192)                        # next rows bucket: not tuned
    assert other.source == "heuristic"
    assert other.config == dict(cfg(), **heuristic_config(8192, 128))
    assert ask(N=8192, time_major=True).config == \
        dict(cfg(), **heuristic_config(8192, 128, time_major=True))
    assert ask("vtrace").source == "heuristic"


def test_which_config_reports_a_long_lookback_as_the_chunked_spans_that_run(dirs):
    """A DB look-back entry runs as look-back up to configs.LOOKBACK_MAX_SPANS spans a row and
    as chunked spans of one chunk beyond (launch()); which_config says what runs."""
    shipped, _, reload = dirs
    lookback = {"strategy": "lookback", "BLOCK_N": 1, "BLOCK_T": 256, "num_warps": 1,
                "num_stages": 1, "CHUNKS_PER_SPAN": 1}
    write(shipped / f"{SLUG}.json", doc({"gae": [entry(32, 65536, lookback),
                                                 entry(1, 1 << 20, lookback)]}))
    assert load_warnings(reload) == []
    assert ask(N=32, T=65536).config == lookback                            # 256 spans
    assert ask(N=32, T=65537).config == dict(lookback, strategy="chunked")  # 257 spans
    long = ask(N=1, T=1 << 20)
    assert long.config == dict(lookback, strategy="chunked") and long.source.startswith("db:")
    assert C.within_lookback_limit(cfg(1, 256), 1 << 20) == cfg(1, 256)     # others untouched


def test_odd_time_last_rows_scan_look_back_spans_in_one_level_uncapped(dirs, cpu_is_h200,
                                                                      monkeypatch):
    """A DB's two-level look-back tile (any GROUP or register cap) on time-last rows whose
    length or an input's row stride is odd runs in one level without the cap
    (configs.for_odd_rows): launched so, reported so by which_config. Aligned rows and forced
    configs keep the two levels and the cap; chunked spans keep their two levels and lose only
    the cap, uncapped ones are returned as they are."""
    from rlscan.kernels import launch as L
    from rlscan.kernels.launch import force_config
    shipped, _, reload = dirs
    two_level = {"strategy": "lookback", "BLOCK_N": 1, "BLOCK_T": 256, "num_warps": 1,
                 "num_stages": 1, "CHUNKS_PER_SPAN": 1, "TWO_LEVEL": True, "maxnreg": 64}
    one_level = {k: v for k, v in two_level.items() if k not in ("TWO_LEVEL", "maxnreg")}
    write(shipped / f"{SLUG}.json", doc({"gae": [entry(8, 16384, two_level)]}))
    reload()
    launched = []
    monkeypatch.setattr(L, "_run", lambda kernel, grid_, args, objs, consts, options, spec,
                        names=L._CONSTEXPRS: launched.append((dict(zip(names, consts)),
                                                             options[2])))
    monkeypatch.setattr(L, "_INTERPRETED", True)
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")

    def run(T, pad=0):
        """(TWO_LEVEL, maxnreg) of GAE's scan on 8 rows of T steps sliced from T + pad."""
        r, v = (torch.zeros(8, T + pad)[:, :T] for _ in range(2))
        launched.clear()
        rlscan.gae(r, v, torch.zeros(8, T, dtype=torch.bool), gamma=0.99, lmbda=0.95)
        scans = [(c["TWO_LEVEL"], cap) for c, cap in launched if "TWO_LEVEL" in c]
        assert scans, launched
        return scans[0]

    assert run(16384) == (True, 64)                      # aligned: as tuned
    assert run(16385) == (False, None)                   # odd T
    assert run(16384, pad=1) == (False, None)            # rows of T + 1
    assert rlscan.which_config("gae", torch.zeros(8, 16385), gpu=GPU).config == one_level
    assert rlscan.which_config("gae", torch.zeros(8, 16384), gpu=GPU).config == two_level
    with force_config(**two_level):
        assert run(16385) == (True, 64)
    spans = dict(two_level, strategy="chunked", CHUNKS_PER_SPAN=2)
    uncapped = {k: v for k, v in spans.items() if k != "maxnreg"}
    assert C.for_odd_rows(spans, 8, 16385) == uncapped
    assert C.for_odd_rows(uncapped, 8, 16385) is uncapped
    assert C.for_odd_rows(dict(two_level, GROUP=8), 8, 16385) == one_level


def test_odd_time_last_rows_run_1x512_where_their_two_level_tile_loses(dirs, cpu_is_h200,
                                                                      monkeypatch):
    """Time-last rows whose length or any input's row stride is odd (x[:, :T] of rows of T + 1)
    run 1x512/w4 where the DB or the heuristic names the two-level tile split over 4 warps (any
    GROUP or register cap), a two-level tile of 1024-step chunks, or any two-level tile from
    1024 rows x 1024 steps: the launcher swaps it, seeing every input's stride, and
    which_config reports it from x's. Even lengths and strides, one row sliced from a longer
    one, time-major buffers, other tiles and forced configs keep their config."""
    from rlscan.kernels import launch as L
    shipped, _, reload = dirs
    split4 = dict(cfg(4, 256, 4), TWO_LEVEL=True, SPLIT=4)
    capped = dict(split4, GROUP=8, maxnreg=64)
    split8 = dict(cfg(8, 128, 8), TWO_LEVEL=True, SPLIT=8)
    write(shipped / f"{SLUG}.json", doc({"gae": [entry(1024, 4096, split4),
                                                 entry(1024, 4096, capped, dtype="bfloat16"),
                                                 entry(256, 4096, split8),
                                                 entry(1, 4096, split4),
                                                 entry(1024, 8192, dict(cfg(1, 1024, 1),
                                                                        TWO_LEVEL=True, GROUP=8),
                                                       dtype="bfloat16"),
                                                 entry(1024, 4096, split4, layout="time_major")]}))
    reload()
    launched = []
    monkeypatch.setattr(L, "_run", lambda kernel, grid_, args, objs, consts, options, spec,
                        names=L._CONSTEXPRS: launched.append(dict(zip(names, consts))))
    monkeypatch.setattr(L, "_INTERPRETED", True)
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")          # CPU tensors take the kernel path

    def tile(N, T, dtype=torch.float32, wider=(), time_major=False):
        """(BLOCK_N, BLOCK_T, SPLIT) launched for GAE on [N, T] rows; ``wider``: the inputs
        sliced from rows of T + 1."""
        x = {k: torch.zeros(N, T + (k in wider), dtype=dtype)[:, :T] for k in ("r", "v")}
        flags = torch.zeros(N, T, dtype=torch.bool)
        if time_major:
            x, flags = {k: v.t().contiguous() for k, v in x.items()}, flags.t().contiguous()
        launched.clear()
        rlscan.gae(x["r"], x["v"], flags, gamma=0.99, lmbda=0.95, time_dim=0 if time_major else -1)
        assert ask(N=N, T=T, dtype=dtype, time_major=time_major).config is not None
        return launched[-1]["BLOCK_N"], launched[-1]["BLOCK_T"], launched[-1]["SPLIT"]

    wide, split = (1, 512, 1), (4, 256, 4)
    for dtype in (torch.float32, torch.bfloat16):
        for T, want in ((4097, wide), (8191, wide), (4096, split), (8190, split)):
            assert tile(1500, T, dtype) == want, (dtype, T)
            chosen = ask(N=1500, T=T, dtype=dtype).config
            assert chosen == (dict(cfg(1, 512, 4)) if want == wide else
                              split4 if dtype == torch.float32 else capped), (dtype, T)
        for wider in (("r",), ("v",), ("r", "v")):      # an odd stride at an even length
            assert tile(1500, 4096, dtype, wider) == wide, (dtype, wider)
        strided = torch.zeros(1500, 4097, dtype=dtype)[:, :4096]
        assert rlscan.which_config("gae", strided, gpu=GPU).config == cfg(1, 512, 4)
    # a two-level tile of 1024-step chunks likewise (at an even stride it stays)
    assert tile(1024, 8192, torch.bfloat16, wider=("v",)) == wide
    assert tile(1024, 8192, torch.bfloat16) == (1, 1024, 1)
    # one row's stride scales no address: a row sliced from a longer one keeps its tile
    assert tile(1, 4096, wider=("r", "v")) == split
    assert rlscan.which_config("gae", torch.zeros(1, 4097)[:, :4096], gpu=GPU).config == split4
    assert tile(300, 4097) == (8, 128, 8)                       # the 8-warp split tile stays
    assert tile(300, 4096, wider=("v",)) == (8, 128, 8)         # below 1024 rows
    assert tile(1500, 4097, time_major=True)[:2] == (4, 256)    # so do time-major buffers
    with force_config(**split4):
        assert tile(1500, 4097) == split                        # and forced configs
    assert C.for_odd_rows(split4, 300, 2049) == cfg(1, 512, 4)
    assert C.for_odd_rows(split8, 300, 2049) is split8
    assert C.for_odd_rows(split8, 1024, 1025) == cfg(1, 512, 4)   # from 1024 rows x 1024 steps
    assert C.for_odd_rows(split8, 1024, 1023) is split8
    assert C.for_odd_rows(split8, 1023, 4097) is split8
    wide_chunks = dict(cfg(1, 1024, 1), TWO_LEVEL=True, GROUP=8)   # (they spill there)
    assert C.for_odd_rows(wide_chunks, 8, 8193) == cfg(1, 512, 4)
    plain = cfg(1, 1024, 1)
    assert C.for_odd_rows(plain, 4096, 4097) is plain
    spans = dict(split4, strategy="chunked", CHUNKS_PER_SPAN=2)
    assert C.for_odd_rows(spans, 4096, 4097) is spans


def test_which_config_reports_a_bounded_walk_where_the_coefficients_bound_it(dirs, cpu_is_h200):
    """An entry's bounded_walk look-back config runs (and which_config says so) where the call's
    scalar coefficients bound every walk back to the first window; the estimator's own defaults
    count when none are given; per-step (tensor) coefficients never bound it."""
    shipped, _, reload = dirs
    chunked = validate_label("chunked/1x256/w1/s1/c2/2l")
    walk = validate_label("lookback/1x512/w1/s1/c1/2l")
    e = dict(entry(1, 1 << 20, chunked), bounded_walk=[{"config": walk, "median_us": 9.0}])
    write(shipped / f"{SLUG}.json", doc({"gae": [e], "discounted_returns": [e]}))
    assert load_warnings(reload) == []
    assert ask(N=1, T=1 << 20).config == walk                   # GAE defaults: 0.99 · 0.95
    assert ask(N=1, T=1 << 20, gamma=1.0, lmbda=0.95).config == walk
    assert ask(N=1, T=1 << 20, gamma=1.0, lmbda=1.0).config == chunked
    assert ask(N=1, T=1 << 20, gamma=torch.tensor(0.5)).config == chunked   # per step
    assert ask("discounted_returns", N=1, T=1 << 20).config == chunked      # γ = 0.99
    assert ask("discounted_returns", N=1, T=1 << 20, gamma=0.95).config == walk
    with pytest.raises(TypeError, match="gamma must be a float or a tensor"):
        ask(N=1, T=1 << 20, gamma="0.9")
    pb = _problem(1, 1 << 20)
    assert tuning.select_config(pb._replace(gamma=0.99, lmbda=0.95)) == walk
    assert tuning.select_config(pb._replace(gamma=1.0, lmbda=1.0)) == chunked
    g = torch.zeros(1, 1)
    assert tuning.select_config(pb._replace(gamma=0.0, g=g, lmbda=0.5)) == chunked


def test_a_malformed_bounded_walk_skips_its_entry(dirs):
    """bounded_walk holds look-back configs only; anything else skips the entry, with a warning
    naming it."""
    shipped, _, reload = dirs
    chunked = validate_label("chunked/1x256/w1/s1/c2/2l")
    bad = [dict(entry(1, 1 << 20, chunked), bounded_walk=[{"config": chunked}]),
           dict(entry(1, 1 << 19, chunked), bounded_walk={"config": chunked}),
           dict(entry(1, 1 << 18, chunked), bounded_walk=[{"config": {"strategy": "lookback"}}])]
    write(shipped / f"{SLUG}.json", doc({"gae": bad + [entry(4096, 128, cfg(8))]}))
    (w,) = load_warnings(reload)
    assert "3 malformed entries" in str(w.message)
    assert "expected look-back configs only" in str(w.message)
    assert ask().config == cfg(8)


def test_overlay_beats_shipped_entry_by_entry(dirs):
    shipped, overlay, reload = dirs
    write(shipped / f"{SLUG}.json", doc({"gae": [entry(4096, 128, cfg(8)),
                                                 entry(64, 512, cfg(1, 512))]}))
    over = write(overlay / f"{SLUG}.json", doc({"gae": [entry(4096, 128, cfg(32))]}))
    reload()
    assert ask().config == cfg(32) and ask().source == f"overlay:{over}"
    assert ask(N=64, T=512).config == cfg(1, 512)
    assert ask(N=64, T=512).source.startswith("db:")


def test_overlay_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RLSCAN_TUNING_DIR", str(tmp_path / "mine"))
    assert tuning.user_dir() == tmp_path / "mine"
    monkeypatch.delenv("RLSCAN_TUNING_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    if sys.platform.startswith("linux"):
        assert tuning.user_dir() == tmp_path / "cache" / "rlscan" / "tuning"


def test_which_config_sources(dirs):
    *_, reload = dirs
    reload()
    x = torch.zeros(4, 10)
    assert rlscan.which_config("gae", x).source == "torch"          # CPU: no kernel
    assert rlscan.which_config("gae", x).config is None
    with force_config(BLOCK_N=2, BLOCK_T=16, num_warps=1):
        got = rlscan.which_config("gae", x)
    assert got.source == "forced" and got.config["BLOCK_N"] == 2
    assert rlscan.which_config("gae", torch.zeros(0, 10)).source == "empty"
    with pytest.raises(ValueError, match="estimator"):
        rlscan.which_config("gea", x)
    # the layout is the one the kernel sees after execute() flattens the batch axes:
    # [T, B, E] collapses to a strided view (time-major); [B, T, E] must be copied (time-last)
    got = rlscan.which_config("gae", torch.empty(100, 3, 5, device="meta"), time_dim=0, gpu=GPU)
    assert got.rows == (8, 15) and got.steps == (64, 127) and got.layout == "time_major"
    got = rlscan.which_config("gae", torch.empty(3, 100, 5, device="meta"), time_dim=1, gpu=GPU)
    assert got.layout == "time_last"


def _problem(N, T, est=P.GAE, dtype=torch.float32, time_major=False):
    x = torch.zeros(T, N, dtype=dtype).t() if time_major else torch.zeros(N, T, dtype=dtype)
    return P.Problem(est=est, reverse=True, N=N, T=T, p0=x)


@pytest.fixture
def cpu_is_h200(monkeypatch):
    """select_config's lookup as if CPU tensors lived on an H200."""
    monkeypatch.setattr(tuning, "_device_slug", lambda device: SLUG)


def test_select_config_hot_path_and_one_warning(dirs, cpu_is_h200, monkeypatch):
    shipped, _, reload = dirs
    write(shipped / f"{SLUG}.json", doc({"gae": [entry(4096, 128, cfg(8, 128, 2))]}))
    reload()
    calls = []
    real = tuning._resolve
    monkeypatch.setattr(tuning, "_resolve", lambda pb, key: calls.append(key) or real(pb, key))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert tuning.select_config(_problem(4096, 128)) == cfg(8, 128, 2)
        assert tuning.select_config(_problem(5000, 255)) == cfg(8, 128, 2)
        # no entry: the heuristic for the exact shape, whatever shape of the bucket comes
        assert tuning.select_config(_problem(300, 100)) == heuristic_config(300, 100)
        assert tuning.select_config(_problem(257, 65)) == heuristic_config(257, 65)
        assert tuning.select_config(_problem(4096, 128, time_major=True)) == \
            heuristic_config(4096, 128, time_major=True)
        tuning.select_config(_problem(4096, 128, est=P.VTRACE))
        tuning.select_config(_problem(10, 10, est=P.VTRACE))
    assert len(calls) == 5                     # resolved once per bucket, then a dict hit
    msgs = [str(w.message) for w in got if issubclass(w.category, W)]
    assert len(msgs) == 2                      # once per (kernel, GPU): gae, vtrace
    assert "gae on nvidia-h200" in msgs[0] and "heuristic" in msgs[0]
    assert "vtrace on nvidia-h200" in msgs[1] and "no tuning DB" not in msgs[1]


def test_untuned_buckets_within_a_32nd_of_the_next_run_its_entry(dirs, cpu_is_h200):
    """A bucket with no entry runs the entry of the bucket above where N or T is within 1/32 of
    its first value (T - 1 tokens of a 1024-token sequence run the 1024 entry): both above
    first, then steps above, then rows above; its own bucket's entry (or a sibling's) comes
    first, farther shapes take the heuristic and warn. select_config launches what
    which_config reports, and each call decides by its own shape, not its bucket's first."""
    shipped, _, reload = dirs
    both, steps_up, rows_up = cfg(8, 128, 2), cfg(4, 256, 4), cfg(2, 64, 2)
    own = cfg(1, 32, 1)
    write(shipped / f"{SLUG}.json", doc({"gae": [
        entry(4096, 128, both), entry(2048, 128, steps_up), entry(4096, 64, rows_up),
        entry(1024, 8192, steps_up), entry(512, 4096, own)]}))
    reload()

    def check(N, T, config, rows=None, steps=None):
        got = ask(N=N, T=T)
        assert got.config == config, (N, T, got)
        if rows is not None:
            assert (got.rows, got.steps) == (rows, steps) and got.source.startswith("db:")
        launched = tuning.select_config(_problem(N, T))   # the heuristic's: defaults unsaid
        assert {"strategy": "row_block", "num_warps": 4, "num_stages": 1, **launched} == config
    check(4096, 128, both, (4096, 8191), (128, 255))              # its own
    check(4095, 127, both, (4096, 8191), (128, 255))              # both within 1/32
    check(3972, 125, both)                                       # 3972 + 124 = 4096, 125 + 3
    check(4095, 124, rows_up, (4096, 8191), (64, 127))             # 124 + 3 < 128: rows only
    check(3971, 127, steps_up, (2048, 4095), (128, 255))           # 3971 + 124 < 4096
    check(3000, 127, steps_up)
    check(1023, 8191, own, (512, 1023), (4096, 8191))              # its own bucket first
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        check(3971, 124, dict(cfg(), **heuristic_config(3971, 124)))
        assert ask(N=3971, T=124).source == "heuristic"
        check(4095, 127, both)                                   # its near-key cached apart
        check(3900, 120, dict(cfg(), **heuristic_config(3900, 120)))
        check(2047, 127, steps_up, (2048, 4095), (128, 255))       # both above: 2048 x 128
    msgs = [str(w.message) for w in got if issubclass(w.category, W)]
    assert len(msgs) == 1 and "heuristic" in msgs[0]             # once for gae on the GPU
    assert ask(N=4095, T=127, time_major=True).source == "heuristic"
    assert tuning._buckets_above(8, 7) == () and tuning._buckets_above(31, 1) == ()
    assert tuning._buckets_above(1 << 20, (1 << 20) - 1) == ((20, 20),)


def test_missing_db_for_this_gpu_warns_once_per_kernel(dirs, cpu_is_h200):
    *_, reload = dirs
    reload()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        for n in (10, 100, 1000):
            tuning.select_config(_problem(n, 64))
    msgs = [str(w.message) for w in got if issubclass(w.category, W)]
    assert len(msgs) == 1 and "no tuning DB for gae on nvidia-h200" in msgs[0]


def test_launch_takes_its_config_from_select_config(monkeypatch):
    from rlscan.kernels import launch
    assert launch.select_config is tuning.select_config


# --------------------------------------------------------------------------- robustness
def _valid_bytes():
    return json.dumps(doc({"gae": [entry(4096, 128, cfg(8))]})).encode()


BAD_FILES = {
    "corrupt": b"\x00\x13garbage{{{",
    "truncated": _valid_bytes()[:len(_valid_bytes()) // 2],
    "empty": b"",
    "not-utf8": b"\xff\xfe{\"schema\": 1}",
    "foreign-schema": json.dumps(dict(doc({"gae": []}), schema=2)).encode(),
    "foreign-json": json.dumps([1, 2, 3]).encode(),
    "no-schema": json.dumps({"kernels": {}}).encode(),
    "other-gpu": json.dumps(doc({"gae": [entry(4096, 128, cfg(8))]}, name="NVIDIA A100")).encode(),
    "kernels-not-object": json.dumps(dict(doc({}), kernels=[1])).encode(),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
@pytest.mark.parametrize("where", ["shipped", "overlay"])
def test_bad_file_gives_one_warning_and_the_heuristic(dirs, kind, where):
    shipped, overlay, reload = dirs
    good = write(shipped / f"{SLUG}.json", doc({"vtrace": [entry(4096, 128, cfg(4))]})) \
        if where == "overlay" else None
    path = (shipped if where == "shipped" else overlay) / f"{SLUG}.json"
    path.write_bytes(BAD_FILES[kind])
    before = snapshot(path)
    got = load_warnings(reload)
    assert len(got) == 1 and str(path) in str(got[0].message)
    assert "heuristic" in str(got[0].message)
    assert ask().source == "heuristic"
    if good is not None:                         # the other layer still counts
        assert ask("vtrace").source == f"db:{good}"
    assert snapshot(path) == before


def test_unreadable_file_directory_in_the_way(dirs):
    shipped, _, reload = dirs
    path = shipped / f"{SLUG}.json"
    path.mkdir()                                 # root reads any file: a directory cannot be
    got = load_warnings(reload)
    assert len(got) == 1 and "cannot read" in str(got[0].message)
    assert ask().source == "heuristic" and path.is_dir()


def test_unreadable_file_permission_denied(dirs, monkeypatch):
    shipped, _, reload = dirs
    path = write(shipped / f"{SLUG}.json", doc({"gae": [entry(4096, 128, cfg(8))]}))
    before = snapshot(path)
    real = Path.read_bytes

    def deny(self):
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)
    monkeypatch.setattr(Path, "read_bytes", deny)
    got = load_warnings(reload)
    assert len(got) == 1 and "Permission denied" in str(got[0].message)
    assert ask().source == "heuristic"
    monkeypatch.setattr(Path, "read_bytes", real)
    assert snapshot(path) == before


def test_overlay_path_that_is_a_file(tmp_path):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    not_a_dir = tmp_path / "overlay"
    not_a_dir.write_text("x")
    try:
        got = load_warnings(lambda: tuning.load(shipped=shipped, overlay=not_a_dir))
        assert len(got) == 1 and "not a directory" in str(got[0].message)
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tuning.load()


def test_overlay_dir_that_cannot_be_listed(dirs, monkeypatch):
    *_, reload = dirs
    real = Path.exists

    def deny(self):
        if self.name == "overlay":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)
    monkeypatch.setattr(Path, "exists", deny)
    got = load_warnings(reload)
    assert len(got) == 1 and "cannot list" in str(got[0].message)


def test_stale_source_hash_ignored_with_one_warning(dirs):
    shipped, _, reload = dirs
    d = doc({"gae": [entry(4096, 128, cfg(8))], "vtrace": [entry(4096, 128, cfg(4))]})
    d["kernels"]["gae"]["source_hash"] = "0123456789abcdef"
    path = write(shipped / f"{SLUG}.json", d)
    before = snapshot(path)
    got = load_warnings(reload)
    assert len(got) == 1
    assert "gae" in str(got[0].message) and "source_hash" in str(got[0].message)
    assert ask().source == "heuristic"            # stale: never trusted
    assert ask("vtrace").config == cfg(4)         # the current section still counts
    assert snapshot(path) == before


def test_malformed_entries_skipped_with_one_warning(dirs):
    shipped, _, reload = dirs
    bad_cfg = entry(64, 64, {"strategy": "row_block", "BLOCK_N": 3, "BLOCK_T": 64})
    huge = entry(64, 128, cfg(256, 128))          # 32768 elements per program: over the cap
    unknown = entry(64, 256, dict(cfg(), strategy="warp_specialised"))
    write(shipped / f"{SLUG}.json", doc({"gae": [bad_cfg, huge, unknown, "nope",
                                                 entry(4096, 128, cfg(8))],
                                         "not_an_estimator": []}))
    got = load_warnings(reload)
    assert len(got) == 1 and "5 malformed" in str(got[0].message)
    assert ask().config == cfg(8)
    assert ask(N=64, T=64).source == "heuristic"


def test_shipped_db_files_parse_cleanly():
    """Whatever the package ships must be well-formed. A stale one (the kernels changed since
    it was measured) is reported, not failed: regenerating it needs the GPU."""
    shipped = tuning.shipped_dir()
    for path in sorted(shipped.glob("*.json")):
        db_ = tuning.parse_db(path, expect_slug=path.stem)
        assert db_.skipped == [], path
        if db_.stale:
            warnings.warn(f"{path.name} is stale for {', '.join(db_.stale)}: re-run "
                          f"rlscan-tune --out tuning_db on that GPU", W)


# --------------------------------------------------------------------------- writing
DEVICE = {"name": GPU, "capability": [9, 0], "sm_count": 132}
SOFTWARE = {"torch": "2.11.0", "triton": "3.6.0"}


def test_write_merge_and_read_back(tmp_path, dirs):
    *_, reload = dirs
    p = db.write_entries(tmp_path, DEVICE, SOFTWARE, {"gae": [entry(4096, 128, cfg(8))]})
    assert p == tmp_path / f"{SLUG}.json"
    db.write_entries(tmp_path, DEVICE, SOFTWARE, {"gae": [entry(4096, 128, cfg(16)),
                                                          entry(64, 512, cfg(1, 512))],
                                                  "vtrace": [entry(4096, 128, cfg(4))]})
    parsed = tuning.parse_db(p, expect_slug=SLUG)
    assert parsed.entries[("gae", "float32", "time_last", 12, 7)] == cfg(16)   # replaced
    assert len(parsed.entries) == 3 and parsed.doc["device"] == DEVICE
    assert not list(tmp_path.glob("*.tmp"))
    tuning.load(shipped=tmp_path, overlay=tmp_path / "none")
    assert ask().config == cfg(16)


def test_merge_replaces_a_stale_section_whole():
    old = doc({"gae": [entry(64, 64, cfg(1, 64)), entry(4096, 128, cfg(8))],
               "vtrace": [entry(4096, 128, cfg(4))]})
    old["kernels"]["gae"]["source_hash"] = "stale"
    new = db.merge(old, DEVICE, SOFTWARE, {"gae": [entry(4096, 128, cfg(16))]},
                   tuning.kernel_source_hash())
    assert new["kernels"]["gae"]["entries"] == [entry(4096, 128, cfg(16))]
    assert new["kernels"]["vtrace"] == old["kernels"]["vtrace"]


def test_reselect_repicks_winners_and_bounded_walks_from_stored_timings(tmp_path, capsys):
    """rlscan-tune --reselect applies a changed candidate rule to a DB without a GPU: each
    entry's winner becomes the fastest stored timing among the configs still candidates and
    within the look-back span limit (a failed candidate's status never wins), faster look-back
    configs beyond the limit become its bounded_walk, fastest first; an entry with no possible
    winner left is removed, and the file keeps its source hash."""
    from rlscan.tune import cli
    lookback = validate_label("lookback/1x256/w1/s1/c1/2l")
    longer = validate_label("lookback/1x512/w1/s1/c1/2l")
    chunked = validate_label("chunked/1x256/w1/s1/c2/2l")
    row = validate_label("row_block/1x1024/w4/s1")
    assert C.label(lookback) in labels("gae", 1, 1 << 20)
    assert C.beyond_lookback_limit(lookback, 1 << 20) and C.beyond_lookback_limit(longer, 1 << 20)
    big = dict(entry(1, 1 << 20, lookback), shape=[1, 1 << 20], candidates=5, timings={
        C.label(lookback): 10.3, C.label(longer): 9.0, C.label(chunked): 12.5,
        C.label(row): 900.0, "chunked/1x512/w1/s1/c1/2l": "compile failed"})
    gone = dict(entry(1, 1 << 20, lookback, dtype="bfloat16"), shape=[1, 1 << 20],
                timings={C.label(lookback): 9.0})
    keep = dict(entry(4096, 128, cfg(2, 128, 2)), shape=[4096, 128],
                timings={C.label(cfg(2, 128, 2)): 3.5, C.label(cfg(1, 128, 1)): 3.9})
    by_hand = entry(16384, 128, cfg(2, 128, 2))                  # no timings: left alone
    odd = dict(keep, layout="diagonal")                          # unreadable: left alone
    path = write(tmp_path / f"{SLUG}.json", doc({"gae": [big, gone, keep, by_hand, odd]}))
    assert cli.main(["--reselect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "only look-back beyond the span limit measured; entry removed" in out
    assert "bounded_walk lookback/1x512/w1/s1/c1/2l 9.0 us, lookback/1x256/w1/s1/c1/2l 10.3 us" \
        in out and out.count("\n") == 3
    parsed = tuning.parse_db(path, expect_slug=SLUG)
    assert parsed.doc["kernels"]["gae"]["source_hash"] == tuning.kernel_source_hash()
    entries = parsed.doc["kernels"]["gae"]["entries"]
    assert [e["dtype"] for e in entries] == ["float32"] * 4
    assert entries[2:] == [by_hand, odd]
    assert entries[0]["config"] == chunked and entries[0]["median_us"] == 12.5
    assert entries[0]["bounded_walk"] == [{"config": longer, "median_us": 9.0},
                                          {"config": lookback, "median_us": 10.3}]
    assert entries[0]["candidates"] == 5
    assert parsed.bounded[("gae", "float32", "time_last", 0, 20)] == first_window(longer, lookback)
    assert entries[1] == keep and "bounded_walk" not in entries[1]
    assert cli.main(["--reselect", str(path)]) == 0              # a second run: nothing to do
    assert capsys.readouterr().out == ""
    assert cli.main(["--reselect", str(tmp_path / "absent.json")]) == 2


def test_reselect_keeps_a_measured_walk_reach_only_while_its_winner_stays():
    """A bounded_walk item's walk_spans (and the times behind it) were measured against the
    entry's winner: --reselect keeps them when the winner stays, drops them (the first window)
    when another config wins."""
    longer = validate_label("lookback/1x512/w1/s1/c1/2l")
    chunked = validate_label("chunked/1x256/w1/s1/c2/2l")
    other = validate_label("chunked/1x512/w1/s1/c1/2l")
    reach = {"walk_spans": 72, "worst_us": 13.0, "winner_worst_us": 12.4}
    item = {"config": longer, "median_us": 9.0, **reach}

    def big(other_us):
        timings = {C.label(longer): 9.0, C.label(chunked): 12.5, C.label(other): other_us}
        return dict(entry(1, 1 << 20, chunked), shape=[1, 1 << 20], timings=timings,
                    candidates=3, median_us=12.5, bounded_walk=[dict(item)])
    same, changed = big(13.0), big(11.0)
    document = doc({"gae": [same, changed]})
    db.reselect(document)
    same, changed = document["kernels"]["gae"]["entries"]
    assert same["bounded_walk"] == [item]
    assert changed["config"] == other
    assert changed["bounded_walk"] == [{"config": longer, "median_us": 9.0}]


def validate_label(text: str) -> dict:
    """A config from its label (strategy/BNxBT/wW/sS[/cC][/2l])."""
    parts = text.split("/")
    bn, bt = (int(v) for v in parts[1].split("x"))
    c = {"strategy": parts[0], "BLOCK_N": bn, "BLOCK_T": bt, "num_warps": int(parts[2][1:]),
         "num_stages": int(parts[3][1:])}
    for p in parts[4:]:
        if p.startswith("c"):
            c["CHUNKS_PER_SPAN"] = int(p[1:])
        elif p == "2l":
            c["TWO_LEVEL"] = True
    return C.validate(c)


def labels(est, N, T):
    return {C.label(c) for c in C.candidates(est, N, T, "time_last", "float32")}


def test_write_is_atomic(tmp_path, monkeypatch):
    p = db.write_entries(tmp_path, DEVICE, SOFTWARE, {"gae": [entry(4096, 128, cfg(8))]})
    before = p.read_bytes()

    def crash(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(db.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        db.write_entries(tmp_path, DEVICE, SOFTWARE, {"gae": [entry(64, 64, cfg(1, 64))]})
    assert p.read_bytes() == before
    assert {f.name for f in tmp_path.iterdir()} == {p.name, p.name + ".lock"}   # no temp left


@pytest.mark.parametrize("kind", ["corrupt", "truncated", "foreign-schema"])
def test_writer_never_overwrites_a_bad_file(tmp_path, kind):
    p = tmp_path / f"{SLUG}.json"
    p.write_bytes(BAD_FILES[kind])
    before = snapshot(p)
    with pytest.raises(tuning.TuningDBError, match="will not overwrite"):
        db.write_entries(tmp_path, DEVICE, SOFTWARE, {"gae": [entry(4096, 128, cfg(8))]})
    assert snapshot(p) == before


def _writer(directory, kernel, n):
    """One process of the concurrency test: n separate read-merge-write cycles."""
    for i in range(n):
        db.write_entries(Path(directory), DEVICE, SOFTWARE,
                         {kernel: [entry(2 ** i, 128, cfg(1, 128))]})


def test_two_concurrent_writers_lose_nothing(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    n = 16
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), k, n)) for k in ("gae", "vtrace")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    parsed = tuning.parse_db(tmp_path / f"{SLUG}.json", expect_slug=SLUG)
    assert len(parsed.entries) == 2 * n
    assert {k[0] for k in parsed.entries} == {"gae", "vtrace"}


# --------------------------------------------------------------------------- no tuning at call time
def test_import_is_cheap_and_touches_no_cuda(tmp_path):
    code = ("import time, sys, torch\n"
            "t = time.perf_counter(); import rlscan; dt = time.perf_counter() - t\n"
            "print(dt, 'triton' in sys.modules, torch.cuda.is_initialized(),\n"
            "      any(m.startswith('rlscan.tune') for m in sys.modules))\n")
    env = dict(os.environ, RLSCAN_TUNING_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.split()
    assert float(out[0]) < 0.5
    assert out[1:] == ["False", "False", "False"]


def test_calls_never_tune(dirs, cpu_is_h200, monkeypatch):
    """A call without an entry warns and uses the heuristic; it never measures anything."""
    *_, reload = dirs
    reload()
    from rlscan.tune import timing

    def forbidden(*a, **k):
        raise AssertionError("a benchmark ran at call time")
    monkeypatch.setattr(timing.GraphTimer, "__call__", forbidden)
    monkeypatch.setattr(timing, "copy_bandwidth", forbidden)
    monkeypatch.setattr(sweep, "tune_cell", forbidden)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for est in (P.GAE, P.VTRACE, P.LINEAR):
            tuning.select_config(_problem(1000, 1000, est=est))
        rlscan.gae(torch.randn(4, 8), torch.randn(4, 8))
    src = Path(tuning.__file__).read_text() + Path(
        sys.modules["rlscan.kernels.launch"].__file__).read_text()
    assert "rlscan.tune" not in src and "from .tune" not in src


# --------------------------------------------------------------------------- candidate spaces
SHAPES = list(grid.STANDARD_SHAPES) + [(1, 1), (1, 5), (3, 17), (1000, 1), (7, 33), (2, 100000)]


@pytest.mark.parametrize("layout", ["time_last", "time_major"])
def test_candidate_spaces_obey_the_rules(layout):
    for N, T in SHAPES:
        cands = C.candidates("gae", N, T, layout, "float32")
        assert cands, (N, T)
        labels = [C.label(c) for c in cands]
        assert len(set(labels)) == len(labels)
        tp = C.next_pow2(T)
        for c in cands:
            assert c["strategy"] in C.STRATEGIES
            bn, bt = c["BLOCK_N"], c["BLOCK_T"]
            assert bn & (bn - 1) == 0 and bt & (bt - 1) == 0 and bn * bt <= 16384
            # time-major tiles of 128 rows a warp keep 4 or 8 steps a thread in registers
            assert min(4 if layout == "time_major" else 16, tp) <= bt <= tp
            assert bn // c.get("SPLIT", 1) <= C.next_pow2(N)     # rows of the input
            # 16 or 32 warps only for a row spread over them
            assert c["num_warps"] in (1, 2, 4, 8) or c["num_warps"] == c.get("SPLIT")
            assert c["num_stages"] in (1, 2, 3)


def test_validate_rejects_bad_configs():
    for bad in ({"BLOCK_N": 3, "BLOCK_T": 16}, {"BLOCK_N": 256, "BLOCK_T": 128},
                {"BLOCK_N": 4, "BLOCK_T": 16, "num_warps": 3},
                {"BLOCK_N": 4, "BLOCK_T": 16, "num_stages": 0},
                {"BLOCK_N": 4, "BLOCK_T": 16, "strategy": "magic"}, [4, 16],
                {"BLOCK_N": 1, "BLOCK_T": 16, "strategy": "chunked"},
                {"BLOCK_N": 1, "BLOCK_T": 16, "strategy": "chunked", "CHUNKS_PER_SPAN": 0}):
        with pytest.raises(ValueError):
            C.validate(bad)
    assert C.validate({"BLOCK_N": 4, "BLOCK_T": 16}) == cfg(4, 16)


def test_lookback_spans_are_one_chunk():
    """A look-back program keeps its span in registers while it looks back: one chunk."""
    ok = {"strategy": "lookback", "BLOCK_N": 1, "BLOCK_T": 1024, "CHUNKS_PER_SPAN": 1}
    assert C.validate(ok)["CHUNKS_PER_SPAN"] == 1
    with pytest.raises(ValueError, match="lookback spans are one chunk"):
        C.validate(dict(ok, CHUNKS_PER_SPAN=2))


def test_lookback_candidates_beyond_the_span_limit_are_told_apart():
    """Look-back tiles are candidates at any length, but those with which a call of up to twice
    the bucket's steps could make more than LOOKBACK_MAX_SPANS spans (a row without resets walks
    back to span 0) are beyond_lookback_limit: the tuner keeps them out of the winner's place."""
    def lookback(N, T):
        return {(c["BLOCK_T"], c.get("TWO_LEVEL", False)): C.beyond_lookback_limit(c, T)
                for c in C.candidates("gae", N, T, "time_last", "float32")
                if c["strategy"] == "lookback"}

    assert lookback(32, 32768)[(256, True)] is False and lookback(32, 32768)[(1024, False)] is False
    assert lookback(8, 65536)[(256, True)] is True and lookback(8, 65536)[(512, True)] is False
    assert set(lookback(1, 1 << 20).values()) == {True}
    for T in (32768, 65536, 1 << 20):
        for (bt, _), beyond in lookback(8, T).items():
            assert beyond == (2 * -(-T // bt) > C.LOOKBACK_MAX_SPANS)
    chunked = validate_label("chunked/1x256/w1/s1/c2/2l")
    assert not C.beyond_lookback_limit(chunked, 1 << 20)              # only look-back walks


def test_unbounded_walks_get_lookback_candidates_only_within_the_limit_on_the_shortest_rows():
    """Episodic sums' a is 1 and linear_scan's a tensor: no coefficient bounds their walks, so a
    look-back config may run only on rows within LOOKBACK_MAX_SPANS spans; the tuner measures
    those that are on the bucket's shortest rows (its shape), chunked ones at any length."""
    for est in ("episodic_cumsum", "linear_scan"):
        for T in (32768, 65536, 262144, 1 << 20):
            spanned = [c for c in C.candidates(est, 8, T, "time_last", "float32")
                       if c["strategy"] != "row_block"]
            looks = [c for c in spanned if c["strategy"] == "lookback"]
            assert all(C.spans_within_limit(c, T) for c in looks), (est, T)
            assert any(c["strategy"] == "chunked" for c in spanned), (est, T)
            gae = [c for c in C.candidates("gae", 8, T, "time_last", "float32")
                   if c["strategy"] == "lookback" and not c.get("TWO_LEVEL")]
            plain = [c for c in looks if not c.get("maxnreg")]      # (and their r64 twins)
            assert plain == [c for c in gae if C.spans_within_limit(c, T)], (est, T)
    # 8 x 65536: 256 spans of 256 steps, within the limit; the bucket's longer rows are not
    assert any(c["BLOCK_T"] == 256 and C.beyond_lookback_limit(c, 65536) for c in
               C.candidates("episodic_cumsum", 8, 65536, "time_last", "float32")
               if c["strategy"] == "lookback")


def test_a_walk_fits_the_first_window_when_the_product_of_a_underflows_within_it():
    """float32 products of factors at most β reach an exact 0 ~150·ln 2 / -ln β steps back, plus
    one span of rounding; a bounded_walk config runs only where that is within the first
    LOOKBACK_FIRST_WINDOW spans: 512-step spans up to β ≈ 0.971 (GAE's γ = 0.99, λ = 0.95 and
    γ = 1, λ = 0.95), 256-step spans up to β ≈ 0.944 (γ = 0.99, λ = 0.95 again)."""
    import math
    span = validate_label("lookback/1x512/w1/s1/c1/2l")
    short = validate_label("lookback/1x256/w1/s1/c1/2l")
    assert C.LOOKBACK_FIRST_WINDOW == 8
    for beta, fits in ((0.0, True), (0.5, True), (0.99 * 0.95, True), (0.95, True),
                       (0.970, True), (0.973, False), (0.99, False), (1.0, False),
                       (None, False), (math.nan, False), (math.inf, False)):
        assert C.walk_fits_first_window(span, beta) is fits, beta
    assert C.walk_fits_first_window(short, 0.99 * 0.95)
    assert C.walk_fits_first_window(short, 0.943) and not C.walk_fits_first_window(short, 0.945)
    long, both = 1 << 20, first_window(short, span)                  # 2048+ spans a row
    assert C.bounded_walk_config(both, 0.95, long) == span           # the first that fits
    assert C.bounded_walk_config(both, 0.9, long) == short
    assert C.bounded_walk_config(both, 0.99, long) is None
    assert C.bounded_walk_config((), 0.5, long) is None
    # the rule's premise, in float32, as the kernel composes a walk: each span's own product,
    # then the window's composition of its 8 spans, in order or pairwise (its scan). At the
    # limit 7 spans (71 for the second reach) reach at most the smallest subnormal, 2**-149
    # (rounding up from 2**-150), one fewer stay nonzero, and the last span, the slack, makes
    # it an exact 0
    first = C.LOOKBACK_FIRST_WINDOW
    for cfg, reach in itertools.product((short, span), C.WALK_REACHES):
        beta = C.walk_decay_limit(cfg, reach)
        one = torch.prod(torch.full((cfg["BLOCK_T"],), beta, dtype=torch.float32))
        assert 0.0 < float(one) < 0.5
        walk = [one]
        for _ in range(reach - 1):
            walk.append(walk[-1] * one)
        assert float(walk[reach - 3]) > 0.0                          # 6 (70) spans
        assert float(walk[reach - 2]) <= 2.0 ** -149                 # 7 (71)
        assert float(walk[reach - 1]) == 0.0                         # the reach: 8 (72)
        if reach == first:
            pairs = torch.full((first,), float(one), dtype=torch.float32)
            while pairs.numel() > 1:
                pairs = pairs[0::2] * pairs[1::2]
            assert float(pairs[0]) == 0.0
    # ... and the window it assumes is the kernel's: scan._fold_published folds the nearest
    # LOOKBACK_FIRST_WINDOW spans first whenever the launcher's window is wider
    from rlscan.kernels import launch, scan
    source = Path(scan.__file__).read_text()
    first = C.LOOKBACK_FIRST_WINDOW
    assert f"FIRST: tl.constexpr = {first} if WINDOW > {first} else WINDOW" in source
    assert launch._LOOKBACK_WINDOW[0] > first


def test_a_bounded_walk_config_runs_unbounded_where_the_calls_rows_stay_within_the_limit():
    """A bounded_walk config is kept apart because the bucket's longest rows would pass
    LOOKBACK_MAX_SPANS spans; on a call whose rows make at most that many it runs whatever the
    coefficients (like a winner within the limit), the first such one in the entry's order."""
    span = validate_label("lookback/1x512/w1/s1/c1/2l")
    short = validate_label("lookback/1x256/w1/s1/c1/2l")
    limit, both = C.LOOKBACK_MAX_SPANS, first_window(short, span)
    for decay in (None, 1.0, 0.99):
        assert C.bounded_walk_config(both, decay, 256 * limit) == short
        assert C.bounded_walk_config(both, decay, 256 * limit + 1) == span
        assert C.bounded_walk_config(both, decay, 512 * limit) == span
        assert C.bounded_walk_config(both, decay, 512 * limit + 1) is None
    assert C.bounded_walk_config(both, 0.95, 512 * limit + 1) == span   # a bounded walk


@pytest.mark.parametrize("est, gamma, lmbda, c_bar, bound", [
    (P.DISC, 0.9, 0.5, 1.0, 0.9), (P.GAE, 0.9, 0.5, 1.0, 0.45), (P.LAMBDA, 0.9, 0.5, 1.0, 0.45),
    (P.TRACE, 0.9, 0.5, 1.0, 0.45), (P.VTRACE, 0.9, 0.5, 0.8, 0.36),
    (P.RETRACE, 0.9, 0.5, 2.0, 0.9), (P.CUMSUM, None, None, 1.0, 1.0),
    (P.LINEAR, None, None, 1.0, None), (P.GAE, None, 0.5, 1.0, None),
    (P.GAE, 0.9, None, 1.0, None), (P.DISC, 0.9, None, 1.0, 0.9)])
def test_decay_bound_is_the_largest_a_the_scalar_coefficients_allow(est, gamma, lmbda, c_bar,
                                                                    bound):
    """ALGORITHMS.md §0: a = γ (discounted returns), γ·λ (GAE, λ-returns, eligibility traces),
    γ·λ·min(c̄, ratio) (V-trace, Retrace), 1 (episodic sums); per-step γ or λ tensors (None
    here) or linear_scan's a: unknown."""
    got = P.scalar_decay_bound(est, gamma, lmbda, c_bar)
    assert got == pytest.approx(bound) if bound is not None else got is None


def test_two_level_candidates_only_for_backward_time_last_tiles_that_fit():
    """The tuner measures the two-level scan only where the launcher would run it: backward
    estimators, time-last buffers, tiles whose rows each lie inside one warp."""
    for N, T in SHAPES:
        for est in ("gae", "vtrace", "eligibility_traces", "episodic_cumsum", "linear_scan"):
            for layout in C.LAYOUTS:
                two = [c for c in C.candidates(est, N, T, layout, "float32")
                       if c.get("TWO_LEVEL")]
                if est in C.BACKWARD and layout == "time_last":
                    assert all(C.two_level_fits(c) for c in two), (est, N, T)
                else:
                    assert not two, (est, N, T, layout)
    labels = [C.label(c) for c in C.candidates("gae", 1024, 8192, "time_last", "float32")]
    assert {"row_block/2x128/w2/s1/2l", "row_block/1x512/w1/s1/2l",
            "row_block/2x128/w2/s1"} <= set(labels)


def test_register_capped_candidates_are_twins_of_the_small_tiles_they_were_found_for():
    """The tuner measures a register cap only on the tiles it was found for, right after their
    uncapped twin, on time-last buffers: backward estimators' two-level tiles (row blocks
    2x128/w2 at 40 and 1x128/w1 at 32, look-back spans 1x256/w1 at 64 or V-trace's at 96,
    V-trace's chunked 2x128/w2 at 64; with 16-bit inputs GAE's and Retrace's split tile
    4x256/w4/sp4/g8 at 64), and forward scans' plain look-back span 1x256/w1 at 64; never
    elsewhere."""
    for N, T in SHAPES:
        for est in ("gae", "vtrace", "discounted_returns", "eligibility_traces",
                    "episodic_cumsum", "linear_scan"):
            for layout, dtype in itertools.product(C.LAYOUTS, ("float32", "bfloat16")):
                cands = C.candidates(est, N, T, layout, dtype)
                for i, c in enumerate(cands):
                    if c.get("maxnreg") and est not in C.BACKWARD:
                        assert layout == "time_last" and not c.get("TWO_LEVEL")
                        assert C.label(c) == "lookback/1x256/w1/s1/c1/r64", C.label(c)
                        assert cands[i - 1] == {k: v for k, v in c.items() if k != "maxnreg"}
                    elif c.get("maxnreg"):
                        assert layout == "time_last" and c["TWO_LEVEL"]
                        allowed = {("row_block", 2, 128, 2, 1, 4, 40),
                                   ("row_block", 1, 128, 1, 1, 4, 32),
                                   ("lookback", 1, 256, 1, 1, 4, 96 if est == "vtrace" else 64)}
                        if est == "vtrace":
                            allowed.add(("chunked", 2, 128, 2, 1, 4, 64))
                        if dtype == "bfloat16" and est == "gae":
                            allowed.add(("row_block", 4, 256, 4, 4, 8, 64))
                        assert (c["strategy"], c["BLOCK_N"], c["BLOCK_T"], c["num_warps"],
                                c.get("SPLIT", 1), c.get("GROUP", 4), c["maxnreg"]) in allowed
                        twin = dict(c)
                        del twin["maxnreg"]
                        assert cands[i - 1] == twin
    labels = [C.label(c) for c in C.candidates("discounted_returns", 65536, 128, "time_last",
                                                "float32")]
    assert {"row_block/2x128/w2/s1/2l/r40", "row_block/1x128/w1/s1/2l/r32"} <= set(labels)
    labels = [C.label(c) for c in C.candidates("gae", 8, 262144, "time_last", "float32")]
    assert "lookback/1x256/w1/s1/c1/2l/r64" in labels
    assert not [lab for lab in labels if lab.startswith("chunked") and "/r" in lab]
    labels = [C.label(c) for c in C.candidates("vtrace", 8, 262144, "time_last", "float32")]
    assert {"lookback/1x256/w1/s1/c1/2l/r96", "chunked/2x128/w2/s1/c4/2l/r64"} <= set(labels)
    for est in C.BACKWARD:
        labels = [C.label(c) for c in C.candidates(est, 1024, 8192, "time_last", "bfloat16")]
        capped = "row_block/4x256/w4/s1/2l/g8/sp4/r64" in labels
        assert capped == (est in ("gae", "retrace")), est
    for est in ("eligibility_traces", "episodic_cumsum", "linear_scan"):  # within the limit
        labels = [C.label(c) for c in C.candidates(est, 32, 32768, "time_last", "float32")]
        assert "lookback/1x256/w1/s1/c1/r64" in labels, est


def test_validate_register_cap():
    ok = {"BLOCK_N": 2, "BLOCK_T": 128, "num_warps": 2, "maxnreg": 40}
    assert C.validate(ok)["maxnreg"] == 40
    assert C.label(C.validate(ok)) == "row_block/2x128/w2/s1/r40"
    assert "maxnreg" not in C.validate(dict(ok, maxnreg=None))
    assert C.label(C.validate(dict(ok, maxnreg=112))) == "row_block/2x128/w2/s1/r112"
    for bad in (33, 0, True, "40", 256, 128):
        with pytest.raises(ValueError, match="maxnreg"):
            C.validate(dict(ok, maxnreg=bad))
    assert C.to_triton_config(ok).maxnreg == 40


def test_validate_two_level():
    ok = {"BLOCK_N": 2, "BLOCK_T": 128, "num_warps": 2, "TWO_LEVEL": True}
    assert C.validate(ok)["TWO_LEVEL"] is True
    assert C.label(C.validate(ok)) == "row_block/2x128/w2/s1/2l"
    assert "TWO_LEVEL" not in C.validate(dict(ok, TWO_LEVEL=False))
    for bad, why in [(dict(ok, num_warps=4), "inside one warp"),         # rows across warps
                     (dict(ok, BLOCK_N=1, BLOCK_T=2048, num_warps=1), "GROUP to 1024 steps"),
                     (dict(ok, TWO_LEVEL="yes"), "TWO_LEVEL='yes'")]:
        with pytest.raises(ValueError, match=why):
            C.validate(bad)


def test_validate_group_of_8_or_16_steps_only_with_two_level_tiles_that_fill_their_warps():
    ok = {"BLOCK_N": 4, "BLOCK_T": 128, "num_warps": 2, "TWO_LEVEL": True, "GROUP": 8}
    assert C.validate(ok)["GROUP"] == 8
    assert C.label(C.validate(ok)) == "row_block/4x128/w2/s1/2l/g8"
    assert "GROUP" not in C.validate(dict(ok, GROUP=4))     # the default is not spelled out
    g16 = dict(ok, num_warps=1, GROUP=16)                     # 4 rows x 8 groups: one warp
    assert C.label(C.validate(g16)) == "row_block/4x128/w1/s1/2l/g16"
    for bad, why in [(dict(ok, TWO_LEVEL=False), "8 and 16 only with TWO_LEVEL"),
                     (dict(g16, num_warps=2), "inside one"),
                     (dict(ok, GROUP=32), "GROUP=32"),
                     (dict(ok, GROUP=2), "GROUP=2"), (dict(ok, GROUP=True), "GROUP=True"),
                     (dict(ok, BLOCK_N=2), "inside one"),   # 2 rows x 16 groups: half a warp each
                     (dict(ok, BLOCK_N=1, BLOCK_T=4, num_warps=1), "GROUP to 1024")]:
        with pytest.raises(ValueError, match=why):
            C.validate(bad)


def test_validate_split_rows_only_for_row_blocks_it_divides():
    ok = {"BLOCK_N": 2, "BLOCK_T": 1024, "num_warps": 2, "TWO_LEVEL": True, "SPLIT": 2}
    assert C.validate(ok)["SPLIT"] == 2
    assert C.label(C.validate(ok)) == "row_block/2x1024/w2/s1/2l/sp2"
    assert C.label(C.validate(dict(ok, TWO_LEVEL=False))) == "row_block/2x1024/w2/s1/sp2"
    assert "SPLIT" not in C.validate(dict(ok, SPLIT=1))     # the default is not spelled out
    for bad in (dict(ok, SPLIT=4), dict(ok, SPLIT=3),
                dict(ok, SPLIT=True), dict(ok, strategy="chunked", CHUNKS_PER_SPAN=1)):
        with pytest.raises(ValueError, match="SPLIT="):
            C.validate(bad)


def test_validate_lane_rows_only_for_tiles_of_a_row_a_lane_without_two_level_or_split():
    ok = {"BLOCK_N": 32, "BLOCK_T": 8, "num_warps": 1, "LANE_ROWS": True}
    assert C.validate(ok)["LANE_ROWS"] is True
    assert C.label(C.validate(ok)) == "row_block/32x8/w1/s1/lr"
    assert C.label(C.validate(dict(ok, BLOCK_N=64, num_warps=2, maxnreg=96))) == \
        "row_block/64x8/w2/s1/lr/r96"
    assert "LANE_ROWS" not in C.validate(dict(ok, LANE_ROWS=False))
    assert C.to_triton_config(ok).kwargs["LANE_ROWS"] is True
    for bad, why in [(dict(ok, BLOCK_N=16), "BLOCK_N >= 32"),
                     (dict(ok, num_warps=2), "BLOCK_N >= 32"),
                     (dict(ok, BLOCK_T=128, TWO_LEVEL=True), "no TWO_LEVEL"),
                     (dict(ok, SPLIT=2), "no SPLIT"), (dict(ok, LANE_ROWS="yes"), "LANE_ROWS=")]:
        with pytest.raises(ValueError, match=why):
            C.validate(bad)


def test_split_row_candidates_for_few_long_rows_of_time_last_calls_only():
    """Tiles that spread a row over warps are measured in time-last buffers with 64 to 2048
    rows, where a row is longer than one walk of the tile: two-level ones for backward
    estimators, plain ones of one input row a program for forward ones; and for backward
    estimators 4x128/w4/sp4 where one walk of it covers a row and fills 4 warps (384 < T <=
    512)."""
    for N, T in SHAPES:
        for est in ("gae", "vtrace", "eligibility_traces"):
            for layout in C.LAYOUTS:
                split = [c for c in C.candidates(est, N, T, layout, "bfloat16")
                         if c.get("SPLIT")]
                if layout == "time_last" and 64 <= N <= 2048:
                    backward = est in C.BACKWARD
                    one_walk = [c for c in split if c["BLOCK_T"] * c["SPLIT"] >= T]
                    assert all(c.get("TWO_LEVEL", False) == backward
                               and c["strategy"] == "row_block"
                               and (backward or c["BLOCK_N"] == c["SPLIT"])
                               for c in split), (est, N, T)
                    assert [C.label(c) for c in one_walk] == (
                        ["row_block/4x128/w4/s1/2l/sp4"] if backward and 384 < T <= 512
                        else []), (est, N, T)
                else:
                    assert not split, (est, N, T, layout)
    labels = {C.label(c) for c in C.candidates("vtrace", 1024, 8192, "time_last", "float32")}
    assert {"row_block/2x128/w2/s1/2l/sp2", "row_block/4x256/w4/s1/2l/sp4",
            "row_block/16x256/w16/s1/2l/sp16"} <= labels
    for T, one_walk in ((384, False), (385, True), (512, True), (513, False)):
        labels = {C.label(c) for c in C.candidates("retrace", 64, T, "time_last", "float32")}
        assert ("row_block/4x128/w4/s1/2l/sp4" in labels) == one_walk, T
    labels = {C.label(c) for c in C.candidates("episodic_cumsum", 128, 16384, "time_last",
                                               "float32")}
    assert {"row_block/8x128/w8/s1/sp8", "row_block/16x256/w16/s1/sp16",
            "row_block/16x512/w16/s1/sp16", "row_block/32x128/w32/s1/sp32"} <= labels


def test_groups_of_8_and_16_are_candidates_for_16_bit_backward_time_last_calls_only():
    """Two-level tiles of groups of 8 steps (16-byte bf16 loads a thread), and two small tiles
    of groups of 16, are measured for 16-bit inputs of backward estimators in time-last
    buffers, each filling its warps."""
    for N, T in SHAPES:
        for est in ("gae", "vtrace", "eligibility_traces"):
            for layout in C.LAYOUTS:
                for dtype in C.DTYPES:
                    g8 = [c for c in C.candidates(est, N, T, layout, dtype) if c.get("GROUP")]
                    if est in C.BACKWARD and layout == "time_last" and dtype != "float32":
                        assert all(c["GROUP"] in (8, 16) and c["TWO_LEVEL"]
                                   and C.two_level_fits(c) for c in g8), (est, N, T)
                        assert g8 or T < 128, (est, N, T)   # short rows: no tile fills a warp
                    else:
                        assert not g8, (est, N, T, layout, dtype)
    labels = {C.label(c) for c in C.candidates("discounted_returns", 65536, 128, "time_last",
                                                "bfloat16")}
    assert {"row_block/4x128/w2/s1/2l/g8", "row_block/2x128/w1/s1/2l/g8",
            "row_block/2x128/w2/s1/2l", "row_block/4x128/w1/s1/2l/g16",
            "row_block/8x128/w2/s1/2l/g16"} <= labels


def test_tuner_heuristic_drops_the_two_level_flag_for_forward_scans():
    """The runtime heuristic sets TWO_LEVEL wherever the tile fits (the launcher applies it to
    backward scans only); the tuner's spelled-out heuristic leaves it out for forward ones."""
    assert heuristic_config(65536, 128).get("TWO_LEVEL") is True
    fwd = sweep.heuristic_for(grid.Cell("eligibility_traces", 65536, 128, "float32",
                                        "time_last"))
    bwd = sweep.heuristic_for(grid.Cell("gae", 65536, 128, "float32", "time_last"))
    assert "TWO_LEVEL" not in fwd and bwd.get("TWO_LEVEL") is True


def test_time_major_16x64_tiles_are_measured_with_and_without_scalar_loads_where_honoured(
        monkeypatch):
    """Discounted returns, GAE and λ-returns measure each time-major 16x64/w8 tile (row block and
    one-chunk spans) twice, Triton's vectors and ``SCALAR_LOADS``; estimators that ignore the
    key, other tiles and time-last buffers do not, so no other sweep grows. The tuner's
    spelled-out heuristic drops the key where the launcher ignores it, so that config and the
    plain 16x64/w8 candidate are one."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)   # the GPU's heuristic

    def sixteens(est, layout):
        return sorted(C.label(c) for c in C.candidates(est, 2048, 256, layout, "float32")
                      if (c["BLOCK_N"], c["BLOCK_T"], c["num_warps"]) == (16, 64, 8))
    for est in ("discounted_returns", "gae", "lambda_returns"):
        assert sixteens(est, "time_major") == [
            "chunked/16x64/w8/s1/c1", "chunked/16x64/w8/s1/c1/sl",
            "row_block/16x64/w8/s1", "row_block/16x64/w8/s1/sl"], est
        assert all(not c.get("SCALAR_LOADS") for c in C.candidates(
            est, 2048, 256, "time_major", "float32")
            if (c["BLOCK_N"], c["BLOCK_T"], c["num_warps"]) != (16, 64, 8)), est
    for est in ("vtrace", "retrace", "eligibility_traces", "episodic_cumsum", "linear_scan"):
        assert sixteens(est, "time_major") == ["chunked/16x64/w8/s1/c1",
                                                "row_block/16x64/w8/s1"], est
    for est in grid.ESTIMATORS:
        assert not any(c.get("SCALAR_LOADS") for c in C.candidates(
            est, 2048, 256, "time_last", "float32")), est
    cell = grid.Cell("gae", 2048, 256, "float32", "time_major")
    assert sweep.heuristic_for(cell).get("SCALAR_LOADS") is True
    for est in ("vtrace", "eligibility_traces"):
        h = sweep.heuristic_for(cell._replace(estimator=est))
        assert "SCALAR_LOADS" not in h, est
        labels = [C.label(c) for c in sweep.with_heuristic(
            C.candidates(est, 2048, 256, "time_major", "float32"), cell._replace(estimator=est))]
        assert labels.count("row_block/16x64/w8/s1") == 1, est


def test_launcher_and_tuner_agree_on_which_estimators_honour_scalar_loads():
    """The launcher's set of estimator codes is the configs' set of names, so the tuner never
    times a key the launcher would ignore as if it were another kernel."""
    from rlscan.kernels import launch
    from rlscan.tuning import KERNEL_NAMES
    assert {KERNEL_NAMES[c] for c in launch._SCALAR_LOADS_ESTIMATORS} == set(
        C.SCALAR_LOADS_ESTIMATORS) == {"discounted_returns", "gae", "lambda_returns"}


def test_few_long_time_major_rows_measure_and_default_to_spans_of_eight_row_tiles(monkeypatch):
    """Time-major buckets of 2-31 rows also measure chunked spans of 8-row one-warp tiles: of 16
    steps from 2**16 steps (the 8x65536 winner of a forced A/B), of 32 and 64 steps from 2**18
    (the 8x262144 ones); shorter rows, more or fewer rows and time-last buffers do not, so no
    other bucket's sweep grows. The heuristic takes such spans for untuned time-major calls of
    4-16 rows from 2**16 steps: 8x16 tiles in spans of 4 chunks below 2**18 steps, then 8x64
    tiles in spans of 4 up to 8 rows below 2**20 steps, 8x32 tiles in spans of 8 past them."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    long_spans = {"chunked/8x32/w1/s1/c8", "chunked/8x32/w1/s1/c16", "chunked/8x64/w1/s1/c4"}
    mid_spans = {"chunked/8x16/w1/s1/c4"}

    def labels(N, T, layout="time_major", est="gae", dtype="float32"):
        return {C.label(c) for c in C.candidates(est, N, T, layout, dtype)}

    for est, dtype in itertools.product(grid.ESTIMATORS, ("float32", "bfloat16")):
        assert long_spans | mid_spans <= labels(8, 262144, est=est, dtype=dtype)
        got = labels(8, 65536, est=est, dtype=dtype)
        assert mid_spans <= got and not long_spans & got, (est, dtype)
    assert long_spans | mid_spans <= labels(5, 1 << 18)
    assert long_spans | mid_spans <= labels(31, 1 << 20)
    assert "chunked/2x64/w1/s1/c4" in labels(2, 1 << 18)      # the tile clamped to the rows
    assert "chunked/2x16/w1/s1/c4" in labels(2, 1 << 16)
    for N, T, layout in ((8, 32768, "time_major"), (1, 1 << 20, "time_major"),
                         (32, 1 << 18, "time_major"), (32, 32768, "time_major"),
                         (8, 262144, "time_last"), (8, 65536, "time_last")):
        assert not (long_spans | mid_spans) & labels(N, T, layout), (N, T, layout)

    def spans(bt, cps):
        return {"strategy": "chunked", "BLOCK_N": 8, "BLOCK_T": bt, "num_warps": 1,
                "CHUNKS_PER_SPAN": cps}
    for N, T in ((4, 1 << 18), (8, 1 << 18), (8, (1 << 20) - 1)):
        assert heuristic_config(N, T, time_major=True) == spans(64, 4), (N, T)
    for N, T in ((9, 1 << 18), (16, 1 << 18), (4, 1 << 20), (16, 1 << 22)):
        assert heuristic_config(N, T, time_major=True) == spans(32, 8), (N, T)
    for N, T in ((4, 1 << 16), (16, (1 << 18) - 1)):
        assert heuristic_config(N, T, time_major=True) == spans(16, 4), (N, T)
    for N, T, major in ((8, 32768, True), (32, 1 << 18, True), (3, 1 << 20, True),
                        (17, 65536, True), (8, 1 << 18, False), (8, 65536, False)):
        assert heuristic_config(N, T, time_major=major) not in (
            spans(64, 4), spans(32, 8), spans(16, 4)), (N, T, major)
    for cfg in (spans(64, 4), spans(32, 8), spans(16, 4)):
        C.validate(cfg)


def test_time_major_heuristic_keeps_a_chunk_in_each_thread_where_rows_allow(monkeypatch):
    """Without a DB entry, time-major calls with 32768 to 131071 rows take 64x8/w2 tiles of one
    row a lane, more rows 256x4/w2 row blocks, and long rows spans of 128x4/w1 tiles (a row's
    steps of a chunk in one thread); few rows keep the 16-row tiles, and time-last calls are
    unchanged."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    lanes = heuristic_config(65536, 128, time_major=True)
    assert lanes == {"strategy": "row_block", "BLOCK_N": 64, "BLOCK_T": 8, "num_warps": 2,
                     "LANE_ROWS": True}
    C.validate(lanes)
    assert heuristic_config(131072, 256, time_major=True) == {
        "strategy": "row_block", "BLOCK_N": 256, "BLOCK_T": 4, "num_warps": 2}
    long_rows = heuristic_config(1024, 8192, time_major=True)
    assert long_rows == {"strategy": "chunked", "BLOCK_N": 128, "BLOCK_T": 4, "num_warps": 1,
                         "CHUNKS_PER_SPAN": 8}
    C.validate(long_rows)
    assert heuristic_config(4096, 128, time_major=True)["BLOCK_N"] == 16
    assert heuristic_config(8, 65536, time_major=True)["BLOCK_N"] == 8
    assert heuristic_config(65536, 128)["BLOCK_N"] == 2


def test_long_time_last_rows_of_128_to_1023_take_a_row_spread_over_warps(monkeypatch):
    """Untuned time-last calls of 128-1023 rows from 2048 steps (a batch of long sequences) run
    one row a program on SPLIT warps, scanned in two levels where the scan is backward: 16
    warps below 512 rows from 4096 steps, else 8; rows below 512 from 1024 steps too, fp32 and
    bf16 alike. 1024 rows keep wide row blocks, fewer than 128 rows spans, shorter rows and
    time-major buffers their own configs."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)

    def split(s):
        return {"strategy": "row_block", "BLOCK_N": s, "BLOCK_T": 128, "num_warps": s,
                "SPLIT": s, "TWO_LEVEL": True}
    for N, T, itemsize, s in ((128, 2048, 2, 8), (128, 2048, 4, 8), (300, 4095, 4, 8),
                              (300, 4095, 2, 8), (300, 4096, 4, 16), (300, 4096, 2, 16),
                              (300, 16384, 4, 16), (511, 1 << 20, 4, 16), (512, 2048, 4, 8),
                              (1023, 8192, 4, 8), (1023, 8192, 2, 8), (300, 1024, 4, 8),
                              (300, 1024, 2, 8), (511, 2047, 4, 8)):
        cfg = heuristic_config(N, T, itemsize=itemsize)
        assert cfg == split(s), (N, T, itemsize)
        C.validate(cfg)
    assert heuristic_config(1024, 8192) == {"strategy": "row_block", "BLOCK_N": 1,
                                            "BLOCK_T": 512, "num_warps": 4}
    assert heuristic_config(64, 16384)["strategy"] == "chunked"
    for N, T, itemsize in ((300, 1023, 4), (300, 1023, 2), (512, 2047, 4), (512, 2047, 2),
                           (127, 2047, 4)):
        assert "SPLIT" not in heuristic_config(N, T, itemsize=itemsize), (N, T, itemsize)
    assert "SPLIT" not in heuristic_config(300, 4096, time_major=True)


def test_untuned_bf16_calls_of_1024_rows_of_2048_steps_split_each_row_over_four_warps(
        dirs, cpu_is_h200, monkeypatch):
    """Untuned time-last calls of 1024+ rows of 2048+ steps: 2-byte inputs take the tuned
    grid's bf16 winner there, each row on 4 warps scanning in two levels, 8 steps a thread
    (forced off the grid: x0.59-1.00 the 1x512/w4 rows' time); fp32 keeps 1x512/w4, fewer rows
    their split tiles, time-major their own. The call's dtype reaches the heuristic through
    ``select_config`` and ``which_config``; the tuner's spelled-out heuristic drops the
    two-level flag and its group for forward scans."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    wide = {"strategy": "row_block", "BLOCK_N": 1, "BLOCK_T": 512, "num_warps": 4}
    split = {"strategy": "row_block", "BLOCK_N": 4, "BLOCK_T": 256, "num_warps": 4,
             "SPLIT": 4, "TWO_LEVEL": True, "GROUP": 8}
    for N, T in ((1024, 2048), (1200, 6000), (2500, 5000), (1100, 20000), (100000, 4096)):
        assert heuristic_config(N, T, itemsize=2) == split, (N, T)
        assert heuristic_config(N, T) == heuristic_config(N, T, itemsize=4) == wide, (N, T)
    C.validate(split)
    assert heuristic_config(1023, 8192, itemsize=2) == heuristic_config(1023, 8192)
    assert heuristic_config(4096, 2047, itemsize=2) == heuristic_config(4096, 2047)
    assert heuristic_config(1200, 6000, True, 2) == heuristic_config(1200, 6000, True)
    _, _, reload = dirs
    reload()                                    # no DB: every bucket takes the heuristic
    bf16 = _problem(1200, 6000, dtype=torch.bfloat16)
    assert tuning.select_config(bf16) == split
    assert tuning.select_config(_problem(1200, 6000, est=P.DISC)) == wide
    x = torch.zeros(1200, 6000, dtype=torch.bfloat16, device="meta")
    assert rlscan.which_config("gae", x, gpu=GPU).config == dict(split, num_stages=1)
    cell = grid.Cell("eligibility_traces", 1200, 6000, "bfloat16", "time_last")
    assert sweep.heuristic_for(cell) == C.validate(
        {k: v for k, v in split.items() if k not in ("TWO_LEVEL", "GROUP")})
    assert sweep.heuristic_for(cell._replace(estimator="gae")) == C.validate(split)


def test_untuned_fp32_time_major_rows_of_2048_steps_walk_for_the_heaviest_backward_scans(
        monkeypatch):
    """fp32 [T, N] buffers of 2048-8192 rows x 2048-4095 steps: GAE, λ-returns, V-trace and
    Retrace walk their rows in row blocks (forced on an H100: x0.57-0.89 the spans' time over
    20 cells), 8x128/w8 while its programs fit in one wave of 132 SMs (up to 8 rows a program
    slot, 3 slots an SM: V-trace's registers allow 2, but its rows this long won with 3), then
    16x64/w8. Past 8192 rows, and for discounted returns, the forward scans, bf16 and other
    step counts, the spans of 128x4 tiles."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    spans = {"strategy": "chunked", "BLOCK_N": 128, "BLOCK_T": 4, "num_warps": 1,
             "CHUNKS_PER_SPAN": 8}
    walk8 = {"strategy": "row_block", "BLOCK_N": 8, "BLOCK_T": 128, "num_warps": 8}
    walk16 = {"strategy": "row_block", "BLOCK_N": 16, "BLOCK_T": 64, "num_warps": 8,
              "SCALAR_LOADS": True}
    for est, slots in (("gae", 396), ("lambda_returns", 396), ("vtrace", 396),
                       ("retrace", 396)):
        for T in (2048, 3000, 4095):
            assert heuristic_config(2048, T, True, 4, est) == walk8, (est, T)
            assert heuristic_config(8 * slots, T, True, 4, est) == walk8, (est, T)
            assert heuristic_config(8 * slots + 1, T, True, 4, est) == walk16, (est, T)
            assert heuristic_config(8192, T, True, 4, est) == walk16, (est, T)
            assert heuristic_config(8193, T, True, 4, est) == spans, (est, T)
        for N, T in ((2047, 2048), (4096, 4096), (4096, 2047)):     # outside the rule
            assert heuristic_config(N, T, True, 4, est) == heuristic_config(N, T, True), (
                est, N, T)
        assert heuristic_config(4096, 2048, True, 2, est) == spans, est
        assert heuristic_config(4096, 2048, False, 4, est)["BLOCK_N"] in (1, 4), est  # time-last
    for est in ("discounted_returns", "eligibility_traces", "episodic_cumsum", "linear_scan",
                ""):
        assert heuristic_config(4096, 2048, True, 4, est) == spans, est
        assert heuristic_config(2048, 2048, True, 4, est) == spans, est
    cell = grid.Cell("vtrace", 4096, 2048, "float32", "time_major")
    assert sweep.heuristic_for(cell) == C.validate(       # V-trace ignores SCALAR_LOADS
        {k: v for k, v in walk16.items() if k != "SCALAR_LOADS"})


def test_untuned_time_major_calls_of_560_to_4095_rows_of_384_to_1023_steps_take_8_row_tiles(
        monkeypatch):
    """[T, N] buffers of 1024-4095 rows x 384-1023 steps (bf16: 767): 8x128/w8 row blocks,
    twice the programs of the 16x64/w8 tiles (which make one an SM or fewer there), while they
    fit in one wave of 132 SMs: up to 8 rows a program slot, 3 slots an SM by their registers
    (V-trace 2, the forward scans 4). bf16 from 768 steps takes the lane-row spans of longer
    rows. Calls of 560-1023 rows x 384-1023 steps take them too (bf16: from 640 rows, and from
    768 steps the lane-row spans), where the split would run one-chunk spans of 16x64/w8.
    Outside, and for a call that names no estimator, the 16x64/w8 tiles as before."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    walk8 = {"strategy": "row_block", "BLOCK_N": 8, "BLOCK_T": 128, "num_warps": 8}
    lanes = {"strategy": "chunked", "BLOCK_N": 32, "BLOCK_T": 8, "num_warps": 1,
             "CHUNKS_PER_SPAN": 8, "LANE_ROWS": True}
    slots = {"discounted_returns": 396, "gae": 396, "lambda_returns": 396, "vtrace": 264,
             "retrace": 396, "eligibility_traces": 528, "episodic_cumsum": 528,
             "linear_scan": 528}
    assert set(slots) == set(tuning.KERNEL_NAMES.values())
    for est, n in slots.items():
        for itemsize in (4, 2):
            for N, T in ((1024, 384), (2048, 512), (1504, 608), (2048, 767)):
                assert heuristic_config(N, T, True, itemsize, est) == walk8, (est, N, T)
            last = min(8 * n, 4095)
            assert heuristic_config(last, 700, True, itemsize, est) == walk8, est
            if 8 * n < 4095:
                assert heuristic_config(8 * n + 1, 512, True, itemsize, est) == \
                    heuristic_config(8 * n + 1, 512, True, itemsize), est
            for N, T in ((560, 384), (700, 700), (1023, 1023), (1023, 767), (560, 768),
                         (639, 700), (640, 384), (640, 768)):
                if itemsize == 2 and N < 640:                    # bf16 from 640 rows
                    want = heuristic_config(N, T, True, itemsize)
                else:
                    want = lanes if itemsize == 2 and T >= 768 else walk8
                assert heuristic_config(N, T, True, itemsize, est) == want, (est, N, T, itemsize)
            for N, T in ((559, 512), (1023, 383), (700, 1024), (2048, 383), (4096, 512),
                         (2047, 1024)):
                if (N, T, itemsize, est) != (2047, 1024, 4, "retrace"):    # walks from 1024
                    assert heuristic_config(N, T, True, itemsize, est) == \
                        heuristic_config(N, T, True, itemsize), (est, N, T)
        assert heuristic_config(2048, 1023, True, 4, est) == walk8, est
        for T in (768, 900, 1023):
            assert heuristic_config(2500, T, True, 2, est) == lanes, (est, T)
        assert heuristic_config(2048, 512, False, 4, est) != walk8, est     # time-last
    assert heuristic_config(2048, 512, True)["BLOCK_N"] == 16
    assert heuristic_config(700, 700, True)["BLOCK_N"] == 16
    assert heuristic_config(3000, 512, True, 4, "gae", sms=108) == \
        heuristic_config(3000, 512, True)                                   # 8 x 324 = 2592


def test_untuned_time_major_calls_below_4096_rows_of_1024_steps_walk_once_rows_fill_the_gpu(
        monkeypatch):
    """[T, N] buffers below 4096 rows of 1024-2047 steps (bf16: 768) take the lane-row spans
    until their rows fill the GPU, then row blocks: fp32 GAE, λ-returns and V-trace from 2048
    rows, fp32 Retrace from 1024, the fp32 forward scans and bf16 Retrace from 2816 (forced on
    an H100: the spans x1.1-1.9 the best tile's time past there). The row blocks are 8x128/w8
    up to 3 rows-of-8 an SM of 132 (4 for the forward scans; V-trace too, though its registers
    allow 2 a wave), then 16x64/w8. bf16 GAE, V-trace and the forward scans, and a call that
    names no estimator, keep the spans."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    walk8 = {"strategy": "row_block", "BLOCK_N": 8, "BLOCK_T": 128, "num_warps": 8}
    walk16 = {"strategy": "row_block", "BLOCK_N": 16, "BLOCK_T": 64, "num_warps": 8,
              "SCALAR_LOADS": True}
    lanes = {"strategy": "chunked", "BLOCK_N": 32, "BLOCK_T": 8, "num_warps": 1,
             "CHUNKS_PER_SPAN": 8, "LANE_ROWS": True}
    # (estimator, itemsize): the fewest rows that walk, the most that take 8x128/w8
    walks = {("gae", 4): (2048, 3168), ("lambda_returns", 4): (2048, 3168),
             ("vtrace", 4): (2048, 3168), ("retrace", 4): (1024, 3168),
             ("discounted_returns", 4): (2816, 3168), ("eligibility_traces", 4): (2816, 4095),
             ("episodic_cumsum", 4): (2816, 4095), ("linear_scan", 4): (2816, 4095),
             ("retrace", 2): (2816, 3168)}
    for est in list(tuning.KERNEL_NAMES.values()) + [""]:
        for itemsize in (4, 2):
            first, last = walks.get((est, itemsize), (None, None))
            for T in ((1024, 1500, 2047) if itemsize == 4 else (768, 1024, 2047)):
                if first is None:
                    assert heuristic_config(3500, T, True, itemsize, est) == lanes, (est, T)
                    continue
                if first > 1024:
                    assert heuristic_config(first - 1, T, True, itemsize, est) == lanes, (
                        est, itemsize, T)
                assert heuristic_config(first, T, True, itemsize, est) == walk8, (est, T)
                assert heuristic_config(last, T, True, itemsize, est) == walk8, (est, T)
                if last < 4095:
                    assert heuristic_config(last + 1, T, True, itemsize, est) == walk16, (
                        est, itemsize, T)
                    assert heuristic_config(4095, T, True, itemsize, est) == walk16, (est, T)
    assert heuristic_config(3000, 767, True, 2, "retrace") == walk8     # the 8-row rule
    assert heuristic_config(3000, 1023, True, 4, "gae") == walk8        # (before, as it was)
    assert heuristic_config(4096, 1024, True, 4, "gae") == walk16       # 4096+ rows: as before
    assert heuristic_config(3000, 1024, True, 4, "gae", sms=108) == walk16     # 8 x 324 = 2592
    assert heuristic_config(3000, 1024, False, 4, "gae") != walk8       # time-last


def test_untuned_bf16_time_major_calls_of_4096_rows_of_1024_steps_take_the_long_rows_spans(
        monkeypatch):
    """2-byte [T, N] buffers of 4096-8191 rows x 1024-2047 steps: the spans of 8 chunks of
    128x4/w1 that longer rows take (the H100 tuner's 4096x1024 bf16 timings: faster than the
    16x64/w8 tiles for all 8 kernels), for every estimator; fp32 keeps the 16x64/w8 tiles."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    spans = {"strategy": "chunked", "BLOCK_N": 128, "BLOCK_T": 4, "num_warps": 1,
             "CHUNKS_PER_SPAN": 8}
    for est in list(tuning.KERNEL_NAMES.values()) + [""]:
        for N, T in ((4096, 1024), (8191, 2047), (6000, 1500)):
            assert heuristic_config(N, T, True, 2, est) == spans, (est, N, T)
            assert heuristic_config(N, T, True, 4, est)["BLOCK_N"] == 16, (est, N, T)
        for N, T in ((8192, 1024), (4096, 1023)):
            assert heuristic_config(N, T, True, 2, est)["BLOCK_N"] == 16, (est, N, T)
        assert heuristic_config(4095, 1024, True, 2, est)["BLOCK_N"] == (
            16 if est == "retrace" else 32), est                 # row blocks, lane rows
        assert heuristic_config(4096, 1024, False, 2, est) != spans, est         # time-last
    assert heuristic_config(4096, 2048, True, 2, "gae") == spans      # as before, longer rows


def test_untuned_fp32_time_major_calls_of_few_hundred_long_rows_take_narrow_spans(
        monkeypatch):
    """fp32 [T, N] buffers of 128-1023 rows x 4096-32767 steps: spans of 4 chunks of 32x16
    tiles of one row a lane (the tuners' timings at 512x4096, 256x8192, 128x16384: x0.91 the
    128x4 spans' time) for all but V-trace and Retrace, which take spans of 4 chunks of 32x8
    tiles (forced: x0.88 the 128x4 spans' time over 16 timings). GAE and λ-returns past 512
    rows (forced at 700x6000: x1.05-1.08), bf16, 1024+ rows and shorter or longer rows keep
    the 128x4 spans."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    lanes = {"strategy": "chunked", "BLOCK_N": 32, "BLOCK_T": 16, "num_warps": 1,
             "CHUNKS_PER_SPAN": 4, "LANE_ROWS": True}
    spans = {"strategy": "chunked", "BLOCK_N": 128, "BLOCK_T": 4, "num_warps": 1,
             "CHUNKS_PER_SPAN": 8}
    for est in ("discounted_returns", "gae", "lambda_returns", "eligibility_traces",
                "episodic_cumsum", "linear_scan", ""):
        for N, T in ((128, 4096), (512, 4096), (300, 5000), (512, 32767), (256, 8192)):
            assert heuristic_config(N, T, True, 4, est) == lanes, (est, N, T)
            assert heuristic_config(N, T, True, 2, est) == spans, (est, N, T)
        wide = heuristic_config(1023, 6000, True, 4, est)
        assert wide == (spans if est in ("gae", "lambda_returns") else lanes), est
        for N, T in ((1024, 8192), (512, 4095), (512, 32768)):
            assert heuristic_config(N, T, True, 4, est) != lanes, (est, N, T)
        assert heuristic_config(127, 8192, True, 4, est) != lanes, est
        assert heuristic_config(512, 4096, False, 4, est) != lanes, est     # time-last
    narrow = {"strategy": "chunked", "BLOCK_N": 32, "BLOCK_T": 8, "num_warps": 1,
              "CHUNKS_PER_SPAN": 4}
    for est in ("vtrace", "retrace"):
        for N, T in ((128, 4096), (512, 4096), (300, 5000), (1023, 32767), (800, 6000)):
            assert heuristic_config(N, T, True, 4, est) == narrow, (est, N, T)
            assert heuristic_config(N, T, True, 2, est) == spans, (est, N, T)
        for N, T in ((1024, 8192), (512, 4095), (512, 32768)):
            assert heuristic_config(N, T, True, 4, est) not in (lanes, narrow), (est, N, T)
        assert heuristic_config(512, 4096, False, 4, est) != narrow, est     # time-last


def test_time_major_walks_fit_one_wave_of_the_gpus_own_sms(dirs, cpu_is_h200, monkeypatch):
    """The 8-row tiles of the time-major rules fill one wave of the GPU in hand: on a 108-SM
    GPU (an A100) GAE's 8x128 tiles stop at 8 x 324 slots = 2592 rows, where a 132-SM H200
    takes them up to 3168 (then 16x64/w8). ``select_config`` passes the call's device's
    count, ``which_config`` a named GPU's from its DB's device record, the tuner's
    ``heuristic_for`` the current GPU's; without one (CPU, meta tensors), 132."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    walk8, walk16 = (heuristic_config(N, 2048, True, 4, "gae") for N in (3000, 6000))
    assert (walk8["BLOCK_N"], walk16["BLOCK_N"]) == (8, 16)
    assert heuristic_config(2592, 2048, True, 4, "gae", sms=108) == walk8
    assert heuristic_config(3000, 2048, True, 4, "gae", sms=108) == walk16
    assert heuristic_config(3500, 2048, True, 4, "gae", sms=148) == walk8     # a B200
    assert heuristic_config(3000, 2048, True, 4, "gae", sms=132) == walk8
    assert tuning.sm_count(torch.device("cpu")) is None
    assert tuning.sm_count(torch.device("meta")) is None
    shipped, _, reload = dirs
    reload()                                    # no DB: every bucket takes the heuristic
    assert tuning.select_config(_problem(3000, 2048, time_major=True)) == walk8
    monkeypatch.setattr(tuning, "sm_count", lambda device: 108)
    assert tuning.select_config(_problem(3000, 2048, time_major=True)) == walk16
    cell = grid.Cell("gae", 3000, 2048, "float32", "time_major")
    monkeypatch.setattr(sweep, "sm_count", lambda device: 108)
    assert sweep.heuristic_for(cell) == C.validate(walk16)
    write(shipped / "nvidia-a100-sxm4-80gb.json",
          doc({}, name="NVIDIA A100-SXM4-80GB") | {"device": {
              "name": "NVIDIA A100-SXM4-80GB", "capability": [8, 0], "sm_count": 108}})
    reload()
    x = torch.zeros(2048, 3000, device="meta").t()
    assert rlscan.which_config("gae", x, gpu="NVIDIA A100-SXM4-80GB").config == \
        dict(walk16, num_stages=1)
    assert rlscan.which_config("gae", x, gpu=GPU).config == dict(walk8, num_stages=1)


def test_untuned_fp32_gae_vtrace_retrace_calls_of_1024_rows_of_2048_steps_split_rows(
        dirs, cpu_is_h200, monkeypatch):
    """fp32 GAE, V-trace and Retrace take the split two-level tile where the other estimators
    keep 1x512/w4 (forced off the grid: GAE x0.79-0.86, fiftieth session; V-trace x0.87-1.00 and
    Retrace x0.75-1.02, fifty-fourth; λ-returns and discounted returns won some cells and lost
    others, x0.78-1.15); without the group of 8 that bf16 takes. The estimator reaches the
    heuristic through ``select_config``, ``which_config`` and the tuner's ``heuristic_for``; a
    call without one (``estimator=""``) gets every estimator's config."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    wide = {"strategy": "row_block", "BLOCK_N": 1, "BLOCK_T": 512, "num_warps": 4}
    split = {"strategy": "row_block", "BLOCK_N": 4, "BLOCK_T": 256, "num_warps": 4,
             "SPLIT": 4, "TWO_LEVEL": True}
    for N, T in ((1024, 2048), (1200, 6000), (2500, 5000), (1100, 20000)):
        assert heuristic_config(N, T) == wide, (N, T)
        for est in ("gae", "vtrace", "retrace"):
            assert heuristic_config(N, T, estimator=est) == split, (N, T, est)
            assert heuristic_config(N, T, itemsize=2, estimator=est)["GROUP"] == 8, (N, T)
        for est in ("discounted_returns", "eligibility_traces", "lambda_returns"):
            assert heuristic_config(N, T, estimator=est) == wide, (N, T, est)
    for est in ("gae", "vtrace", "retrace"):
        for N, T in ((1023, 8192), (4096, 2047)):   # outside the rule, what all get
            assert heuristic_config(N, T, estimator=est) == heuristic_config(N, T), (N, T)
        assert heuristic_config(1200, 6000, True, estimator=est) == \
            heuristic_config(1200, 6000, True, estimator="discounted_returns")
    C.validate(split)
    _, _, reload = dirs
    reload()                                    # no DB: every bucket takes the heuristic
    assert tuning.select_config(_problem(1200, 6000)) == split
    assert tuning.select_config(_problem(1200, 6000, est=P.VTRACE)) == split
    assert tuning.select_config(_problem(1200, 6000, est=P.LAMBDA)) == wide
    x = torch.zeros(1200, 6000, device="meta")
    assert rlscan.which_config("gae", x, gpu=GPU).config == dict(split, num_stages=1)
    assert rlscan.which_config("lambda_returns", x, gpu=GPU).config == dict(wide, num_stages=1)
    cell = grid.Cell("retrace", 1200, 6000, "float32", "time_last")
    assert sweep.heuristic_for(cell) == C.validate(split)
    assert sweep.heuristic_for(cell._replace(estimator="discounted_returns")) == \
        C.validate(wide)


def test_time_last_calls_that_used_to_split_into_one_chunk_spans_take_the_winners_tiles(
        monkeypatch):
    """Untuned time-last calls that would run one-chunk spans of 2x128 tiles: with 64-2046 rows
    below 2048 steps (128-511 rows: below 1024) one row a program in 512-step chunks instead
    (128-511 rows from 1024 steps split each row over warps); with fewer rows or
    longer ones spans of 4 chunks from 3072 chunks in all, of 2 from 2048 (from 1024 where a
    row holds 192+ chunks), else one-chunk spans as before. A single row keeps its 1x1024
    spans; time-major is unchanged."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    wide = {"strategy": "row_block", "BLOCK_N": 1, "BLOCK_T": 512, "num_warps": 4}
    for N, T in ((64, 512), (64, 385), (1024, 1024), (300, 1023), (127, 2047), (512, 2047),
                 (2046, 1000)):
        assert heuristic_config(N, T) == wide, (N, T)
    assert heuristic_config(300, 2047)["SPLIT"] == heuristic_config(128, 1024)["SPLIT"] == 8
    assert heuristic_config(300, 1500, itemsize=2)["SPLIT"] == 8
    assert heuristic_config(300, 3000, itemsize=2)["SPLIT"] == 8
    assert heuristic_config(2047, 1000)["BLOCK_T"] == 128     # 1024 row programs: no split
    assert heuristic_config(63, 512)["CHUNKS_PER_SPAN"] == 1
    spans = {"strategy": "chunked", "BLOCK_N": 2, "BLOCK_T": 128, "num_warps": 2,
             "CHUNKS_PER_SPAN": 4, "TWO_LEVEL": True}
    for N, T in ((32, 32768), (8, 262144), (2, 524288), (64, 16384), (16, 65536),
                 (12, 65536), (24, 40000)):
        cfg = heuristic_config(N, T)
        assert cfg == spans, (N, T)
        C.validate(cfg)
    for N, T in ((8, 65536), (32, 20000), (20, 36000), (8, 40000), (12, 30000), (4, 120000),
                 (6, 50000), (2, 131072)):                              # 1024-3071 chunks
        assert heuristic_config(N, T) == dict(spans, CHUNKS_PER_SPAN=2), (N, T)
    assert heuristic_config(8, 32768)["CHUNKS_PER_SPAN"] == 2          # 1024 chunks, 256 a row
    assert heuristic_config(8, 32640)["CHUNKS_PER_SPAN"] == 1          # 1020 chunks
    assert heuristic_config(12, 24576)["CHUNKS_PER_SPAN"] == 2         # 1152 chunks, 192 a row
    for N, T in ((12, 24448), (32, 8192), (16, 16384), (64, 4096)):   # 191 or fewer a row
        assert heuristic_config(N, T)["CHUNKS_PER_SPAN"] == 1, (N, T)
    assert heuristic_config(8, 65408)["CHUNKS_PER_SPAN"] == 2          # 2044 chunks, 511 a row
    assert heuristic_config(127, 4096)["CHUNKS_PER_SPAN"] == 2          # 2048 chunks, 32 a row
    assert heuristic_config(16, 8192)["CHUNKS_PER_SPAN"] == 1          # 512 chunks
    assert heuristic_config(100, 2500)["CHUNKS_PER_SPAN"] == 1          # 1000 chunks
    assert heuristic_config(64, 1 << 20)["CHUNKS_PER_SPAN"] == 32      # 8192 programs
    assert heuristic_config(1, 1 << 22) == {"strategy": "chunked", "BLOCK_N": 1, "BLOCK_T": 1024,
                                             "num_warps": 4, "CHUNKS_PER_SPAN": 1}
    assert heuristic_config(64, 512, time_major=True)["strategy"] == "chunked"
    C.validate(wide)


def test_time_major_buffers_of_two_or_three_long_rows_take_spans_of_2x64_tiles(monkeypatch):
    """Untuned [T, 2] and [T, 3] buffers from 2**16 steps run spans of 4 chunks of 2x64/w2
    tiles; shorter rows, 4+ rows (the 8-row spans) and time-last calls keep their configs."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    pairs = {"strategy": "chunked", "BLOCK_N": 2, "BLOCK_T": 64, "num_warps": 2,
             "CHUNKS_PER_SPAN": 4}
    for N, T in ((2, 1 << 16), (3, 100000), (3, 1 << 20), (2, 1 << 22)):
        assert heuristic_config(N, T, time_major=True) == pairs, (N, T)
    C.validate(pairs)
    for N, T, major in ((2, (1 << 16) - 1, True), (4, 1 << 16, True), (1, 1 << 20, True),
                        (2, 1 << 18, False)):
        assert heuristic_config(N, T, time_major=major) != pairs, (N, T, major)


@pytest.mark.parametrize("strategy", ["chunked", "lookback"])
def test_rows_of_more_than_65535_spans_launch_fewer_longer_spans(strategy, monkeypatch):
    """A launch grid stops at 65535 programs along y, a row's spans: where a config's spans
    would outnumber that (fixed spans on a horizon past their bucket's), each span walks
    more chunks; a look-back config, whose span is one chunk, runs as chunked spans."""
    from rlscan.kernels import launch as L
    launched = []
    monkeypatch.setattr(L, "_run", lambda kernel, grid_, args, objs, consts, options, spec,
                        names=None: launched.append((grid_, tuple(spec))))
    monkeypatch.setattr(L, "_INTERPRETED", True)
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")          # CPU tensors take the kernel path
    chunks = 65535 + 100
    x = torch.rand(3, 8 * chunks)
    with force_config(strategy=strategy, BLOCK_N=1, BLOCK_T=8, num_warps=1, CHUNKS_PER_SPAN=1):
        rlscan.discounted_returns(x, gamma=0.9)
    spans = [(g[1], spec[-2:]) for g, spec in launched if g[1] > 1]     # (rows, spans) grids
    assert spans and all(k == -(-chunks // 2) and spec == (2, k) for k, spec in spans), spans
    with force_config(strategy=strategy, BLOCK_N=1, BLOCK_T=8, num_warps=1, CHUNKS_PER_SPAN=1):
        launched.clear()
        rlscan.discounted_returns(x[:, :8 * 65535], gamma=0.9)     # 65535 spans: as asked
    assert max(g[1] for g, _ in launched) == 65535


def test_mid_sized_time_major_buffers_keep_whole_row_blocks_or_take_lane_row_spans(monkeypatch):
    """Untuned time-major calls of 1024-16383 rows below 2048 steps (PPO rollout buffers off the
    tuned grid) run 16x64/w8 row blocks whole (loading one value an instruction), never split
    into one-chunk spans that read the inputs twice; from 1024 steps below 4096 rows, spans of 8
    chunks of 32x8 one-row-a-lane tiles. Fewer rows still split where row programs are few, and
    the same shapes time-last are unchanged."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    blocks = {"strategy": "row_block", "BLOCK_N": 16, "BLOCK_T": 64, "num_warps": 8,
              "SCALAR_LOADS": True}
    lanes = {"strategy": "chunked", "BLOCK_N": 32, "BLOCK_T": 8, "num_warps": 1,
             "CHUNKS_PER_SPAN": 8, "LANE_ROWS": True}
    for N, T in ((1024, 256), (1024, 1023), (3000, 384), (4096, 1024), (8192, 512),
                 (16383, 2047), (12000, 1536)):
        assert heuristic_config(N, T, time_major=True) == blocks, (N, T)
    for N, T in ((1024, 1024), (2048, 1536), (4095, 2047)):
        assert heuristic_config(N, T, time_major=True) == lanes, (N, T)
    C.validate(blocks)
    C.validate(lanes)
    assert heuristic_config(1024, 2048, time_major=True)["BLOCK_N"] == 128   # long rows: spans
    assert heuristic_config(512, 512, time_major=True)["strategy"] == "chunked"
    for N, T in ((1024, 512), (4096, 1024)):
        assert heuristic_config(N, T)["BLOCK_N"] != 16


# The row and step counts the heuristic's rules name as bounds, each with its neighbours
_RULE_ROWS = (1, 2, 3, 4, 5, 7, 8, 16, 17, 31, 32, 33, 63, 64, 127, 128, 255, 256, 511, 512,
              559, 560, 639, 640, 1023, 1024, 2047, 2048, 2815, 2816, 3167, 3168, 4095, 4096,
              8191, 8192, 12672, 12673, 16383, 16384, 32767, 32768, 131071, 131072)
_RULE_STEPS = (1, 2, 3, 64, 127, 128, 383, 384, 767, 768, 1023, 1024, 2047, 2048, 4095, 4096,
               11999, 12000, 16383, 16384, 32767, 32768, 65535, 65536, 65537, 262143, 262144,
               1 << 20, 1 << 22)


def test_every_heuristic_choice_is_a_valid_config_for_its_layout(monkeypatch):
    """At and around every bound its rules name, for every kernel (and none), both item sizes
    and GPUs of 78-132 SMs, the heuristic gives a config ``configs.validate`` keeps as it is;
    one-row-a-lane tiles and scalar loads only for time-major buffers, split rows and two-level
    scans only for time-last ones; a fresh dict each call (the module's shared tiles, such as
    8x128/w8, are copied out, never handed over)."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    kernels = sorted(set(tuning.KERNEL_NAMES.values())) + [""]
    for est, time_major, itemsize, sms, N, T in itertools.product(
            kernels, (False, True), (4, 2), (None, 78, 114), _RULE_ROWS, _RULE_STEPS):
        cfg = heuristic_config(N, T, time_major, itemsize, est, sms)
        where = (est, time_major, itemsize, sms, N, T)
        assert C.validate(cfg) == dict(cfg, num_stages=1), where
        if time_major:
            assert not cfg.get("TWO_LEVEL") and "SPLIT" not in cfg, where
        else:
            assert not cfg.get("LANE_ROWS") and not cfg.get("SCALAR_LOADS"), where
        cfg["BLOCK_N"] = 0
        assert heuristic_config(N, T, time_major, itemsize, est, sms)["BLOCK_N"] > 0, where


def test_untuned_tens_of_long_fp32_gae_and_discounted_rows_take_look_back_spans(monkeypatch):
    """Untuned time-last fp32 GAE and discounted returns of 8-63 rows x 12000-65536 steps run
    look-back spans of 1x256/w1 two-level, GAE's capped at 64 registers (H100: x0.80-0.95 the
    chunked spans' time over 14 timings), at most LOOKBACK_MAX_SPANS a row, so the call's
    decay never matters; V-trace (4 of 7 faster), the other estimators, bf16, time-major
    buffers and the neighbouring shapes keep their configs. At odd T the launcher runs the
    same tile in one level, uncapped."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    lookback = {"strategy": "lookback", "BLOCK_N": 1, "BLOCK_T": 256, "num_warps": 1,
                "CHUNKS_PER_SPAN": 1, "TWO_LEVEL": True}
    for est in ("gae", "discounted_returns"):
        want = dict(lookback, maxnreg=64) if est == "gae" else lookback
        for N, T in ((8, 12000), (8, 40000), (40, 12000), (63, 65536), (32, 32767)):
            assert heuristic_config(N, T, False, 4, est) == want, (est, N, T)
            assert C.spans_within_limit(lookback, T)
        for N, T, itemsize, tm in ((7, 40000, 4, False), (64, 20000, 4, False),
                                   (8, 11999, 4, False), (8, 65537, 4, False),
                                   (8, 40000, 2, False), (8, 40000, 4, True)):
            assert heuristic_config(N, T, tm, itemsize, est)["strategy"] != "lookback", \
                (est, N, T, itemsize, tm)
    for est in ("vtrace", "retrace", "lambda_returns", "eligibility_traces", ""):
        assert heuristic_config(8, 40000, False, 4, est)["strategy"] == "chunked", est
    odd = C.for_odd_rows(heuristic_config(8, 40001, False, 4, "gae"), 8, 40001)
    assert odd == {k: v for k, v in lookback.items() if k != "TWO_LEVEL"}


def test_untuned_fp32_time_major_discounted_returns_and_traces_of_8k_rows_take_32x64_tiles(
        monkeypatch):
    """fp32 time-major calls of discounted returns and eligibility traces of 8192-16383 rows x
    128-1023 steps run 32x64/w4 row blocks (forced on an H100: x0.78-0.99 the 16x64/w8 tiles'
    time over 10 cells) while they fit one wave, 3 an SM (12672 rows on 132 SMs), then the
    32x16/w1 lane rows of 16384+ rows; the other estimators, bf16, and the neighbouring shapes
    do not."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    wide = {"strategy": "row_block", "BLOCK_N": 32, "BLOCK_T": 64, "num_warps": 4}
    lanes = {"strategy": "row_block", "BLOCK_N": 32, "BLOCK_T": 16, "num_warps": 1,
             "LANE_ROWS": True}
    for est in ("discounted_returns", "eligibility_traces"):
        for N, T in ((8192, 128), (12000, 200), (12672, 1023)):
            assert heuristic_config(N, T, True, 4, est) == wide, (est, N, T)
        for N, T in ((12673, 128), (14500, 700), (16383, 1023)):
            assert heuristic_config(N, T, True, 4, est) == lanes, (est, N, T)
        assert heuristic_config(10368, 500, True, 4, est, sms=108) == wide, est  # 3 x 32 x 108
        assert heuristic_config(10369, 500, True, 4, est, sms=108) == lanes, est
        for N, T, itemsize in ((8191, 512, 4), (16384, 512, 4), (12000, 127, 4),
                               (12000, 1024, 4), (12000, 200, 2)):
            assert heuristic_config(N, T, True, itemsize, est) != wide, (est, N, T, itemsize)
        assert heuristic_config(12000, 200, False, 4, est) != wide, est            # time-last
    for est in ("gae", "lambda_returns", "vtrace", "retrace", "episodic_cumsum", ""):
        assert heuristic_config(12000, 200, True, 4, est) != wide, est


def test_time_major_16k_rows_take_lane_row_blocks_and_tens_of_long_rows_take_spans(
        monkeypatch):
    """Untuned time-major calls of 16384-32767 rows x 128-1023 steps run 32x16/w1 row blocks of
    one row a lane; of 32-127 rows from 4096 steps (17-31 rows from 16384), spans of 4 chunks of
    32x8/w1 (forced on an H100: x0.54-0.86 the one-chunk 16x64/w8 spans' time over 18 cells,
    which won at 2048-4000 steps). Neighbours keep their configs, and time-last calls are
    unchanged."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    lanes = {"strategy": "row_block", "BLOCK_N": 32, "BLOCK_T": 16, "num_warps": 1,
             "LANE_ROWS": True}
    spans = {"strategy": "chunked", "BLOCK_N": 32, "BLOCK_T": 8, "num_warps": 1,
             "CHUNKS_PER_SPAN": 4}
    for N, T in ((16384, 128), (20000, 500), (32767, 1023)):
        assert heuristic_config(N, T, time_major=True) == lanes, (N, T)
    for N, T in ((32, 32768), (63, 1 << 20), (32, 4096), (100, 5000), (127, 60000),
                 (17, 16384), (31, 30000)):
        for est in list(tuning.KERNEL_NAMES.values()) + [""]:
            for itemsize in (4, 2):
                assert heuristic_config(N, T, True, itemsize, est) == spans, (N, T, est)
    C.validate(lanes)
    C.validate(spans)
    for N, T in ((16384, 127), (16384, 1024), (32768, 512), (16383, 512), (32, 4095),
                 (127, 2048), (128, 32768), (16, 1 << 20), (17, 16383), (31, 4096)):
        got = heuristic_config(N, T, time_major=True)
        assert got not in (lanes, spans), (N, T)
    assert heuristic_config(20000, 500) != lanes and heuristic_config(40, 40000) != spans


def test_compile_jobs_launch_exactly_what_the_timing_process_launches(monkeypatch):
    """A worker compiles from uninitialised stand-ins of a cell's inputs
    (workers._empty_like_draw); only if every candidate then makes the very launches the timing
    process makes on the drawn inputs (kernels, constexprs, options, and what Triton
    specialises on: pointer dtypes and alignment, integer values) does the timing process find
    the kernels compiled. Both layouts and dtypes, a spanned and a split-row shape. (On the
    whole standard grid: 0 of 3,787 fp32 and 0 of 4,457 bf16 (cell, config) pairs differ,
    twenty-eighth session.)"""
    from rlscan.kernels import launch as L
    from rlscan.tune import workers
    seen = []
    monkeypatch.setattr(L, "_run", lambda kernel, grid_, args, objs, consts, options, spec,
                        names=None: seen.append((kernel, consts, options, tuple(spec))))
    monkeypatch.setattr(L, "_INTERPRETED", True)
    monkeypatch.setattr(L, "_pdl_capable", lambda device: True)
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")        # CPU tensors take the kernel path
    cells = grid.cells([(8, 4096), (64, 512)], ["gae", "vtrace", "episodic_cumsum"],
                       ["float32", "bfloat16"], ["time_last", "time_major"])
    compared = 0
    for cell in cells:
        drawn = sweep.prepare(cell, "cpu", [0])[0]
        stand_in = grid.place(workers._empty_like_draw(cell, "cpu"), cell.layout, "cpu")
        for cfg in sweep.with_heuristic(C.candidates(cell.estimator, cell.N, cell.T,
                                                     cell.layout, cell.dtype), cell):
            launched = []
            for call in (drawn, stand_in):
                seen.clear()
                with force_config(**cfg):
                    grid.run(cell.estimator, call)
                launched.append(list(seen))
            assert launched[0] and launched[0] == launched[1], (cell, C.label(cfg))
            compared += 1
    assert compared > 100


def test_proxy_shapes_specialise_like_the_real_ones():
    for n in [1, 2, 8, 16, 17, 63, 64, 65, 100, 128, 4096, 4097, 4113, 131072, 1048576]:
        p = proxy(n)
        assert p <= max(n, 64) and (p == 1) == (n == 1) and (p % 16 == 0) == (n % 16 == 0)


# --------------------------------------------------------------------------- the tuner, end to end
def test_tuner_end_to_end_with_a_fake_timer(tmp_path, dirs, monkeypatch):
    """Selection, the float64 gate, failure handling and the DB written, on CPU: the fake
    timer favours two configs that must lose (one gives wrong numbers, one fails to run)."""
    import triton
    *_, reload = dirs
    cells = grid.cells([(64, 40), (5, 300)], ["gae", "episodic_cumsum"],
                       ["float32", "bfloat16"], ["time_last", "time_major"])
    assert len(cells) == 16
    wrong, broken = C.candidates("gae", 64, 40, "time_last", "float32")[:2]   # timer's favourites
    real_run = grid.run

    def run(estimator, call):
        from rlscan.kernels import launch
        forced = launch._forced
        if forced is not None and C.label(forced) == C.label(broken):
            raise triton.runtime.errors.OutOfResources(300000, 232448, "shared memory")
        outs = real_run(estimator, call)
        if forced is not None and C.label(forced) == C.label(wrong):
            outs = tuple(o + 1e-2 for o in outs)
        return outs
    monkeypatch.setattr(grid, "run", run)
    favourite = {C.label(wrong): 0.5, C.label(broken): 0.5}

    def fake_timer(call, n_sets, config, cutoff_us=None):
        for i in range(n_sets):                  # every rotated input set must run
            call(i)
        return favourite.get(C.label(config), 10.0 + config["BLOCK_T"] / config["BLOCK_N"])

    with Workers(0, "cpu") as w:
        results = sweep.run(cells, "cpu", fake_timer, w, l2_bytes=1 << 16, bandwidth=1e12)
    for r in results:
        statuses = {m.label: m.status for m in r.measured}
        assert r.winner is not None and r.winner.label not in (C.label(wrong), C.label(broken))
        best_ok = min(m.us for m in r.measured if m.status == "ok")
        assert r.winner.us == best_ok and r.heuristic is not None
        if C.label(wrong) in statuses:
            assert statuses[C.label(wrong)].startswith("rejected: output 0 off by")
        if C.label(broken) in statuses:
            assert statuses[C.label(broken)].startswith("failed: OutOfResources")
    assert any(C.label(broken) in {m.label for m in r.measured} for r in results)
    assert any(C.label(wrong) in {m.label for m in r.measured} for r in results)

    path = db.write_entries(tmp_path, DEVICE, SOFTWARE, sweep.entries_by_kernel(results))
    written = json.loads(path.read_text())
    e = written["kernels"]["gae"]["entries"][0]
    assert e["candidates"] == len(e["timings"]) and e["floor_us"] > 0
    assert written["kernels"]["gae"]["source_hash"] == tuning.kernel_source_hash()
    tuning.load(shipped=tmp_path, overlay=tmp_path / "none")
    for r in results:
        c = r.cell
        x = torch.empty(c.N, c.T, device="meta", dtype=getattr(torch, c.dtype))
        if c.layout == "time_major":
            x = torch.empty(c.T, c.N, device="meta", dtype=x.dtype).t()
        got = rlscan.which_config(c.estimator, x, gpu=GPU)
        assert got.config == r.winner.config and got.source == f"db:{path}"
    table = sweep.table(results)
    assert "vs_heuristic" in table and len(table.splitlines()) == len(cells) + 1


def test_sweep_says_where_each_buckets_wall_time_went(monkeypatch):
    """Every cell's seconds are split by sweep.PHASES where they are spent: a float64 reference
    that takes 0.3 s shows under references for the cells that wait for it, a timer that takes
    20 ms a candidate under timing; time_report sums the phases and names the slowest bucket."""
    import time
    cells = grid.cells([(8, 40)], ["gae", "episodic_cumsum"], ["float32"], ["time_last"])
    real_reference = grid.reference

    def slow_reference(key, device="cpu"):
        if key[0] == "gae":
            time.sleep(0.3)
        return real_reference(key, device)
    monkeypatch.setattr(grid, "reference", slow_reference)

    def timer(call, n_sets, config, cutoff_us=None):
        time.sleep(0.02)
        return 10.0 + config["BLOCK_T"]

    with Workers(0, "cpu") as w:
        results = sweep.run(cells, "cpu", timer, w, l2_bytes=1 << 16, bandwidth=1e12)
    by_est = {r.cell.estimator: r for r in results}
    for r in results:
        assert set(r.seconds) == set(sweep.PHASES) and min(r.seconds.values()) >= 0
        n_timed = sum(m.status == "ok" for m in r.measured)
        assert n_timed > 0 and 0.02 * n_timed <= r.seconds["timing"] < 0.02 * n_timed + 1.0
    assert by_est["gae"].seconds["references"] >= 0.3
    assert by_est["episodic_cumsum"].seconds["references"] < 0.3
    report = sweep.time_report(results)
    total_timing = sum(r.seconds["timing"] for r in results)
    assert report[0].startswith("time by phase over 2 buckets: references ")
    assert f"timing {total_timing:.0f} s" in report[0]
    assert report[1].startswith("slow bucket gae 8x40 float32 time_last: ")
    assert len(report) == 3 and sweep.time_report([]) == []


def test_the_winner_is_within_the_span_limit_and_faster_lookbacks_beyond_it_are_kept_apart():
    """sweep.pick (the tuner's and --reselect's rule): the winner is the fastest config within
    the look-back span limit; look-back configs beyond it that were faster become the entry's
    bounded_walk, fastest first, at most BOUNDED_WALK_KEPT; slower ones are dropped."""
    T = 1 << 20
    def m(text, us):
        c = validate_label(text)
        return sweep.Measured(c, C.label(c), us, "ok")
    chunked, row = m("chunked/1x256/w1/s1/c2/2l", 12.5), m("row_block/1x1024/w4/s1", 900.0)
    walks = [m(f"lookback/1x{bt}/w{w}/s1/c1", us)
             for bt, w, us in ((512, 1, 9.0), (256, 1, 10.3), (1024, 4, 11.0), (2048, 8, 11.5),
                               (128, 1, 12.0), (4096, 8, 20.0))]
    winner, bounded = sweep.pick([row, walks[3], chunked] + walks[:3] + walks[4:], T)
    assert winner is chunked
    assert [b.us for b in bounded] == [9.0, 10.3, 11.0, 11.5] == \
        [w.us for w in walks[:sweep.BOUNDED_WALK_KEPT]]
    assert sweep.pick(walks, T) == (None, ())                       # no winner: no entry
    assert sweep.pick([chunked, row], T) == (chunked, ())
    short = m("lookback/1x256/w1/s1/c1", 5.0)                        # 64 spans at 16384 steps
    assert sweep.pick([chunked, short], 16384) == (short, ())
    cell = grid.Cell("gae", 1, T, "float32", "time_last")
    e = sweep.entry(sweep.CellResult(cell, [chunked, row] + walks, winner, None, 4.9, bounded))
    assert e["config"] == chunked.config and [b["median_us"] for b in e["bounded_walk"]] == \
        [9.0, 10.3, 11.0, 11.5]
    assert "bounded_walk" not in sweep.entry(sweep.CellResult(cell, [chunked], chunked, None,
                                                              4.9))


@pytest.mark.parametrize("walk_us, wrong, spans", [(11.0, False, 72), (11.5, False, 72),
                                                   (11.6, False, 8), (9.0, True, 8)])
def test_a_bounded_walk_reaches_the_first_wide_window_where_its_worst_case_is_near_the_winner(
        walk_us, wrong, spans, monkeypatch):
    """sweep.walk_reach times a bounded_walk config and the winner on the cell's input sets
    without episode ends at the decay whose walks end within LOOKBACK_SECOND_REACH spans (every
    set run): the config may serve walks that long where it gives the winner's results there and
    takes at most WORST_MARGIN (15%) more time; else only the first window. The entry says so."""
    assert C.LOOKBACK_SECOND_REACH == 72 and sweep.WORST_MARGIN == 0.15
    cell = grid.Cell("gae", 2, 300, "float32", "time_last")
    sets = [grid.place(grid.draw(cell, i), "time_last", "cpu") for i in range(2)]
    chunked = validate_label("chunked/1x16/w1/s1/c1")
    walk = validate_label("lookback/1x16/w1/s1/c1")
    winner = sweep.Measured(chunked, C.label(chunked), 10.0, "ok")
    real_run, seen = grid.run, []

    def run(estimator, call):
        from rlscan.kernels import launch
        flags, gamma = call.args[-1], call.kwargs["gamma"]
        seen.append((bool(flags.any()), gamma, call.kwargs["lmbda"]))
        outs = real_run(estimator, call)
        wrong_one = wrong and C.label(launch._forced) == C.label(walk)
        return tuple(o + 1e-2 for o in outs) if wrong_one else outs
    monkeypatch.setattr(grid, "run", run)
    timed = []

    def fake_timer(call, n_sets, config, cutoff_us=None):
        for i in range(n_sets):
            call(i)
        timed.append(C.label(config))
        return walk_us if config == walk else 10.0

    reach = sweep.walk_reach(cell, sets, winner, walk, fake_timer)
    beta = C.walk_decay_limit(walk, C.LOOKBACK_SECOND_REACH)
    assert seen and set(seen) == {(False, beta, 1.0)}       # no episode end, a = beta
    assert reach.spans == spans
    assert (reach.worst_us, reach.winner_us) == ((None, None) if wrong else (walk_us, 10.0))
    assert timed == ([] if wrong else [C.label(chunked), C.label(walk)])
    e = sweep.entry(sweep.CellResult(cell, [winner], winner, None, 1.0,
                                     (sweep.Measured(walk, C.label(walk), 9.0, "ok"),), (reach,)))
    item = e["bounded_walk"][0]
    assert item.get("walk_spans") == (None if wrong else spans)
    assert tuning._bounded_walk([item]) == ((walk, spans),)   # as a call will read it
    if not wrong:               # a cell's configs of one span length: the winner timed once
        shared, timed[:] = {}, []
        for _ in range(2):
            sweep.walk_reach(cell, sets, winner, walk, fake_timer, shared)
        assert timed == [C.label(chunked), C.label(walk), C.label(walk)]


def test_no_episode_end_inputs_make_every_step_factor_the_decay():
    """grid.without_episode_ends: the done flags cleared, γ = decay, λ = 1, importance ratios
    1, so that P.decay_bound of the call is the decay and every step's a equals it."""
    for est in ("gae", "vtrace", "retrace", "lambda_returns", "discounted_returns",
                "eligibility_traces", "episodic_cumsum"):
        call = grid.draw(grid.Cell(est, 3, 50, "float32", "time_last"), 0)
        assert call.args[-1].any()                                  # the grid's episode ends
        w = grid.without_episode_ends(call, 0.97)
        assert not w.args[-1].any() and w.args[-1].dtype == call.args[-1].dtype
        assert w.kwargs.get("gamma", 0.97) == 0.97 and w.kwargs.get("lmbda", 1.0) == 1.0
        if "log_ratio" in call.kwargs:
            assert not w.kwargs["log_ratio"].any()
        assert call.args[-1].any()                                  # the original untouched
    with pytest.raises(ValueError, match="linear_scan"):
        grid.without_episode_ends(grid.draw(grid.Cell("linear_scan", 3, 50, "float32",
                                                      "time_last"), 0), 0.9)


def test_a_bounded_walk_config_serves_walks_up_to_its_walk_spans():
    """A DB entry's bounded_walk pairs (config, walk_spans): with walk_spans at the second reach
    a 512-step span config serves γ = 0.99 and 0.997 on 2**20-step rows (walks end within 72
    spans), not 0.998; at the first window only up to ~0.971."""
    span = validate_label("lookback/1x512/w1/s1/c1/2l")
    long = 1 << 20
    two = ((span, C.LOOKBACK_SECOND_REACH),)
    assert C.walk_decay_limit(span, C.LOOKBACK_SECOND_REACH) == pytest.approx(0.99714, abs=1e-5)
    for decay, reach_two, reach_one in ((0.95, True, True), (0.99, True, False),
                                        (0.997, True, False), (0.998, False, False),
                                        (None, False, False)):
        assert (C.bounded_walk_config(two, decay, long) == span) is reach_two, decay
        assert (C.bounded_walk_config(first_window(span), decay, long) == span) is reach_one
    for bad in (9, True, "72"):
        with pytest.raises(ValueError, match="walk_spans"):
            tuning._bounded_walk([{"config": span, "walk_spans": bad}])
    assert tuning._bounded_walk([{"config": span}]) == first_window(span)


def test_sweep_stops_when_the_device_is_gone(monkeypatch):
    """A sticky device error fails every candidate; the sweep stops instead of recording that
    for every remaining bucket, and keeps the buckets already done."""
    cells = grid.cells([(4, 16), (8, 16)], ["gae"], ["float32"], ["time_last"])

    def broken(estimator, call):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    monkeypatch.setattr(grid, "run", broken)
    monkeypatch.setattr(torch, "ones", broken)
    done = []
    with Workers(0, "cpu") as w, pytest.raises(sweep.SweepAborted, match="illegal memory"):
        sweep.run(cells, "cpu", lambda *a, **k: 1.0, w, results=done)
    assert len(done) == 1 and done[0].winner is None


def test_cli_without_cuda_says_so(capsys, monkeypatch):
    from rlscan.tune import cli
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert cli.main(["--quick", "--estimators", "gae"]) == 2
    assert "no CUDA device" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.parser().parse_args(["--estimators", "gea"])
    args = cli.parser().parse_args(["--estimators", "gae,vtrace", "--shapes", "4096x128,8x65536"])
    assert args.estimators == ["gae", "vtrace"] and args.shapes == [(4096, 128), (8, 65536)]


def test_tune_shapes_take_named_sets_beside_rows_x_steps():
    from rlscan.tune import cli
    args = cli.parser().parse_args(["--shapes", "off-grid-envs, 3x5"])
    assert args.shapes == [*grid.NAMED_SHAPES["off-grid-envs"], (3, 5)]
    assert grid.parse_shapes("STANDARD") == list(grid.STANDARD_SHAPES)
    with pytest.raises(ValueError, match="'off-grid'.*expected ROWSxSTEPS.*off-grid-envs"):
        grid.parse_shapes("off-grid")
    # the named sets are off the grid: every one of their buckets is new to it
    tuned = {(tuning.bucket_index(n), tuning.bucket_index(t)) for n, t in grid.STANDARD_SHAPES}
    for name in ("off-grid-envs", "off-grid-sequences"):
        buckets = [(tuning.bucket_index(n), tuning.bucket_index(t))
                   for n, t in grid.NAMED_SHAPES[name]]
        assert len(set(buckets)) == len(buckets) and not set(buckets) & tuned, name
    # ... but for the unaligned set, whose rows and steps are multiples of 4, not of 16
    assert all(x % 16 and not x % 4 for shape in grid.NAMED_SHAPES["unaligned"] for x in shape)
    # and the odd-lengths set, whose rows (time-last) are no multiple of 4, odd or 2 mod 4
    odd = [t for _, t in grid.NAMED_SHAPES["odd-lengths"]]
    assert all(t % 4 for t in odd) and {t % 2 for t in odd} == {0, 1}


def test_time_major_single_rows_are_tuned_as_the_time_last_cells_their_calls_read():
    """A [T, 1] buffer has time stride 1: its calls look up time-last entries, so the tuner
    measures (once) the time-last cell, not a time-major one nothing would read."""
    cells = grid.cells([(1, 4096), (8, 4096)], ["gae"], ["float32"], ["time_last", "time_major"])
    assert [(c.N, c.layout) for c in cells] == [(1, "time_last"), (8, "time_last"),
                                                (8, "time_major")]
    only_major = grid.cells([(1, 4096)], ["gae"], ["float32"], ["time_major"])
    assert [c.layout for c in only_major] == ["time_last"]
    x = torch.empty(4096, 1, device="meta")
    assert tuning.which_config("gae", x, time_dim=0).layout == only_major[0].layout


# --------------------------------------------------------------------------- on a GPU
@pytest.mark.gpu
def test_rlscan_tune_quick_on_the_gpu(tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    env = dict(os.environ, RLSCAN_TUNING_DIR=str(tmp_path / "overlay"))
    env.pop("TRITON_INTERPRET", None)
    env.pop("RLSCAN_INTERPRET", None)
    proc = subprocess.run([sys.executable, "-m", "rlscan.tune.cli", "--quick", "--estimators",
                           "gae", "--out", str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    slug = tuning.gpu_slug(torch.cuda.get_device_name())
    path = tmp_path / f"{slug}.json"
    parsed = tuning.parse_db(path, expect_slug=slug)
    assert parsed.skipped == [] and parsed.stale == []
    assert len(parsed.entries) == len(grid.QUICK_SHAPES) * 4
    assert "vs_heuristic" in proc.stdout
    code = ("import torch, rlscan\n"
            "x = torch.randn(4096, 128, device='cuda')\n"
            "print(rlscan.which_config('gae', x).source)\n")
    env["RLSCAN_TUNING_DIR"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.strip()
    assert out == f"overlay:{path}"


@pytest.mark.gpu
def test_untuned_calls_size_their_waves_by_the_gpus_own_sm_count(dirs, monkeypatch):
    """On a GPU, ``sm_count`` reads the device's SM count (an index-less device is the current
    one), and an untuned call's config, from ``select_config`` and ``which_config`` alike, is
    the heuristic's for that count: at 3000x2048 time-major fp32 GAE, 8x128/w8 where 8 rows x 3
    programs x the SMs hold 3000 rows (132 SMs), else 16x64/w8."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    assert tuning.sm_count(torch.device("cuda")) == sms
    assert tuning.sm_count(torch.device("cuda", torch.cuda.current_device())) == sms
    *_, reload = dirs
    reload()                                    # no DB: the heuristic
    x = torch.zeros(2048, 3000, device="cuda").t()
    want = heuristic_config(3000, 2048, True, 4, "gae", sms)
    assert want["BLOCK_N"] == (8 if 24 * sms >= 3000 else 16)
    pb = P.Problem(est=P.GAE, reverse=True, N=3000, T=2048, p0=x)
    assert tuning.select_config(pb) == want
    assert rlscan.which_config("gae", x, time_dim=1).config == dict(want, num_stages=1)


def _benchmark_script(name):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _compare_configs_module():
    return _benchmark_script("compare_configs")


def test_compare_configs_rounds_time_every_config_round_robin_from_a_moving_start():
    """``--rounds R``: every config timed R times, round r starting at config r, so none is
    always first or always after the same one; each printed as its median and range, a failed
    timing as an error."""
    cc = _compare_configs_module()
    order = []
    measures = [lambda i=i: order.append(i) or float(10 + i) for i in range(3)]
    timings = cc.interleaved(measures, 3)
    assert order == [0, 1, 2, 1, 2, 0, 2, 0, 1]
    assert timings == [[10.0] * 3, [11.0] * 3, [12.0] * 3]
    assert cc.interleaved(measures, 1) == [[10.0], [11.0], [12.0]]
    with pytest.raises(ValueError, match="rounds"):
        cc.interleaved(measures, 0)
    assert cc.summary([3.02]) == "3.02"
    assert cc.summary([3.4, 3.0, 3.1]) == "3.10[3.00-3.40]"
    assert cc.summary([3.0, float("nan")]) == "ERR(timing)"


def test_replay_sync_probe_times_each_cell_three_ways_in_turns(cuda_graph_stand_ins, capsys):
    """benchmarks/replay_sync_probe.py: device_us from an idle GPU and back to back, and the
    tuner's GraphTimer, R rounds each in turns (each of R graphs of 20 calls replayed: the
    stand-in events measure 1 ms a replay, 50 µs a call), printed as medians with ranges and
    their differences; on a machine without a GPU it says so after checking its arguments."""
    probe = _benchmark_script("replay_sync_probe")
    replays = []
    cuda_graph_stand_ins(lambda: replays.append(1))
    idle, back, tuner = probe.three_ways([lambda: None], 3)
    assert len(idle) == len(back) == len(tuner) == 3
    assert set(idle + back + tuner) == {50.0}
    assert len(replays) >= 3 * 3 * 3
    assert probe.line("gae 64x512", [3.4, 3.0, 3.1], [2.6, 2.7, 2.5], [2.9, 3.0, 2.8]).split() == [
        "gae", "64x512", "idle", "3.10[3.00-3.40]", "back-to-back", "2.60[2.50-2.70]", "tuner",
        "2.90[2.80-3.00]", "idle-back", "+0.50", "idle-tuner", "+0.20"]
    with pytest.raises(SystemExit):
        probe.main(["--estimators", "gea"])
    with pytest.raises(SystemExit):
        probe.main(["--rounds", "0"])


def test_placement_probe_places_each_draw_after_a_growing_spacer_and_checks_arguments():
    """benchmarks/placement_probe.py: placement k sits after a spacer of k * spacer bytes, every
    spacer and set held together (so each lands elsewhere), a call's first tensor gives its
    address; bad counts are errors, and without a GPU it says so after checking its
    arguments."""
    probe = _benchmark_script("placement_probe")
    drawn = []
    placed = probe.place(lambda: drawn.append(1) or [len(drawn)], 3, 100, "cpu")
    assert [pad.numel() for pad, _ in placed] == [0, 100, 200]
    assert [sets for _, sets in placed] == [[1], [2], [3]]
    call = grid.draw(grid.Cell("gae", 2, 8, "float32", "time_last"), 0, "cpu")
    assert probe.first_address(call) == call.args[0].data_ptr()
    with pytest.raises(ValueError, match="placements"):
        probe.place(list, 0, 100, "cpu")
    with pytest.raises(ValueError, match="spacer"):
        probe.place(list, 2, -1, "cpu")
    for bad in (["--placements", "0"], ["--rounds", "0"], ["--shape", "64x512,8x8"],
                ["--config", "row_block:1x512"], ["--estimator", "gea"]):
        with pytest.raises(SystemExit):
            probe.main(bad)
    if not torch.cuda.is_available():
        assert probe.main([]) == 2


def test_compare_configs_parses_config_names_into_validated_configs():
    import argparse
    parse = _compare_configs_module().parse_config
    assert parse("heuristic") is None
    assert parse("chunked:1x1024:w4:c1") == {"strategy": "chunked", "BLOCK_N": 1,
                                             "BLOCK_T": 1024, "num_warps": 4, "num_stages": 1,
                                             "CHUNKS_PER_SPAN": 1}
    assert parse("row_block:2x128:w2")["BLOCK_N"] == 2
    assert parse("chunked:1x512:w1:c1:2l")["TWO_LEVEL"] is True
    assert "TWO_LEVEL" not in parse("row_block:2x128:w2")
    assert parse("row_block:2x128:w2:2l:r40")["maxnreg"] == 40
    assert parse("row_block:4x128:w1:2l:g16")["GROUP"] == 16
    assert parse("row_block:32x8:w1:lr")["LANE_ROWS"] is True
    assert parse("chunked:64x16:w2:c4:lr:r96")["maxnreg"] == 96
    assert parse("tuned") == "tuned"
    assert parse("chunked:1x512:w1:c1:r32") == {"strategy": "chunked", "BLOCK_N": 1,
                                                "BLOCK_T": 512, "num_warps": 1, "num_stages": 1,
                                                "CHUNKS_PER_SPAN": 1, "maxnreg": 32}
    for bad in ("row_block:3x128:w2", "chunked:1x1024:w4", "tiles", "row_block:2x128:w5",
                "row_block:1x128:w2:2l", "row_block:2x128:w2:c1:c1",
                "row_block:2x128:w2:r33", "row_block:2x128:w2:rx", "row_block:16x8:w1:lr",
                "row_block:64x8:w4:lr"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(bad)


def test_kernel_ab_patch_blocks_apply_once_or_fail_clearly():
    """benchmarks/kernel_ab.py: a patch is text replacements in scan.py, each old text found
    exactly once; anything else is an error that says which block and why."""
    ab = _benchmark_script("kernel_ab")
    blocks = ab.parse_patch("# a note\n<<<<\nfoo\n====\nbar\n>>>>\ntrailing words\n")
    assert blocks == [("foo", "bar")]
    assert ab.apply_patch("x foo y", blocks) == "x bar y"
    for source, count in (("x y", 0), ("foo foo", 2)):
        with pytest.raises(ab.PatchError, match=f"occurs {count} times"):
            ab.apply_patch(source, blocks)
    for bad in ("no blocks here", "<<<<\nfoo\n>>>>\n", "<<<<\n\n====\nbar\n>>>>\n"):
        with pytest.raises(ab.PatchError):
            ab.parse_patch(bad)


def test_every_shipped_patch_still_applies_to_the_kernel():
    """benchmarks/patches/*.patch are the recorded kernel_ab probes: each block's old text must
    still occur exactly once in scan.py, or the probe cannot be re-run (ideas that touch more
    files are kept beside them as `git apply` diffs, *.diff, which this does not read)."""
    from pathlib import Path
    ab = _benchmark_script("kernel_ab")
    root = Path(__file__).resolve().parents[1]
    source = (root / "rlscan" / "kernels" / "scan.py").read_text()
    patches = sorted((root / "benchmarks" / "patches").glob("*.patch"))
    assert patches
    for path in patches:
        ab.apply_patch(source, ab.parse_patch(path.read_text()))


_FLIPPED_SCAN = """<<<<
            s_a, s_b = tl.associative_scan((a, b), 1, _combine, reverse=SCAN_REVERSE)
====
            if SCAN_REVERSE:
                s_a, s_b = tl.associative_scan((tl.flip(a, 1), tl.flip(b, 1)), 1, _combine)
                s_a = tl.flip(s_a, 1)
                s_b = tl.flip(s_b, 1)
            else:
                s_a, s_b = tl.associative_scan((a, b), 1, _combine)
>>>>
"""
_HALVED_GAMMA = """<<<<
                a = tl.where(cut, 0.0, g)
====
                a = tl.where(cut, 0.0, 0.5 * g)
>>>>
"""


@pytest.mark.parametrize("patch, code, verdict", [(_FLIPPED_SCAN, 0, "same results"),
                                                  (_HALVED_GAMMA, 1, "DIFFERS")],
                         ids=["flipped-scan", "halved-gamma"])
def test_kernel_ab_check_tells_an_equivalent_patch_from_a_wrong_one(tmp_path, monkeypatch,
                                                                     capsys, patch, code,
                                                                     verdict):
    """kernel_ab --check runs shipped and patched kernels on small cells over chunk edges, spans
    and look-back: reversing the chunk around a forward scan gives the same discounted returns,
    halving gamma in the coefficient does not."""
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")
    ab = _benchmark_script("kernel_ab")
    path = tmp_path / "idea.patch"
    path.write_text(patch)
    assert ab.main([str(path), "--check", "--estimators", "discounted_returns"]) == code
    assert capsys.readouterr().out.count(verdict) == 4


def test_kernel_ab_configured_groups_keep_the_patched_tiles_groups_at_odd_lengths(monkeypatch,
                                                                                   capsys):
    """kernel_ab --configured-groups: on rows of odd length the shipped kernel's two-level tile
    runs in groups of one step (the launcher's shrink) and the patched one in its configured
    groups of 4, both matching; without the flag both shrink."""
    from pathlib import Path

    from rlscan.kernels import launch as L
    from rlscan.kernels import scan as S
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")
    ab = _benchmark_script("kernel_ab")
    noop = Path(__file__).resolve().parents[1] / "benchmarks" / "patches" / "noop.patch"
    groups, run = [], L._run

    def spy(kernel, grid_, args, objs, consts, options, spec, names=L._CONSTEXPRS):
        if names is L._CONSTEXPRS:
            groups.append((kernel is S.fused_scan_kernel, dict(zip(names, consts))["GROUP"]))
        return run(kernel, grid_, args, objs, consts, options, spec, names)

    monkeypatch.setattr(L, "_run", spy)
    argv = [str(noop), "--check", "--estimators", "gae", "--cells", "3x301@row_block:2x128:w2:2l"]
    assert ab.main(argv + ["--configured-groups"]) == 0
    assert groups == [(True, 1), (False, 4)]
    groups.clear()
    assert ab.main(argv) == 0
    assert groups == [(True, 1), (False, 1)]
    assert capsys.readouterr().out.count("same results") == 2


def test_kernel_ab_no_resets_draws_float32_time_last_only(capsys):
    """kernel_ab and compare_configs --no-resets time no-reset calls (fp32, time-last, GAE,
    discounted returns, episodic sums): anything else is a usage error, not a silent fp32 run."""
    ab = _benchmark_script("kernel_ab")
    for extra in (["--dtype", "bfloat16"], ["--layout", "time_major"]):
        with pytest.raises(SystemExit) as e:
            ab.main(["any.patch", "--no-resets"] + extra)
        assert e.value.code == 2
    assert "--no-resets draws float32 time-last calls only" in capsys.readouterr().err
    cc = _benchmark_script("compare_configs")
    for extra in (["--estimator", "vtrace"], ["--dtype", "bfloat16"], ["--layout", "time_major"]):
        with pytest.raises(SystemExit) as e:
            cc.main(["--no-resets", "--shapes", "1x64", "--configs", "heuristic"] + extra)
        assert e.value.code == 2
    assert "--no-resets draws float32 time-last calls of" in capsys.readouterr().err
    for argv in (["--decay", "0.9"], ["--no-resets", "--decay", "1.5"],
                 ["--no-resets", "--decay", "0"]):
        with pytest.raises(SystemExit) as e:
            cc.main(argv + ["--shapes", "1x64", "--configs", "heuristic"])
        assert e.value.code == 2
    assert "expected a value in (0, 1), with --no-resets" in capsys.readouterr().err


def test_kernel_ab_lookback_window_takes_powers_of_two_low_to_high():
    """kernel_ab --lookback-window LO:HI replaces launch._LOOKBACK_WINDOW: both powers of two,
    LO <= HI, anything else refused by the argument parser."""
    import argparse
    ab = _benchmark_script("kernel_ab")
    assert ab._window("16:64") == (16, 64) and ab._window("8:8") == (8, 8)
    for bad in ("16:12", "3:8", "0:4", "16", "a:b"):
        with pytest.raises(argparse.ArgumentTypeError):
            ab._window(bad)


@pytest.mark.parametrize("est", ["gae", "discounted_returns", "episodic_cumsum"])
def test_no_reset_calls_clear_every_flag_and_set_unit_discounts(est):
    """compare_configs.py / kernel_ab.py --no-resets time the look-back's worst case: the grid's
    data with no episode end anywhere and γ = λ = 1, so no product of coefficients decays to a
    reset; other estimators are refused."""
    cc = _benchmark_script("compare_configs")
    call = cc.no_reset_call(est, 3, 40, 0, "cpu")
    flags = call.args[cc._FLAGS[est]]
    assert flags.shape == (3, 40) and not flags.any()
    assert all(call.kwargs[k] == 1.0 for k in ("gamma", "lmbda") if k in call.kwargs)
    assert "gamma" in call.kwargs or est == "episodic_cumsum"
    rewards = call.args[0]
    assert rewards.shape == (3, 40) and rewards.abs().sum() > 0   # the grid's data otherwise
    with pytest.raises(ValueError, match="vtrace"):
        cc.no_reset_call("vtrace", 3, 40, 0, "cpu")
    decayed = cc.no_reset_call(est, 3, 40, 0, "cpu", decay=0.99)      # --decay: γ only
    assert decayed.kwargs.get("gamma", 0.99) == 0.99 and decayed.kwargs.get("lmbda", 1.0) == 1.0
    assert torch.equal(decayed.args[0], rewards)


@pytest.mark.parametrize("est", ["gae", "vtrace"])
def test_compare_configs_row_pad_slices_each_row_from_a_longer_one(est):
    """compare_configs.py --row-pad K times the grid's data as views of rows K steps longer
    (a user's ``x[:, :T]``; odd K: odd row strides at even T): same values, every [N, T]
    tensor with row stride T + K, per-row tensors untouched."""
    cc = _benchmark_script("compare_configs")
    call = grid.draw(grid.Cell(est, 3, 8, "float32", "time_last"), 0, "cpu")
    padded = cc.padded_rows(call, 1)
    pairs = [(a, b) for a, b in zip(call.args + tuple(call.kwargs.values()),
                                    padded.args + tuple(padded.kwargs.values()))
             if isinstance(a, torch.Tensor)]
    assert any(a.dim() == 2 for a, _ in pairs)
    for a, b in pairs:
        assert torch.equal(a, b) and a.shape == b.shape
        assert b.stride() == ((9, 1) if a.dim() == 2 else a.stride())


def test_compare_configs_and_kernel_ab_time_input_sets_spanning_three_l2_caches():
    """compare_configs.py / kernel_ab.py draw as many input sets as rlscan-bench rotates
    (``bench.input_set_count``: together three L2 caches, at least 4), not a fixed 3 that the
    small cells read from L2; the sets are the grid's draws 0, 1, 2, ..."""
    cc = _benchmark_script("compare_configs")
    cell = grid.Cell("gae", 4, 64, "float32", "time_last")
    drawn = []

    def make(i):
        drawn.append(i)
        return grid.place(grid.draw(cell, i, "cpu"), "time_last", "cpu")

    one = grid.traffic_bytes(make(0), grid.n_outputs("gae"))
    drawn.clear()
    calls = cc.timed_calls(make, "gae", l2=10 * one)
    assert len(calls) == 30 and drawn == list(range(30))          # 3 x 10 sets' bytes
    drawn.clear()
    assert len(cc.timed_calls(make, "gae", l2=one)) == 4 and drawn == [0, 1, 2, 3]
    assert not torch.equal(calls[0].args[0], calls[1].args[0])
    drawn_by_grid = cc.grid_calls("gae", 4, 64, l2=10 * one, device="cpu")   # the probes' way
    assert len(drawn_by_grid) == 30
    assert torch.equal(drawn_by_grid[5].args[0], calls[5].args[0])


def test_probe_cells_reads_estimators_and_shapes_or_refuses_without_a_gpu(monkeypatch, capsys):
    """call_path_probe.py / output_reuse_probe.py take --estimators and --shapes NxT,... through
    compare_configs.probe_cells: the GPU's L2 size and every (estimator, N, T) pair, or None and
    a message naming the probe where there is no CUDA GPU."""
    cc = _benchmark_script("compare_configs")
    argv = ["--estimators", "gae,vtrace", "--shapes", "4x8,2x16"]
    monkeypatch.setattr(cc.torch.cuda, "is_available", lambda: False)
    assert cc.probe_cells("some_probe", "doc", "gae", "1x8", argv) is None
    assert "some_probe needs a CUDA GPU" in capsys.readouterr().err
    monkeypatch.setattr(cc.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(cc.timing, "l2_bytes", lambda device: 123)
    assert cc.probe_cells("some_probe", "doc", "gae", "1x8", argv) == (
        123, [("gae", 4, 8), ("gae", 2, 16), ("vtrace", 4, 8), ("vtrace", 2, 16)])
    assert cc.probe_cells("some_probe", "doc", "gae", "1x8", []) == (123, [("gae", 1, 8)])


def test_reverse_scan_probe_kernels_solve_the_backward_recurrence(capsys):
    """benchmarks/reverse_scan_probe.py times standalone scans; its --check holds every backward
    variant (triton's reverse scan, the shipped two-level scan with one and four parts, the
    rejected cross-warp one, and the cross-warp one over warps in descending time with 4 and 8
    warps) to the float64 recurrence over chunk, part and warp edges."""
    if torch.cuda.is_available():
        pytest.skip("checked in the interpreter on CPU-only machines")
    probe = _benchmark_script("reverse_scan_probe")
    assert probe.check("cpu") == 0
    out = capsys.readouterr().out
    assert out.count("max error") == 8 and "WRONG" not in out


def test_persistent_lookback_probe_solves_the_backward_recurrence(monkeypatch, capsys):
    """benchmarks/persistent_lookback_probe.py: persistent programs walking chunks with the
    grid's stride and finding carries by look-back give the float64 recurrence over many chunks
    and rows, one- and two-row chunks, one chunk a row (in the interpreter one program walks
    every chunk; on a GPU they race)."""
    if torch.cuda.is_available():
        pytest.skip("checked in the interpreter on CPU-only machines")
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")
    probe = _benchmark_script("persistent_lookback_probe")
    assert probe.check("cpu") == 0
    out = capsys.readouterr().out
    assert out.count("max error") == 5 and "WRONG" not in out


def test_tma_walk_probe_modes_solve_the_backward_recurrence(monkeypatch, capsys):
    """benchmarks/tma_walk_probe.py: a row walked in chunks of 256-step pieces by plain loads,
    register prefetch, Triton's pipelined loads and TMA descriptors (the interpreter runs all
    four) gives the float64 recurrence over piece and chunk edges and rows."""
    if torch.cuda.is_available():
        pytest.skip("checked in the interpreter on CPU-only machines")
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")
    probe = _benchmark_script("tma_walk_probe")
    assert probe.check("cpu", [(2, 2 * probe.STEPS * 3, 2)]) == 0
    out = capsys.readouterr().out
    assert out.count("max error") == 4 and "WRONG" not in out


def test_stream_floor_moves_the_grids_bytes_and_zeroes_flagged_steps():
    """benchmarks/stream_floor.py: each mix's bytes a step are the grid's floor bytes of the
    estimator it stands for (fp32 discounted returns / GAE; bf16 + bool discounted returns,
    GAE, V-trace; per-row inputs aside), and its kernel reads bf16 streams and a bool flag:
    the sum of the reads, 0 where flagged, then +1 in the second output."""
    if torch.cuda.is_available():
        pytest.skip("checked in the interpreter on CPU-only machines")
    sf = _benchmark_script("stream_floor")
    N, T = 4, 64
    stands_for = {("float32", 2, 1, False): "discounted_returns",
                  ("float32", 3, 2, False): "gae",
                  ("bfloat16", 1, 1, True): "discounted_returns",
                  ("bfloat16", 2, 2, True): "gae", ("bfloat16", 3, 2, True): "vtrace"}
    for (dtype, reads, writes, flag), est in stands_for.items():
        call = grid.draw(grid.Cell(est, N, T, dtype, "time_last"))
        per_step = grid.traffic_bytes(call, grid.n_outputs(est)) // (N * T)
        assert sf.step_bytes(reads, writes, flag) == per_step, (dtype, est)
    n = 1500
    x = [torch.randn(n).to(torch.bfloat16) for _ in range(3)]
    f = torch.rand(n) < 0.3
    y = [torch.full((n,), float("nan")) for _ in range(2)]
    sf._stream[(2,)](*x, f, *y, n, READS=3, WRITES=2, FLAG=True, BLOCK=1024)
    want = torch.where(f, 0.0, x[0].float() + x[1].float() + x[2].float())
    torch.testing.assert_close(y[0], want)
    torch.testing.assert_close(y[1], want + 1.0)


def test_clock_probe_reads_nvidia_smi_samples_and_cells(tmp_path):
    """benchmarks/clock_probe.py: ``--cells`` parses to (estimator, N, T) and names a bad one;
    the sampler's CSV lines (nvidia-smi's timestamp with milliseconds) parse to times and
    fields, skipping malformed lines."""
    import argparse
    probe = _benchmark_script("clock_probe")
    assert probe.parse_cells("vtrace:64x512,gae:8x65536") == [("vtrace", 64, 512),
                                                              ("gae", 8, 65536)]
    with pytest.raises(argparse.ArgumentTypeError, match="--cells"):
        probe.parse_cells("nope:64x512")
    log = tmp_path / "clocks.csv"
    log.write_text("2026/12/04 15:25:01.250, 1980, 3201, 161.83, 36, 0x0000000000000000\n"
                   "garbage\n"
                   "2026/12/04 15:25:01.300, 1755, 3201, 400.00, 41, 0x0000000000000004\n")
    samples = probe.read_samples(str(log))
    assert len(samples) == 2
    assert samples[1][0] - samples[0][0] == pytest.approx(0.05, abs=1e-6)
    assert samples[0][1]["clocks.sm"] == "1980" and samples[1][1]["reasons"].endswith("4")


def _probe_checks_pass(name, checks, marker, monkeypatch, capsys):
    """Run benchmarks/<name>.py --check in the interpreter (CPU-only machines): it must pass
    and print ``checks`` lines with ``marker`` (its error lines); returns the module."""
    if torch.cuda.is_available():
        pytest.skip("checked in the interpreter on CPU-only machines")
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")
    probe = _benchmark_script(name)
    assert probe.main(["--check"]) == 0
    assert capsys.readouterr().out.count(marker) == checks
    return probe


def test_onepass_probe_folds_every_earlier_chunk_to_the_recurrence(monkeypatch, capsys):
    """benchmarks/onepass_probe.py: one program a chunk that folds every earlier chunk's
    summary (ascending lanes and a reverse scan, or descending lanes and a forward one) gives
    the float64 backward recurrence over chunk edges, a ragged last chunk and several rows."""
    _probe_checks_pass("onepass_probe", 9, "max |err|", monkeypatch, capsys)


def test_time_major_probe_walks_and_looks_back_to_the_recurrence(monkeypatch, capsys):
    """benchmarks/time_major_probe.py: its one-column-a-thread walk (one warp, or its chunks
    split over 2 and 4 warps), spans of 8-column tiles whose segments take the lanes (chunked,
    of 1 and 2 chunks, and one-chunk look-back), look-back spans (plain, publishing the value
    leaving them, persistent) and chunked spans give the float64 backward recurrence of [T, N]
    buffers over chunk and span edges, ragged column blocks and a column
    with no reset (walked back to its first span, in windows of 2 and 8); persistent programs
    also when each walks several spans; a malformed variant is refused by name."""
    probe = _probe_checks_pass("time_major_probe", 13, "max error", monkeypatch, capsys)
    assert probe.parse_variants("walk:16:32:1,lookback:8:32:1:2,seg-chunked:4:8:1:2:8") == [
        ("walk", 16, 32, 1, probe.WIN, 1), ("lookback", 8, 32, 1, 2, 1),
        ("seg-chunked", 4, 8, 1, 2, 8)]
    with pytest.raises(ValueError, match="--variants"):
        probe.parse_variants("scan:16:32:1")


def test_launch_cost_probe_kernels_take_and_use_every_argument():
    """benchmarks/launch_cost_probe.py: its generated kernels take exactly the asked-for int
    arguments and constexprs and store their sum (so none is dropped from the signature)."""
    if torch.cuda.is_available():
        pytest.skip("checked in the interpreter on CPU-only machines")
    import inspect
    probe = _benchmark_script("launch_cost_probe")
    mod = probe._module([0, 5], 2)
    assert len(inspect.signature(mod.k5.fn).parameters) == 1 + 5 + 2
    out = torch.zeros(1, dtype=torch.int32)
    mod.k5[(1,)](out, 3, 5, 7, 9, 11, C0=20, C1=100)
    assert int(out) == 155
    mod.k0[(1,)](out, C0=4, C1=6)
    assert int(out) == 10
    assert probe.main(["--counts", "0"]) == 2          # no CUDA device: refused, no launch


def test_ncu_targets_takes_only_the_profiled_variants(capsys):
    """benchmarks/ncu_targets.py (what Nsight Compute profiled): an unknown variant is refused
    by name before any GPU work."""
    mod = _benchmark_script("ncu_targets")
    assert mod.VARIANTS == ("fwd", "bwd", "disc", "bwd2l", "bwdrev")
    with pytest.raises(SystemExit):
        mod.main(["bwd3"])
    assert "invalid choice: 'bwd3'" in capsys.readouterr().err


def test_tune_report_summarises_gains_floors_and_failed_candidates():
    """benchmarks/tune_report.py (how tune_h200.md is made): geomean of heuristic ÷ tuned per
    dtype and layout, the worst bucket among floors >= 20 us, candidates that failed, and how
    many winners scan in two levels, run under a register cap, take groups of 8 steps or spread
    a row over warps."""
    def entry(rows, us, floor, heur, failed=False, **extra):
        timings = {"row_block/1x128/w1/s1": us}
        if failed:
            timings["chunked/1x256/w2/s1/c1"] = "failed: RuntimeError: PassManager::run failed"
            timings["row_block/2x128/w2/s1"] = "rejected: output 0 off by 0.1 at row 0, step 3"
        return {"dtype": "float32", "layout": "time_last", "rows": rows, "steps": [128, 255],
                "config": {"strategy": "row_block", "BLOCK_N": 1, "BLOCK_T": 128,
                           "num_warps": 1, "num_stages": 1, **extra},
                "median_us": us, "floor_us": floor, "heuristic_us": heur, "timings": timings}
    db = {"device": {"name": "GPU X", "copy_gbps": 4000.0},
          "software": {"torch": "t", "triton": "3.6.0"},
          "kernels": {"gae": {"entries": [entry([64, 127], 2.0, 1.0, 4.0, failed=True),
                                          entry([4096, 8191], 30.0, 24.0, 30.0,
                                                TWO_LEVEL=True, maxnreg=32),
                                          entry([8192, 16383], 60.0, 40.0, 60.0,
                                                TWO_LEVEL=True, GROUP=8),
                                          entry([128, 255], 9.0, 3.0, 9.0, TWO_LEVEL=True,
                                                BLOCK_N=2, num_warps=2, SPLIT=2)]}}}
    text = _benchmark_script("tune_report").report(db, seconds=12)
    assert "4 buckets, 6 candidate runs, **12 s**" in text
    assert ("not measured: chunked/1x256/w2/s1/c1 in 1 bucket (RuntimeError), "
            "row_block/2x128/w2/s1 in 1 bucket (wrong outputs).") in text
    # gains 2, 1, 1, 1: geomean 2^(1/4) = 1.19; worst big-floor bucket 60/40 = 1.50x
    assert "| float32 | time_last | 4 | 1.19× | 2.00× | 0 |" in text
    assert "gae rows 8192..16383 steps 128..255: 60.0 µs, floor 40.0 (1.50×)" in text
    assert text.count("| gae | float32 | time_last |") == 4
    assert ("(`/2l`): row_block 3; under a register cap (`/rN`): r32 1; with groups of 8 or 16 "
            "steps a thread (`/g8`, `/g16`): float32 g8 1; with a row over several warps "
            "(`/spN`): sp2 1." in text)
    walk = {"strategy": "lookback", "BLOCK_N": 1, "BLOCK_T": 512, "num_warps": 1,
            "num_stages": 1, "CHUNKS_PER_SPAN": 1}
    long_rows = dict(entry([1, 1], 12.5, 4.9, 12.5), steps=[1 << 20, (1 << 21) - 1],
                     bounded_walk=[{"config": walk, "median_us": 8.5, "walk_spans": 72,
                                    "worst_us": 13.1, "winner_worst_us": 12.4},
                                   {"config": dict(walk, BLOCK_T=256), "median_us": 9.0}])
    db["kernels"]["gae"]["entries"].append(long_rows)
    only = _benchmark_script("tune_report").report(db, shapes=[(100, 200), (5000, 130)],
                                                    shapes_text="100x200,5000x130")
    assert "the buckets of 100x200,5000x130" in only and "2 buckets, 4 candidate runs" in only
    assert only.count("| gae | float32 | time_last |") == 2 and "| 64..127 | 128..255 |" in only
    text = _benchmark_script("tune_report").report(db)
    assert ("| gae | float32 | 1..1 | 1048576..2097151 | 12.50 | lookback/1x512/w1/s1/c1 8.50 "
            "(≤ 0.9971, 72 spans; no episode ends 13.10 / 12.40), lookback/1x256/w1/s1/c1 9.00 "
            "(≤ 0.9436, 8 spans) |") in text


def test_heuristic_vs_db_reads_each_heuristic_choice_from_the_stored_timings(tmp_path):
    """benchmarks/heuristic_vs_db.py: the heuristic's time in an entry is the stored timing of
    its config's label (without ``/2l`` where the entry timed the forward-scan form), never a
    guess; a heuristic that takes the estimator and item size gets each entry's; a comparison
    lists new ÷ old per shape where the two heuristics differ, the worst-groups report
    names the config that would have done best, and the below report times the heuristic's
    config for the shapes one step and one row below each entry's."""
    hv = _benchmark_script("heuristic_vs_db")
    a = {"strategy": "row_block", "BLOCK_N": 1, "BLOCK_T": 512, "num_warps": 4}
    b = {"strategy": "row_block", "BLOCK_N": 2, "BLOCK_T": 128, "num_warps": 2}
    la, lb = (C.label(C.validate({"num_stages": 1, **c})) for c in (a, b))

    def entry(N, T, timings, winner):
        return {"dtype": "float32", "layout": "time_last", "rows": list(tuning.bucket(N)),
                "steps": list(tuning.bucket(T)), "shape": [N, T], "config": a,
                "median_us": winner, "timings": timings}
    db = {"device": {"name": "GPU X"}, "kernels": {
        "gae": {"entries": [entry(64, 512, {la: 2.0, lb + "/2l": 4.0}, 2.0),
                            entry(4096, 128, {la: 9.0}, 3.0)]},
        "eligibility_traces": {"entries": [entry(64, 512, {la: 3.0, lb: 4.5}, 3.0)]}}}
    path = write(tmp_path / "gpu-x.json", db)

    def old(N, T, tm):
        return dict(b, TWO_LEVEL=True) if N == 64 else a

    def new(N, T, tm):
        return a
    text = hv.compare([path], old, new)
    # 64x512: gae 2.0 / 4.0 (the two-level label), eligibility traces 3.0 / 4.5 (its plain one)
    assert "| gpu-x | 64x512 | time_last | float32 | 2 | 0.577 | 0.50–0.67 | 0 |" in text
    assert "4096x128" not in text and "All: 0.577 over 2 timed entries, worst 0.67" in text
    worst = hv.worst_groups([path], old)
    assert "| time_last | float32 | 4096..8191 | 128..255 | 1 | 3.00× |" in worst
    assert f"| time_last | float32 | 64..127 | 512..1023 | 2 | 1.73× | {la} (1.00×, 2) |" in worst
    assert "0 entries did not time" in worst
    # --below: the heuristic's config for T - 1 / N - 1, timed at the entry's shape, ÷ winner
    text = hv.below([path], old)
    assert "| gpu-x | time_last | float32 | T - 1 | 3 | 2.080 | 3.00 (gae 4096x128) | 0 |" in text
    assert "| gpu-x | time_last | float32 | N - 1 | 3 | 1.442 | 3.00 (gae 4096x128) | 0 |" in text

    def per_estimator(N, T, tm, itemsize=4, estimator=""):
        return dict(b, TWO_LEVEL=True) if (estimator, itemsize) == ("gae", 4) else a
    # a heuristic that takes them gets each entry's estimator and item size: only GAE changes
    text = hv.compare([path], new, per_estimator)
    assert "| gpu-x | 64x512 | time_last | float32 | 1 | 2.000 | 2.00–2.00 | 0 |" in text
    assert "| gpu-x | 4096x128 | time_last | float32 | 0 | nan | — | 1 |" in text


def test_heuristic_vs_db_reads_a_revisions_heuristic_from_its_module_or_the_older_launcher(
        monkeypatch):
    """``heuristic_at(REV)`` execs rlscan/kernels/heuristic.py as it was at REV, or launch.py
    for a revision from before the heuristic had its own module (``git show`` fails there);
    a revision with neither is an error, not a silent fallback."""
    hv = _benchmark_script("heuristic_vs_db")
    files = {"new:rlscan/kernels/heuristic.py": "def heuristic_config(N, T, tm):\n"
                                                "    return {'from': 'heuristic.py', 'N': N}\n",
             "old:rlscan/kernels/launch.py": "def heuristic_config(N, T, tm):\n"
                                             "    return {'from': 'launch.py', 'N': N}\n"}
    asked = []

    def show(cmd, **kw):
        asked.append(cmd[-1])
        text = files.get(cmd[-1])
        return subprocess.CompletedProcess(cmd, 0 if text else 128, text or "", "")
    monkeypatch.setattr(hv.subprocess, "run", show)
    assert hv.heuristic_at("new")(7, 8, False) == {"from": "heuristic.py", "N": 7}
    assert asked == ["new:rlscan/kernels/heuristic.py"]
    assert hv.heuristic_at("old")(9, 8, False) == {"from": "launch.py", "N": 9}
    assert asked[1:] == ["old:rlscan/kernels/heuristic.py", "old:rlscan/kernels/launch.py"]
    with pytest.raises(subprocess.CalledProcessError):
        hv.heuristic_at("nowhere")


def test_kernel_resources_reports_each_launch_of_a_config_compiled_for_sm90():
    """benchmarks/kernel_resources.py compiles the launches a forced config makes (recorded
    from the launcher, not re-derived) for sm_90 without a GPU and reads registers and spills
    from ptxas: a row block is one launch, chunked two (summaries, fix-up), each line with its
    phase, a register count, the resident warps that count allows, the launch's programs and
    the waves they take on the H200's 132 SMs."""
    from pathlib import Path
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "kernel_resources.py"
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET",
                                                           "RLSCAN_INTERPRET")}
    res = subprocess.run([sys.executable, str(script), "--estimators", "gae", "--shape",
                          "8x4096", "--configs", "row_block:2x128:w2:2l,chunked:1x512:w1:c1:2l"],
                         capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    rows = [line.split() for line in res.stdout.splitlines() if line.startswith("gae ")]
    assert [(r[1], r[2]) for r in rows] == [("row_block:2x128:w2:2l", "0"),
                                            ("chunked:1x512:w1:c1:2l", "1"),
                                            ("chunked:1x512:w1:c1:2l", "2")]
    mod = _benchmark_script("kernel_resources")
    for r, warps, programs in zip(rows, (2, 1, 1), (4, 64, 64)):  # 8 rows / 2; 8 x 4096 / 512
        regs = int(r[3])
        assert 16 <= regs <= 255
        assert int(r[5]) == mod.resident_warps(regs, warps)
        assert int(r[6]) == programs
        assert float(r[7]) == pytest.approx(programs / (132 * (int(r[5]) // warps)), abs=0.01)


def test_kernel_resources_waves_and_tuned_configs_follow_the_h200_and_its_db():
    """Waves: programs over 132 SMs times the blocks an SM holds at that register count (2,048
    two-warp programs at 70 registers: 14 blocks an SM, 1.11 waves; at 64: 16, 0.97); none
    when no block fits. ``tuned``: the shipped H200 DB's config for the grid's call, read
    offline, a bounded walk where the call's coefficients allow one (GAE 8x65536: its rows make
    256 look-back spans, within the limit)."""
    mod = _benchmark_script("kernel_resources")
    assert mod.waves(2048, 70, 2) == pytest.approx(2048 / (132 * 14))
    assert mod.waves(2048, 64, 2) == pytest.approx(2048 / (132 * 16))
    assert mod.waves(10, 255, 16) == float("inf")
    db = json.loads((Path(__file__).resolve().parents[1] / "tuning_db" /
                     "nvidia-h200.json").read_text())
    entry, = [e for e in db["kernels"]["gae"]["entries"] if e["shape"] == [4096, 128]
              and (e["dtype"], e["layout"]) == ("float32", "time_last")]
    assert mod.tuned("gae", 4096, 128) == C.validate(entry["config"])
    assert mod.tuned("gae", 8, 65536)["strategy"] == "lookback"


def _compiled_counts(code: str):
    """Run ``code`` (Python that prints lines of integers) beside benchmarks/kernel_resources.py
    with Triton's compiler, not its interpreter; the lines as tuples of ints."""
    from pathlib import Path
    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET",
                                                           "RLSCAN_INTERPRET")}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=bench)
    assert res.returncode == 0, res.stderr[-2000:]
    return [tuple(map(int, line.split())) for line in res.stdout.split("\n") if line.strip()]


def test_kernel_resources_specialises_a_launch_on_its_arguments_as_the_jit_does():
    """The PTX is specialised on the launch's own tensors as Triton's JIT does on the GPU
    (16-byte aligned pointers, bool flags, bf16 inputs for a bf16 cell), so a two-level tile
    loads its steps 16 bytes an instruction; compiled without them (every pointer *fp32,
    nothing aligned) it loads one value at a time. That gap made discounted returns'
    look-back span 94 registers where Nsight Compute measured 72 on the H200."""
    code = (
        "import re, kernel_resources as K\n"
        "from rlscan.kernels import configs as C\n"
        "cfg = C.validate(dict(strategy='row_block', BLOCK_N=2, BLOCK_T=128, num_warps=2,"
        " TWO_LEVEL=True))\n"
        "(consts, options, args, _, _), = K.launches('discounted_returns', 8, 4096, cfg)\n"
        "for ptx in (K.compile_ptx(consts, options, args), K.compile_ptx(consts, options)):\n"
        "    print(len(re.findall(r'ld\\.global\\.v4', ptx)),"
        " len(re.findall(r'ld\\.global', ptx)))\n"
        "(consts, options, args, _, _), = K.launches('discounted_returns', 8, 4096, cfg,"
        " 'bfloat16')\n"
        "print(int('cvt.f32.bf16' in K.compile_ptx(consts, options, args)), 1)\n")
    (v4_real, all_real), (v4_plain, all_plain), (bf16_loads, _) = _compiled_counts(code)
    assert v4_real > 0 and v4_plain == 0
    assert all_real < all_plain
    assert bf16_loads == 1          # --dtype bfloat16: the kernel reads bf16 inputs as such


def test_lane_rows_tiles_compile_to_scalar_loads_and_a_scan_without_shuffles():
    """A time-major tile of one row a lane (``LANE_ROWS``) is launched as the kernel whose time
    strides Triton does not specialise: its loads along the rows are scalar, so each lane holds
    one row and the chunk's steps, and the scan moves nothing between lanes; the same tile with
    the strides specialised loads 4 rows a thread and scans over lanes (shuffles)."""
    code = (
        "import re, kernel_resources as K\n"
        "from rlscan.kernels import configs as C\n"
        "for lane in (True, False):\n"
        "    cfg = C.validate(dict(strategy='row_block', BLOCK_N=32, BLOCK_T=8, num_warps=1,"
        " LANE_ROWS=lane))\n"
        "    (consts, options, args, _, kernel), = K.launches('gae', 4096, 64, cfg,"
        " layout='time_major')\n"
        "    ptx = K.compile_ptx(consts, options, args, kernel)\n"
        "    print(len(re.findall(r'ld\\.global\\.v4', ptx)), ptx.count('shfl.sync'),"
        " int(kernel is K.L._lane_rows_kernel))\n")
    (v4_lane, shfl_lane, lane), (v4_vec, shfl_vec, vec) = _compiled_counts(code)
    assert (lane, vec) == (1, 0)
    assert v4_lane == 0 and shfl_lane == 0
    assert v4_vec > 0 and shfl_vec > 0


def test_lengths_divisible_by_8_not_16_compile_to_the_loads_of_multiples_of_16():
    """Triton proves alignment only from ints divisible by 16: time-last rows of 3000 steps
    loaded one value an instruction until the launcher said 8 (``ALIGN_T``); now they compile
    to the 16-byte loads of 3008-step rows, fp32 and bf16 two-level tiles of 8 steps a thread
    alike. An odd length has nothing to say and stays scalar; time-major tiles say 8 for 9000
    rows (``ALIGN_N``), V-trace's 16x64/w8 and GAE's 32x64/w4, while GAE's 16x64/w8 keeps its
    scalar loads."""
    code = (
        "import re, kernel_resources as K\n"
        "from rlscan.kernels import configs as C\n"
        "cells = [('gae', 64, T, 'float32', 'time_last', dict(strategy='row_block', BLOCK_N=1,"
        " BLOCK_T=512, num_warps=4)) for T in (3000, 3008, 3001)]\n"
        "cells += [('gae', 64, T, 'bfloat16', 'time_last', dict(strategy='row_block', BLOCK_N=4,"
        " BLOCK_T=256, num_warps=4, TWO_LEVEL=True, GROUP=8, SPLIT=4)) for T in (3000, 3008)]\n"
        "cells += [('vtrace', N, 64, 'float32', 'time_major', dict(strategy='row_block',"
        " BLOCK_N=16, BLOCK_T=64, num_warps=8)) for N in (9000, 9008)]\n"
        "cells += [('gae', N, 64, 'float32', 'time_major', dict(strategy='row_block',"
        " BLOCK_N=32, BLOCK_T=64, num_warps=4)) for N in (9000, 9008)]\n"
        "cells += [('gae', 9000, 64, 'float32', 'time_major', dict(strategy='row_block',"
        " BLOCK_N=16, BLOCK_T=64, num_warps=8))]\n"
        "for est, N, T, dtype, layout, cfg in cells:\n"
        "    (consts, options, args, _, kernel), = K.launches(est, N, T, C.validate(cfg),"
        " dtype, layout)\n"
        "    ptx = K.compile_ptx(consts, options, args, kernel)\n"
        "    print(len(re.findall(r'ld\\.global\\.v4', ptx)),"
        " len(re.findall(r'ld\\.global', ptx)))\n")
    counts = _compiled_counts(code)
    (f3000, f3008, f3001), (b3000, b3008) = counts[:3], counts[3:5]
    (v9000, v9008), (g9000, g9008), (s9000,) = counts[5:7], counts[7:9], counts[9:]
    assert f3000 == f3008 and f3000[0] > 0
    assert f3001[0] == 0 and f3001[1] > f3000[1]
    assert b3000 == b3008 and b3000[0] > 0
    assert v9000 == v9008 and v9000[0] > 0
    assert g9000 == g9008 and g9000[0] > 0
    assert s9000[0] == 0 and s9000[1] > 0



def test_ptx_identity_hashes_the_code_not_its_line_info_and_samples_every_class_of_config():
    """benchmarks/ptx_identity.py, which decides whether a kernel edit may keep the DBs: moved
    line info (an edit above the kernel shifts every ``.loc``) keeps a hash, one changed
    instruction does not; its sample holds every class of config that the shipped DBs hold."""
    from pathlib import Path
    mod = _benchmark_script("ptx_identity")
    ptx = ("//\n.visible .entry k(\n)\n{\n\t.loc\t1 10 5\n\tld.global.v4.b32 {%r1, %r2, %r3, %r4}, "
           "[%rd1];\n\tret;\n}\n\t.file\t1 \"scan.py\"\n\t.section\t.debug_abbrev\n\t{\n"
           ".b8 1\n\t}\n")
    moved = ptx.replace(".loc\t1 10 5", ".loc\t1 14 5").replace("scan.py", "/tmp/scan.py")
    assert mod.ptx_digest(moved) == mod.ptx_digest(ptx)
    assert mod.ptx_digest(ptx.replace("v4", "v2")) != mod.ptx_digest(ptx)
    dbs = sorted((Path(__file__).resolve().parents[1] / "tuning_db").glob("*.json"))
    key = (lambda dtype, layout, c: (dtype, layout, c.get("strategy"), bool(c.get("TWO_LEVEL")),
                                     bool(c.get("LANE_ROWS")), c.get("SPLIT", 1), c.get("GROUP")))
    held = {key(e["dtype"], e["layout"], e["config"]) for db in dbs
            for section in json.loads(db.read_text())["kernels"].values()
            for e in section["entries"]}
    picked = mod.sample(dbs)
    assert {key(dtype, layout, c) for _, dtype, layout, _, _, c in picked} == held
    assert len(picked) == len(held)

def test_resident_warps_follow_the_sm90_register_file():
    """65,536 registers an SM, allocated per warp in units of 256, at most 64 warps and 32
    blocks: 48 registers and 2-warp blocks give 21 blocks (42 warps); 32 registers 64 warps."""
    mod = _benchmark_script("kernel_resources")
    assert mod.resident_warps(48, 2) == 42
    assert mod.resident_warps(32, 2) == 64
    assert mod.resident_warps(32, 1) == 32          # the 32-block limit
    assert mod.resident_warps(255, 16) == 0         # 130,560 registers: no block fits
    assert mod.resident_warps(128, 16) == 16


def test_graph_timer_holds_every_captured_calls_outputs_until_its_graph_is_gone(
        cuda_graph_stand_ins, monkeypatch):
    """A captured call's outputs, freed inside the capture, would be the next call's block (the
    graph's pool): every call would write the same lines, which can stay in L2. GraphTimer keeps
    them all alive through the replays and lets them go with the graph."""
    import weakref
    from rlscan.tune import timing

    made, alive = [], []
    cuda_graph_stand_ins(lambda: alive.append(sum(r() is not None for r in made)))
    monkeypatch.setattr(timing.lookback_state, "release_captured", lambda: None)

    class Output:
        pass

    def call(i):
        out = Output()
        made.append(weakref.ref(out))
        return out
    us = timing.GraphTimer("cuda", calls=20, replays=3)(call, 4)
    assert us == pytest.approx(1e3 / 20)
    captured = len(made) - 3                  # two warm-up calls and one eager timing first
    assert captured == 20
    assert alive and all(n == 20 for n in alive)
    assert all(r() is None for r in made)


# --------------------------------------------------------------------------- --prune
def test_prune_skips_only_candidates_an_earlier_tune_found_far_slower_than_its_winner():
    """tune.prune.prune: a candidate is skipped where the earlier entry of its bucket holds it
    at more than the factor times that entry's winner, or carries such a ratio from a tune
    before ("pruned: 2.50x"); one the entry failed, rejected or never timed is timed, and so is
    the heuristic however slow it was; a bucket without an earlier entry times everything."""
    from rlscan.tune import prune
    cands = [cfg(bn) for bn in (1, 2, 4, 8, 16, 32)]
    lab = [C.label(c) for c in cands]
    key = ("gae", "float32", "time_last", 6, 7)
    earlier = {key: (10.0, {lab[0]: 10.0, lab[1]: 12.9, lab[2]: 13.1, lab[3]: "pruned: 2.50x",
                            lab[4]: "failed: OutOfResources: shared memory", lab[5]: 40.0})}
    kept, skipped = prune.prune(cands, key, earlier, 1.3, keep_label=lab[5])
    assert [C.label(c) for c in kept] == [lab[0], lab[1], lab[4], lab[5]]
    assert skipped == pytest.approx({lab[2]: 1.31, lab[3]: 2.5})
    kept, skipped = prune.prune(cands, key, earlier, 4.0, keep_label=lab[0])
    assert len(kept) == 6 and skipped == {}
    other = ("gae", "float32", "time_last", 6, 8)
    assert prune.prune(cands, other, earlier, 1.0, keep_label=lab[0]) == (cands, {})


def test_prune_reads_every_section_of_the_earlier_db_whatever_its_source_hash():
    """After a kernel edit the DB's sections carry the old source hash: their timings are what
    --prune reads. Entries it cannot read (no winner time, no timings, bad buckets) are left
    out, so their buckets time everything."""
    from rlscan.tune import prune
    good = dict(entry(64, 512, cfg()), median_us=3.0, timings={"a": 3.0, "b": 9.0})
    no_time = dict(entry(64, 1024, cfg()), timings={"a": 3.0})
    no_time.pop("median_us")
    bad_bucket = dict(entry(64, 512, cfg()), median_us=3.0, timings={}, rows=[3, 5])
    no_timings = entry(4096, 128, cfg())
    document = doc({"gae": [good, no_time, bad_bucket, no_timings]}, source_hash="0" * 16)
    got = prune.earlier_timings(document)
    assert got == {("gae", "float32", "time_last", 6, 9): (3.0, {"a": 3.0, "b": 9.0})}
    assert prune.earlier_timings(None) == {}


def test_sweep_with_prune_neither_compiles_nor_times_what_it_skips_and_says_so_in_the_db(
        tmp_path, monkeypatch):
    """sweep.run(prune_with=...): skipped candidates reach neither the compile workers nor the
    timer; the written entry lists them as "pruned: Rx" beside the timed ones, --reselect
    ignores them, and a second pruned tune of the bucket carries their ratio forward."""
    from rlscan.tune import prune
    monkeypatch.setenv("RLSCAN_INTERPRET", "0")
    cell = grid.cells([(8, 40)], ["gae"], ["float32"], ["time_last"])[0]
    cands = sweep.with_heuristic(C.candidates("gae", 8, 40, "time_last", "float32"), cell)
    heuristic = C.label(cands[0])
    slow = {C.label(c) for c in cands[1::2]}               # every other one, never the heuristic
    earlier_entry = dict(entry(8, 40, cands[0]), median_us=10.0,
                         timings={C.label(c): 30.0 if C.label(c) in slow else 11.0
                                  for c in cands})
    earlier = prune.earlier_timings(doc({"gae": [earlier_entry]}, source_hash="0" * 16))
    timed, compiled = [], []

    class CountingWorkers(Workers):
        def submit_compiles(self, c, configs):
            compiled.extend(C.label(x) for x in configs)
            return super().submit_compiles(c, configs)

    def timer(call, n_sets, config, cutoff_us=None):
        timed.append(C.label(config))
        return 10.0 + config["BLOCK_T"] / config["BLOCK_N"]

    with CountingWorkers(0, "cpu") as w:
        r, = sweep.run([cell], "cpu", timer, w, prune_with=prune.for_cells(earlier, 1.5))
    assert slow and not slow & set(timed) and set(compiled) == set(timed)
    assert heuristic in timed and set(timed) == {C.label(c) for c in cands} - slow
    assert r.pruned == pytest.approx(dict.fromkeys(slow, 3.0))
    e = sweep.entry(r)
    assert {k for k, v in e["timings"].items() if v == "pruned: 3.00x"} == slow
    assert e["config"] == r.winner.config
    import copy
    plain = dict(copy.deepcopy(e), timings={k: v for k, v in e["timings"].items()
                                            if k not in slow})
    document = doc({"gae": [copy.deepcopy(e)]})
    assert db.reselect(document) == db.reselect(doc({"gae": [plain]}))   # pruned: ignored
    again = prune.for_cells(prune.earlier_timings(doc({"gae": [e]})), 2.0)
    kept, skipped = again(cell, cands)
    assert {lab: skipped[lab] for lab in slow} == pytest.approx(dict.fromkeys(slow, 3.0))
    for lab in set(skipped) - slow:                       # timed this time, > 2x its winner
        assert e["timings"][lab] > 2.0 * e["median_us"]


def test_rlscan_tune_prune_factor_must_be_a_number_of_at_least_one():
    from rlscan.tune import cli
    for bad in ("0.9", "x", "inf", "nan"):
        with pytest.raises(SystemExit):
            cli.parser().parse_args(["--prune", bad])
    assert cli.parser().parse_args(["--prune", "1.3"]).prune == 1.3


def test_prune_reads_the_db_it_merges_into_else_the_shipped_one(tmp_path, monkeypatch):
    """--prune's earlier timings: the file in --out (what the tune merges into); where there is
    none, or it cannot be read, the GPU's shipped file (a first tune into the user overlay)."""
    from rlscan.tune import prune
    shipped, out = tmp_path / "shipped", tmp_path / "out"
    monkeypatch.setattr(tuning, "shipped_dir", lambda: shipped)
    e = dict(entry(64, 512, cfg()), median_us=3.0, timings={"a": 3.0})
    assert prune.earlier_doc(out, SLUG) == (None, None)
    write(shipped / f"{SLUG}.json", doc({"gae": [e]}))
    got, path = prune.earlier_doc(out, SLUG)
    assert path == shipped / f"{SLUG}.json" and got["kernels"]["gae"]["entries"] == [e]
    (out / f"{SLUG}.json").parent.mkdir(parents=True)
    (out / f"{SLUG}.json").write_text("{not json")
    assert prune.earlier_doc(out, SLUG)[1] == shipped / f"{SLUG}.json"
    write(out / f"{SLUG}.json", doc({"vtrace": [e]}))
    got, path = prune.earlier_doc(out, SLUG)
    assert path == out / f"{SLUG}.json" and list(got["kernels"]) == ["vtrace"]


def test_prune_from_reads_another_gpus_db_and_rejects_a_file_that_is_not_one(tmp_path):
    """--prune-from DB_FILE: the earlier timings come from that file whatever GPU made it (a
    first tune of an H100 pruned by the H200's rankings), ahead of --out's and the shipped
    file; a file that is not a DB is an error naming it, not a silent unpruned tune."""
    from rlscan.tune import prune
    e = dict(entry(64, 512, cfg()), median_us=3.0, timings={"a": 3.0, "b": 9.0})
    other = doc({"gae": [e]})
    other["device"] = dict(other["device"], name="NVIDIA H100 80GB HBM3")
    write(tmp_path / "sibling.json", other)
    write(tmp_path / "out" / f"{SLUG}.json", doc({"vtrace": [e]}))
    got, path = prune.earlier_doc(tmp_path / "out", SLUG, tmp_path / "sibling.json")
    assert path == tmp_path / "sibling.json" and list(got["kernels"]) == ["gae"]
    assert prune.earlier_timings(got)[tuning.entry_key("gae", e)] == (3.0, e["timings"])
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(tuning.TuningDBError, match="not valid JSON"):
        prune.earlier_doc(tmp_path / "out", SLUG, tmp_path / "bad.json")


def test_rlscan_tune_prune_from_without_a_factor_is_refused_before_any_measuring(capsys):
    from rlscan.tune import cli
    assert cli.main(["--prune-from", "x.json"]) == 2
    assert "--prune-from needs --prune" in capsys.readouterr().err


# --------------------------------------------------------------------------- stand-in DBs
def arch_doc(kernels, name, capability=(9, 0), sm_count=132, l2_mib=50):
    d = doc(kernels, name=name)
    d["device"].update(capability=list(capability), sm_count=sm_count, l2_bytes=l2_mib << 20)
    return d


@pytest.fixture
def cpu_is_h800(monkeypatch):
    """select_config as if CPU tensors lived on an H800 (sm_90, 132 SMs, 50 MiB of L2), a GPU
    with no DB file of its own."""
    monkeypatch.setattr(tuning, "_device_slug", lambda device: "nvidia-h800")
    monkeypatch.setattr(tuning, "_device_arch", lambda device: ((9, 0), 132, 50 << 20))


def test_a_gpu_without_a_db_runs_a_same_architecture_gpus_entries_and_says_so_once(
        dirs, cpu_is_h800, monkeypatch):
    shipped, _, reload = dirs
    h200 = write(shipped / "nvidia-h200.json",
                 arch_doc({"gae": [entry(4096, 128, cfg(8, 128, 2))]}, "NVIDIA H200", l2_mib=60))
    reload()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert tuning.select_config(_problem(4096, 128)) == cfg(8, 128, 2)
        assert tuning.select_config(_problem(300, 100)) == heuristic_config(300, 100)
        assert tuning.select_config(_problem(4096, 128)) == cfg(8, 128, 2)
    msgs = [str(w.message) for w in got if issubclass(w.category, W)]
    assert len(msgs) == 2, msgs
    assert "no tuning DB for nvidia-h800" in msgs[0] and "nvidia-h200's" in msgs[0]
    assert "no tuned entry for gae on nvidia-h800 (in nvidia-h200's DB" in msgs[1]
    import rlscan._layout as layout
    monkeypatch.setattr(layout, "use_kernels", lambda device: True)   # as on the GPU
    got = rlscan.which_config("gae", torch.empty(4096, 128))
    assert got.config == dict(cfg(8, 128, 2)) and got.source == f"db:{h200}"
    assert got.gpu == "nvidia-h800"


def test_a_stand_in_needs_the_same_capability_and_sm_count_and_the_nearest_l2_wins(
        dirs, cpu_is_h800):
    shipped, overlay, reload = dirs
    e = {"gae": [entry(4096, 128, cfg(8, 128, 2))]}
    write(shipped / "nvidia-h100-pcie.json", arch_doc(e, "NVIDIA H100 PCIe", sm_count=114))
    write(shipped / "nvidia-a100.json", arch_doc(e, "NVIDIA A100", capability=(8, 0), sm_count=132))
    nosms = doc(e, name="NVIDIA GH200")          # an old DB without sm_count serves no one
    write(shipped / "nvidia-gh200.json", nosms)
    reload()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert tuning.select_config(_problem(4096, 128)) == heuristic_config(4096, 128)
    assert "no tuning DB for gae on nvidia-h800" in str(got[-1].message)
    write(shipped / "nvidia-h200.json",
          arch_doc({"gae": [entry(4096, 128, cfg(4, 128, 1))]}, "NVIDIA H200", l2_mib=60))
    write(overlay / "nvidia-h100-80gb-hbm3.json",
          arch_doc({"gae": [entry(4096, 128, cfg(2, 128, 1))]}, "NVIDIA H100 80GB HBM3"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reload()
        # the H100's 50 MiB of L2 is the H800's; the H200's 60 MiB is farther
        assert tuning.select_config(_problem(4096, 128)) == cfg(2, 128, 1)


def test_a_bucket_its_own_db_lacks_runs_a_sibling_gpus_entry_before_the_heuristic(
        dirs, cpu_is_h200):
    """Bucket by bucket: the GPU's own entry, else the entry of a DB made on a GPU of the same
    capability and SM count (nearest L2 first), else the heuristic (warned); silently, and
    which_config names the sibling's file."""
    shipped, overlay, reload = dirs
    write(shipped / "nvidia-h200.json", arch_doc(
        {"gae": [entry(4096, 128, cfg(8, 128, 2))]}, "NVIDIA H200", l2_mib=60))
    h100 = write(shipped / "nvidia-h100-80gb-hbm3.json", arch_doc(
        {"gae": [entry(4096, 128, cfg(2, 128, 1)), entry(8192, 256, cfg(4, 256, 4)),
                 entry(300, 2048, cfg(1, 512, 4))]}, "NVIDIA H100 80GB HBM3", l2_mib=50))
    write(overlay / "nvidia-h100-pcie.json", arch_doc(       # farther L2, other SM count
        {"gae": [entry(300, 2048, cfg(16, 64, 8)), entry(20, 20, cfg(16, 64, 8))]},
        "NVIDIA H100 PCIe", sm_count=114, l2_mib=60))
    write(overlay / "nvidia-gh200.json", arch_doc(
        {"gae": [entry(8192, 256, cfg(16, 64, 8)), entry(100, 100, cfg(2, 64, 2))]},
        "NVIDIA GH200", l2_mib=96))
    reload()
    assert tuning._siblings("nvidia-h200") == ("nvidia-h100-80gb-hbm3", "nvidia-gh200")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert tuning.select_config(_problem(4096, 128)) == cfg(8, 128, 2)      # its own
        assert tuning.select_config(_problem(8192, 256)) == cfg(4, 256, 4)      # nearest L2
        assert tuning.select_config(_problem(300, 2048)) == cfg(1, 512, 4)
        assert tuning.select_config(_problem(100, 100)) == cfg(2, 64, 2)        # only GH200's
        assert [w for w in got if issubclass(w.category, W)] == []
        assert tuning.select_config(_problem(20, 20)) == heuristic_config(20, 20)  # 114 SMs
    msgs = [str(w.message) for w in got if issubclass(w.category, W)]
    assert len(msgs) == 1 and "no tuned entry for gae on nvidia-h200" in msgs[0], msgs
    assert ask(N=8192, T=256).source == f"db:{h100}"
    assert ask(N=8192, T=256).config == {**cfg(4, 256, 4)}
    assert ask(N=20, T=20).source == "heuristic"


def test_the_shipped_dbs_were_tuned_for_this_kernel_source():
    """An edit to a file the kernel source hash covers (rlscan/kernels/ but for configs.py and
    launch.py) makes every shipped entry stale, and every call falls back to the heuristic: host
    code belongs outside it (the fortieth session's workspace fix first went into
    lookback_state.py, and only a test that read a tuned config noticed)."""
    shipped = Path(__file__).resolve().parents[1] / "tuning_db"
    files = sorted(shipped.glob("*.json"))
    assert files
    for path in files:
        db = tuning.parse_db(path, expect_slug=path.stem)
        assert db.stale == [] and len(db.entries) > 0, (path.name, db.stale)


def test_python_m_rlscan_reports_the_db_serving_each_gpu(dirs, monkeypatch):
    """``python -m rlscan``: the loaded DBs, and per GPU whether its own DB, a stand-in's or
    none serves it (GPUs stood in for by their properties)."""
    from types import SimpleNamespace

    from rlscan import __main__ as info
    shipped, overlay, reload = dirs
    e = {"gae": [entry(4096, 128, cfg(8, 128, 2)), entry(64, 512, cfg(4, 128, 1))]}
    write(shipped / "nvidia-h200.json", arch_doc(e, "NVIDIA H200", l2_mib=60))
    write(overlay / "nvidia-h100-80gb-hbm3.json", arch_doc(e, "NVIDIA H100 80GB HBM3"))
    reload()
    gpus = [SimpleNamespace(name=n, major=c[0], minor=c[1], multi_processor_count=sms,
                            L2_cache_size=l2 << 20)
            for n, c, sms, l2 in [("NVIDIA H200", (9, 0), 132, 60),
                                  ("NVIDIA H800", (9, 0), 132, 50),
                                  ("NVIDIA GeForce RTX 4090", (8, 9), 128, 72)]]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: len(gpus))
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d: gpus[d.index])
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d: gpus[d.index].name)
    monkeypatch.setattr(tuning, "_device_slugs", {})
    lines = info.report().splitlines()
    assert lines[0].startswith(f"rlscan {rlscan.__version__}, torch ")
    assert ("  cuda:0 NVIDIA H200 (sm_90, 132 SMs): its own DB, nvidia-h200; buckets it lacks "
            "from nvidia-h100-80gb-hbm3 where tuned there") in lines
    assert ("  cuda:1 NVIDIA H800 (sm_90, 132 SMs): no DB of its own (nvidia-h800); the stand-in "
            "nvidia-h100-80gb-hbm3's") in "\n".join(lines)     # the nearest L2 (50 MiB)
    assert any(ln.startswith("  cuda:2 NVIDIA GeForce RTX 4090 (sm_89, 128 SMs): no DB") and
               "heuristic" in ln for ln in lines)
    assert f"tuning DBs, read from shipped {shipped}, overlay {overlay}:" in lines
    assert "  nvidia-h200: 2 buckets (2 shipped); made on sm_90, 132 SMs, 60 MiB L2" in lines
    assert ("  nvidia-h100-80gb-hbm3: 2 buckets (2 from the overlay); made on sm_90, 132 SMs, "
            "50 MiB L2") in lines


def test_python_m_rlscan_runs_on_a_machine_without_a_gpu():
    out = subprocess.run([sys.executable, "-m", "rlscan"], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert out.returncode == 0, out.stderr
    assert "CUDA: no device" in out.stdout and "nvidia-h200:" in out.stdout


def test_one_slow_eager_call_does_not_rule_a_candidate_out():
    """A host stall inside one eager time (2 ms around a 4 µs kernel on the H100) must not
    discard a candidate: it is ruled out only when a second call is as slow."""
    from rlscan.tune import timing

    def times(*us):
        it = iter(us)
        calls = []

        def once():
            calls.append(1)
            return next(it)
        return once, calls

    once, calls = times(2055.0, 4.3)
    assert timing.eager_rules_out(once, 4.1, 1.3) == (4.3, False)
    assert len(calls) == 2
    once, calls = times(20000.0, 19000.0)            # slow twice: ruled out, faster time kept
    assert timing.eager_rules_out(once, 4.1, 1.3) == (19000.0, True)
    once, calls = times(5.0)                          # fast at once: one call, kept
    assert timing.eager_rules_out(once, 4.1, 1.3) == (5.0, False) and len(calls) == 1
    once, calls = times(20000.0)                      # nothing to beat yet: never ruled out
    assert timing.eager_rules_out(once, None, 1.3) == (20000.0, False) and len(calls) == 1


def test_a_candidate_out_of_gpu_memory_is_timed_once_more_before_it_fails(monkeypatch):
    """An out-of-memory error (an 80 GB H100's first tune lost two candidates so) is retried
    once after the cache is handed back: a candidate that fits then is timed and may win; one
    that runs out twice is recorded as failed, and the others are timed as usual."""
    cells = grid.cells([(8, 40)], ["gae"], ["float32"], ["time_last"])
    flaky, hopeless = C.candidates("gae", 8, 40, "time_last", "float32")[:2]
    raised = {C.label(flaky): 0, C.label(hopeless): 0}
    emptied = []
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: emptied.append(1))

    def fake_timer(call, n_sets, config, cutoff_us=None):
        lab = C.label(config)
        if lab in raised and (lab == C.label(hopeless) or raised[lab] == 0):
            raised[lab] += 1
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 128.00 MiB")
        return 0.5 if lab == C.label(flaky) else 10.0 + config["BLOCK_T"] / config["BLOCK_N"]

    with Workers(0, "cpu") as w:
        (r,) = sweep.run(cells, "cpu", fake_timer, w, l2_bytes=1 << 16, bandwidth=1e12)
    statuses = {m.label: m.status for m in r.measured}
    assert raised == {C.label(flaky): 1, C.label(hopeless): 2}
    assert statuses[C.label(flaky)] == "ok" and r.winner.label == C.label(flaky)
    assert statuses[C.label(hopeless)].startswith("failed: OutOfMemoryError: CUDA out of memory")
    assert sum(s == "ok" for s in statuses.values()) == len(statuses) - 1
    assert len(emptied) >= 2
