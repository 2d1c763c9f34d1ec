"""The tuning database at run time: which launch config each kernel call uses.

Files (DESIGN.md §5): one JSON file per GPU model, ``<gpu-slug>.json`` (``NVIDIA H200`` ->
``nvidia-h200.json``), in two places, read in this order, a later entry replacing an earlier one
with the same key:

1. the files shipped in the package (``rlscan/tuning_db/``, labelled ``db:<path>``);
2. the user overlay directory, ``$RLSCAN_TUNING_DIR`` or else ``<user cache>/rlscan/tuning``
   (labelled ``overlay:<path>``), where ``rlscan-tune`` writes by default.

Every file is parsed when ``rlscan`` is imported: JSON only, no CUDA, no triton. A file that
cannot be used (unreadable, not JSON, truncated, another schema, another GPU's name) gives
one :class:`RLScanTuningWarning` and is skipped; entries made for another kernel source
(``source_hash``) are skipped with one warning per file. Nothing is ever written here.

Lookup key: (GPU, estimator, input dtype, layout, rows bucket, steps bucket). Rows N and steps
T are bucketed by powers of two, ``[2**k, 2**(k+1) - 1]``, so every shape has exactly one
bucket. A bucket without an entry (in the GPU's DB or a sibling's, below) runs the entry of
the bucket above where N or T is within 1/32 of that bucket's first value, the shape it was
tuned at (``_buckets_above``: 1023 steps run the entry tuned at 1024, as a language model's
T - 1 tokens of rewards do), else ``rlscan.kernels.heuristic.heuristic_config`` for the exact
shape, layout, item size and estimator, and warns once per (estimator, GPU). There is no
"nearest tuned bucket" guess beyond that, because a config tuned for another shape can be
much slower than the heuristic (leave-one-out over the grid, the winner of the bucket two steps
away beat the heuristic in about half the buckets, with outliers of 5.5x and 173x its own
winner's time: benchmarks/NOTES.md, forty-sixth session). Run ``rlscan-tune`` (optionally
``--shapes``) to add entries for the shapes you use.

A GPU with no DB file of its own runs the entries of a DB made on a GPU of the same compute
capability and SM count where one is loaded (a stand-in, nearest L2 size first; one warning),
else the heuristic: a GPU model's winners serve its siblings far better than the heuristic
does (``_db_slug``). Likewise, bucket by bucket, a GPU whose own DB lacks a bucket runs a
sibling DB's entry for it before the heuristic (``_siblings``; silently: a sibling's winner is
what a tune on this GPU would most likely pick).

An entry may also hold ``bounded_walk``: look-back configs that would make more than
``configs.LOOKBACK_MAX_SPANS`` spans a row on the bucket's longer rows and beat the entry's
winner on the tuner's data, fastest first, each with the ``walk_spans`` its walks may take
(absent: the first window the kernel folds, 8 spans; 72 where the tuner found it at most 15%
slower than the winner on rows without episode ends walking that far: ``tune.sweep.walk_reach``).
A call runs the first whose rows of the call's length make at most that many spans, or whose
walk back its scalar coefficients end within its ``walk_spans`` (``configs.walk_ends_within``),
else the winner: on a row with no episode end and γ = λ = 1 a longer walk would go back to the
row's start.

:func:`which_config` answers which config a call would use, and where it came from.
"""
import functools
import hashlib
import importlib.util
import inspect
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Tuple

from . import _problem as P
from . import _replay
from .kernels import configs as _configs

SCHEMA = 1

# DB kernel names are the public function names; the numbers are rlscan/_problem.py's codes.
KERNEL_NAMES = {P.DISC: "discounted_returns", P.GAE: "gae", P.LAMBDA: "lambda_returns",
                P.VTRACE: "vtrace", P.RETRACE: "retrace", P.TRACE: "eligibility_traces",
                P.CUMSUM: "episodic_cumsum", P.LINEAR: "linear_scan"}
ESTIMATORS = tuple(KERNEL_NAMES.values())

# The files whose text decides what a tuned config measured: the kernel sources. configs.py
# only lists candidates, heuristic.py picks a config where no entry does and launch.py only
# turns a config into launches (host work, which device time does not see), so editing them
# leaves measured winners valid; a change in what a config *means* (its keys, the
# strategies' grids) must bump CONFIG_SEMANTICS instead.
_SOURCE_EXCLUDE = {"__init__.py", "configs.py", "heuristic.py", "launch.py"}
CONFIG_SEMANTICS = 1


class RLScanTuningWarning(UserWarning):
    """A tuning DB file was unusable or stale, or a call has no tuned config."""


class TuningDBError(Exception):
    """A tuning DB file cannot be used; the message says which file and why."""


class ConfigChoice(NamedTuple):
    """What :func:`which_config` reports for one call."""
    config: Optional[dict]    # launch config; None when no kernel runs (torch path, empty input)
    source: str               # "db:<path>", "overlay:<path>", "heuristic", "forced",
    #                           "torch" (CPU path) or "empty" (nothing runs)
    gpu: Optional[str]        # GPU slug the lookup used
    estimator: str
    dtype: str
    layout: str               # "time_last" or "time_major"
    rows: Tuple[int, int]     # bucket of N; of the entry's where it is the bucket above's
    steps: Tuple[int, int]    # bucket of T; likewise (select_config's _buckets_above)


# --------------------------------------------------------------------------- keys and buckets
def gpu_slug(name: str) -> str:
    """``"NVIDIA H200"`` -> ``"nvidia-h200"``: lowercase, runs of other characters to one ``-``."""
    out, dash = [], False
    for ch in name.strip().lower():
        if ch.isascii() and ch.isalnum():
            out.append(ch)
            dash = False
        elif not dash and out:
            out.append("-")
            dash = True
    return "".join(out).rstrip("-")


def bucket_index(n: int) -> int:
    """k such that ``2**k <= n < 2**(k+1)``, for n >= 1."""
    return int(n).bit_length() - 1


def bucket(n: int) -> Tuple[int, int]:
    """The bucket ``[lo, hi]`` holding n >= 1: ``[2**k, 2**(k+1) - 1]``."""
    if n < 1:
        raise ValueError(f"buckets cover n >= 1, got {n}")
    lo = 1 << bucket_index(n)
    return lo, 2 * lo - 1


def _bucket_from_range(r) -> Optional[int]:
    """k if ``r`` is exactly the bucket ``[2**k, 2**(k+1) - 1]``, else None."""
    if (not isinstance(r, list) or len(r) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in r)):
        return None
    lo, hi = r
    if lo < 1 or lo & (lo - 1) or hi != 2 * lo - 1:
        return None
    return bucket_index(lo)


def layout_key(time_stride: int) -> str:
    """"time_last" when consecutive steps of a row are adjacent in memory, else "time_major"."""
    return "time_last" if time_stride == 1 else "time_major"


def dtype_key(dtype) -> str:
    return str(dtype).replace("torch.", "")


# --------------------------------------------------------------------------- places and hashes
def user_dir() -> Path:
    """The overlay directory: ``$RLSCAN_TUNING_DIR``, else ``<user cache>/rlscan/tuning``."""
    env = os.environ.get("RLSCAN_TUNING_DIR")
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rlscan" / "tuning"


def shipped_dir() -> Optional[Path]:
    """The package's ``tuning_db`` directory (found without importing anything)."""
    spec = importlib.util.find_spec("rlscan.tuning_db")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


_source_hash: Optional[str] = None


def kernel_source_hash() -> str:
    """sha256 (first 16 hex digits) of the kernel sources, read once per process."""
    global _source_hash
    if _source_hash is None:
        kdir = Path(__file__).resolve().parent / "kernels"
        h = hashlib.sha256(f"config-semantics {CONFIG_SEMANTICS}\0".encode())
        for f in sorted(kdir.glob("*.py")):
            if f.name not in _SOURCE_EXCLUDE:
                h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
        _source_hash = h.hexdigest()[:16]
    return _source_hash


# --------------------------------------------------------------------------- parsing
def entry_key(kernel: str, e) -> Tuple[str, str, str, int, int]:
    """(kernel, dtype, layout, rows k, steps k) of a DB entry; ValueError if it is malformed."""
    if not isinstance(e, dict):
        raise ValueError("entry is not an object")
    if e.get("dtype") not in _configs.DTYPES:
        raise ValueError(f"dtype {e.get('dtype')!r}")
    if e.get("layout") not in _configs.LAYOUTS:
        raise ValueError(f"layout {e.get('layout')!r}")
    kr, kt = _bucket_from_range(e.get("rows")), _bucket_from_range(e.get("steps"))
    if kr is None or kt is None:
        raise ValueError(f"rows {e.get('rows')!r} / steps {e.get('steps')!r} are not "
                         f"power-of-two buckets [2^k, 2^(k+1)-1]")
    return kernel, e["dtype"], e["layout"], kr, kt


class ParsedDB(NamedTuple):
    doc: dict                             # the whole document, as read
    entries: Dict[tuple, dict]            # entry_key -> normalised config, current hash only
    stale: List[str]                      # kernels whose source_hash differs from this rlscan's
    skipped: List[str]                    # why individual entries or sections were skipped
    # entry_key -> the entry's bounded_walk (config, walk_spans) pairs, fastest first
    bounded: Dict[tuple, Tuple[Tuple[dict, int], ...]]


def parse_db(path: Path, expect_slug: Optional[str] = None) -> ParsedDB:
    """Read and check one DB file. File-level problems raise :class:`TuningDBError`."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise TuningDBError(f"cannot read it ({e.strerror or e})") from None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise TuningDBError(f"it is not valid JSON, corrupt or truncated ({e})") from None
    if not isinstance(doc, dict) or "schema" not in doc:
        raise TuningDBError("it is not an rlscan tuning DB (no 'schema' field)")
    if doc["schema"] != SCHEMA:
        raise TuningDBError(f"it has schema {doc['schema']!r}; this rlscan reads schema {SCHEMA}")
    device, kernels = doc.get("device"), doc.get("kernels")
    if not isinstance(device, dict) or not isinstance(device.get("name"), str):
        raise TuningDBError("its 'device' has no GPU name")
    if not isinstance(kernels, dict):
        raise TuningDBError("its 'kernels' is not an object")
    slug = gpu_slug(device["name"])
    if expect_slug is not None and slug != expect_slug:
        raise TuningDBError(f"it was made on {device['name']!r} ({slug}) but is named for "
                            f"{expect_slug}")
    current = kernel_source_hash()
    entries, bounded, stale, skipped = {}, {}, [], []
    for kernel, section in kernels.items():
        if kernel not in ESTIMATORS:
            skipped.append(f"unknown kernel {kernel!r}")
            continue
        if (not isinstance(section, dict) or not isinstance(section.get("entries"), list)
                or not isinstance(section.get("source_hash"), str)):
            skipped.append(f"{kernel}: section lacks source_hash or entries")
            continue
        if section["source_hash"] != current:
            stale.append(kernel)
            continue
        for i, e in enumerate(section["entries"]):
            try:
                key = entry_key(kernel, e)                  # checks e is an object first
                config = _configs.validate(e.get("config"))
                walk = _bounded_walk(e.get("bounded_walk", []))
            except ValueError as err:
                skipped.append(f"{kernel} entry {i}: {err}")
                continue
            entries[key] = config
            if walk:
                bounded[key] = walk
    return ParsedDB(doc, entries, stale, skipped, bounded)


def _bounded_walk(items) -> Tuple[Tuple[dict, int], ...]:
    """An entry's ``bounded_walk``: (look-back config, walk_spans) pairs of configs beyond the
    span limit that were faster than its winner, fastest first (``configs.bounded_walk_config``
    picks one per call). ``walk_spans`` (one of ``configs.WALK_REACHES``; absent: the first
    window) bounds the walks a call may make with it."""
    if not isinstance(items, list):
        raise ValueError(f"bounded_walk is not a list: {items!r}")
    out = []
    for item in items:
        config = _configs.validate(item.get("config") if isinstance(item, dict) else None)
        if config.get("strategy") != "lookback":
            raise ValueError(f"bounded_walk holds a {config.get('strategy')} config; expected "
                             f"look-back configs only")
        spans = item.get("walk_spans", _configs.LOOKBACK_FIRST_WINDOW)
        if spans not in _configs.WALK_REACHES or isinstance(spans, bool):
            raise ValueError(f"bounded_walk walk_spans={spans!r}; expected one of "
                             f"{_configs.WALK_REACHES}")
        out.append((config, spans))
    return tuple(out)


def _warn(msg: str) -> None:
    warnings.warn(msg, RLScanTuningWarning, stacklevel=2)


# --------------------------------------------------------------------------- the loaded index
# slug -> entry key -> (config, source label, bounded_walk (config, walk_spans) pairs); built
# by load(), read by select_config.
_index: Dict[str, Dict[tuple, Tuple[dict, str, Tuple[Tuple[dict, int], ...]]]] = {}
# hot-path cache: (device, est code, torch dtype, time-last?, rows k, steps k) ->
# (config, bounded_walk pairs) or None
_cache: dict = {}
# the same for a bucket without an entry: (that key, (N + N/32) and (T + T/32) bit lengths) ->
# the bucket above's (config, bounded_walk pairs) or None (_buckets_above)
_cache_above: dict = {}
_device_slugs: dict = {}
_warned_missing: set = set()
# slug -> (compute capability, SM count, L2 bytes) from each loaded DB's "device"; and
# device -> the slug whose entries serve it (its own, or a stand-in's: _db_slug)
_db_devices: Dict[str, Tuple[Tuple[int, int], int, int]] = {}
_db_slugs: dict = {}
_sibling_slugs: Dict[str, Tuple[str, ...]] = {}   # slug -> _siblings(slug), made by load()
_layers: List[Tuple[str, Optional[Path]]] = []   # (label kind, directory) read by load()


def _db_files(directory: Optional[Path]) -> List[Path]:
    try:
        if directory is None or not directory.exists():
            return []
        if not directory.is_dir():
            _warn(f"rlscan tuning: {directory} is not a directory; no tuning DB is read from it")
            return []
        return sorted(directory.glob("*.json"))
    except OSError as e:                 # e.g. no permission to look inside a parent
        _warn(f"rlscan tuning: cannot list {directory} ({e}); no tuning DB is read from it")
        return []


def load(shipped: Optional[Path] = None, overlay: Optional[Path] = None) -> None:
    """(Re)build the index from the shipped directory and the overlay directory.

    Called at import with the default places; tests and ``rlscan-tune`` call it again to see
    new files. Clears the per-call cache and the once-per-process warning memory."""
    shipped = shipped_dir() if shipped is None else shipped
    if overlay is None:
        try:
            overlay = user_dir()
        except (RuntimeError, KeyError, OSError):    # no home directory to put a cache in
            overlay = None
    layers = [("db", shipped)]
    if overlay is not None and (shipped is None or not _same_dir(overlay, shipped)):
        layers.append(("overlay", overlay))
    index: Dict[str, Dict[tuple, Tuple[dict, str, Tuple[dict, ...]]]] = {}
    devices: Dict[str, Tuple[Tuple[int, int], int, int]] = {}
    for kind, directory in layers:
        for path in _db_files(directory):
            label = f"{kind}:{path}"
            try:
                db = parse_db(path, expect_slug=path.stem)
            except TuningDBError as e:
                _warn(f"rlscan tuning: ignoring {path}: {e}. Calls fall back to the heuristic "
                      f"configs; the file was left as it is.")
                continue
            problems = []
            if db.stale:
                problems.append(f"entries for {', '.join(db.stale)} were tuned for another "
                                f"kernel source (source_hash differs from {kernel_source_hash()}) "
                                f"and are ignored; re-run rlscan-tune")
            if db.skipped:
                problems.append(f"{len(db.skipped)} malformed entries or sections skipped "
                                f"(first: {db.skipped[0]})")
            if problems:
                _warn(f"rlscan tuning: {path}: " + "; ".join(problems) + ".")
            table = index.setdefault(path.stem, {})
            for key, cfg in db.entries.items():
                table[key] = (cfg, label, db.bounded.get(key, ()))
            arch = _db_arch(db.doc["device"])
            if arch is not None:
                devices[path.stem] = arch
    global _index, _heuristic_cached, _db_devices, _layers, _sibling_slugs
    _index = index
    _layers = layers
    _db_devices = devices
    # same capability and SM count, nearest L2 first
    _sibling_slugs = {slug: tuple(other for _, other in sorted(
        (abs(d[2] - arch[2]), other) for other, d in devices.items()
        if other != slug and d[:2] == arch[:2])) for slug, arch in devices.items()}
    _db_slugs.clear()
    _heuristic_cached = None
    _cache.clear()
    _cache_above.clear()
    _replay.forget()      # recorded launch plans hold configs from the old DB
    _warned_missing.clear()


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


# --------------------------------------------------------------------------- lookup
def _device_slug(device) -> Optional[str]:
    """Slug of a CUDA device's GPU model, None for devices without a tuning DB (CPU)."""
    if device.type != "cuda":
        return None
    slug = _device_slugs.get(device)
    if slug is None:
        import torch
        slug = _device_slugs[device] = gpu_slug(torch.cuda.get_device_name(device))
    return slug


def _db_arch(device: dict) -> Optional[Tuple[Tuple[int, int], int, int]]:
    """(capability, SM count, L2 bytes) of a DB's ``device`` record; None where it lacks one."""
    try:
        major, minor = (int(c) for c in device["capability"])
        return (major, minor), int(device["sm_count"]), int(device.get("l2_bytes") or 0)
    except (KeyError, TypeError, ValueError):
        return None


def _device_arch(device) -> Tuple[Tuple[int, int], int, int]:
    import torch
    props = torch.cuda.get_device_properties(device)
    return (props.major, props.minor), props.multi_processor_count, \
        int(getattr(props, "L2_cache_size", 0) or 0)


def _db_slug(device) -> Optional[str]:
    """The slug whose DB entries serve ``device``: its own GPU's where one is loaded, else a
    stand-in's, a DB made on a GPU of the same compute capability and SM count (the nearest L2
    size first: an H800 or GH200 without a DB runs the H100's or H200's configs), with one
    warning; else its own (no entries: the heuristic). Why a stand-in rather than the
    heuristic: on an H100, the fp32 time-last grid on the H200's DB ran at 1.008x the H100's own
    DB's device time (geomean of 112 cells, worst 1.11x), where the heuristic's configs took
    1.145x the H100's winners (``benchmarks/results/cross_gpu_h100.md``)."""
    slug = _device_slug(device)
    if slug is None or slug in _index:
        return slug
    try:
        return _db_slugs[device]
    except KeyError:
        pass
    if not any(other in _index for other in _db_devices):
        return slug
    cap, sms, l2 = _device_arch(device)
    same = sorted((abs(d[2] - l2), other) for other, d in _db_devices.items()
                  if d[0] == cap and d[1] == sms and other in _index)
    chosen = _db_slugs[device] = same[0][1] if same else slug
    if same:
        _warn(f"rlscan tuning: no tuning DB for {slug}; its calls use {chosen}'s, a GPU of the "
              f"same architecture (sm_{cap[0]}{cap[1]}, {sms} SMs). Run `rlscan-tune` on this "
              f"GPU for configs measured on it.")
    return chosen


def _siblings(slug: Optional[str]) -> Tuple[str, ...]:
    """The other loaded DBs made on a GPU of the same compute capability and SM count as
    ``slug``'s DB, nearest L2 size first: a bucket ``slug``'s DB lacks runs their entry for it.

    Why: the tuned grid holds each GPU's buckets, and a bucket tuned on one GPU model only
    (the H100's off-grid buckets: no H200 came to the sessions that tuned them) should not
    fall to the heuristic on its sibling. From the two tunes' own timings of each other's
    winners (``benchmarks/cross_gpu_configs.py``, every bucket of the grid): the H100's winners
    on the H200 take 1.002-1.013x the H200's own winners' time (geomean per dtype and layout,
    worst bucket 1.29x), where the heuristic took 1.195-1.338x; the H200's on the H100
    1.002-1.062x against 1.145-1.271x (``benchmarks/results/cross_gpu_h{200,100}.md``)."""
    return _sibling_slugs.get(slug, ())


def _lookup(slug: Optional[str], kernel: str, dtype: str, layout: str, kr: int,
            kt: int) -> Optional[Tuple[dict, str, Tuple[dict, ...]]]:
    """``slug``'s entry for the bucket, else its nearest sibling's that has one (``_siblings``)."""
    if slug is None:
        return None
    key = (kernel, dtype, layout, kr, kt)
    hit = _index.get(slug, {}).get(key)
    if hit is None:
        for other in _siblings(slug):
            hit = _index[other].get(key)
            if hit is not None:
                break
    return hit


# A call within 1/32 of the next bucket's first value (N or T >= 2**k * 32/33) runs that bucket's
# entry where its own has none: the entry was tuned at a shape 3% away, where the heuristic is
# a rule for every shape.
_EDGE_SHIFT = 5


def _buckets_above(N: int, T: int) -> Tuple[Tuple[int, int], ...]:
    """The (rows, steps) bucket indices whose entry an (N, T) call runs when its own bucket has
    none, nearest first: the next rows and / or steps bucket where N or T is within 1/32 of
    its first value (``_EDGE_SHIFT``); empty for most shapes."""
    kr, kt = bucket_index(N), bucket_index(T)
    up_n = bucket_index(N + (N >> _EDGE_SHIFT)) > kr
    up_t = bucket_index(T + (T >> _EDGE_SHIFT)) > kt
    return tuple((kr + a, kt + b) for a, b in ((1, 1), (0, 1), (1, 0))
                 if a <= up_n and b <= up_t)


def _lookup_above(slug: Optional[str], kernel: str, dtype: str, layout: str, N: int,
                  T: int) -> Optional[Tuple[Tuple[dict, str, Tuple[dict, ...]], int, int]]:
    """The entry of the first of ``_buckets_above(N, T)`` that has one (``_lookup``), with its
    bucket indices."""
    for kr, kt in _buckets_above(N, T):
        hit = _lookup(slug, kernel, dtype, layout, kr, kt)
        if hit is not None:
            return hit, kr, kt
    return None


def select_config(pb: P.Problem) -> dict:
    """The launch config for ``pb``: its tuning-DB entry, else the heuristic for its shape.
    Where the entry has a ``bounded_walk``, the first of those look-back configs within the
    span limit on ``pb``'s rows, or whose walk back ``pb``'s scalar coefficients bound
    (``P.decay_bound``), runs instead; an entry's
    look-back config that would make more than ``configs.LOOKBACK_MAX_SPANS`` spans a row runs
    as chunked spans of the same tile (``configs.within_lookback_limit``: DBs tuned before the
    limit). The launcher may still swap the result for rows of odd length or stride
    (``configs.for_odd_rows``).

    The hot path: one dict lookup keyed by the call's bucket. The first call of a bucket
    resolves it; one without an entry looks for the bucket above's (``_buckets_above``: a
    second dict keyed by how near the call is to it) and warns once per estimator and GPU when
    that has none either. Never measures anything, so it is safe under CUDA-graph capture and
    torch.compile tracing.
    The returned dict is shared: do not modify it."""
    p0 = pb.p0
    # bit_length() is the bucket index + 1: the cheapest exact bucket id of an int
    key = (p0.device, pb.est, p0.dtype, p0.stride(1) == 1, pb.N.bit_length(), pb.T.bit_length())
    try:
        hit = _cache[key]
    except KeyError:
        hit = _cache[key] = _resolve(pb, key)
    if hit is None:
        # which of the buckets above the call is near (the misses' path: an untuned bucket)
        near = (key, (pb.N + (pb.N >> _EDGE_SHIFT)).bit_length(),
                (pb.T + (pb.T >> _EDGE_SHIFT)).bit_length())
        try:
            hit = _cache_above[near]
        except KeyError:
            hit = _cache_above[near] = _resolve_above(pb, key)
        if hit is None:
            return heuristic(pb.N, pb.T, not key[3], p0.element_size(), KERNEL_NAMES[pb.est],
                             sm_count(p0.device))
    if hit[1]:
        walk = _configs.bounded_walk_config(hit[1], P.decay_bound(pb), pb.T)
        if walk is not None:
            return walk
    return _configs.within_lookback_limit(hit[0], pb.T)


def heuristic(N: int, T: int, time_major: bool = False, itemsize: int = 4,
              estimator: str = "", sms: Optional[int] = None) -> dict:
    """``heuristic.heuristic_config``, memoised per exact call (shape, layout, item size,
    estimator: a kernel name of ``KERNEL_NAMES``, the GPU's SM count ``sms``, None for the
    H200's): it costs ~7 us a call against 0.4 us for a DB hit, and an untuned shape should
    not pay that on every call."""
    global _heuristic_cached
    if _heuristic_cached is None:
        from .kernels.heuristic import heuristic_config
        _heuristic_cached = functools.lru_cache(maxsize=4096)(heuristic_config)
    return _heuristic_cached(N, T, time_major, itemsize, estimator, sms)


_heuristic_cached = None


def sm_count(device) -> Optional[int]:
    """The SM count of a CUDA ``device`` (a ``torch.device``; an index-less one is the current
    GPU), None for any other (the interpreter's CPU tensors), for the heuristic's rules that
    size a launch to one wave. Memoised per device: a call that misses the DB pays one dict
    lookup for it."""
    try:
        return _sm_counts[device]
    except KeyError:
        pass
    import torch
    if device.type != "cuda" or not torch.cuda.is_available():
        return None
    if device.index is None:
        return sm_count(torch.device("cuda", torch.cuda.current_device()))
    n = _sm_counts[device] = _device_arch(device)[1]
    return n


_sm_counts: Dict = {}


def _resolve(pb: P.Problem, key) -> Optional[Tuple[dict, Tuple[dict, ...]]]:
    device, est, dtype, time_last, kr, kt = key
    hit = _lookup(_db_slug(device), KERNEL_NAMES[est], dtype_key(dtype),
                  "time_last" if time_last else "time_major", kr - 1, kt - 1)
    return None if hit is None else (hit[0], hit[2])


def _resolve_above(pb: P.Problem, key) -> Optional[Tuple[dict, Tuple[dict, ...]]]:
    """``_resolve`` for a call whose bucket has no entry: the bucket above's
    (``_lookup_above``), else None after the once-per-estimator-and-GPU warning."""
    device, est, dtype, time_last, _, _ = key
    slug = _db_slug(device)
    kernel = KERNEL_NAMES[est]
    hit = _lookup_above(slug, kernel, dtype_key(dtype), "time_last" if time_last else
                        "time_major", pb.N, pb.T)
    if hit is not None:
        return hit[0][0], hit[0][2]
    if slug is not None and (kernel, slug) not in _warned_missing:
        _warned_missing.add((kernel, slug))
        lo_n, hi_n = bucket(pb.N)
        lo_t, hi_t = bucket(pb.T)
        where = "no tuning DB" if slug not in _index else "no tuned entry"
        own = _device_slug(device)
        gpu = slug if own == slug else f"{own} (in {slug}'s DB, its stand-in)"
        _warn(f"rlscan tuning: {where} for {kernel} on {gpu} ({dtype_key(dtype)}, "
              f"{'time_last' if time_last else 'time_major'}, rows {lo_n}..{hi_n}, steps "
              f"{lo_t}..{hi_t}); using the heuristic config. Run `rlscan-tune --estimators "
              f"{kernel}` (add --shapes NxT for your shapes) to tune it. Shown once per "
              f"estimator and GPU.")
    return None


def which_config(estimator: str, x, *, time_dim: int = -1, gpu: Optional[str] = None,
                 gamma=None, lmbda=None, c_bar=None) -> ConfigChoice:
    """Which launch config a call would use, and where it comes from. Runs nothing, warns not.

    ``estimator``: a public function name (``"gae"``, ``"vtrace"``, ..., ``"linear_scan"``).
    ``x``: the call's primary per-step input (``rewards``, ``inputs`` or ``a``), with the
    same shape, strides, dtype and device as in the call; a ``device="meta"`` tensor works
    when you only want to ask. ``time_dim``: the call's (``x``'s time axis). ``gpu``: a GPU
    name or slug (``"NVIDIA H200"``) to ask about that GPU's DB instead of ``x``'s device (e.g.
    from a machine without one).
    ``gamma``, ``lmbda``, ``c_bar``: the call's, where it passes them (None: the estimator's
    default; for ``gamma`` and ``lmbda`` a tensor: per-step values): on long rows a DB entry
    may hold look-back configs that run only when these bound every walk back
    (``bounded_walk``, ``select_config``). Time-last rows whose length or row stride (``x``'s,
    of two rows or more; the launcher looks at every input's) is odd run 1x512/w4 where the
    choice is a two-level tile split over 4 warps, of 1024-step chunks, or any from 1024 rows x
    1024 steps; a two-level look-back tile runs in one level, and any other two-level tile
    without its register cap (``configs.for_odd_rows``); the config reported is what runs.
    Within it the launcher also shrinks a two-level tile's ``GROUP`` (steps a thread) to the
    power of two dividing T and the row strides (of two rows or more), per call (not
    reported).

    ``source`` is ``"db:<path>"`` or ``"overlay:<path>"`` for a tuned entry (on a GPU without
    a DB of its own, the file of its stand-in's: ``_db_slug``; for a bucket its DB lacks, a
    sibling's: ``_siblings``; for a bucket without one, the bucket above's where N or T is
    within 1/32 of its first value, ``rows`` and ``steps`` then naming that bucket:
    ``_buckets_above``), ``"heuristic"`` when there is none, ``"forced"`` inside
    ``rlscan.kernels.launch.force_config``, ``"torch"`` for CPU tensors (the torch implementation runs; no kernel config), and
    ``"empty"`` when the input is empty (nothing runs)."""
    from ._layout import Layout, use_kernels
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator={estimator!r}; expected one of {', '.join(ESTIMATORS)}")
    lay = Layout("x", x, time_dim)
    dt = dtype_key(x.dtype)
    if lay.N == 0 or lay.T == 0:
        return ConfigChoice(None, "empty", None, estimator, dt, "time_last", (0, 0), (0, 0))
    row_view = lay.rows(x)
    lk = layout_key(row_view.stride(1))
    rows, steps = bucket(lay.N), bucket(lay.T)
    slug = gpu_slug(gpu) if gpu is not None else _device_slug(lay.device)

    def choice(config, source):
        return ConfigChoice(config, source, slug, estimator, dt, lk, rows, steps)

    launch = sys.modules.get("rlscan.kernels.launch")
    forced = getattr(launch, "_forced", None)
    if forced is not None:
        return choice(dict(forced), "forced")
    if gpu is None and not use_kernels(lay.device):
        return choice(None, "torch")
    db_slug = slug if gpu is not None else _db_slug(lay.device)
    hit = _lookup(db_slug, estimator, dt, lk, bucket_index(lay.N), bucket_index(lay.T))
    if hit is None:
        above = _lookup_above(db_slug, estimator, dt, lk, lay.N, lay.T)
        if above is not None:
            hit, kr, kt = above
            rows, steps = bucket(1 << kr), bucket(1 << kt)
    if hit is not None:   # as select_config picks it
        walk = _configs.bounded_walk_config(hit[2], _asked_decay(estimator, gamma, lmbda, c_bar),
                                            lay.T)
        cfg, source = walk or _configs.within_lookback_limit(hit[0], lay.T), hit[1]
    else:
        # spelled out like a DB config (the launcher's defaults filled in); a named GPU's SM
        # count from its DB's device record (None without one: the H200's)
        sms = _db_devices.get(slug, (None, None))[1] if gpu is not None else sm_count(lay.device)
        cfg, source = {"strategy": "row_block", "num_warps": 4, "num_stages": 1, **heuristic(
            lay.N, lay.T, lk == "time_major", x.element_size(), estimator, sms)}, "heuristic"
    # as the launcher swaps it (one row's stride scales no address)
    if lk == "time_last" and (lay.T | (row_view.stride(0) if lay.N > 1 else 0)) & 1:
        cfg = _configs.for_odd_rows(cfg, lay.N, lay.T)
    return choice(dict(cfg), source)


def _asked_decay(estimator: str, gamma, lmbda, c_bar) -> Optional[float]:
    """``P.decay_bound`` of a call of ``estimator`` with these coefficients (None: the public
    function's default, where it has one)."""
    import torch

    from . import _checks, estimators
    params = inspect.signature(getattr(estimators, estimator)).parameters

    def scalar(name, v):
        if v is None:
            v = params[name].default if name in params else None
        if v is None or v is inspect.Parameter.empty or isinstance(v, torch.Tensor):
            return None                     # required and not given, or per-step values
        return _checks._number(name, v)
    est = next(code for code, name in KERNEL_NAMES.items() if name == estimator)
    cb = scalar("c_bar", c_bar)
    return P.scalar_decay_bound(est, scalar("gamma", gamma), scalar("lmbda", lmbda),
                                1.0 if cb is None else cb)


load()
