"""The bare backward recurrence x[t] = b[t] + a[t]·x[t+1] on fp32 [N, T], scanned four ways in
standalone row-block kernels (no prefetch, no estimator), to see what the scan itself costs:

* ``rev``: ``tl.associative_scan(reverse=True)`` over [BN, BT] chunks (the plain backward scan),
* ``fwd``: the forward scan on the same bytes (a wrong answer; only its cost matters),
* ``two``: the shipped two-level scan (``scan._suffix_two_level``) on [G, BN, Q, 4] chunks,
* ``wide``: a rejected two-level variant for rows spread over W warps (1 × 128W tiles): each
  warp's 128 steps as in ``two``, then a reverse scan of the W warps' totals. (The timings in the
  results file were taken with an earlier form that composed the warps' totals from the groups'
  compositions instead of the scanned steps; same shuffles and barriers.)
* ``wdesc``: the same with the warps on the chunk's 128-step parts in descending time and a
  forward scan of their totals (no reversals; eighth session, checked, not yet timed).

    python benchmarks/reverse_scan_probe.py            # GPU: a table of µs (do_bench, L2 flushed)
    python benchmarks/reverse_scan_probe.py --check    # results against float64 (CPU: set
                                                       # TRITON_INTERPRET=1 first)

Raw results: ``results/probes/2026-12-01_reverse_scan_standalone.txt``.
"""
import os
import sys

import torch
import triton
import triton.language as tl

from rlscan.kernels.scan import _apply, _combine, _combine_next, _suffix_two_level

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _recurrence import main, reference, within  # noqa: E402 - a sibling module


@triton.jit
def plain_kernel(A, B, X, N, T, MODE: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_T: tl.constexpr):
    # MODE 0: reverse scan; MODE 1: forward scan (cost only). Rows [BN], chunks from t = T-1.
    o_n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    o_p = tl.arange(0, BLOCK_T)[None, :]
    r = o_n.to(tl.int64)[:, None] * T
    carry = tl.zeros([BLOCK_N], tl.float32)
    for i_c in range(tl.cdiv(T, BLOCK_T)):
        t = T - (i_c + 1) * BLOCK_T + o_p
        m = (t >= 0) & (o_n[:, None] < N)
        a = tl.load(A + r + t, mask=m, other=1.0)
        b = tl.load(B + r + t, mask=m, other=0.0)
        s_a, s_b = tl.associative_scan((a, b), 1, _combine, reverse=(MODE == 0))
        x = _apply(s_a, s_b, carry[:, None])
        tl.store(X + r + t, x, mask=m)
        carry = tl.sum(tl.where(o_p == 0, x, 0.0), 1)


@triton.jit
def two_level_kernel(A, B, X, N, T, BLOCK_N: tl.constexpr, G: tl.constexpr, Q: tl.constexpr):
    # the shipped two-level scan on [G, BN, Q, 4] chunks of Q*G*4 steps
    BT: tl.constexpr = Q * G * 4
    o_n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    o_e = tl.arange(0, 4)[None, None, None, :]
    o_p = (tl.arange(0, Q)[None, None, :, None] * G + tl.arange(0, G)[:, None, None, None]) * 4 \
        + o_e
    r = o_n.to(tl.int64)[None, :, None, None] * T
    carry = tl.zeros([BLOCK_N], tl.float32)
    for i_c in range(tl.cdiv(T, BT)):
        t = T - (i_c + 1) * BT + o_p
        m = (t >= 0) & (o_n[None, :, None, None] < N)
        a = tl.load(A + r + t, mask=m, other=1.0)
        b = tl.load(B + r + t, mask=m, other=0.0)
        s_a, s_b, _, _ = _suffix_two_level(a, b, o_e, G, Q, 4)
        x = _apply(s_a, s_b, carry[None, :, None, None])
        tl.store(X + r + t, x, mask=m)
        carry = tl.sum(tl.sum(tl.sum(tl.where(o_p == 0, x, 0.0), 3), 2), 0)


@triton.jit
def wide_kernel(A, B, X, T, W: tl.constexpr, DESC: tl.constexpr):
    # one row a program over W warps: [32, 1, W, 4] chunks, each warp's 128 steps scanned by the
    # two-level scan as if they were a row of their own, then the later warps' composition from
    # a scan of the warps' totals, whose second composition (_combine_next) gives each warp the
    # composition of the later warps' steps.
    # DESC = 0 (``wide``, rejected): warp w on the chunk's w-th 128 steps, a reverse scan of the
    # totals. DESC = 1 (``wdesc``, eighth session, not yet timed): warp w on the (W-1-w)-th, so
    # warp 0 holds the latest steps and a FORWARD scan of the totals needs no lane or warp
    # reversal. PTX (triton 3.6, 1x512/w4): 37 shuffles and 11 barriers a chunk for ``wdesc``
    # against 77 and 11 for ``wide`` and 19 and 5 for triton's forward scan. (The totals kept as
    # a [1, 1, W, 1] tile to save the layout conversions trip an assertion in triton 3.6's scan
    # lowering.)
    BT: tl.constexpr = W * 128
    o_e = tl.arange(0, 4)[None, None, None, :]
    o_l = tl.arange(0, 32)[:, None, None, None] * 4 + o_e                  # step in the warp
    o_w = tl.arange(0, W)[None, None, :, None]
    if DESC:
        o_p = (W - 1 - o_w) * 128 + o_l
    else:
        o_p = o_w * 128 + o_l
    r = tl.program_id(0).to(tl.int64) * T
    carry = tl.zeros([1], tl.float32)
    for i_c in range(tl.cdiv(T, BT)):
        t = T - (i_c + 1) * BT + o_p
        m = t >= 0
        a = tl.load(A + r + t, mask=m, other=1.0)
        b = tl.load(B + r + t, mask=m, other=0.0)
        s_a, s_b, _, _ = _suffix_two_level(a, b, o_e, 32, 1, 4)
        w_a = tl.sum(tl.sum(tl.where(o_l == 0, s_a, 0.0), 3), 0)         # [1, W] warp totals
        w_b = tl.sum(tl.sum(tl.where(o_l == 0, s_b, 0.0), 3), 0)
        _, _, x_a, x_b = tl.associative_scan(
            (w_a, w_b, tl.full(w_a.shape, 1.0, tl.float32), tl.zeros(w_a.shape, tl.float32)), 1,
            _combine_next, reverse=not DESC)
        s_a, s_b = _combine(x_a[None, :, :, None], x_b[None, :, :, None], s_a, s_b)
        x = _apply(s_a, s_b, carry[:, None, None, None])
        tl.store(X + r + t, x, mask=m)
        # the chunk's earliest step
        carry = tl.sum(tl.sum(tl.sum(tl.where(o_p == 0, x, 0.0), 3), 0), 1)


def run(kind: str, a, b, bn: int, bt: int, warps: int):
    """x for ``kind`` in rev/fwd/two/wide/wdesc with [bn rows, bt steps] chunks on ``warps``
    warps."""
    N, T = a.shape
    x = torch.empty_like(a)
    if kind in ("rev", "fwd"):
        plain_kernel[(triton.cdiv(N, bn),)](a, b, x, N, T, MODE=int(kind == "fwd"), BLOCK_N=bn,
                                            BLOCK_T=bt, num_warps=warps)
    elif kind == "two":
        g = min(bt // 4, 32)
        two_level_kernel[(triton.cdiv(N, bn),)](a, b, x, N, T, BLOCK_N=bn, G=g, Q=bt // (4 * g),
                                                num_warps=warps)
    else:
        wide_kernel[(N,)](a, b, x, T, W=bt // 128, DESC=int(kind == "wdesc"), num_warps=bt // 128)
    return x


# (kind, BN, BT, warps): in-warp tiles, then one row over several warps
TILES = [("rev", 2, 128, 2), ("fwd", 2, 128, 2), ("two", 2, 128, 2), ("two", 1, 128, 1),
         ("two", 1, 512, 1), ("rev", 1, 512, 4), ("fwd", 1, 512, 4), ("wide", 1, 512, 4),
         ("wdesc", 1, 512, 4), ("wdesc", 1, 1024, 8)]
SHAPES = [(65536, 128), (16384, 512), (131072, 256), (4096, 2048), (1024, 8192), (512, 4096)]


def check(device) -> int:
    """Largest error against float64 per backward kind, over chunk, part and warp edges."""
    gen = torch.Generator().manual_seed(0)
    a = torch.rand(3, 1100, generator=gen) * 0.2 + 0.8      # γλ near 1: long reach
    a[torch.rand(a.shape, generator=gen) < 0.01] = 0.0
    b = torch.randn(a.shape, generator=gen)
    ref = reference(a, b)
    ok = [within(f"{kind} {bn}x{bt}/w{warps}", run(kind, a.to(device), b.to(device), bn, bt,
                                                   warps), ref)
          for kind, bn, bt, warps in TILES if kind != "fwd"]
    return int(not all(ok))


def timing(device) -> None:
    for N, T in SHAPES:
        a = torch.rand(N, T, device=device) * 0.99
        b = torch.randn(N, T, device=device)
        floor = 3 * N * T * 4 / 4.26e12 * 1e6        # read a and b, write x
        cols = []
        for kind, bn, bt, warps in TILES:
            us = triton.testing.do_bench(lambda: run(kind, a, b, bn, bt, warps), warmup=10,
                                         rep=60) * 1e3
            cols.append(f"{kind} {bn}x{bt}/w{warps} {us:.1f}")
        print(f"{N}x{T} floor {floor:.1f} | " + " | ".join(cols), flush=True)


if __name__ == "__main__":
    sys.exit(main("reverse_scan_probe", __doc__, check, timing))
