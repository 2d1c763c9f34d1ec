"""Row walks with more bytes in flight: TMA loads pipelined by Triton against register prefetch,
probed on the bare backward recurrence x[t] = b[t] + a[t]·x[t+1] (fp32 [N, T]; GPU).

Why (benchmarks/NOTES.md, "What limits us now" 4; thirty-first session's grid): the mid cells
(128x16384, 256x8192, 512x4096) miss floor + 3 µs by 0-4 µs with one program a row (or two)
walking 2048-4096-step chunks over 8-16 warps, one chunk's loads in flight ahead (the shipped
PREFETCH, in registers). At 128 rows that is one program an SM: ~26 KB in flight where Little's
law wants ~36 KB an SM (4.8 TB/s over ~1 µs, 132 SMs), and a deeper register prefetch costs what
a bigger tile costs (the tuner's 16x256/w16 lost to 16x128/w16). TMA copies land in shared
memory (228 KB an SM) and hold no registers, so Triton's pipeliner could keep 2-4 chunks in
flight. Each program walks one row backward in chunks of R x 256 steps (the row viewed as
[T / 256, 256]: a TMA box is at most 256 elements a side), scans each 256-step piece, then the
pieces' summaries across the R rows (the shipped split tile's exchange, ``_combine_next``):

    MODE 0  plain loads, nothing ahead
    MODE 1  plain loads, the next chunk's issued before this one is scanned (as shipped)
    MODE 2  plain loads in tl.range(num_stages=S) (Triton's pipeliner)
    MODE 3  host TMA descriptors, loads in tl.range(num_stages=S)

    python benchmarks/tma_walk_probe.py            # GPU: µs per mode, tuned linear_scan, floor
    python benchmarks/tma_walk_probe.py --check    # against float64 (CPU: set
                                                   # TRITON_INTERPRET=1 first)
"""
import os
import sys

import torch
import triton
import triton.language as tl

import rlscan
from rlscan.kernels.scan import _apply, _combine, _combine_next

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _recurrence import main, reference, rotated_cell, within  # noqa: E402 - a sibling

STEPS = 256                  # a piece: the widest TMA box side
W = tl.constexpr(STEPS)


@triton.jit
def _chunk_out(a, b, carry, R: tl.constexpr):
    """x of an [R, W] chunk (pieces in time order along axis 0) given the value entering its
    last piece; returns (x, the value leaving its first step)."""
    s_a, s_b = tl.associative_scan((a, b), 1, _combine, reverse=True)
    o_w = tl.arange(0, W)[None, :]
    p_a = tl.sum(tl.where(o_w == 0, s_a, 0.0), 1)                 # [R] each piece composed
    p_b = tl.sum(tl.where(o_w == 0, s_b, 0.0), 1)
    f_a, f_b, e_a, e_b = tl.associative_scan(
        (p_a, p_b, tl.full([R], 1.0, tl.float32), tl.zeros([R], tl.float32)), 0,
        _combine_next, reverse=True)
    entering = _apply(e_a, e_b, carry)                              # [R] into each piece
    x = _apply(s_a, s_b, entering[:, None])
    o_r = tl.arange(0, R)
    leave = tl.sum(tl.where(o_r == 0, _apply(f_a, f_b, carry), 0.0), 0)
    return x, leave


@triton.jit
def walk_kernel(A, B, X, A_desc, B_desc, T, R: tl.constexpr, MODE: tl.constexpr,
                STAGES: tl.constexpr):
    row = tl.program_id(0)
    K = T // (R * W)                                                # chunks a row
    o = (tl.arange(0, R)[:, None] * W + tl.arange(0, W)[None, :])   # [R, W] steps of a chunk
    base = row.to(tl.int64) * T
    carry = tl.zeros([], tl.float32)
    if MODE == 1:
        off = base + (K - 1) * R * W + o
        na = tl.load(A + off)
        nb = tl.load(B + off)
        for k in range(0, K):
            c = K - 1 - k
            off = base + c * R * W + o
            a = na
            b = nb
            nxt = base + tl.maximum(c - 1, 0) * R * W + o
            na = tl.load(A + nxt)
            nb = tl.load(B + nxt)
            x, carry = _chunk_out(a, b, carry, R)
            tl.store(X + off, x)
    elif MODE == 3:
        for k in tl.range(0, K, num_stages=STAGES):
            c = K - 1 - k
            r0 = row * (T // W) + c * R                              # the [N·T/W, W] view's rows
            a = A_desc.load([r0, 0])
            b = B_desc.load([r0, 0])
            x, carry = _chunk_out(a, b, carry, R)
            tl.store(X + base + c * R * W + o, x)
    elif MODE == 2:
        for k in tl.range(0, K, num_stages=STAGES):
            c = K - 1 - k
            off = base + c * R * W + o
            x, carry = _chunk_out(tl.load(A + off), tl.load(B + off), carry, R)
            tl.store(X + off, x)
    else:
        for k in range(0, K):
            c = K - 1 - k
            off = base + c * R * W + o
            x, carry = _chunk_out(tl.load(A + off), tl.load(B + off), carry, R)
            tl.store(X + off, x)


def walk(a: torch.Tensor, b: torch.Tensor, mode: int, R: int = 8, warps: int = 8,
         stages: int = 3) -> torch.Tensor:
    """x for the backward recurrence, one program a row, chunks of R x W steps."""
    N, T = a.shape
    if T % (R * STEPS) or not a.is_contiguous() or not b.is_contiguous():
        raise ValueError(f"walk: T={T} must be a multiple of {R * STEPS}, inputs contiguous")
    x = torch.empty_like(a)
    if mode == 3:
        from triton.tools.tensor_descriptor import TensorDescriptor
        da = TensorDescriptor.from_tensor(a.view(-1, STEPS), [R, STEPS])
        db = TensorDescriptor.from_tensor(b.view(-1, STEPS), [R, STEPS])
    else:
        da = db = a                                                  # unused
    walk_kernel[(N,)](a, b, x, da, db, T, R=R, MODE=mode, STAGES=stages, num_warps=warps)
    return x


def inputs(N, T, device, seed=0):
    gen = torch.Generator(device=device).manual_seed(seed)
    a = torch.rand(N, T, generator=gen, device=device) * 0.2 + 0.8
    a = torch.where(torch.rand(N, T, generator=gen, device=device) < 0.001, 0.0, a)
    return a, torch.randn(N, T, generator=gen, device=device)


CHECKS = [(3, 4 * STEPS * 3, 4), (2, 2 * STEPS * 5, 2), (1, 8 * STEPS, 8)]   # (N, T, R)


def check(device, cases=CHECKS) -> int:
    """Every mode against float64 on ``cases``: chunk and piece edges, several rows."""
    ok = []
    for N, T, R in cases:
        a, b = inputs(N, T, "cpu", seed=T)
        for mode in (0, 1, 2, 3):
            x = walk(a.to(device), b.to(device), mode, R=R, warps=4, stages=3)
            ok.append(within(f"{N}x{T} chunks of {R}x{STEPS}, mode {mode}", x, reference(a, b)))
    return int(not all(ok))


SHAPES = [(128, 16384), (256, 8192), (512, 4096)]
# (R, warps): chunks of 2048 steps over 8 and 16 warps, of 1024 over 4 and 8
TILES = [(8, 8), (8, 16), (4, 4), (4, 8)]


def timing(device) -> None:
    for N, T in SHAPES:
        sets, cols, bench = rotated_cell(N, T, inputs, device)
        bench("tuned", lambda i: rlscan.linear_scan(*sets[i], reverse=True))
        for R, warps in TILES:
            for mode, stages in ((0, 1), (1, 1), (2, 3), (3, 2), (3, 3), (3, 4)):
                try:
                    bench(f"{R * STEPS}/w{warps} m{mode}" + (f"s{stages}" if mode >= 2 else ""),
                          lambda i: walk(*sets[i], mode, R, warps, stages))
                except Exception as e:  # noqa: BLE001 - a probe: report and go on
                    cols.append(f"{R * STEPS}/w{warps} m{mode}s{stages} "
                                f"{type(e).__name__}: {str(e)[:80]}")
        floor = 3 * N * T * 4 / 4.26e12 * 1e6
        print(f"{N}x{T} floor {floor:.1f} ({len(sets)} sets) | " + " | ".join(cols), flush=True)


if __name__ == "__main__":
    sys.exit(main("tma_walk_probe", __doc__, check, timing))
