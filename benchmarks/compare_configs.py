"""Time chosen launch configs side by side on chosen cells (GPU), the way the performance notes
compare strategies and tiles before they enter the tuner's candidate space.

    python benchmarks/compare_configs.py --estimator gae --shapes 1x1048576,8x65536 \\
        --configs heuristic,chunked:2x128:w2:c1,chunked:1x1024:w4:c1,lookback:1x1024:w4:c1

A config is ``heuristic`` (the built-in one), ``tuned`` (the shipped DB's for the cell and the
call's γ, λ, c̄; the heuristic where the DB has none), ``untuned`` (what the call would run
were its bucket and the buckets above it untuned: the heuristic as the launcher swaps it at
odd alignment) or
``STRATEGY:BNxBT:wWARPS[:cCHUNKS_PER_SPAN][:2l[:gGROUP]][:spSPLIT][:lr][:sl][:rREGS]`` (``2l``:
the two-level backward scan, ``TWO_LEVEL``; ``gGROUP``: its steps a thread, 4, 8 or 16;
``spSPLIT``: tile rows a row, ``SPLIT``; ``lr``: ``LANE_ROWS``; ``sl``: ``SCALAR_LOADS``;
``rREGS``: ``maxnreg``, the register cap).
``--ascending-time-major`` runs time-major backward scans the old way (ascending lanes and
triton's reverse scan) instead of over descending lanes, for an A/B of the two. ``--pdl-ab``
times every config twice, its later launches programmatic dependent ones and plain ones
(``name=PDL/plain``); ``--pdl-first-ab`` times it with the call's first launch a programmatic
dependent one and a plain one (``name=first-PDL/first-plain``). ``--fill-ab`` times every config
five times: look-back on its stream's persistent workspace (as shipped: no fill,
kernels/lookback_state.py), then on a workspace of the call's own filled by rlscan's fill kernel
(the scan a programmatic dependent launch), by torch's ``fill_`` (a kernel), by the driver's
``cuMemsetD8Async`` (a memset node in the graph), and not filled
(``name=persistent/fill/torch/memset/nofill``): the spans then read stale summaries and the
results are wrong (``!``), so ``nofill`` is a lower bound, never a config to ship.
``--align-n-ab`` times every config twice, as shipped and with ``ALIGN_N`` said in every
time-major tile (shipped: the tiles ``launch._tells_n`` names; ``name=shipped/alignN``);
``--unspec-ab`` as shipped and on the scan kernel compiled with its time strides unspecialised
and ``ALIGN_N`` off, the kernel of lane-row tiles (``name=shipped/unspec``): time-major loads
then stay scalar, whatever N's divisibility. ``--group-ab`` as shipped and with two-level tiles
holding the config's groups of steps at every T (``name=shipped/group4``; shipped: no more steps
a group than the power of two dividing T, ``launch._GROUP_BY_ALIGNMENT``).
``--stale-db`` lets ``tuned`` read the shipped DB's entries even though the kernel source
changed since they were tuned (an A/B of a kernel edit on the tuned configs).
``--no-resets`` draws rows with no episode end and γ = λ = 1 (``no_reset_call``): the grid's
data ends ~5% of steps and so do not rows whose coefficients decay, so a look-back span finds a
reset among its nearest predecessors; a language-model rollout scored without discount has
none, and every span walks back to its row's start (the look-back's worst case).
``--decay D`` (with ``--no-resets``): γ = D instead, λ = 1: a product of D per step underflows
to an exact 0 after ~103 / -ln(D) steps, where a walk back stops.
Per cell: the floor and, per config, the CUDA-graph device time in µs (rlscan-bench's method),
with ``!`` after configs whose first output differs from the first config's by more than 1e-3.
``--rounds R`` times every config R times, round-robin, each round starting one config later,
and prints the median with the range (``name=13.86[13.70-14.02]``): one pass in a fixed order
read the same config 0.3 µs apart at 64x512 (twenty-ninth session: ``tuned`` 3.02 and its own
config forced, last, 3.34), larger than the gains such an A/B looks for.
"""
import argparse
import contextlib
import json
import statistics
import sys

import torch

from rlscan import tuning
from rlscan.kernels import configs as C
from rlscan.kernels import launch, lookback_state
from rlscan.kernels.heuristic import heuristic_config
from rlscan.kernels.launch import force_config
from rlscan.tune import grid, timing
from rlscan.tune.bench import copy_bandwidth, device_us, input_set_count
from rlscan.tuning import which_config

# the positional argument holding the done flags, per estimator (grid._draw's order)
_FLAGS = {"gae": 2, "discounted_returns": 1, "episodic_cumsum": 1}


def timed_calls(make, est: str, l2: int):
    """``make(i)`` for as many input sets as a device-time graph rotates
    (``bench.input_set_count``): with a fixed 3, the 8x65536 and smaller cells ran from L2 (their
    sets fit in the H200's 60 MiB; twenty-sixth session)."""
    calls = [make(0)]
    n = input_set_count(grid.traffic_bytes(calls[0], grid.n_outputs(est)), l2)
    return calls + [make(i) for i in range(1, n)]


def grid_calls(est: str, N: int, T: int, l2: int, dtype="float32", layout="time_last",
               device="cuda"):
    """The grid's input sets of a cell (``grid.draw`` 0, 1, ...) placed in ``layout``, as many as
    ``timed_calls`` rotates."""
    cell = grid.Cell(est, N, T, dtype, layout)
    return timed_calls(lambda i: grid.place(grid.draw(cell, i, device), layout, device), est, l2)


def tuned_config(est: str, call: grid.Call, layout: str = "time_last", **kw):
    """The tuning DB's config for ``call`` as ``tuning.which_config`` picks it (the call's γ, λ,
    c̄ may pick a ``bounded_walk``); None where the DB has no entry (the heuristic's). ``kw``:
    more ``which_config`` arguments (``gpu``)."""
    coefficients = {k: call.kwargs[k] for k in ("gamma", "lmbda", "c_bar") if k in call.kwargs}
    return which_config(est, call.args[0], time_dim=0 if layout == "time_major" else -1,
                        **coefficients, **kw).config


def untuned_config(est: str, call: grid.Call, layout: str = "time_last"):
    """``tuned_config`` with no DB entry for any bucket (``tuning._lookup``): the heuristic's
    config as ``which_config`` reports it, ``configs.for_odd_rows`` applied where the launcher
    applies it."""
    lookup = tuning._lookup
    tuning._lookup = lambda *key: None
    try:
        return tuned_config(est, call, layout)
    finally:
        tuning._lookup = lookup


def padded_rows(call: grid.Call, pad: int) -> grid.Call:
    """``call`` with each ``[N, T]`` tensor a view of rows ``T + pad`` long (its first T steps):
    the row stride a user's slice ``x[:, :T]`` of a longer buffer leaves (odd ``pad``: an odd
    stride at any T)."""
    def widen(x):
        if x.dim() != 2:
            return x
        wide = x.new_zeros(x.shape[0], x.shape[1] + pad)
        wide[:, :x.shape[1]] = x
        return wide[:, :x.shape[1]]
    return grid.map_tensors(call, widen)


def probe_cells(name: str, doc: str, estimators: str, shapes: str, argv=None):
    """A cell probe's command line (``--estimators``, ``--shapes NxT,...``): ``(l2, [(estimator,
    N, T), ...])``, or None with a message where no CUDA GPU is present."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--estimators", default=estimators)
    p.add_argument("--shapes", default=shapes)
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print(f"{name} needs a CUDA GPU", file=sys.stderr)
        return None
    shapes = [tuple(map(int, x.split("x"))) for x in args.shapes.split(",")]
    return (timing.l2_bytes(torch.device("cuda")),
            [(est, N, T) for est in args.estimators.split(",") for N, T in shapes])


def no_reset_call(est: str, N: int, T: int, index: int, device="cuda",
                  decay: float = 1.0) -> grid.Call:
    """The grid's input set ``index`` (fp32, time-last) with every flag cleared, γ = ``decay``
    and λ = 1."""
    if est not in _FLAGS:
        raise ValueError(f"no_reset_call: estimator {est!r}; expected one of {', '.join(_FLAGS)}")
    call = grid.place(grid.draw(grid.Cell(est, N, T, "float32", "time_last"), index, device),
                      "time_last", device)
    args = list(call.args)
    args[_FLAGS[est]] = torch.zeros_like(args[_FLAGS[est]])
    kwargs = dict(call.kwargs)
    for k, v in (("gamma", decay), ("lmbda", 1.0)):
        if k in kwargs:
            kwargs[k] = v
    return grid.Call(tuple(args), kwargs)


_FILLS = ("persistent", "fill", "torch", "memset", "nofill")


def interleaved(measures, rounds: int):
    """Each of ``measures`` (callables returning µs) called ``rounds`` times, round-robin, round
    r starting at measure r (so no measure always runs first or after the same one): a list of
    timings per measure."""
    if rounds < 1:
        raise ValueError(f"rounds={rounds!r}; expected at least 1")
    out = [[] for _ in measures]
    n = len(measures)
    for r in range(rounds):
        for k in range(n):
            i = (r + k) % n
            out[i].append(measures[i]())
    return out


def summary(timings) -> str:
    """``median`` of one config's timings, with ``[min-max]`` when there are several;
    ``ERR(timing)`` when a timing failed (nan)."""
    if any(t != t for t in timings):
        return "ERR(timing)"
    text = f"{statistics.median(timings):.2f}"
    if len(timings) > 1:
        text += f"[{min(timings):.2f}-{max(timings):.2f}]"
    return text


def _fill_by(run, how):
    """``launch._run`` with the look-back workspace's fill done ``how`` (``--fill-ab``; all but
    ``persistent`` with ``lookback_state.acquire`` giving none, so that the call fills one)."""
    if how in ("persistent", "fill"):
        return run
    if how == "memset":
        import ctypes
        memset = ctypes.CDLL("libcuda.so.1").cuMemsetD8Async
        memset.argtypes = [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t, ctypes.c_void_p]

    def run_filled_otherwise(kernel, grid, args, objs, *rest, **kw):
        if kernel is not launch.fill_kernel:
            return run(kernel, grid, args, objs, *rest, **kw)
        ws = objs[0][1]                    # the int64 workspace, all ones = "not yet"
        if how == "torch":
            ws.fill_(-1)
        elif how == "memset":
            err = memset(ws.data_ptr(), 0xFF, ws.numel() * 8,
                         torch.cuda.current_stream().cuda_stream)
            if err:
                raise RuntimeError(f"cuMemsetD8Async: CUresult {err}")
    return run_filled_otherwise


def parse_config(text: str):
    """``heuristic`` -> None; ``tuned`` / ``untuned`` -> that name; ``chunked:1x1024:w4:c1`` ->
    a validated config dict."""
    if text == "heuristic":
        return None
    if text in ("tuned", "untuned"):
        return text
    parts = text.split(":")
    regs = None
    if len(parts) > 3 and parts[-1].startswith("r"):
        regs, parts = parts[-1], parts[:-1]
    scalar = len(parts) > 3 and parts[-1] == "sl"
    if scalar:
        parts = parts[:-1]
    lane_rows = len(parts) > 3 and parts[-1] == "lr"
    if lane_rows:
        parts = parts[:-1]
    split = None
    if len(parts) > 3 and parts[-1].startswith("sp"):
        split, parts = parts[-1], parts[:-1]
    group = None
    if len(parts) > 4 and parts[-1].startswith("g"):
        group, parts = parts[-1], parts[:-1]
    two_level = parts[-1] == "2l"
    if two_level:
        parts = parts[:-1]
    try:
        strategy, tile, warps = parts[0], parts[1], parts[2]
        bn, bt = (int(v) for v in tile.split("x"))
        cfg = {"strategy": strategy, "BLOCK_N": bn, "BLOCK_T": bt,
               "num_warps": int(warps.lstrip("w")), "num_stages": 1}
        if len(parts) > 3:
            cfg["CHUNKS_PER_SPAN"] = int(parts[3].lstrip("c"))
        if len(parts) > 4:
            raise ValueError
        if two_level:
            cfg["TWO_LEVEL"] = True
        if regs is not None:
            cfg["maxnreg"] = int(regs[1:])
        if group is not None:
            cfg["GROUP"] = int(group[1:])
        if split is not None:
            cfg["SPLIT"] = int(split[2:])
        if lane_rows:
            cfg["LANE_ROWS"] = True
        if scalar:
            cfg["SCALAR_LOADS"] = True
    except (IndexError, ValueError):
        raise argparse.ArgumentTypeError(
            f"config {text!r}: expected heuristic, tuned, untuned or "
            "STRATEGY:BNxBT:wWARPS[:cCHUNKS][:2l[:gGROUP]][:spSPLIT][:lr][:sl][:rREGS]") from None
    try:
        return C.validate(cfg)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"config {text!r}: {e}") from None


@contextlib.contextmanager
def _variant(variant, shipped):
    """Launches as ``variant`` (programmatic dependent launches, the look-back's fill, a first
    launch's PDL) asks, the shipped settings ``shipped`` restored after."""
    pdl, how, first_pdl, tweak = variant
    launch._PDL, launch._PDL_FIRST = pdl, first_pdl
    launch._run = _fill_by(shipped["run"], how)
    lookback_state.acquire = shipped["acquire"] if how == "persistent" else (lambda *a: None)
    if tweak == "alignN":        # every time-major tile told N's power of two
        launch._tells_n = lambda *tile: True
    elif tweak == "group4":      # two-level groups as the config says, whatever T's alignment
        launch._GROUP_BY_ALIGNMENT = False
    elif tweak == "tspec":       # two-level tiles at odd strides on the kernel specialising T
        launch._UNSPEC_T_FOR_ODD_STRIDES = False
    elif tweak == "unspec":      # time strides unspecialised, none said: scalar loads
        launch._tells_n = lambda *tile: False
        launch.fused_scan_kernel = launch._lane_rows_kernel
    try:
        yield
    finally:
        launch._PDL, launch._PDL_FIRST = shipped["pdl"], shipped["first"]
        launch._run, lookback_state.acquire = shipped["run"], shipped["acquire"]
        launch._tells_n = shipped["tells_n"]
        launch._GROUP_BY_ALIGNMENT = shipped["group_by_alignment"]
        launch._UNSPEC_T_FOR_ODD_STRIDES = shipped["unspec_t"]
        launch.fused_scan_kernel = shipped["kernel"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--estimator", default="gae", choices=grid.ESTIMATORS)
    p.add_argument("--shapes", type=grid.parse_shapes, required=True)
    p.add_argument("--dtype", default="float32", choices=grid.DTYPES)
    p.add_argument("--layout", default="time_last", choices=grid.LAYOUTS)
    p.add_argument("--ascending-time-major", action="store_true",
                   help="time-major backward scans over ascending lanes "
                        "(launch._DESCEND_TIME_MAJOR off)")
    p.add_argument("--pdl-ab", action="store_true",
                   help="each config with and without programmatic dependent launches")
    p.add_argument("--pdl-first-ab", action="store_true",
                   help="each config with its first launch programmatic dependent and plain")
    p.add_argument("--fill-ab", action="store_true",
                   help="each config with and without its look-back fill (results wrong)")
    p.add_argument("--align-n-ab", action="store_true",
                   help="each config as shipped and with ALIGN_N in every time-major tile "
                        "(shipped: launch._tells_n's)")
    p.add_argument("--group-ab", action="store_true",
                   help="each config as shipped and with its two-level groups as configured "
                        "at any T (shipped: launch._GROUP_BY_ALIGNMENT's smaller groups where "
                        "T is no multiple of them)")
    p.add_argument("--tspec-ab", action="store_true",
                   help="each config as shipped and, for two-level tiles at odd row strides "
                        "and T a multiple of 16 (--row-pad 1), on the kernel that specialises T "
                        "(shipped: launch._ODD_STRIDE_KERNEL, T unspecialised)")
    p.add_argument("--unspec-ab", action="store_true",
                   help="each config as shipped and on the kernel with unspecialised time "
                        "strides, ALIGN_N off (time-major: scalar loads, as lane-row tiles)")
    p.add_argument("--stale-db", action="store_true",
                   help="tuned: the shipped DB's entries, whatever kernel source they were "
                        "tuned for")
    p.add_argument("--no-resets", action="store_true",
                   help="rows without episode ends and γ = λ = 1 (fp32, time-last; GAE, "
                        "discounted returns, episodic sums)")
    p.add_argument("--decay", type=float, default=1.0,
                   help="with --no-resets: γ (λ = 1); default 1")
    p.add_argument("--row-pad", type=int, default=0,
                   help="time-last rows as views of rows this many steps longer (an odd value: "
                        "odd row strides at even T)")
    p.add_argument("--configs", required=True,
                   type=lambda s: [(c, parse_config(c)) for c in s.split(",") if c])
    p.add_argument("--rounds", type=int, default=1,
                   help="times each config this many times, round-robin; prints the median "
                        "and range (default 1: one pass in the given order)")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error(f"--rounds {args.rounds}: expected at least 1")
    if args.no_resets and (args.estimator not in _FLAGS or
                           (args.dtype, args.layout) != ("float32", "time_last")):
        p.error(f"--no-resets draws float32 time-last calls of {', '.join(_FLAGS)} only")
    if args.decay != 1.0 and not (args.no_resets and 0.0 < args.decay < 1.0):
        p.error(f"--decay {args.decay}: expected a value in (0, 1), with --no-resets")
    if args.row_pad < 0 or (args.row_pad and args.layout != "time_last"):
        p.error(f"--row-pad {args.row_pad}: expected a count >= 0, time-last layout only")
    if not torch.cuda.is_available():
        print("compare_configs needs a CUDA GPU", file=sys.stderr)
        return 2
    if args.ascending_time_major:
        launch._DESCEND_TIME_MAJOR = False
    if args.stale_db:
        db = tuning.shipped_dir() / f"{tuning.gpu_slug(torch.cuda.get_device_name())}.json"
        hashes = {k.get("source_hash") for k in json.loads(db.read_text())["kernels"].values()}
        if len(hashes) == 1:
            tuning._source_hash = hashes.pop()
            tuning.load()
    bw, est = copy_bandwidth(), args.estimator
    shipped = {"pdl": launch._PDL, "first": launch._PDL_FIRST, "run": launch._run,
               "acquire": lookback_state.acquire, "tells_n": launch._tells_n,
               "kernel": launch.fused_scan_kernel,
               "group_by_alignment": launch._GROUP_BY_ALIGNMENT,
               "unspec_t": launch._UNSPEC_T_FOR_ODD_STRIDES}
    tweaks = ("shipped",) + (("alignN",) if args.align_n_ab else ()) + \
        (("unspec",) if args.unspec_ab else ()) + (("group4",) if args.group_ab else ()) + \
        (("tspec",) if args.tspec_ab else ())
    l2 = timing.l2_bytes(torch.device("cuda"))
    for N, T in args.shapes:
        if args.no_resets:
            calls = timed_calls(lambda i: no_reset_call(est, N, T, i, decay=args.decay), est, l2)
        else:
            calls = grid_calls(est, N, T, l2, args.dtype, args.layout)
        if args.row_pad:
            calls = [padded_rows(c, args.row_pad) for c in calls]
        floor = grid.traffic_bytes(calls[0], grid.n_outputs(est)) / bw * 1e6
        first, runs = None, []          # runs: (config index, cfg, variant), one timing each
        for index, (name, cfg) in enumerate(args.configs):
            if cfg == "tuned":
                cfg = tuned_config(est, calls[0], args.layout)
            elif cfg == "untuned":
                cfg = untuned_config(est, calls[0], args.layout)
            if cfg is None:     # a [T, 1] buffer is time-last in memory: so is its call
                cfg = heuristic_config(N, T, args.layout == "time_major" and N > 1,
                                       grid.itemsize(args.dtype), est,
                                       tuning.sm_count(torch.device("cuda")))
            variants = [(pdl, "persistent", shipped["first"], "shipped")
                        for pdl in ((True, False) if args.pdl_ab else (shipped["pdl"],))]
            if args.pdl_first_ab:
                variants = [(shipped["pdl"], "persistent", first, "shipped")
                            for first in (True, False)]
            if args.fill_ab:
                variants += [(shipped["pdl"], how, shipped["first"], "shipped")
                             for how in _FILLS[1:]]
            variants += [(shipped["pdl"], "persistent", shipped["first"], t) for t in tweaks[1:]]
            runs += [(index, cfg, v) for v in variants]
        texts, measures = [], []
        for _, cfg, variant in runs:        # each run's first call: compile, check its output
            try:
                with _variant(variant, shipped), force_config(**cfg):
                    out = grid.run(est, calls[0])[0].float()
            except Exception as e:  # noqa: BLE001 - report and go on (compile/resources)
                texts.append(f"ERR({type(e).__name__}: {str(e)[:80]})")
                measures.append(None)
                continue
            first = out if first is None else first
            texts.append("!" if (out - first).abs().max().item() > 1e-3 else "")

            def measure(cfg=cfg, variant=variant):
                try:
                    with _variant(variant, shipped), force_config(**cfg):
                        return device_us([(lambda c=c: grid.run(est, c)) for c in calls])
                except Exception:  # noqa: BLE001 - a graph capture that fails: shown as nan
                    return float("nan")
            measures.append(measure)
        timed = iter(interleaved([m for m in measures if m is not None], args.rounds))
        per_config = [[] for _ in args.configs]
        for (index, _, _), text, m in zip(runs, texts, measures):
            per_config[index].append(text if m is None else summary(next(timed)) + text)
        parts = [f"{name}=" + "/".join(t) for (name, _), t in zip(args.configs, per_config)]
        mode = (" " + "/".join(_FILLS) if args.fill_ab else "") + \
            (" " + "/".join(tweaks) if len(tweaks) > 1 else "") + \
            (" asc" if args.ascending_time_major else "") + \
            (" no-resets" if args.no_resets else "") + \
            (f" decay {args.decay}" if args.decay != 1.0 else "") + \
            (f" rows of T+{args.row_pad}" if args.row_pad else "")
        print(f"{est} {args.dtype} {args.layout}{mode} {N}x{T} floor {floor:.1f} | "
              + " ".join(parts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
