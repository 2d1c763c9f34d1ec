"""Host side of the fused scan kernel: pick a config and launch one program per BLOCK_N rows."""
import contextlib
import os
from typing import Optional

import torch

from .. import _problem as P
from ..tuning import select_config
from .scan import chunk_carry_kernel, fused_scan_kernel

_forced: Optional[dict] = None


@contextlib.contextmanager
def force_config(**config):
    """Launch every kernel with ``config`` (BLOCK_N, BLOCK_T, num_warps) inside the block.

    For tests that must exercise chunk edges and partial row blocks at small shapes."""
    global _forced
    old, _forced = _forced, dict(config)
    try:
        yield
    finally:
        _forced = old


def heuristic_config(N: int, T: int, time_major: bool = False) -> dict:
    """Small tiles, few warps, many programs: the row-block kernel is latency-bound, so what
    counts is how many loads are in flight across the GPU, not the work per program.

    Chosen by a config sweep on the H200 (GAE fp32, 2026-11-30; rlscan-tune now sweeps per
    bucket): BLOCK_T=128 with 2 warps won at 4096x128 (BLOCK_N=2: 5.6 us; the first heuristic,
    32x128 tiles with 4 warps, took 30.5 us) and at 16384x512 (BLOCK_N=1, four chunks per row:
    65.8 us vs 238 us)."""
    block_t = min(_np2(max(T, 1)), 128)
    block_n = max(1, min(_np2(max(N, 1)), 256 // block_t))
    if os.environ.get("TRITON_INTERPRET") == "1":   # the interpreter pays per program
        block_t = min(_np2(max(T, 1)), 64)
        block_n = max(1, min(_np2(max(N, 1)), 16))
    if time_major:
        # rows are contiguous: a tile must span many rows for its loads to coalesce
        block_t = min(_np2(max(T, 1)), 32)
        block_n = max(1, min(_np2(max(N, 1)), 64))
    cfg = {"strategy": "row_block", "BLOCK_N": block_n, "BLOCK_T": block_t, "num_warps": 2}
    # Few rows, long horizons: split every row into spans across programs (chunked strategy,
    # reads the inputs twice) once row blocks alone cannot fill the GPU.
    row_progs, n_chunks = _cdiv(N, block_n), _cdiv(T, block_t)
    if row_progs < _MIN_PROGRAMS and n_chunks >= 4:
        cfg["strategy"] = "chunked"
        cfg["CHUNKS_PER_SPAN"] = _cdiv(n_chunks * row_progs, _TARGET_PROGRAMS)
    return cfg


# Row blocks walk their chunks serially, ~2-3 us a chunk on the H200 (1024x8192 row-block:
# 242 us for 64 chunks per row, 6.2x the floor), so split rows whenever there are fewer than
# ~8 row programs per SM, aiming at ~60 programs per SM of a 132-SM H200.
_MIN_PROGRAMS, _TARGET_PROGRAMS = 1024, 8192


def _cdiv(a: int, b: int) -> int:
    # plain ints: triton.cdiv and triton.next_power_of_2 are jit (constexpr) functions, and
    # calling them from Python costs ~4 us each
    return -(-a // b)


def _np2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _st(x: Optional[torch.Tensor], dummy: torch.Tensor):
    # (pointer, row stride, time stride) of a 2-D [N, T] view; a dummy for an absent input
    if x is None:
        return dummy, 0, 0
    return x, x.stride(0), x.stride(1)


def launch(pb: P.Problem, out0: torch.Tensor, out1: Optional[torch.Tensor]) -> None:
    """Run ``pb`` into the [N, T] output views ``out0`` (and ``out1``)."""
    cfg = _forced if _forced is not None else select_config(pb)   # tuning DB, else heuristic
    d = pb.p0
    args = []
    for x in (pb.p0, pb.p1, pb.term, pb.trunc, pb.nv, pb.x1, pb.x2, pb.g, pb.lam):
        args.extend(_st(x, d))
    args.append(pb.row0 if pb.row0 is not None else d)
    args.append(pb.row1 if pb.row1 is not None else d)
    args.extend(_st(out0, d))
    args.extend(_st(out1 if out1 is not None else out0, d))
    consts = dict(
        EST=pb.est, REVERSE=pb.reverse, VNEXT=pb.vnext, RATIO=pb.ratio,
        HAS_TERM=pb.term is not None, HAS_TRUNC=pb.trunc is not None,
        GAMMA_T=pb.g is not None, LAMBDA_T=pb.lam is not None,
        HAS_ROW0=pb.row0 is not None, HAS_ROW1=pb.row1 is not None,
        PG_MIX=pb.pg_mix, STARTS_AT=pb.starts_at,
        BLOCK_N=cfg["BLOCK_N"], BLOCK_T=cfg["BLOCK_T"], num_warps=cfg.get("num_warps", 4),
        num_stages=cfg.get("num_stages", 1),
    )
    scalars = (float(pb.gamma), float(pb.lmbda), float(pb.rho_bar), float(pb.c_bar),
               float(pb.pg_rho_bar))
    n_chunks = _cdiv(pb.T, cfg["BLOCK_T"])
    row_progs = _cdiv(pb.N, cfg["BLOCK_N"])
    per_span = cfg.get("CHUNKS_PER_SPAN") or n_chunks
    if cfg.get("strategy", "row_block") == "row_block" or per_span >= n_chunks:
        fused_scan_kernel[(row_progs, 1)](*args, d, d, d, 1, pb.N, pb.T, n_chunks, *scalars,
                                          PHASE=0, **consts)
        return
    # chunked: spans of per_span chunks, one program per (row block, span)
    K = _cdiv(n_chunks, per_span)
    wa = torch.empty((pb.N, K), dtype=torch.float32, device=d.device)
    wb, wc = torch.empty_like(wa), torch.empty_like(wa)
    fused_scan_kernel[(row_progs, K)](*args, wa, wb, wc, K, pb.N, pb.T, per_span, *scalars,
                                      PHASE=1, **consts)
    init = pb.row0 is not None and (not pb.reverse or pb.est == P.LINEAR)
    chunk_carry_kernel[(pb.N,)](wa, wb, wc, pb.row0 if init else wa, pb.N, K, HAS_INIT=init,
                                BLOCK_K=min(_np2(K), 1024), num_warps=4)
    fused_scan_kernel[(row_progs, K)](*args, wa, wb, wc, K, pb.N, pb.T, per_span, *scalars,
                                      PHASE=2, **consts)
