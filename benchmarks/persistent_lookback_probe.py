"""Long horizons in one launch, probed on the bare backward recurrence x[t] = b[t] + a[t]·x[t+1]
(fp32 [N, T], few rows, long T): persistent programs that take chunks in order from an atomic
ticket counter, issue the next chunk's loads before they scan and look back for the current
one, and find each chunk's carry by decoupled look-back (the shipped ``scan._lookback``).

Why (benchmarks/NOTES.md, "What limits us now" 2): the shipped look-back is one program per
chunk, which holds its tile and has nothing in flight while it scans and waits (GAE 1×1M: 19.7 µs
against chunked's 14.2, floor 4.9); chunked reads the inputs twice in two launches. Here every
program keeps one chunk's loads in flight while it waits. Tickets are taken in order by running
programs, so the lowest unpublished chunk's predecessors are all published: no deadlock, and
the spin is bounded anyway (``_lookback``).

    python benchmarks/persistent_lookback_probe.py           # GPU: µs against rlscan's paths
    python benchmarks/persistent_lookback_probe.py --check   # against float64 (CPU: set
                                                             # TRITON_INTERPRET=1 first)

Not measured yet (written after the sixth session's device time was spent).
"""
import os
import sys

import torch
import triton
import triton.language as tl

import rlscan
from rlscan.kernels.launch import force_config
from rlscan.kernels.scan import _apply, _combine, _lookback, _pack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _recurrence import main, reference, within  # noqa: E402 - a sibling module

LB_WINDOW = 256          # as the shipped look-back for wide chunks


@triton.jit
def _chunk(A, B, ticket, T, K, TOTAL, o_p, BLOCK_T: tl.constexpr):
    # row, chunk index from the end, times, mask and loads of ticket's chunk (none past TOTAL)
    row = ticket // K
    c = ticket % K
    t = T - (c + 1) * BLOCK_T + o_p
    m = (t >= 0) & (t * 0 + ticket < TOTAL)       # full-shape: the interpreter needs it
    off = row.to(tl.int64) * T + t
    a = tl.load(A + off, mask=m, other=1.0)
    b = tl.load(B + off, mask=m, other=0.0)
    return row, c, off, m, a, b


@triton.jit
def persistent_kernel(A, B, X, WS, T, K, TOTAL, BLOCK_T: tl.constexpr, WINDOW: tl.constexpr):
    """WS: int64 [1 + 2·N·K] all -1: the ticket counter, then each chunk's published summary
    (AGG) and leaving value (INC) as in the shipped look-back."""
    o_p = tl.arange(0, BLOCK_T)[None, :]
    AGG = WS + 1
    INC = WS + 1 + TOTAL
    live = tl.full([1], 1, tl.int1)
    cur = tl.atomic_add(WS, 1) + 1
    row, c, off, m, a, b = _chunk(A, B, cur, T, K, TOTAL, o_p, BLOCK_T)
    while cur < TOTAL:
        # the next ticket's loads go out before this chunk is scanned and looked back for
        nxt = tl.atomic_add(WS, 1) + 1
        n_row, n_c, n_off, n_m, n_a, n_b = _chunk(A, B, nxt, T, K, TOTAL, o_p, BLOCK_T)
        s_a, s_b = tl.associative_scan((a, b), 1, _combine, reverse=True)
        span_a = tl.sum(tl.where(o_p == 0, s_a, 0.0), 1)
        span_b = tl.sum(tl.where(o_p == 0, s_b, 0.0), 1)
        base = tl.zeros([1], tl.int64) + row.to(tl.int64) * K
        carry = tl.zeros([1], tl.float32)
        if c > 0:
            tl.store(AGG + base + c, _pack(span_a, span_b))
            carry = _lookback(AGG, INC, base, c, live, 1, WINDOW)
        tl.store(INC + base + c, _pack(_apply(span_a, span_b, carry), tl.zeros([1], tl.float32)))
        tl.store(X + off, _apply(s_a, s_b, carry[:, None]), mask=m)
        cur, row, c, off, m, a, b = nxt, n_row, n_c, n_off, n_m, n_a, n_b


def persistent(a: torch.Tensor, b: torch.Tensor, block_t: int = 1024, warps: int = 4,
               programs: int = 0) -> torch.Tensor:
    """x for the backward recurrence with ``programs`` persistent programs (0: 8 per SM)."""
    N, T = a.shape
    K = triton.cdiv(T, block_t)
    total = N * K
    if programs <= 0:
        sms = torch.cuda.get_device_properties(a.device).multi_processor_count \
            if a.is_cuda else 4
        programs = 8 * sms
    ws = torch.full((1 + 2 * total,), -1, dtype=torch.int64, device=a.device)
    x = torch.empty_like(a)
    persistent_kernel[(min(programs, total),)](a, b, x, ws, T, K, total, BLOCK_T=block_t,
                                               WINDOW=min(block_t, LB_WINDOW),
                                               num_warps=warps)
    return x


def inputs(N, T, device, seed=0):
    gen = torch.Generator(device=device).manual_seed(seed)
    a = torch.rand(N, T, generator=gen, device=device) * 0.2 + 0.8       # long reach
    a = torch.where(torch.rand(N, T, generator=gen, device=device) < 0.001, 0.0, a)
    return a, torch.randn(N, T, generator=gen, device=device)


def check(device) -> int:
    """Largest error against float64 over many chunks and rows (a row's chunks are consecutive
    tickets; the next row's first chunk does not look back into it)."""
    ok = []
    for N, T, bt, progs in [(3, 16 * 37 + 5, 16, 4), (2, 64 * 9, 64, 3), (1, 1000, 128, 1)]:
        a, b = inputs(N, T, "cpu", seed=T)
        x = persistent(a.to(device), b.to(device), block_t=bt, warps=1, programs=progs)
        ok.append(within(f"{N}x{T} chunks of {bt}, {progs} programs", x, reference(a, b)))
    return int(not all(ok))


def timing(device) -> None:
    for N, T in [(1, 1048576), (8, 262144), (8, 65536), (32, 32768), (128, 16384)]:
        a, b = inputs(N, T, device)
        floor = 3 * N * T * 4 / 4.26e12 * 1e6
        ref = rlscan.linear_scan(a, b, reverse=True)
        cols = []

        def bench(name, fn):
            err = (fn() - ref).abs().max().item()
            us = triton.testing.do_bench(fn, warmup=10, rep=60) * 1e3
            cols.append(f"{name} {us:.1f}" + ("!" if err > 1e-3 * ref.abs().max().item() else ""))

        bench("tuned", lambda: rlscan.linear_scan(a, b, reverse=True))
        for cfg in ("chunked:1x1024:w4:c1", "lookback:1x1024:w4:c1"):
            strategy, tile, w, cps = cfg.split(":")
            with force_config(strategy=strategy, BLOCK_N=1, BLOCK_T=int(tile.split("x")[1]),
                              num_warps=int(w[1:]), CHUNKS_PER_SPAN=int(cps[1:])):
                bench(cfg, lambda: rlscan.linear_scan(a, b, reverse=True))
        for bt, warps, per_sm in ((1024, 4, 8), (1024, 4, 4), (512, 2, 16), (2048, 8, 4)):
            sms = torch.cuda.get_device_properties(a.device).multi_processor_count
            bench(f"persistent 1x{bt}/w{warps} {per_sm}/SM",
                  lambda: persistent(a, b, bt, warps, per_sm * sms))
        print(f"{N}x{T} floor {floor:.1f} | " + " | ".join(cols), flush=True)


if __name__ == "__main__":
    sys.exit(main("persistent_lookback_probe", __doc__, check, timing))
