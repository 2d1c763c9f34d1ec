"""Long horizons in one launch, probed on the bare backward recurrence x[t] = b[t] + a[t]·x[t+1]
(fp32 [N, T]): persistent programs that walk chunks with a stride of the grid, issue the next
chunk's loads before they scan and look back for the current one, and find each chunk's carry by
look-back (the seventh session's chained decoupled look-back; since the fourteenth the shipped
fold of published summaries, ``scan._fold_published``). With one chunk a row (T <= BLOCK_T)
there is no look-back: the same programs are persistent row blocks with prefetch.

Why (benchmarks/NOTES.md, "What limits us now" 3): the shipped look-back is one program per
chunk, which holds its tile and has nothing in flight while it scans and waits (GAE 1×1M: 19.7 µs
against chunked's 14.2, floor 4.9); chunked reads the inputs twice in two launches. Here every
program keeps one chunk's loads in flight while it waits. Timed in the seventh session, it lost
on every shape (1×1M 14.7 µs at best against 11.9 tuned;
``results/probes/2026-12-01_persistent_lookback.txt``). Thirty-first session, over input sets
spanning three L2 caches, the shipped look-back forced beside it: 1×256/w1 programs at 16 an SM
took 10.3 / 17.3 µs at 1×1M / 8×262144 with their fill and 9.0 / 15.7 without one (a bound),
against the shipped 64-register span's 8.8 / 15.7 (no fill): a tie at best
(``results/probes/2026-12-04_thirtyfirst_session_persistent_lookback.txt``).

The first version took chunks from an atomic ticket counter in a ``while`` loop: triton 3.6 (the
H200's) fails to compile it (an assertion in TritonGPURemoveLayoutConversions; 3.9 compiles it),
so programs now take chunks p, p + P, p + 2P, ... in a ``for`` loop. A chunk's predecessor then
belongs to a program of the same round or the one before: with all P programs resident (the
timing keeps P within one wave) every look-back ends. The interpreter runs programs one after
another, so ``--check`` on CPU uses one program.

    python benchmarks/persistent_lookback_probe.py           # GPU: µs against rlscan's paths
    python benchmarks/persistent_lookback_probe.py --check   # against float64 (CPU: set
                                                             # TRITON_INTERPRET=1 first)
"""
import os
import sys

import torch
import triton
import triton.language as tl

import rlscan
from rlscan.kernels.launch import force_config
from rlscan.kernels.scan import _apply, _combine, _fold_published, _pack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _recurrence import main, reference, rotated_cell, within  # noqa: E402 - a sibling

LB_WINDOW = 256          # as the shipped look-back for wide chunks


@triton.jit
def _chunk(A, B, ticket, N, T, K, TOTAL, o_r, o_p, BLOCK_N: tl.constexpr,
           BLOCK_T: tl.constexpr):
    # rows, chunk index from the end, times, mask and loads of ticket's [BN, BT] chunk (none
    # past TOTAL)
    o_n = (ticket // K) * BLOCK_N + o_r
    c = ticket % K
    t = T - (c + 1) * BLOCK_T + o_p
    m = (t >= 0) & (o_n[:, None] < N) & (t * 0 + ticket < TOTAL)   # full-shape: interpreter
    off = o_n.to(tl.int64)[:, None] * T + t
    a = tl.load(A + off, mask=m, other=1.0)
    b = tl.load(B + off, mask=m, other=0.0)
    return o_n, c, off, m, a, b


@triton.jit
def persistent_kernel(A, B, X, WS, N, T, K, TOTAL, BLOCK_N: tl.constexpr, BLOCK_T: tl.constexpr,
                      WINDOW: tl.constexpr):
    """WS: int64 [N·K] all -1: each chunk's published summary, chunk 0's as the reset (0,
    value leaving it), as in the shipped look-back. Tickets: (row block, chunk from the end),
    row block major."""
    o_r = tl.arange(0, BLOCK_N)
    o_p = tl.arange(0, BLOCK_T)[None, :]
    AGG = WS
    first = tl.program_id(0)
    step = tl.num_programs(0)
    o_n, c, off, m, a, b = _chunk(A, B, first, N, T, K, TOTAL, o_r, o_p, BLOCK_N, BLOCK_T)
    for cur in range(first, TOTAL, step):
        # the next chunk's loads go out before this chunk is scanned and looked back for
        n_n, n_c, n_off, n_m, n_a, n_b = _chunk(A, B, cur + step, N, T, K, TOTAL, o_r, o_p,
                                                BLOCK_N, BLOCK_T)
        s_a, s_b = tl.associative_scan((a, b), 1, _combine, reverse=True)
        m_n = o_n < N
        base = o_n.to(tl.int64) * K
        carry = tl.zeros([BLOCK_N], tl.float32)
        if K > 1:
            span_a = tl.sum(tl.where(o_p == 0, s_a, 0.0), 1)
            span_b = tl.sum(tl.where(o_p == 0, s_b, 0.0), 1)
            if c == 0:
                tl.store(AGG + base, _pack(tl.zeros([BLOCK_N], tl.float32), span_b), mask=m_n)
            else:
                tl.store(AGG + base + c, _pack(span_a, span_b), mask=m_n)
                carry = _fold_published(AGG, base, c, m_n, BLOCK_N, WINDOW)
        tl.store(X + off, _apply(s_a, s_b, carry[:, None]), mask=m)
        o_n, c, off, m, a, b = n_n, n_c, n_off, n_m, n_a, n_b


def persistent(a: torch.Tensor, b: torch.Tensor, block_t: int = 1024, warps: int = 4,
               programs: int = 0, block_n: int = 1, ws=None) -> torch.Tensor:
    """x for the backward recurrence with ``programs`` persistent programs (0: 8 per SM) on
    [block_n, block_t] chunks. Program p takes chunks p, p + programs, ...: a chunk's
    predecessor belongs to a program of the same or an earlier round, so with every program
    resident the look-back ends (the GPU timing keeps programs within one wave). ``ws``: a
    workspace of an earlier call on the same inputs, not filled again (its summaries are
    already published: no wait, and no fill; a lower bound, as ``compare_configs.py
    --fill-ab``'s nofill)."""
    N, T = a.shape
    K = triton.cdiv(T, block_t)
    total = triton.cdiv(N, block_n) * K
    if programs <= 0:
        sms = torch.cuda.get_device_properties(a.device).multi_processor_count \
            if a.is_cuda else 4
        programs = 8 * sms
    if ws is None:
        ws = torch.full((N * K,), -1, dtype=torch.int64, device=a.device)
    x = torch.empty_like(a)
    persistent_kernel[(min(programs, total),)](a, b, x, ws, N, T, K, total, BLOCK_N=block_n,
                                               BLOCK_T=block_t,
                                               WINDOW=min(block_t, LB_WINDOW),
                                               num_warps=warps)
    return x


def inputs(N, T, device, seed=0):
    gen = torch.Generator(device=device).manual_seed(seed)
    a = torch.rand(N, T, generator=gen, device=device) * 0.2 + 0.8       # long reach
    a = torch.where(torch.rand(N, T, generator=gen, device=device) < 0.001, 0.0, a)
    return a, torch.randn(N, T, generator=gen, device=device)


def check(device) -> int:
    """Largest error against float64 over many chunks and rows (a row's chunks are consecutive;
    the next row's first chunk does not look back into it), two-row chunks, one chunk a row."""
    ok = []
    for N, T, bn, bt, progs in [(3, 16 * 37 + 5, 1, 16, 4), (2, 64 * 9, 1, 64, 3),
                                (1, 1000, 1, 128, 1), (5, 200, 2, 32, 3), (7, 64, 2, 64, 2)]:
        if device == "cpu":
            progs = 1      # the interpreter runs programs one after another: a later round's
                           # look-back would wait on a program that has not started
        a, b = inputs(N, T, "cpu", seed=T)
        x = persistent(a.to(device), b.to(device), block_t=bt, warps=1, programs=progs,
                       block_n=bn)
        ok.append(within(f"{N}x{T} chunks of {bn}x{bt}, {progs} programs", x, reference(a, b)))
    return int(not all(ok))


# (N, T), then tiles (BN, BT, warps) with the programs per SM tried for each
# (timed with do_bench first: the host's launch cost hid the long horizons; the wide shapes lost
# to the tuned row block by 1.3-2.3x: 65536x128 42.3 vs 31.9 µs, 1024x8192 72.1 vs 40.7)
SHAPES = [((1, 1048576), (8, 262144), (8, 65536), (32, 32768))]
TILES = [[(1, 1024, 4, (4,)), (1, 512, 2, (8,)), (1, 256, 1, (8, 16)), (1, 512, 1, (8, 16))]]
# the shipped look-back spans forced beside them (PHASE 4: no fill), then a register cap
SHIPPED = [("lookback", 1024, 4, None), ("lookback", 256, 1, None), ("lookback", 256, 1, 64),
           ("lookback", 512, 1, None), ("chunked", 1024, 4, None)]


def timing(device) -> None:
    """Every config over input sets that span three L2 caches (as rlscan-bench; the seventh
    session's single set ran the long rows from L2), each call with its own outputs."""
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    for shapes, tiles in zip(SHAPES, TILES):
        for N, T in shapes:
            sets, cols, bench = rotated_cell(N, T, inputs, device)
            floor = 3 * N * T * 4 / 4.26e12 * 1e6
            bench("tuned", lambda i: rlscan.linear_scan(*sets[i], reverse=True))
            for strategy, bt, w, cap in SHIPPED:
                cfg = dict(strategy=strategy, BLOCK_N=1, BLOCK_T=bt, num_warps=w,
                           CHUNKS_PER_SPAN=1, **({"maxnreg": cap} if cap else {}))
                with force_config(**cfg):
                    bench(f"{strategy} 1x{bt}/w{w}" + (f"/r{cap}" if cap else ""),
                          lambda i: rlscan.linear_scan(*sets[i], reverse=True))
            for bn, bt, warps, per_sms in tiles:
                for per_sm in per_sms:
                    P = per_sm * sms
                    bench(f"p {bn}x{bt}/w{warps} {per_sm}/SM",
                          lambda i: persistent(*sets[i], bt, warps, P, bn))
                    ws = [torch.full((N * triton.cdiv(T, bt),), -1, dtype=torch.int64,
                                     device=device) for _ in sets]
                    for i in range(len(sets)):
                        persistent(*sets[i], bt, warps, P, bn, ws[i])
                    bench("nofill", lambda i: persistent(*sets[i], bt, warps, P, bn, ws[i]))
            print(f"{N}x{T} floor {floor:.1f} ({len(sets)} input sets) | " + " | ".join(cols),
                  flush=True)


if __name__ == "__main__":
    sys.exit(main("persistent_lookback_probe", __doc__, check, timing))
