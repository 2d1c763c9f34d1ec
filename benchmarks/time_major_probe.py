"""Time-major [T, N] buffers with one column a thread, probed on the bare backward recurrence
x[t] = b[t] + a[t]·x[t+1] (fp32, rlscan's ``linear_scan(reverse=True, time_dim=0)``).

Why (benchmarks/NOTES.md, "What limits us now" 2): the shipped time-major tiles either keep 4
columns a thread (128 a warp: too few warps where N is 4096-16384) or spread a chunk's steps
over lanes and warps (the scan then shuffles: 32x64/w4, 106 shuffles a chunk), and look-back
spans of the 128-column tiles lost (thirty-second session). Here a tile is [S steps, BN
columns] addressed t * N + column with N not specialised, so Triton cannot vectorise along
the columns (no known alignment): the lanes lie along the columns, one column a thread, and a
thread holds its column's S steps (the scan along the steps is a loop in registers). Each
warp's load of a step is 128 contiguous bytes.

Modes (``--variants MODE:S:BN:WARPS[:WIN],...``), each timed as a CUDA graph over input sets
spanning three L2 caches (rlscan-bench's device column, ``_recurrence.rotated_cell``; ``!``
where the result is not the shipped call's):
    walk      one program a column block walks the whole column, chunk by chunk, the next
              chunk's loads issued before the current one's scan
    bound     one program a (column block, span of S steps), carry 0: wrong results, a bound
    lookback  as bound, but each span publishes its summary to a [K, N] workspace (filled with
              "not yet" in the call) and folds the earlier spans' summaries, WIN at a time,
              until every column of its block has met a reset (a = 0) or the first span
    chunked   two launches: every span's summary, then each span folds the earlier ones (no
              wait: they are all written) and scans its steps again (inputs read twice)
    persistent  lookback's spans in persistent programs that issue the next span's loads
              before waiting for the current one's carry
    lookback-incl, persistent-incl   each span, once it has its carry, publishes the value
              leaving it over its summary (as a reset): a later walk stops there
    split     a walk whose chunks of WARPS x S steps are split over the warps, S steps each
              (BN = 32): segment summaries exchanged through shared memory
    seg-bound, seg-chunked, seg-lookback   spans of tiles of BN < 32 columns whose 32 x WARPS /
              BN segments of S steps take the lanes the columns leave (few-column cells):
              carry 0 (a bound), two launches as chunked (CHUNKS chunks a span), or one launch
              of one-chunk look-back spans
and, per cell, the shipped call (tuned DB) and the workspace fill alone.

Thirty-second session (H200, `results/probes/2026-12-04_thirtysecond_session_time_major_probe.md`):
the spans without a carry stream at the floor once their lanes run in descending time (a
forward scan: 0 shuffles, where the reverse scan over ascending lanes took 320 a 16-step tile):
bound 16x32/w1 25.7-25.9 us at 16384x512, 4096x2048 and 1024x8192 (floor 23.5-23.7, a stream
of the same bytes 25.6; the shipped 47.6-55.4), 8.4-8.5 at 4096x512 and 16384x128 (shipped
15.4-16.5). The carry is what costs: look-back 16x32/w1 with windows of 2 spans 54-62 us
there, 17.5-18.0 at the small cells. Walks of one column a thread, 32-step chunks: 35.3 us at
16384x512 (shipped 47.7), 11.0 at 16384x128 (15.4), 27.3 at 65536x128 (16x32/w1; 30.8),
104.1 at 131072x256 (106.2); too few programs where N <= 4096 (4096x512 25.4 vs 16.5).
Chunked spans (two launches, the fix-up folding the summaries itself) are no cheaper than the
look-back: 16x32/w1 with windows of 2 spans 51.9-53.6 us at the big cells, 16.0-16.3 at the
small ones, as the shipped call. A warp's walk ends when its 32 columns all met a reset (~70
steps back at the grid's 5% of episode ends: 3 rounds of 2 spans), which is what the carry
costs; spans that publish the value leaving them once they have their carry, in persistent
programs, cut it: persistent-incl 16x32/w1 39.5 us at 16384x512 (shipped 47.9), 46.4 at
4096x2048 (56.0), 53.3 at 1024x8192 (54.9), 15.1 at 4096x512 (16.2), 13.4 at 16384x128
(15.5); 37.8 at 65536x128, where the walk takes 30.3 (shipped 30.1).

Thirty-third session: walks and chunked spans of such tiles are in the library, as configs with
``LANE_ROWS`` (launch._lane_rows_kernel: the scan kernel compiled with its time strides
unspecialised, which has triton lay one row a lane the way this probe's unspecialised N does).
The persistent look-back programs are not: they need a change to scan.py.

Forty-second session (`results/probes/2026-12-06_fortysecond_session_tm_*`): split walks lost
(H100: 0.89-1.11x the one-warp walk at 2 warps, 1.02-6x at 4-8: the shared-memory exchange
waits on every warp's loads); seg-chunked 8x8/w1/c8 ran 8x262144 in 23.7 us against the tuned
27.8 (H200; its carry-free bound 13.1) and lost on every other cell (32x32768 21.7 vs 11.2).
Forty-third session (H100, `results/probes/2026-12-06_fortythird_session_tm_seg_lookback_
probe.txt`, the workspace fill in each call): seg-lookback 8x8/w1 ran 8x262144 in 21.0 us and
8x65536 in 7.8 against the tuned 28.0 and 12.4, and lost at 32x32768 (13.1 vs 12.5),
128x16384 (22.9 vs 22.0) and 512x4096 (21.7 vs 17.5). Not shipped: its 32-step spans make
8192 a row at 8x262144, and a row without episode ends walks back over all of them
(configs.LOOKBACK_MAX_SPANS). What shipped instead is the library's own chunked spans of
one-warp 8-row tiles (configs._SPANNED_TIME_MAJOR_FEW_ROWS).

    python benchmarks/time_major_probe.py                # GPU
    python benchmarks/time_major_probe.py --check        # CPU with TRITON_INTERPRET=1
"""
import argparse
import os
import sys

import torch
import triton
import triton.language as tl

from rlscan.kernels.scan import _apply, _combine, _pack, _unpack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _recurrence import reference, rotated_cell, within  # noqa: E402 - a sibling module

CELLS = "16384x512,4096x512,4096x2048,1024x8192,512x4096,16384x128,65536x128"
# mode:S:BN:warps[:WIN] (BN = 32 columns a warp; WIN spans a look-back step folds, 8 if not given)
VARIANTS = ("walk:32:32:1,bound:16:32:1,lookback:16:32:1:2,lookback-incl:16:32:1:2,"
            "lookback-incl:16:32:1:4,persistent:16:32:1:2,persistent-incl:16:32:1:2,"
            "persistent-incl:16:32:1:4")
# persistent programs launched: 132 SMs x 8 warps, every one resident at up to 255 registers
# (ptxas of triton 3.6: 110-198 for these variants). A program waiting on a tile of one that
# is not resident would wait for ever (bounded here: NaN after 2**20 rounds)
PERSISTENT_PROGRAMS = 132 * 8
MODES = {"walk": 0, "bound": 1, "lookback": 2, "chunked": 3, "persistent": 5,
         "lookback-incl": 2, "persistent-incl": 5, "split": 6, "seg-bound": 7,
         "seg-chunked": 8, "seg-lookback": 9}
WIN = 8


@triton.jit(do_not_specialize=["N"])
def _tm(A, B, X, W, N, T, MODE: tl.constexpr, S: tl.constexpr, BN: tl.constexpr,
        WIN: tl.constexpr, INCL: tl.constexpr):
    pc = tl.program_id(0)
    s = tl.program_id(1)                          # span s from the boundary (t = T-1 side)
    cols = pc * BN + tl.arange(0, BN)
    mc = cols < N
    # N is not specialised, so a step's row start t * N has no known alignment: the loads
    # cannot be vectors along the columns, which stay the fastest dimension (one a lane)
    coff = cols.to(tl.int64)
    o = tl.arange(0, S)
    if MODE == 0:
        # lanes in descending time (lane 0 the chunk's latest step), scanned forward
        n_chunks = tl.cdiv(T, S)
        carry = tl.zeros([BN], tl.float32)
        t = T - 1 - o
        m = (t >= 0)[:, None] & mc[None, :]
        off = t.to(tl.int64)[:, None] * N + coff[None, :]
        qa = tl.load(A + off, mask=m, other=1.0)
        qb = tl.load(B + off, mask=m, other=0.0)
        for c in range(0, n_chunks):
            a = qa
            b = qb
            t = T - 1 - c * S - o
            m = (t >= 0)[:, None] & mc[None, :]
            off = t.to(tl.int64)[:, None] * N + coff[None, :]
            tn = t - S
            mn = (tn >= 0)[:, None] & mc[None, :]
            offn = tn.to(tl.int64)[:, None] * N + coff[None, :]
            qa = tl.load(A + offn, mask=mn, other=1.0)
            qb = tl.load(B + offn, mask=mn, other=0.0)
            s_a, s_b = tl.associative_scan((a, b), 0, _combine)
            x = _apply(s_a, s_b, carry[None, :])
            tl.store(X + off, x, mask=m)
            carry = tl.sum(tl.where(o[:, None] == S - 1, x, 0.0), 0)
    else:
        # lanes in descending time (lane 0 the span's latest step), scanned forward: the
        # reverse scan over ascending lanes took 320 shuffles a 16-step tile (sm_90)
        t = T - 1 - s * S - o
        m = (t >= 0)[:, None] & mc[None, :]
        off = t.to(tl.int64)[:, None] * N + coff[None, :]
        a = tl.load(A + off, mask=m, other=1.0)
        b = tl.load(B + off, mask=m, other=0.0)
        s_a, s_b = tl.associative_scan((a, b), 0, _combine)
        carry = tl.zeros([BN], tl.float32)
        if MODE >= 2:
            # MODE 2 publishes and walks; chunked: MODE 3 only publishes (a first launch),
            # MODE 4 only walks the summaries the launch before wrote (nothing to wait for)
            h_a = tl.sum(tl.where(o[:, None] == S - 1, s_a, 0.0), 0)
            h_b = tl.sum(tl.where(o[:, None] == S - 1, s_b, 0.0), 0)
            if s == 0:
                h_a = h_a * 0.0                   # the first span leaves its value: a reset
            if MODE != 4:
                tl.store(W + s.to(tl.int64) * N + coff, _pack(h_a, h_b), mask=mc)
            if (MODE != 3) and (s > 0):
                carry = _walk_back(W, N, coff, mc, s, BN, WIN)
                if INCL:
                    # the value leaving the span, published over its summary as a reset:
                    # a later walk reads either word and either is right; this one stops it
                    tl.store(W + s.to(tl.int64) * N + coff,
                             _pack(h_a * 0.0, _apply(h_a, h_b, carry)), mask=mc)
        if MODE != 3:
            x = _apply(s_a, s_b, carry[None, :])
            tl.store(X + off, x, mask=m)


@triton.jit
def _walk_back(W, N, coff, mc, s, BN: tl.constexpr, WIN: tl.constexpr):
    """[BN]: the value entering span ``s`` of each column, from the published summaries of
    spans < s (packed (a, b), all ones while not yet published), WIN spans a step, until every
    column met a reset (a = 0) or span 0. The step of scan._fold_window, transposed: its
    windows are [rows, W] along axis 1, these [WIN, columns] along axis 0, in each thread."""
    carry = tl.zeros([BN], tl.float32)
    hi = tl.zeros([BN], tl.int32) + s     # spans [hi - WIN, hi) come next
    g_a = tl.full([BN], 1.0, tl.float32)  # composition of spans [hi, s)
    g_b = tl.zeros([BN], tl.float32)
    todo = mc
    ow = tl.arange(0, WIN)[:, None]
    spins = tl.zeros([], tl.int32)
    # bounded (never a hang: columns still waiting after 2**20 rounds get NaN)
    while (tl.max(todo.to(tl.int32), 0) > 0) & (spins < 1048576):
        spins += 1
        js = hi[None, :] - WIN + ow                       # [WIN, BN]
        ok = todo[None, :] & (js >= 0)
        w = tl.load(W + js.to(tl.int64) * N + coff[None, :], mask=ok, other=0, volatile=True)
        ready = tl.min(tl.where(ok & (w == -1), 0, 1), 0) != 0
        w_a, w_b = _unpack(w)
        w_a = tl.where(ok, w_a, 1.0)
        w_b = tl.where(ok, w_b, 0.0)
        # the window composed, newest (highest span) applied first
        c_a, c_b = tl.associative_scan((w_a, w_b), 0, _combine)
        k_a = tl.sum(tl.where(ow == WIN - 1, c_a, 0.0), 0)
        k_b = tl.sum(tl.where(ow == WIN - 1, c_b, 0.0), 0)
        n_a, n_b = _combine(k_a, k_b, g_a, g_b)
        step = todo & ready
        done = step & ((n_a == 0.0) | (hi <= WIN))
        more = step & ~done
        carry = tl.where(done, n_b, carry)
        hi = tl.where(more, hi - WIN, hi)
        g_a = tl.where(more, n_a, g_a)
        g_b = tl.where(more, n_b, g_b)
        todo = todo & ~done
    return tl.where(todo, float("nan"), carry)


@triton.jit
def _tile_offsets(i, NB, N, T, TOTAL, o, S: tl.constexpr, BN: tl.constexpr):
    # tile i of a persistent walk: column block i % NB, span i // NB (span-major, so a tile's
    # predecessors in its column have lower indices); lanes in descending time; none past TOTAL
    cols = (i % NB) * BN + tl.arange(0, BN)
    t = T - 1 - (i // NB) * S - o
    live = (tl.zeros([BN], tl.int32) + i) < TOTAL
    m = (t >= 0)[:, None] & ((cols < N) & live)[None, :]
    return cols, t.to(tl.int64)[:, None] * N + cols.to(tl.int64)[None, :], m


@triton.jit(do_not_specialize=["N"])
def _tm_persistent(A, B, X, W, N, T, NB, TOTAL, S: tl.constexpr, BN: tl.constexpr,
                   WIN: tl.constexpr, INCL: tl.constexpr):
    """Look-back spans of one column a thread in persistent programs: each takes tiles
    pid, pid + P, ... in order, issuing the next tile's loads before it waits for the current
    one's carry (every program resident, so every tile's predecessors are in progress)."""
    P = tl.num_programs(0)
    o = tl.arange(0, S)
    i = tl.program_id(0)
    cols, off, m = _tile_offsets(i, NB, N, T, TOTAL, o, S, BN)
    qa = tl.load(A + off, mask=m, other=1.0)
    qb = tl.load(B + off, mask=m, other=0.0)
    for i in range(tl.program_id(0), TOTAL, P):
        cols, off, m = _tile_offsets(i, NB, N, T, TOTAL, o, S, BN)
        a = qa
        b = qb
        ncols, noff, nm = _tile_offsets(i + P, NB, N, T, TOTAL, o, S, BN)
        qa = tl.load(A + noff, mask=nm, other=1.0)
        qb = tl.load(B + noff, mask=nm, other=0.0)
        s_a, s_b = tl.associative_scan((a, b), 0, _combine)
        s = i // NB
        mc = cols < N
        h_a = tl.sum(tl.where(o[:, None] == S - 1, s_a, 0.0), 0)
        h_b = tl.sum(tl.where(o[:, None] == S - 1, s_b, 0.0), 0)
        if s == 0:
            h_a = h_a * 0.0
        tl.store(W + s.to(tl.int64) * N + cols.to(tl.int64), _pack(h_a, h_b), mask=mc)
        carry = tl.zeros([BN], tl.float32)
        if s > 0:
            carry = _walk_back(W, N, cols.to(tl.int64), mc, s, BN, WIN)
            if INCL:
                tl.store(W + s.to(tl.int64) * N + cols.to(tl.int64),
                         _pack(h_a * 0.0, _apply(h_a, h_b, carry)), mask=mc)
        tl.store(X + off, _apply(s_a, s_b, carry[None, :]), mask=m)


@triton.jit(do_not_specialize=["N"])
def _tm_seg(A, B, X, W, N, T, SPAN, PHASE: tl.constexpr, S: tl.constexpr, G: tl.constexpr,
            BN: tl.constexpr, WIN: tl.constexpr):
    """Spans of SPAN steps (program_id(1); a multiple of G * S) of BN columns, walked in chunks
    of G segments of S steps: a tile [S, G, BN] whose segments take the lanes or warps the
    columns leave (BN = 32, G warps: a chunk split over warps; BN = 8, one warp: 4 segments
    on the lanes, for the few-column cells), each thread holding its segment's S steps of one
    column (lane order descending in time). Each segment is scanned in registers, the G
    segment summaries are shifted by one segment and scanned across segments for each
    segment's entering value, and the next chunk's loads are issued before this one's scan.
    PHASE 0: carry 0 at the span's start (a whole column's walk where SPAN >= T; else a
    bound); 1: only the span's summary, published to W as look-back spans publish theirs;
    2: the carry folded from the earlier spans' summaries (``_walk_back``), then the span;
    3: one launch of one-chunk spans (SPAN = G * S) that publish their summary, fold the
    earlier ones as they appear (W filled with "not yet") and write the span."""
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    s = tl.program_id(1)
    mc1 = cols < N
    mc = mc1[None, None, :]
    coff = cols.to(tl.int64)[None, None, :]
    i = tl.arange(0, S)[:, None, None]
    g = tl.arange(0, G)[None, :, None]
    place = g * S + i                          # [S, G, 1]: 0 the chunk's latest step
    gg = tl.arange(0, G)
    prev = (gg[:, None, None] - 1) == gg[None, :, None]    # [G (to), G (from), 1]
    first = (gg == 0)[:, None]
    top = T - 1 - s * SPAN                     # the span's latest step
    lo = tl.maximum(top - SPAN + 1, 0)
    carry = tl.zeros([BN], tl.float32)
    if PHASE == 2:
        if s > 0:
            carry = _walk_back(W, N, cols.to(tl.int64), mc1, s, BN, WIN)
    r_a = tl.full([BN], 1.0, tl.float32)      # the span's summary so far (PHASE 1, 3)
    r_b = tl.zeros([BN], tl.float32)
    t = top - place
    m = (t >= lo) & mc
    qa = tl.load(A + (t.to(tl.int64) * N + coff), mask=m, other=1.0)
    qb = tl.load(B + (t.to(tl.int64) * N + coff), mask=m, other=0.0)
    for c in range(0, tl.cdiv(top + 1 - lo, G * S)):
        a = qa
        b = qb
        t = top - c * (G * S) - place
        m = (t >= lo) & mc
        off = t.to(tl.int64) * N + coff
        tn = t - G * S
        mn = (tn >= lo) & mc
        qa = tl.load(A + (tn.to(tl.int64) * N + coff), mask=mn, other=1.0)
        qb = tl.load(B + (tn.to(tl.int64) * N + coff), mask=mn, other=0.0)
        s_a, s_b = tl.associative_scan((a, b), 0, _combine)         # in each thread
        h_a = tl.sum(tl.where(i == S - 1, s_a, 0.0), 0)               # [G, BN] summaries
        h_b = tl.sum(tl.where(i == S - 1, s_b, 0.0), 0)
        # segment k's entering summary composes segments 0 .. k-1: the summaries shifted by
        # one segment (segment 0 gets the identity (1, 0)), then scanned across segments
        p_a = tl.where(first, 1.0, tl.sum(tl.where(prev, h_a[None, :, :], 0.0), 1))
        p_b = tl.sum(tl.where(prev, h_b[None, :, :], 0.0), 1)
        e_a, e_b = tl.associative_scan((p_a, p_b), 0, _combine)
        if PHASE == 1 or PHASE == 3:
            f_a, f_b = _combine(e_a, e_b, h_a, h_b)                  # through segment k
            k_a = tl.sum(tl.where((gg == G - 1)[:, None], f_a, 0.0), 0)
            k_b = tl.sum(tl.where((gg == G - 1)[:, None], f_b, 0.0), 0)
            r_a, r_b = _combine(r_a, r_b, k_a, k_b)
        if PHASE == 3:
            if s == 0:
                r_a = r_a * 0.0
            tl.store(W + s.to(tl.int64) * N + cols.to(tl.int64), _pack(r_a, r_b), mask=mc1)
            if s > 0:
                carry = _walk_back(W, N, cols.to(tl.int64), mc1, s, BN, WIN)
        if PHASE != 1:
            x = _apply(s_a, s_b, _apply(e_a, e_b, carry[None, :])[None, :, :])
            tl.store(X + off, x, mask=m)
            carry = tl.sum(tl.sum(tl.where((i == S - 1) & (g == G - 1), x, 0.0), 0), 0)
    if PHASE == 1:
        if s == 0:
            r_a = r_a * 0.0                     # the first span leaves its value: a reset
        tl.store(W + s.to(tl.int64) * N + cols.to(tl.int64), _pack(r_a, r_b), mask=mc1)


def run(a, b, mode, S, BN, warps, win=WIN, w=None, programs=None, chunks=1):
    """x for time-major a, b of shape [T, N]; ``w``: a [K, N] int64 workspace to fill;
    ``programs``: how many persistent ones (default: PERSISTENT_PROGRAMS warps' worth);
    ``chunks``: chunks of 32 * warps / BN segments of S steps a span (seg-bound, seg-chunked)."""
    T, N = a.shape
    K = triton.cdiv(T, S)
    x = torch.empty_like(a)
    code, incl = MODES[mode], int(mode.endswith("-incl"))
    grid = (triton.cdiv(N, BN), 1 if code == 0 else K)
    if code >= 6:       # segments of S steps on the lanes and warps the BN columns leave
        G = 32 * warps // BN
        # split: one span a column; seg-lookback: one-chunk spans; else CHUNKS chunks a span
        span = G * S * {6: triton.cdiv(T, G * S), 9: 1}.get(code, chunks)
        K = triton.cdiv(T, span)
        if code == 8:   # two launches: the spans' summaries, then each span with its carry
            w = torch.empty((K, N), dtype=torch.int64, device=a.device)
        if code == 9:   # one launch of look-back spans, the workspace "not yet" (all ones)
            w = torch.full((K, N), -1, dtype=torch.int64, device=a.device)
        for phase in {6: (0,), 7: (0,), 8: (1, 2), 9: (3,)}[code]:
            _tm_seg[(triton.cdiv(N, BN), K)](a, b, x, w if code >= 8 else x, N, T, span,
                                             PHASE=phase, S=S, G=G, BN=BN, WIN=win,
                                             num_warps=warps)
        return x
    if code == 5:       # as many one-warp programs as stay resident (the probe's guess)
        NB = triton.cdiv(N, BN)
        w = torch.full((K, N), -1, dtype=torch.int64, device=a.device)
        progs = min(NB * K, programs or PERSISTENT_PROGRAMS // warps)
        _tm_persistent[(progs,)](a, b, x, w, N, T, NB, NB * K, S=S, BN=BN, WIN=win,
                                 INCL=incl, num_warps=warps)
        return x
    if code == 3:       # two launches: summaries, then the fix-up that folds them
        w = torch.empty((K, N), dtype=torch.int64, device=a.device)
        for phase in (3, 4):
            _tm[grid](a, b, x, w, N, T, MODE=phase, S=S, BN=BN, WIN=win, INCL=0,
                      num_warps=warps)
        return x
    if code == 2:
        w = torch.full((K, N), -1, dtype=torch.int64, device=a.device) if w is None else w
    _tm[grid](a, b, x, w if code == 2 else x, N, T, MODE=code, S=S, BN=BN, WIN=win,
              INCL=incl, num_warps=warps)
    return x


def inputs(N, T, device, seed=0):
    """[T, N]: a = 0.99 with ~5% resets (a = 0), the grid's γ and done rate; b normal."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.full((T, N), 0.99).where(torch.rand(T, N, generator=g) > 0.05, torch.zeros(()))
    b = torch.randn(T, N, generator=g)
    return a.to(device), b.to(device)


def parse_variants(text):
    out = []
    for v in text.split(","):
        mode, *nums = v.split(":")
        if mode not in MODES or len(nums) not in (3, 4, 5):
            raise ValueError(f"--variants: {v!r}; expected MODE:S:BN:WARPS[:WIN[:CHUNKS]], "
                             f"MODE one of {', '.join(MODES)}")
        nums = [int(x) for x in nums]
        out.append((mode, *nums, *[WIN, 1][len(nums) - 3:]))
    return out


def main(argv=None) -> int:
    global PERSISTENT_PROGRAMS
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cells", default=CELLS)
    p.add_argument("--variants", default=VARIANTS, help="mode:S:BN:warps[:win[:chunks]],...")
    p.add_argument("--check", action="store_true")
    p.add_argument("--persistent-warps", type=int, default=8,
                   help="warps an SM of persistent programs (all must stay resident)")
    args = p.parse_args(argv)
    variants = parse_variants(args.variants)
    PERSISTENT_PROGRAMS = 132 * args.persistent_warps
    if args.check:
        ok = True
        # one shape: ragged column blocks (70 = 2 x 32 + 6), a ragged last chunk at every S
        # below (45 steps); a second (40x36, S 16) doubled the CPU test's 42 s, no new edge
        for T, N, S, BN, warps in ((45, 70, 8, 32, 1),):
            a, b = inputs(N, T, "cpu")
            a[:, 0] = 0.9   # a column with no reset at all: its walk goes back to span 0
            ref = reference(a, b, time_dim=0)
            for w in (2, 4):
                ok &= within(f"{T}x{N} (T x N) S {S // 2} BN {BN} split over {w} warps",
                             run(a, b, "split", S // 2, BN, w), ref)
            # few columns: 8 a tile, 4 segments on the lanes; spans of 1 and 2 chunks
            for chunks in (1, 2):
                ok &= within(f"{T}x{N} (T x N) S {S // 4} BN 8 seg-chunked, {chunks} chunks a "
                             "span", run(a, b, "seg-chunked", S // 4, 8, 1, 2, chunks=chunks),
                             ref)
            ok &= within(f"{T}x{N} (T x N) S {S // 4} BN 8 seg-lookback WIN 2",
                         run(a, b, "seg-lookback", S // 4, 8, 1, 2), ref)
            for mode, win in (("walk", WIN), ("lookback", WIN), ("lookback", 2), ("chunked", 2),
                              ("persistent", 2), ("lookback-incl", 2), ("persistent-incl", 2)):
                ok &= within(f"{T}x{N} (T x N) S {S} BN {BN} {mode} WIN {win}",
                             run(a, b, mode, S, BN, warps, win), ref)
            # one persistent program a column block, walking its spans in turn (the
            # interpreter runs programs one after another: a tile's predecessors must be
            # earlier tiles of the same program or of earlier ones)
            ok &= within(f"{T}x{N} (T x N) S {S} BN {BN} persistent-incl, a program a block",
                         run(a, b, "persistent-incl", S, BN, warps, 2,
                             programs=triton.cdiv(N, BN)), ref)
        return 0 if ok else 1
    from rlscan import linear_scan
    from rlscan.tune.bench import copy_bandwidth, device_us
    bw = copy_bandwidth()
    for cell in args.cells.split(","):
        N, T = (int(v) for v in cell.split("x"))
        sets, cols, bench = rotated_cell(N, T, inputs, "cuda", time_dim=0)
        bench("rlscan", lambda i: linear_scan(*sets[i], reverse=True, time_dim=0))
        fill = device_us([lambda: torch.full((T // 16, N), -1, dtype=torch.int64,
                                             device="cuda")])
        cols.append(f"fill {fill:.1f}")
        for mode, S, BN, warps, win, chunks in variants:
            bench(f"{mode} {S}x{BN}/w{warps}"
                  + (f"/W{win}" if mode not in ("walk", "bound", "split", "seg-bound") else "")
                  + (f"/c{chunks}" if mode in ("seg-bound", "seg-chunked") else ""),
                  lambda i: run(*sets[i], mode, S, BN, warps, win, chunks=chunks))
        floor = 3 * N * T * 4 / bw * 1e6
        print(f"{N}x{T} floor {floor:.1f} ({len(sets)} sets) | " + " | ".join(cols), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
