"""Candidate launch configs of the scan kernels, for the tuner (``rlscan-tune``) and for checking
tuning-DB entries.

A config is a plain dict, the fields of a ``triton.Config``::

    {"strategy": "row_block", "BLOCK_N": 16, "BLOCK_T": 128, "num_warps": 4, "num_stages": 1}

``strategy`` names the kernel strategy of DESIGN.md §4. Only ``"row_block"`` exists today
(rlscan/kernels/scan.py: BLOCK_N rows per program, time walked in chunks of BLOCK_T); a new
strategy adds its name to ``STRATEGIES`` and its space to ``candidates``.

This module imports neither torch nor triton: ``import rlscan`` checks DB entries with it.
"""
from typing import Dict, List

STRATEGIES = ("row_block",)
LAYOUTS = ("time_last", "time_major")
DTYPES = ("float32", "bfloat16", "float16")

MAX_TILE = 16384            # BLOCK_N * BLOCK_T: the kernel keeps ~10 live [BN, BT] fp32 arrays
NUM_WARPS = (1, 2, 4, 8)
NUM_STAGES = (1, 2, 3)
CONFIG_KEYS = ("strategy", "BLOCK_N", "BLOCK_T", "num_warps", "num_stages")

# The space is pruned to what can plausibly win, because every candidate costs a Triton
# compile per (estimator, dtype, layout) and the default sweep must finish in 10 minutes:
_TILES = (1024, 2048, 4096, 8192, 16384)   # elements per program
_MIN_PER_THREAD = 4       # fewer elements per thread leaves warps idle
_MAX_PER_THREAD = 32      # more spills registers (measured: 64/thread spills at 8 warps)
_MULTI_CHUNK_STAGES = 4   # num_stages > 1 only pays when the chunk loop runs this often


def next_pow2(n: int) -> int:
    """Smallest power of two >= n (1 for n <= 1)."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _is_pow2(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 1 and n & (n - 1) == 0


def validate(config) -> Dict:
    """The config normalised to ``CONFIG_KEYS``, or ``ValueError`` saying what is wrong.

    Checks the structural rules only (powers of two, tile size, known strategy); whether the
    config fits a given shape is the tuner's business."""
    if not isinstance(config, dict):
        raise ValueError(f"config must be an object, got {type(config).__name__}")
    strategy = config.get("strategy", "row_block")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r} (this rlscan has {', '.join(STRATEGIES)})")
    bn, bt = config.get("BLOCK_N"), config.get("BLOCK_T")
    if not _is_pow2(bn) or not _is_pow2(bt):
        raise ValueError(f"BLOCK_N={bn!r}, BLOCK_T={bt!r}: both must be powers of two")
    if bn * bt > MAX_TILE:
        raise ValueError(f"BLOCK_N*BLOCK_T={bn * bt} exceeds {MAX_TILE}")
    warps, stages = config.get("num_warps", 4), config.get("num_stages", 1)
    if warps not in NUM_WARPS or isinstance(warps, bool):
        raise ValueError(f"num_warps={warps!r}; expected one of {NUM_WARPS}")
    if stages not in NUM_STAGES or isinstance(stages, bool):
        raise ValueError(f"num_stages={stages!r}; expected one of {NUM_STAGES}")
    return {"strategy": strategy, "BLOCK_N": bn, "BLOCK_T": bt, "num_warps": warps,
            "num_stages": stages}


def label(config: Dict) -> str:
    """A short stable name, e.g. ``row_block/16x128/w4/s1`` (rows x steps per program)."""
    return (f"{config.get('strategy', 'row_block')}/{config['BLOCK_N']}x{config['BLOCK_T']}"
            f"/w{config.get('num_warps', 4)}/s{config.get('num_stages', 1)}")


def _time_blocks(T: int, layout: str) -> List[int]:
    """BLOCK_T choices: the whole row when it fits, and chunkings around the sweet spot.

    Time-major inputs are contiguous along rows, so short chunks with many rows per program
    read coalesced; time-last inputs prefer long chunks."""
    tp = next_pow2(T)
    if tp <= 16:
        return [tp]
    wanted = (16, 32, 64, 128, 256) if layout == "time_major" else (64, 256, 1024, 4096)
    blocks = {bt for bt in wanted if bt < tp}
    if tp <= (1024 if layout == "time_major" else 4096):
        blocks.add(tp)            # the whole row in one chunk: no carry loop at all
    return sorted(blocks or {min(tp, 16)})


def _row_block(N: int, T: int, layout: str) -> List[Dict]:
    np2, tp = next_pow2(N), next_pow2(T)
    out = []
    for bt in _time_blocks(T, layout):
        chunks = -(-T // bt)
        stages = (1, 3) if chunks >= _MULTI_CHUNK_STAGES else (1,)
        seen = set()
        for tile in _TILES:
            bn = max(1, min(np2, tile // bt))
            if bn in seen:
                continue             # N (or T) too small for this tile: same config as before
            seen.add(bn)
            for warps in NUM_WARPS:
                per_thread = bn * bt / (32 * warps)
                if not _MIN_PER_THREAD <= per_thread <= _MAX_PER_THREAD:
                    # tiny problems have tiny tiles: still give them one warp count
                    if not (bn * bt < 32 * _MIN_PER_THREAD and warps == 1):
                        continue
                for s in stages:
                    out.append({"strategy": "row_block", "BLOCK_N": bn, "BLOCK_T": bt,
                                "num_warps": warps, "num_stages": s})
    return out


def candidates(estimator: str, N: int, T: int, layout: str, dtype: str) -> List[Dict]:
    """Every config the tuner measures for one call shape, in a stable order.

    The estimator and dtype do not change the space today (one fused kernel for all); they
    are parameters so a strategy that only suits some of them can say so."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout={layout!r}; expected one of {LAYOUTS}")
    if N < 1 or T < 1:
        raise ValueError(f"N={N}, T={T}: no kernel runs for an empty problem")
    return [validate(c) for c in _row_block(N, T, layout)]


def to_triton_config(config: Dict):
    """The same config as a ``triton.Config`` (imports triton)."""
    import triton
    c = validate(config)
    return triton.Config({"BLOCK_N": c["BLOCK_N"], "BLOCK_T": c["BLOCK_T"]},
                         num_warps=c["num_warps"], num_stages=c["num_stages"])
