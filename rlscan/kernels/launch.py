"""Host side of the fused scan kernel: pick a config and launch one program per BLOCK_N rows."""
import contextlib
import math
import operator
import os
from typing import Optional

import torch
import triton
from triton import knobs
from triton.runtime.jit import JITFunction

from .. import _graph_pools, _layout, _replay
from .. import _problem as P
from ..tuning import KERNEL_NAMES, select_config
from .configs import SCALAR_LOADS_ESTIMATORS, SCALAR_LOADS_TILE
from .configs import two_level_fits as _two_level_fits
from .scan import chunk_carry_kernel, fill_kernel, fused_scan_kernel

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


_SMS = 132   # the H200's and the H100 SXM's: the GPUs the rules below were measured on
# Two time-major configs several of the heuristic's rules share: 8-row blocks of 128-step
# chunks on 8 warps, and spans of 8 chunks of 128x4 tiles on one warp (the long rows')
_ROW_BLOCK_8X128 = {"strategy": "row_block", "BLOCK_N": 8, "BLOCK_T": 128, "num_warps": 8}
_SPANS_128X4 = {"strategy": "chunked", "BLOCK_N": 128, "BLOCK_T": 4, "num_warps": 1,
                "CHUNKS_PER_SPAN": 8}


def heuristic_config(N: int, T: int, time_major: bool = False, itemsize: int = 4,
                     estimator: str = "", sms: Optional[int] = None) -> dict:
    """Small tiles, few warps, many programs: the row-block kernel is latency-bound, so what
    counts is how many loads are in flight across the GPU, not the work per program.
    ``itemsize``: bytes a per-step input (2 for bf16 and fp16 calls). ``estimator``: the
    kernel's name (``tuning.KERNEL_NAMES``), for the rules that hold for some estimators only
    (fp32 GAE's split time-last rows, the fp32 time-major walks of long rows); "" gives what
    every estimator gets. ``sms``: the GPU's SM count (None: 132, the H200's), for the rules
    that size a launch to one wave of programs.

    Chosen by a config sweep on the H200 (GAE fp32, 2026-11-30; rlscan-tune now sweeps per
    bucket): BLOCK_T=128 with 2 warps won at 4096x128 (BLOCK_N=2: 5.6 us; the first heuristic,
    32x128 tiles with 4 warps, took 30.5 us) and at 16384x512 (BLOCK_N=1, four chunks per row:
    65.8 us vs 238 us)."""
    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    block_t = min(_np2(max(T, 1)), 128)
    block_n = max(1, min(_np2(max(N, 1)), 256 // block_t))
    if interpreted:                                  # the interpreter pays per program
        block_t = min(_np2(max(T, 1)), 64)
        block_n = max(1, min(_np2(max(N, 1)), 16))
    warps = 2
    if time_major:
        # rows are contiguous: a tile must span many rows for its loads to coalesce (H200,
        # GAE fp32: 16x64/w8 7.8 us at 4096x128 and 88 at 16384x512; 64x32/w2 31 and 154)
        block_t = min(_np2(max(T, 1)), 64)
        block_n = max(1, min(_np2(max(N, 1)), 16))
        warps = 8 if not interpreted else 2
    cfg = {"strategy": "row_block", "BLOCK_N": block_n, "BLOCK_T": block_t, "num_warps": warps}
    if time_major and (block_n, block_t, warps) == SCALAR_LOADS_TILE:
        # honoured by discounted returns, GAE, λ-returns (_SCALAR_LOADS_ESTIMATORS); many rows
        # too: the forty-ninth session's probe file, scalar (untold) against told at 9000x480,
        # discounted returns / GAE fp32 35.6 / 43.3 us vs 38.3 / 43.7, bf16 34.4 / 41.5 vs
        # 40.2 / 46.5; 15000x150 bf16 21.8 / 26.4 vs 24.5 / 27.5
        cfg["SCALAR_LOADS"] = True
    per_sm = _ROW_BLOCK_8X128_PROGRAMS_PER_SM.get(estimator, 0)
    wave_8x128 = 8 * (sms or _SMS) * per_sm
    # From 1024 steps, V-trace's 8x128 tiles win up to 3 rows-of-8 an SM too, past the one
    # wave of their registers' 2 (H100, forced, fifty-fourth session, probes/2026-12-07_
    # fiftyfourth_session_time_major_mid_long_ab_h100.txt): 3000x1024 42.3 us vs 16x64/w8's
    # 45.1, 3000x1500 61.4 vs 66.1, 3000x2500 99.4 vs 108.2; at 3500 rows they lose (54.6 vs
    # 47.2), as GAE's and Retrace's do.
    long_wave_8x128 = 8 * (sms or _SMS) * (max(per_sm, 3) if per_sm else 0)
    if (time_major and not interpreted and itemsize >= 4 and estimator in _WALK_ESTIMATORS
            and 2048 <= N <= 8192 and 2048 <= T < 4096):
        # fp32 GAE, λ-returns, V-trace, Retrace: row blocks walking the rows, not the spans
        # below (chunked 128x4/w1, 8 chunks a span), which read the inputs twice. H100, forced
        # (fifty-third session, probes/2026-12-07_fiftythird_session_time_major_walks_ab_h100
        # .txt), row blocks against the spans: 4096x2048 GAE / λ-returns / V-trace / Retrace
        # 73.9 / 65.7 / 87.2 / 78.6 us vs 107.8 / 93.3 / 129.8 / 137.5, 8192x2048 158.7 /
        # 122.2 / 172.6 / 155.6 vs 206.0 / 181.3 / 250.9 / 267.3, 2100x3500 8x128 76.5 /
        # 66.7 / 92.7 / 82.7 vs 101.1 / 85.4 / 123.2 / 130.6 (x0.57-0.89 over 20 cells). The
        # tile: 8x128/w8, twice the programs, while they fit in one wave (long_wave_8x128;
        # 3000x2500 GAE 69.5 vs 16x64/w8's 87.2, Retrace 83.3 vs 92.1), else 16x64/w8
        # (4096x2048 GAE 73.1 vs 87.1). Discounted returns and the forward scans keep the
        # spans: the H200 tuner timed 16x64/w8 at x2.98 the spans' time for discounted returns
        # at 4096x2048 (164.5 us vs 55.2; x0.85-0.88 on the H100, forced) and x1.04-1.07 for
        # the forward scans (x1.18-1.24 at 2048x2048, H100). Forced on an H100 (fifty-fourth
        # session, the probe file above), the tiles this rule would give them won at 15 of 15
        # cells, x0.71-0.95 the spans' time (8192x2048 eligibility traces 103.4 vs 137.4 us):
        # an H200 must time them before they walk. So does bf16 (V-trace 98.6 vs 78.9 us,
        # Retrace 83.4 vs 67.0 at 4096x2048, H200), and so do rows past 8192, where none was
        # timed.
        if N <= long_wave_8x128:
            return dict(_ROW_BLOCK_8X128)
        return dict(cfg, BLOCK_N=16, BLOCK_T=64, num_warps=8)
    if time_major and not interpreted and N >= 128 and (N >= 32768 or T >= 2048):
        # 128 rows a warp keep a chunk's steps in each thread (configs.py; H200 fp32 time-major):
        # many rows, 256x4/w2 row blocks (65536x128: discounted returns 41.7 us vs 61.0, GAE
        # 51.3 vs 68.1, V-trace 69.8 vs 96.1); long rows, spans of 8 chunks of 128x4/w1
        # (1024x8192: 54.6 vs 153.7, 83.6 vs 170.8, 103.7 vs 219.3)
        # Up to 131071 rows, 64x8/w2 tiles of one row a lane instead (thirty-third session,
        # 65536x128: discounted returns 28.5 us vs 42.3, GAE 44.1 vs 51.9, V-trace 61.6 vs
        # 70.6; at 131072x256 113.0 / 169.5 / 210.1 vs 112.1 / 164.4 / 196.4)
        if 32768 <= N < 131072:
            return {"strategy": "row_block", "BLOCK_N": 64, "BLOCK_T": 8, "num_warps": 2,
                    "LANE_ROWS": True}
        if N >= 32768:
            return {"strategy": "row_block", "BLOCK_N": 256, "BLOCK_T": 4, "num_warps": 2}
        if (itemsize >= 4 and 4096 <= T < 32768 and estimator not in ("vtrace", "retrace")
                and N <= (512 if estimator in ("gae", "lambda_returns") else 1023)):
            # fp32 128-1023 rows (GAE, λ-returns: 512) x 4096-32767 steps: spans of 4 chunks of
            # 32x16 tiles of one row a lane. The tuners' timings (both DBs) at 512x4096,
            # 256x8192 and 128x16384 against the 128x4 spans: x0.80-1.01 for discounted
            # returns, GAE, λ-returns and the forward scans (geomean x0.91 over 36 entries;
            # 512x4096 discounted returns 17.7 vs 22.0 us H100, 16.0 vs 20.0 H200); V-trace
            # x0.95-1.03 and Retrace x1.10-1.17 keep the 128x4 spans, as do 1024+ rows
            # (1024x8192 x0.93-1.05). Forced on an H100 (fifty-third session, probes/2026-12-07_
            # fiftythird_session_time_major_walks_ab_h100.txt): 300x5000 discounted returns /
            # GAE / λ-returns 16.5 / 22.5 / 19.8 us vs 18.0 / 24.2 / 20.7, 700x6000 34.1 / 59.8
            # / 53.5 vs 36.7 / 57.1 / 49.5: GAE and λ-returns lost there
            return {"strategy": "chunked", "BLOCK_N": 32, "BLOCK_T": 16, "num_warps": 1,
                    "CHUNKS_PER_SPAN": 4, "LANE_ROWS": True}
        return dict(_SPANS_128X4)
    if time_major and not interpreted and 4 <= N <= 16 and T >= 1 << 16:
        # few rows, long horizons: spans of one-warp 8-row tiles, 8x16 / 8x64 / 8x32 by T, N.
        # From 2**16 steps, 4 chunks of 8x16 a span (H100, fp32, forced, forty-fourth session,
        # probes/2026-12-06_fortyfourth_session_tm_few_rows_heuristic_ab.txt; discounted
        # returns / GAE / V-trace): 16x65536 14.2 / 16.8 / 21.2 us against the 16x64/w8 spans
        # below's 24.3 / 26.6 / 32.3, 16x131072 20.7 / 26.9 / 37.8 against 43.2 / 49.4 / 60.2,
        # 4x65536 9.8 / 11.5 / 13.4 against 11.2 / 12.2 / 13.4; bf16 16x131072 18.9 / 21.6 /
        # 27.2 against 42.5 / 45.7 / 54.5; at 8x32768 they lost (9.5 / 10.6 / 12.1 against
        # 9.0 / 10.1 / 11.4), and from 2**18 steps they won only at 4 rows, by 2-6%.
        # From 2**18 steps, 4 chunks of 8x64 a span (forty-third session, probes/2026-12-06_
        # fortythird_session_few_rows_more.txt; GAE / discounted returns): 4x262144 29.0 /
        # 23.4 us against the 16-row spans' 37.8 / 34.7, 16x262144 57.8 / 36.5 against 95.4 /
        # 82.1, 8x1048576 131.8 / 82.6 against 160.1 / 134.9.
        # Past 8 rows or from 2**20 steps, 8 chunks of 8x32 a span: fp32 (same file) 16x262144
        # 55.0 / 36.5 us against those 8x64 spans' 57.8 / 36.5, 8x1048576 114.9 / 81.1 against
        # 131.8 / 82.6; bf16 (forty-fourth session, ..._tm_few_rows_ab.txt) 16x262144 41.5 /
        # 29.8 against 46.9 / 31.4, 8x1048576 89.1 / 63.3 against 108.2 / 67.8; at 4x262144
        # they lost (fp32 GAE 33.6 vs 29.0) or tied (bf16 25.4 vs 25.2).
        if T < 1 << 18:
            block_t, per_span = 16, 4
        elif N > 8 or T >= 1 << 20:
            block_t, per_span = 32, 8
        else:
            block_t, per_span = 64, 4
        return {"strategy": "chunked", "BLOCK_N": 8, "BLOCK_T": block_t, "num_warps": 1,
                "CHUNKS_PER_SPAN": per_span}
    if time_major and not interpreted and 2 <= N < 4 and T >= 1 << 16:
        # 2-3 rows (a single row is time-last in memory): spans of 4 chunks of 2x64/w2, not
        # the 2-4-row tiles of 8 warps below (H100, fp32, forced, forty-seventh session, same
        # probe file as the time-last spans; discounted returns / GAE / V-trace): 2x262144
        # 11.6 / 13.0 / 15.4 us against 29.5 / 31.3 / 35.5, 3x1048576 50.0 / 62.8 / 75.9
        # against 86.9 / 101.9 / 112.9, 2x65536 8.5 / 9.1 / 10.3 against 13.0 / 13.6 / 15.9
        # (spans of 2x16/w1 7.9 / 8.4 / 8.9 there, but 1.3-1.7x these at 3x1048576); the
        # 8-row tiles of 4+ rows took 1.3-1.8x these
        return {"strategy": "chunked", "BLOCK_N": 2, "BLOCK_T": 64, "num_warps": 2,
                "CHUNKS_PER_SPAN": 4}
    if time_major and not interpreted and 1024 <= N < 16384:
        # (T < 2048: longer rows took the spans above.) The [T, N] buffers of PPO-style
        # rollouts, off the tuned grid: the split below (too few row programs) would run the
        # 16x64/w8 tiles as one-chunk spans, which read the inputs twice. H100, forced, 2 rounds,
        # 69 cells of 1024-12000 rows x 256-1536 steps, fp32 and bf16 (forty-fifth session,
        # probes/2026-12-06_fortyfifth_session_tm_mid_heuristic_ab.txt): x0.55 that split's time
        # (geomean; x0.33-1.15). The row blocks unsplit: 8192x256 discounted returns / GAE /
        # V-trace 18.3 / 23.0 / 26.3 us against 47.4 / 51.4 / 66.8, 3000x384 Retrace 16.5 vs
        # 36.4, bf16 12000x1536 GAE 159.5 vs 330.7; they lost only in bf16 at 1024x512 (16.0 /
        # 17.6 / 20.9 vs 14.4 / 15.4 / 18.3). From 1024 steps below 4096 rows, spans of 8 chunks
        # of 32x8 tiles of one row a lane (the tuned 4096x512 winner): 2048x1536 eligibility
        # traces 25.0 vs 64.8, bf16 V-trace 35.9 vs 90.2, 1536x1024 Retrace 29.0 vs 42.4.
        if N < 4096 and (T >= 1024 or (T >= 768 and itemsize <= 2)) and \
                N >= _long_rows_walk_from(estimator, itemsize):
            # Row blocks, not the lane-row spans below, where enough rows fill the GPU: the
            # spans read the inputs twice, which costs more than row blocks' latency once the
            # rows reach 2048 (fp32 GAE, λ-returns, V-trace), 1024 (fp32 Retrace) or 2816
            # (fp32 forward scans, bf16 Retrace). H100, forced, fifty-fourth session (probes/
            # 2026-12-07_fiftyfourth_session_time_major_mid_long_ab_h100.txt; 1024-4000 rows x
            # 1024-2000 steps), the spans' time x1.1-1.9 the best tile's there (fp32 Retrace
            # 3500x1024 76.0 us vs 16x64/w8's 39.9, GAE 3000x1500 67.6 vs 8x128/w8's 42.9); at
            # 2500 rows the forward scans' spans still won (discounted returns 2500x1500 32.3 vs
            # 36.9), at 3000 they lost (37.7 vs 35.3). 8x128/w8 up to 3 rows-of-8 an SM (4 for
            # the forward scans), then 16x64/w8 (3500x1024 GAE 38.4 vs 48.2). This rule's tiles
            # against the spans over the cells of that file, the 7 checked after it included:
            # fp32 GAE / λ-returns / V-trace / Retrace x0.78 (geomean of 91 cells; x0.53-1.17:
            # 2300x1300 V-trace lost, 59.7 vs 51.1, and 1200x1800 Retrace, 43.3 vs 39.7), fp32
            # forward scans x0.95 (26; x0.85-1.20: 3200x1700 lost, 51.9 vs 45.4), bf16
            # Retrace x0.87 (10; x0.78-0.94).
            return dict(_ROW_BLOCK_8X128) if N <= long_wave_8x128 else cfg
        if N < 4096 and (T >= 1024 or (T >= 768 and itemsize <= 2)):
            # 2-byte inputs from 768 steps (H100, forced, fifty-third session, same file):
            # bf16 2500x900 GAE / V-trace / discounted returns / traces 26.5 / 33.8 / 20.3 /
            # 20.1 us against 8x128/w8's 30.9 / 47.9 / 24.5 / 23.4 (V-trace's 16x64/w8 45.7);
            # at 3000x700 even (23.5 / 29.0 / 18.6 / 18.2 vs 22.7 / 34.8 / 18.8 / 18.0)
            return {"strategy": "chunked", "BLOCK_N": 32, "BLOCK_T": 8, "num_warps": 1,
                    "CHUNKS_PER_SPAN": 8, "LANE_ROWS": True}
        if T >= 1024 and N < 8192 and itemsize <= 2:
            # 2-byte inputs: the spans of 128x4 tiles that longer rows take. The H100 tuner's
            # timings at 4096x1024 bf16, 8 of 8 faster than 16x64/w8 (x0.70-0.96): discounted
            # returns 26.1 vs 37.2 us, eligibility traces 25.9 vs 35.9, GAE 37.4 vs 45.0,
            # λ-returns 30.4 vs 38.5, Retrace 42.3 vs 44.3, V-trace 48.2 vs 51.8. The 16x64
            # tiles run bf16 slower than fp32 there (GAE 45.0 vs 38.0 us), where fp32 keeps them
            # (the spans x1.2-1.8 their time).
            return dict(_SPANS_128X4)
        if N < 4096 and T >= 384 and N <= wave_8x128:
            # 16x64 tiles make one program an SM or fewer: 8x128/w8, twice the programs, while
            # they fit in one wave. The H100 tuner's timings at 2048x512, 16 of 16 entries won
            # by 8x128/w8: fp32 x0.84-0.91 the 16x64/w8 time (GAE 13.1 vs 14.5 us, V-trace
            # 15.6 vs 17.2, discounted returns 10.7 vs 12.8, eligibility traces 10.2 vs 12.2),
            # bf16 x0.70-0.76 (GAE 13.7 vs 18.0, traces 10.9 vs 15.7). Forced (H100, fifty-third
            # session, same file; GAE, V-trace, discounted returns, traces; fp32 and bf16):
            # x0.66-1.00 over 40 cells of 1024-3000 rows x 384-1023 steps (1504x608 bf16 traces
            # 12.8 vs 19.2 us, 1024x700 fp32 GAE 13.2 vs 18.6). At 4096x512, 1.3-1.9 waves for
            # the backward scans, it lost (H200 tuner: GAE 23.0 vs 19.5, V-trace 29.0 vs 23.5),
            # as did V-trace's 1.4 waves at 3000x400 (21.7 vs 21.2; bf16 24.5 vs 22.2).
            return dict(_ROW_BLOCK_8X128)
        return cfg
    # The next two from the tuners' own timings in the buckets they change (both DBs where
    # tuned; forty-sixth session), against the 16x64/w8 tiles (whole, or one-chunk spans):
    if time_major and not interpreted and 16384 <= N < 32768 and 128 <= T < 1024:
        # 32x16/w1 lane-row blocks (21 of the 80 bucket winners, 32x32/w1 lane rows 35 but
        # up to 7x slower elsewhere): 16384x128, 256, 512 x0.76-0.77 the 16x64/w8 blocks' time
        # on the H200 and x0.82-0.85 on the H100 (geomean; x0.57-1.26: fp32 V-trace loses,
        # x1.05-1.26, fp32 Retrace by up to x1.08). Forced off those buckets (H100, fp32,
        # forty-seventh session, probes/2026-12-06_fortyseventh_session_heuristic_rules_forced_
        # ab.txt; discounted returns / GAE / V-trace): 17000x200 21.9 / 32.2 / 50.5 us against
        # 31.4 / 39.4 / 74.1; 20000x700 74.0 / 110.4 / 172.8 against 97.1 / 121.3 / 151.9
        return {"strategy": "row_block", "BLOCK_N": 32, "BLOCK_T": 16, "num_warps": 1,
                "LANE_ROWS": True}
    if time_major and not interpreted and 16 < N < 128 and T >= (4096 if N >= 32 else 16384):
        # spans of 4 chunks of 32x8/w1, the winner of all 32 of the 32x32768 buckets: x0.51
        # (H200) and x0.54 (H100) the one-chunk spans of 16x64/w8 (geomean; x0.45-0.61).
        # Forced off them (same file): 40x33000 24.4 / 29.1 / 35.7 us against 32.2 / 36.8 /
        # 43.3, 48x100000 53.3 / 75.2 / 95.4 against 92.7 / 110.0 / 128.6. From 4096 steps
        # and to 127 rows (H100, forced, fifty-fourth session, probes/2026-12-07_fiftyfourth_
        # session_tens_of_rows_ab_h100.txt; GAE / discounted returns / V-trace): 100x5000 12.8
        # / 11.7 / 17.2 us against 22.1 / 19.0 / 27.2, 64x8000 x0.67-0.74, 100x60000 93.0 /
        # 58.4 / 109.4 against 141.3 / 108.7 / 169.4 (x0.54-0.86 over 18 cells; within x1.09
        # of the best of four tiles); at 40x4000 and 64x2048 they lost (x1.09-1.63). 17-31
        # rows from 16384 steps: one cell, 20x30000, x0.64 (15.6 / 14.1 / 19.7 us against 24.2
        # / 22.2 / 30.7); 16384 is a guess between 4096 (lost at 40 rows) and 30000, untimed.
        return {"strategy": "chunked", "BLOCK_N": 32, "BLOCK_T": 8, "num_warps": 1,
                "CHUNKS_PER_SPAN": 4}
    if not time_major and not interpreted and 128 <= N < 1024 and T >= 2048:
        # 128-1023 rows of 2048+ steps (a batch of long language-model sequences): each row on
        # SPLIT warps, one row a program (configs._SPLIT_ROWS; the tuned grid's winners there
        # are such tiles). 16 warps a row below 512 rows, 8 from there. Against the heuristic
        # before (1x512/w4 row blocks, or spans of 2x128/w2 below 256 rows): the tuner's
        # timings of the tile on the grid's 128-512-row buckets, x0.66 (H200, 48 buckets,
        # x0.50-0.93) and x0.70 (H100, 46); forced on 60 cells off the grid of 128-768 rows x
        # 2048-32768 steps, fp32 (four estimators) and bf16 (GAE, V-trace), x0.80 (H100, forty-
        # fifth session, probes/2026-12-06_fortyfifth_session_split_rows_heuristic_ab.txt;
        # x0.59-1.04): 300x16384 eligibility traces 23.7 us vs 31.5, bf16 V-trace 44.2 vs 66.4.
        # At 1024 rows the tuned grid's forward scans lost with them (x1.04-1.19).
        split = 16 if N < 512 else 8
        return {"strategy": "row_block", "BLOCK_N": split, "BLOCK_T": 128, "num_warps": split,
                "SPLIT": split, "TWO_LEVEL": True}
    if not time_major and not interpreted and T >= 2048 and N >= _MIN_WIDE_ROWS:
        # long rows, enough of them: one row per program, wide contiguous tiles (H200, GAE fp32:
        # 1024x8192 56.6 us with 1x512/w4 vs 122 with 2x128/w2; 512x4096 20.4 vs 24.4 chunked)
        if itemsize < 4:
            # bf16 (1024+ rows, the rule above takes fewer): each row on 4 warps, two-level in
            # groups of 8, the tuned grid's bf16 winner at 1024x2048 and 1024x8192 (both DBs).
            # Forced off the grid against 1x512/w4 (H100, 2 rounds, fiftieth session, probes/
            # 2026-12-06_fiftieth_session_time_last_wide_bf16_ab.txt; discounted returns / GAE /
            # V-trace / eligibility traces): 1200x6000 24.2 / 39.2 / 48.7 / 23.9 us against 35.8
            # / 48.0 / 64.1 / 24.5, 2500x5000 36.5 / 65.0 / 76.0 / 35.6 against 53.7 / 73.1 /
            # 104.3 / 39.5, 1100x20000 60.6 / 120.3 / 148.6 / 71.9 against 103.1 / 121.1 /
            # 195.7 / 72.1.
            return {"strategy": "row_block", "BLOCK_N": 4, "BLOCK_T": 256, "num_warps": 4,
                    "SPLIT": 4, "TWO_LEVEL": True, "GROUP": 8}
        if estimator in ("gae", "vtrace", "retrace"):
            # fp32 GAE: the same split, two-level without groups (same file): 1200x6000 53.8
            # us against 1x512/w4's 66.2 (grouped 57.5), 2500x5000 89.7 vs 103.7 (90.5),
            # 1100x20000 165.3 vs 209.7 (184.3). The tuners' timings on the grid: x0.95-1.01
            # (1024x2048, 1024x8192, 2048x2048; heuristic_vs_db.py). V-trace and Retrace too
            # (H100, forced, fifty-fourth session, probes/2026-12-07_fiftyfourth_session_split_
            # rows_time_last_ab_h100.txt; 1100-4000 rows x 2500-16000 steps): V-trace x0.87-
            # 1.00 over 8 cells (1500x4000 51.5 us vs 59.2), Retrace x0.75-1.02 (1200x8000 79.2
            # vs 106.0). Not for the others: λ-returns x0.78-1.15 (1100x12000 88.5 vs 77.3),
            # discounted returns x0.84-1.06, eligibility traces x0.997-1.19 (fiftieth session)
            return {"strategy": "row_block", "BLOCK_N": 4, "BLOCK_T": 256, "num_warps": 4,
                    "SPLIT": 4, "TWO_LEVEL": True}
        return {"strategy": "row_block", "BLOCK_N": 1, "BLOCK_T": 512, "num_warps": 4}
    # Few rows, long horizons: split every row into spans across programs once row blocks
    # alone cannot fill the GPU (chunked: 8x65536 10.1 us, 1x1048576 15.8; row blocks of
    # 1x2048/w8 76 and 1492 us). A single row takes one wide tile (2-row tiles idle half).
    row_progs, n_chunks = _cdiv(N, block_n), _cdiv(T, block_t)
    if row_progs < _MIN_PROGRAMS and n_chunks >= 4:
        # Time-last, the two rules below (forty-sixth session) were chosen from the tuners' own
        # timings of these configs in every bucket they change (both DBs: the H200's grid, the
        # H100's grid and off-grid buckets; 208 (bucket, estimator, dtype) timings, none
        # slower): x0.74 the one-chunk spans' time (geomean; x0.47-0.99); H200 grid x0.71,
        # H100 grid x0.74, H100 off the grid x0.76. Forced off those buckets: the probe file
        # of the two time-major rules above.
        if not time_major and not interpreted and N >= 64 and T < 2048:
            # 64-2046 rows of 385-2047 steps: one row a program in 512-step chunks, not spans
            # of one 2x128 chunk each (64x512 x0.61-0.77, 1024x1024 x0.47-0.81 their time;
            # forced, discounted returns / GAE / V-trace: 100x1000 4.7 / 5.0 / 5.7 us against
            # 7.2 / 7.3 / 8.6, 1500x600 13.2 / 14.6 / 20.7 against 23.0 / 26.3 / 32.0)
            return {"strategy": "row_block", "BLOCK_N": 1, "BLOCK_T": 512, "num_warps": 4}
        if N == 1 and not time_major and not interpreted:
            block_t = min(_np2(T), 1024)
            cfg.update(BLOCK_N=1, BLOCK_T=block_t, num_warps=4)
            n_chunks = _cdiv(T, block_t)
        cfg["strategy"] = "chunked"
        cfg["CHUNKS_PER_SPAN"] = _cdiv(n_chunks * row_progs, _TARGET_PROGRAMS)
        total = n_chunks * row_progs
        long_rows = n_chunks >= 192   # chunks a row
        if not time_major and not interpreted and N > 1 and (
                total >= 2 * _MIN_PROGRAMS or total >= _MIN_PROGRAMS and long_rows):
            # few rows, long horizons: spans of at least 4 chunks from 3072 chunks in all (the
            # tuned winners' c4 tiles): 32x32768 x0.61-0.80, 8x262144 x0.58-0.92, 2x524288
            # x0.67-0.80 the one-chunk spans' time (tuners' timings); of 2 from 2048, where c4
            # lost (H100, fp32, forced, forty-seventh session, probes/2026-12-06_fortyseventh_
            # session_heuristic_rules_forced_ab.txt; discounted returns / GAE / V-trace, c1 ->
            # c2 / c4): 8x65536 8.0 / 9.3 / 10.8 us -> 7.4 / 8.5 / 10.1 and 8.4 / 9.3 / 11.2,
            # 32x20000 11.1 / 12.9 / 14.2 -> 8.3 / 10.0 / 11.4 and 9.4 / 10.6 / 12.4; from 3072
            # c4 (12x65536 a tie; 20x40000 10.8 / 13.2 / 16.4 -> 10.2 / 13.1 / 14.6 and 10.1 /
            # 12.3 / 13.6; 48x20000 14.5 / 17.8 / 20.7 -> c4 10.5 / 12.9 / 16.2). Spans of 2
            # from 1024 chunks too where rows hold 192+ chunks (H100, forced, forty-eighth
            # session, probes/2026-12-06_fortyeighth_session_c2_threshold_bf16_ab.txt; c1 -> c2):
            # 8x32768 (1024 chunks, 256 a row) 6.1 / 6.7 / 7.9 -> 5.6 / 6.3 / 7.3, 6x50000 7.8 /
            # 8.6 / 9.8 -> 7.2 / 7.6 / 8.6, 12x30000 (235 a row) 8.0 / 9.4 / 10.6 -> 6.7 / 7.5 /
            # 8.6, bf16 GAE x0.80-0.94; with shorter rows a tie (16x16384, 128 a row; 24x12000,
            # 64x4096) or a loss (32x8192 5.2 / 5.7 / 6.7 -> 5.6 / 6.1 / 7.1); at 512 chunks a
            # tie (4x32768) or a loss (16x8192 4.7 / 5.0 / 5.9 -> 5.1 / 5.4 / 6.2)
            cfg["CHUNKS_PER_SPAN"] = max(cfg["CHUNKS_PER_SPAN"],
                                         4 if total >= 3 * _MIN_PROGRAMS else 2)
    if not time_major and _two_level_fits(cfg):
        # (backward scans only) H200, fp32, discounted returns 2x128/w2: 65536x128 32.6 us
        # two-level vs 34.8, 16384x512 27.6 vs 33.1; GAE 47.1 vs 47.9, 43.1 vs 44.3
        cfg["TWO_LEVEL"] = True
    return cfg


# Row blocks walk their chunks serially, ~2-3 us a chunk on the H200 (1024x8192 row-block:
# 242 us for 64 chunks per row, 6.2x the floor), so split rows whenever there are fewer than
# ~8 row programs per SM, aiming at ~60 programs per SM of a 132-SM H200.
_MIN_PROGRAMS, _TARGET_PROGRAMS = 1024, 8192
# The estimators whose fp32 time-major calls of 2048-8192 rows x 2048-4095 steps, and of
# 2048-4095 rows x 1024-2047 steps, walk in row blocks (heuristic_config).
_WALK_ESTIMATORS = ("gae", "lambda_returns", "vtrace", "retrace")
# Programs of a time-major 8x128/w8 row block resident on an SM, from their registers (ptxas of
# triton 3.6, sm_90, kernel_resources.py at 2048x512, fp32 and bf16 alike): 74-80 (24 warps: 3
# an SM; Retrace's 80 spill 8 bytes in fp32) but V-trace's 124 (2) and the forward scans' 55-58 (4)
_ROW_BLOCK_8X128_PROGRAMS_PER_SM = {"discounted_returns": 3, "gae": 3, "lambda_returns": 3,
                                    "vtrace": 2, "retrace": 3, "eligibility_traces": 4,
                                    "episodic_cumsum": 4, "linear_scan": 4}


def _long_rows_walk_from(estimator: str, itemsize: int) -> float:
    """The fewest rows from which a time-major call of 1024-2047 steps (bf16: 768) below 4096
    rows walks in row blocks rather than lane-row spans (heuristic_config); inf: never."""
    if estimator not in _ROW_BLOCK_8X128_PROGRAMS_PER_SM:
        return math.inf
    if itemsize >= 4 and estimator in _WALK_ESTIMATORS:
        return 1024 if estimator == "retrace" else 2048
    if itemsize >= 4 or estimator == "retrace":
        return 2816        # halfway between the measured 2500 (spans won) and 3000 (lost)
    return math.inf


_MAX_SPANS = 65535   # CUDA's limit on a grid's y dimension (the spans of a row)
_MIN_WIDE_ROWS = 256   # below, wide row blocks leave the GPU idle and spans win
# A chunked fix-up program folds the K earlier span summaries itself (one scan over a
# [BLOCK_N, max(next_pow2(K), BLOCK_T)] tile read from L2) when that is at most
# _FOLD_PER_THREAD values a thread, else a carry pass runs in between (three launches).
# H200, GAE fp32: 1x1048576 with 1x1024/w4 spans (8 a thread) 14.8 us folded vs 15.7; 8x65536
# 1x512/w4 9.3 vs 10.2; 16 or 32 a thread, or two fold steps, lost (8x262144 2x128/w2: 94 vs 26).
_FOLD_PER_THREAD = 8
# Spans a look-back step reads at once after its first step (8 spans, scan._fold_published):
# every earlier span of the row, within these bounds (longer rows walk back window by window).
# H200, fp32, 1x1024/w4 look-back spans, one window for every step, of the whole row vs 256
# (the tuner's timings, thirteenth session vs twelfth): 8x65536 (64 spans) V-trace 10.5 vs
# 12.1 us, GAE 10.0 vs 11.0; 32x32768 (a window of 32) discounted returns 23.7 vs 15.7;
# 1x1048576 (1024) 31.2 vs 18.7. Measured with the chained look-back; with the fold of
# published summaries a wide first window waits on every span in it, hence the first step's 8
# (seventeenth session); the later steps' bounds are not re-measured.
_LOOKBACK_WINDOW = (64, 256)
# Summaries a thread holds in one step of the walk: the one-row spans of time-last rows keep
# their 64-256 (32 threads, 8 each: 256), while a forced time-major look-back tile of 128 rows
# a warp folds windows of 2. With its row's window of 64 spans, discounted returns' 128x8/w1
# compiled to 51,823 PTX lines and 54 KB of spill stores (ptxas of triton 3.6) and a call did
# not finish within a minute on the H200; at 2, 3,430 lines, no spill, and it runs, if slower
# than chunked (thirty-second session: 51 us vs the tuned 17.8 at 4096x512; look-back is no
# time-major candidate, configs._SPANNED_TIME_MAJOR).
_LOOKBACK_WORDS = 8
# Programs walking several chunks issue each chunk's loads one chunk ahead (H200, fp32,
# 1x512/w4: GAE 1024x8192 56.1 -> 48.8 us, V-trace 202 -> 123; 1x256/w2 V-trace 122 -> 80).
# Two chunks ahead lost on 31 of 34 cells (up to +18%: V-trace 16384x512 51.0 -> 60.2 us).
_PREFETCH = True
# V-trace reads x[t+1]: a gather of the next lane when every row of the tile lies inside one
# warp (a shuffle), else a second composition carried by the scan. H200, fp32, 2x128/w2: gather
# 131072x256 191.1 us vs 212.4, 4096x2048 54.6 vs 74.4, 4096x512 14.7 vs 20.0 (2026-12-01).
_NEXT_GATHER = True
# Time-major backward scans: lanes in descending time and a forward scan. Triton 3.6's reverse
# scan reverses the lanes before and after the scan even where the time axis lies in registers
# (PTX of a 128x4/w1 time-major tile: 320 shuffles, none with the forward scan); descending
# lanes cost time-major loads nothing, their vectors run along the rows.
_DESCEND_TIME_MAJOR = True
# Time-major loads say that rows with stride 1 come in runs of 4 (scan.py ``_offsets``), so bf16
# inputs and bool flags keep the fp32 tile's layout (no conversion every chunk). H200, bf16 + bool
# time-major, forced tiles: 256x4/w2 at 65536x128 discounted returns 87.2 -> 29.2 us, GAE 94.3 ->
# 40.4, V-trace 147.4 -> 72.3; 128x4/w1/c8 spans at 1024x8192 46.8 -> 34.8, 72.8 -> 52.9; fp32
# unchanged (2026-12-01, kernel_ab.py).
_CONTIG_TIME_MAJOR = True
# Time-major tiles of one row a lane (configs ``LANE_ROWS``): the scan kernel's own source,
# compiled with the time strides unspecialised. A time-major load's rows are contiguous, but
# at a time stride of unknown divisibility not known to be aligned: triton keeps the loads
# scalar, so the lanes run along the rows, one a lane, and a row's steps of a chunk stay in
# its thread (the scan a loop in registers). PTX, triton 3.6, sm_90, time-major fp32 at
# 16384x512, 32x8/w1: GAE 0 shuffles (72 with the strides specialised: 4 rows a thread, 8
# lanes of 4 steps), 115 registers (80); discounted returns 0 (72), 68 (60). Bare recurrence,
# walks of 32x32/w1 such tiles (benchmarks/time_major_probe.py, thirty-second session): 16384x512
# 35.3 us vs the tuned 47.7, 16384x128 11.0 vs 15.4.

# The estimators that honour a config's SCALAR_LOADS: with N a multiple of 16 (Triton's own
# vectors) against the scalar kernel, H100, forced, 2 rounds (fiftieth session, the --unspec-ab
# half of probes/2026-12-06_fiftieth_session_time_major_alignment_ab.txt), 16x64/w8 tiles of
# discounted returns / GAE: 1504x608 fp32 15.8 / 17.2 us -> 14.5 / 17.3, bf16 20.2 / 22.2 ->
# 14.4 / 16.9; one-chunk spans at 80x3008 fp32 10.4 / 11.0 -> 9.2 / 9.3, bf16 10.4 / 10.8 ->
# 8.6 / 10.5. λ-returns, GAE's twin, is not timed; its PTX goes GAE's way (triton 3.6, sm_90,
# 1504x608: 47 -> 20 shuffles, 75 registers both; fifty-first session). V-trace ignores it
# (fp32 x1.00-1.05 slower so, bf16 9008x208 x1.29), as do the forward scans (eligibility
# traces' 16x64/w8 spans at N not a multiple of 16: x1.05-1.28 slower scalar) and Retrace (not
# measured). The names are configs.SCALAR_LOADS_ESTIMATORS, which the tuner reads too.
_SCALAR_LOADS_ESTIMATORS = frozenset(code for code, name in KERNEL_NAMES.items()
                                     if name in SCALAR_LOADS_ESTIMATORS)


def _tells_n(est: int, block_n: int, block_t: int, warps: int, itemsize: int) -> bool:
    """Whether a time-major tile (not one row a lane) is told the power of two below 16 that
    divides N and its time strides (ALIGN_N), so that 1000 or 9000 rows load as 1008 or 9008
    would, in vectors along the rows: the code the tuner timed on its grid of multiples of 16.
    ``itemsize``: bytes a per-step input. H100, forced, 2 rounds, told vs not (fiftieth session,
    benchmarks/results/probes/2026-12-06_fiftieth_session_time_major_alignment_ab.txt;
    discounted returns / GAE / eligibility traces): 128x4/w1/c8 spans at 1000x3000 fp32 27.1 /
    43.8 / 29.4 us -> 27.5 / 41.2 / 26.9, bf16 24.1 / 34.4 / 26.9 -> 20.7 / 28.2 / 19.5;
    32x64/w4 row blocks at 9000x200 fp32 18.4 / 33.1 / 18.4 -> 16.8 / 27.6 / 16.3 (GAE's tile
    255 registers untold, 191 told); 2x128/w2 at 100x1000 fp32 10.1 / - / 10.8 -> 9.1 / - /
    8.9. Untold, so scalar: 16x64/w8 tiles, whose vectors spread a chunk's 64 steps over lanes
    and warps (1500x600 fp32 14.6 / 17.8 / 14.4 -> 16.4 / 18.0 / 15.2, bf16 14.4 / 17.3 / 14.1
    -> 20.3 / 22.7 / 19.6; one-chunk spans at 72x3000 and 24x40008 x1.03-1.25 for discounted
    returns and GAE, though x0.78-0.95 for traces); with 2-byte inputs also 32x64/w4 (9000x200
    x1.03 / x1.07 / x1.00, discounted returns x1.17 at 15000x150 in the forty-ninth session's
    probe file) and tiles of 1-3 rows (2x128/w2 at 100x1000 x1.29 / - / x1.31). At N a
    multiple of 16, where Triton vectorises them itself, the same tiles ran so as well
    (1504x608, 80x3008, 112x1008, 9008x208: the --unspec-ab half of the same file). V-trace's
    tiles all told (forty-ninth session, fp32 9000x480: tuned 104.6 -> 75.6 us, 16x64/w8 79.8
    -> 59.7)."""
    if est == P.VTRACE:
        return True
    tile = (block_n, block_t, warps)
    if tile == SCALAR_LOADS_TILE:
        return False
    return itemsize >= 4 or (block_n >= 4 and tile != (32, 64, 4))

_TIME_STRIDES = ("s0t", "s1t", "s2t", "s3t", "s4t", "s5t", "s6t", "s7t", "s8t", "o0t", "o1t")
_lane_rows_kernel = triton.jit(fused_scan_kernel.fn, do_not_specialize=_TIME_STRIDES)


def _cdiv(a: int, b: int) -> int:
    # plain ints: triton.cdiv and triton.next_power_of_2 are jit (constexpr) functions, and
    # calling them from Python costs ~4 us each
    return -(-a // b)


def _np2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _align(*ints: int) -> int:
    """The largest power of two below 16 that divides every one of ``ints`` (0 counts as any),
    for the kernel's ALIGN_T / ALIGN_N; 1 where they are all multiples of 16, which Triton's
    own specialisation already sees (the compiled kernel is then the one it was before)."""
    g = math.gcd(*ints)
    return 1 if g % 16 == 0 else g & -g


# the kernel's tensor arguments in signature order: the 9 per-step inputs (with strides), the 2
# per-row ones (without), then the two outputs (with strides)
_TENSOR_FIELDS = operator.attrgetter("p0", "p1", "term", "trunc", "nv", "x1", "x2", "g", "lam",
                                     "row0", "row1")
_STRIDED = (1,) * 9 + (0, 0, 1, 1)


def _workspace(args: list, objs: list, ws, K: int, tail: list):
    # the full argument list (and tensor positions): inputs, workspaces WA, WB, WC, K, the rest
    n = len(args)
    return (args + [w.data_ptr() for w in ws] + [K] + tail,
            objs + [(n + i, w) for i, w in enumerate(ws)])


def launch(pb: P.Problem, out0: torch.Tensor, out1: Optional[torch.Tensor]) -> None:
    """Run ``pb`` into the [N, T] output views ``out0`` (and ``out1``)."""
    d = pb.p0                     # stands in for absent tensors (never read)
    if d.device.type != "cuda" and not _INTERPRETED:
        raise RuntimeError(
            "CPU tensors reach rlscan's Triton kernels (RLSCAN_INTERPRET=1), but the kernels were "
            "compiled for the GPU: RLSCAN_INTERPRET=1 must be in the environment before rlscan is "
            "imported, so that Triton's interpreter is on when the kernels are defined")
    if d.is_cuda and d.device.index != torch._C._cuda_getDevice():
        # Triton launches on the current device: make it the inputs' (a call on cuda:1 from a
        # process whose current device is cuda:0 would read another GPU's addresses)
        with torch.cuda.device(d.device):
            return launch(pb, out0, out1)
    cfg = _forced if _forced is not None else select_config(pb)   # tuning DB, else heuristic
    # Addresses go in as ints: Triton's launcher then skips a data_ptr() call and a driver
    # pointer query per argument. ``objs`` keeps (position, tensor) for Triton's JIT path;
    # ``spec`` gets what Triton specialises on (dtype, 16-byte alignment, strides). An absent
    # input is a dummy (p0, never read) with zero strides.
    dp = d.data_ptr()
    args, objs, spec, row_strides, time_strides = [], [], [], [], []
    for x, strided in zip((*_TENSOR_FIELDS(pb), out0, out0 if out1 is None else out1),
                          _STRIDED):
        if x is None:
            objs.append((len(args), d))
            args += (dp, 0, 0) if strided else (dp,)
            spec.append(None)
            continue
        objs.append((len(args), x))
        ptr = x.data_ptr()
        spec += (x.dtype, ptr & 15)
        if strided:
            sr, st = x.stride()
            args += (ptr, sr, st)
            spec += (sr, st)
            row_strides.append(sr)
            time_strides.append(st)
        else:
            args.append(ptr)
    n_chunks = _cdiv(pb.T, cfg["BLOCK_T"])
    row_progs = _cdiv(pb.N, cfg["BLOCK_N"])
    strategy = cfg.get("strategy", "row_block")
    # a look-back span is one chunk: its program holds the chunk in registers while it looks back
    per_span = 1 if strategy == "lookback" else cfg.get("CHUNKS_PER_SPAN") or n_chunks
    if strategy == "row_block" or per_span >= n_chunks:
        strategy, per_span, K = "row_block", n_chunks, 1
    else:
        K = _cdiv(n_chunks, per_span)
        if K > _MAX_SPANS:
            # a launch grid has at most 65535 programs along y, a row's spans: longer rows
            # (a config's fixed spans on a horizon past its bucket's) walk more chunks a span
            # (a look-back span holds one chunk: such a config runs as chunked spans)
            strategy, per_span = "chunked", _cdiv(n_chunks, _MAX_SPANS)
            K = _cdiv(n_chunks, per_span)
    consts = (pb.est, pb.reverse, pb.vnext, pb.ratio, pb.term is not None,
              pb.trunc is not None, pb.g is not None, pb.lam is not None, pb.row0 is not None,
              pb.row1 is not None, pb.pg_mix, pb.starts_at)
    tail = [pb.N, pb.T, per_span, float(pb.gamma), float(pb.lmbda), float(pb.rho_bar),
            float(pb.c_bar), float(pb.pg_rho_bar)]
    options = (cfg.get("num_warps", 4), cfg.get("num_stages", 1), cfg.get("maxnreg"), False)
    # programs that walk several chunks issue each chunk's loads one chunk ahead
    bn, bt = cfg["BLOCK_N"], cfg["BLOCK_T"]
    time_last = out0.stride(1) == 1
    # the config's two-level scan (configs.py) applies to backward scans of time-last buffers
    two_level = (cfg.get("TWO_LEVEL", False) and pb.reverse and time_last
                 and _two_level_fits(cfg))
    # time-major backward scans load their lanes in descending time and scan forward
    descend = pb.reverse and not time_last and _DESCEND_TIME_MAJOR
    # time-major tiles of one row a lane: the kernel that cannot vectorise along the rows
    lane_rows = not time_last and cfg.get("LANE_ROWS", False)
    # time-major tiles asking for loads of one value an instruction (configs SCALAR_LOADS, the
    # heuristic's 16x64/w8 tiles) run the same kernel, whatever N
    scalar = lane_rows or (not time_last and cfg.get("SCALAR_LOADS", False)
                           and pb.est in _SCALAR_LOADS_ESTIMATORS)
    kernel = _lane_rows_kernel if scalar else fused_scan_kernel
    # V-trace's next lane by gather where a row's chunk lies inside one warp (time-last) or, for
    # time-major tiles of at least 128 rows a warp, inside each thread (triton's load layout puts
    # 4 rows a thread on 32 lanes and the chunk's steps in registers). Not in tiles of one row a
    # lane, though the next step is in the same thread: triton 3.6 lays that gather through
    # shared memory (PTX, V-trace 32x8/w1 at 16384x512: 8 shuffles, 8 barriers, 186 registers;
    # the second composition 0, 0, 154)
    gather = _NEXT_GATHER and not two_level and pb.est == P.VTRACE and not lane_rows and (
        options[0] <= bn if time_last else bn >= 128 * options[0])
    # time-major tiles of 4+ rows: loads of rows with stride 1 keep the fp32 layout (scan.py);
    # bit i for per-step input i (time-last calls skip the test: host cost); none in tiles of
    # one row a lane
    contig = 0
    if _CONTIG_TIME_MAJOR and not time_last and bn >= 4 and not lane_rows:
        for i, x in enumerate(_TENSOR_FIELDS(pb)[:9]):
            if x is not None and x.stride(0) == 1:
                contig |= 1 << i
    group = cfg.get("GROUP", 4) if two_level else 4   # steps a thread in a two-level tile
    # a row block's rows spread over SPLIT tile rows, time-last; a forward scan's only with
    # one input row a program (scan.py)
    split = cfg.get("SPLIT", 1)
    if not (strategy == "row_block" and time_last and (pb.reverse or split == bn)):
        split = 1
    # T and row strides that are multiples of 2-8 said so: time-last rows of 3000 steps load 16
    # bytes an instruction, not one value (H100, forced old vs new, 2 rounds, discounted
    # returns / GAE / V-trace, tuned configs: bf16 2000x3000 85.1 / 109.4 / 151.9 us -> 17.9 /
    # 29.9 / 38.4, fp32 1500x600 13.2 / 14.8 / 20.6 -> 9.8 / 11.9 / 15.9; x0.67 over 24 cells,
    # x0.79 for the heuristic's, none slower; benchmarks/results/probes/2026-12-06_
    # fortyninth_session_align_hints_ab.txt). Time-major, N and the time strides, in the tiles
    # _tells_n names; lane-row tiles keep their time strides unsaid (scalar loads).
    align_n = (_align(pb.N, *time_strides) if not time_last and not scalar
               and _tells_n(pb.est, bn, bt, options[0], pb.p0.element_size()) else 1)
    block = (int(_PREFETCH and per_span > split), int(gather), int(two_level), group,
             int(descend), contig, split, bn, bt, _align(pb.T, *row_strides), align_n)
    spec += (pb.N, pb.T, per_span, K)
    # every launch a programmatic dependent one where the GPU has them: the later ones of a call
    # overlap the launch before; the first waits for whatever ran before it (scan.py)
    pdl = _pdl_capable(d.device)
    dependent = options[:3] + (pdl,)
    first = options[:3] + (pdl and _PDL_FIRST,)
    if strategy == "row_block":
        _run(kernel, (_cdiv(pb.N, bn // split), 1),
             *_workspace(args, objs, (d, d, d), 1, tail),
             consts + (0, 0, int(first[3])) + block, first, spec)
        return
    if strategy == "lookback":
        # one program per (row block, chunk): every chunk publishes its summary to an all-ones
        # ("not yet") int64 workspace and folds the earlier ones (scan.py). A persistent one
        # that the scan keeps clean itself (PHASE 4, lookback_state.py) needs no fill launch
        n = pb.N * K
        state = _graph_pools.acquire(d.device, n, out0)
        if state is not None:
            _replay.record_workspace(state, persistent=n)
            _run(kernel, (row_progs, K), *_workspace(args, objs, (state, d, d), K, tail),
                 consts + (4, _lookback_window(K, bn, options[0]), int(first[3])) + block, first,
                 spec)
            return
        # else (a capture with no workspace ready) one filled in the call, the fill ours so
        # that the scan may start beside it
        ws = torch.empty((n,), dtype=torch.int64, device=d.device)
        _replay.record_workspace(ws)
        _run(fill_kernel, (_cdiv(n, _FILL_BLOCK), 1), [ws.data_ptr(), n], [(0, ws)],
             (-1, _FILL_BLOCK, int(pdl)), (4, 1, None, first[3]), (ws.data_ptr() & 15, n),
             _FILL_CONSTEXPRS)
        _run(kernel, (row_progs, K), *_workspace(args, objs, (ws, d, d), K, tail),
             consts + (3, _lookback_window(K, bn, options[0]), int(pdl)) + block, dependent, spec)
        return
    # chunked: spans of per_span chunks, one program per (row block, span); the fix-up pass
    # folds the earlier spans' summaries itself when they fit one small tile. The fold tile is
    # never narrower than the chunk tile: triton 3.6 aborts compiling a [1, 2] or [1, 4] scan
    # beside a [1, 1024] one with 4 warps (ScanOpToLLVM assertion, H200, bf16 1x1024/w4).
    fold = max(_np2(K), cfg["BLOCK_T"])
    fold = fold if cfg["BLOCK_N"] * fold <= _FOLD_PER_THREAD * 32 * options[0] else 0
    wa = torch.empty((3 if fold == 0 else 2, pb.N, K), dtype=torch.float32, device=d.device)
    _replay.record_workspace(wa)
    ws = _workspace(args, objs, (wa[0], wa[1], wa[-1]), K, tail)
    _run(kernel, (row_progs, K), *ws, consts + (1, 0, int(pdl)) + block, first,
         spec)
    if fold == 0:
        init = pb.row0 is not None and (not pb.reverse or pb.est == P.LINEAR)
        w = (wa[0], wa[1], wa[2], pb.row0 if init else wa)
        _run(chunk_carry_kernel, (pb.N, 1), [x.data_ptr() for x in w] + [pb.N, K],
             list(enumerate(w)), (init, min(_np2(K), 1024), int(pdl)), (4, 3, None, pdl),
             (w[3].dtype, *(x.data_ptr() & 15 for x in w), pb.N, K), _CARRY_CONSTEXPRS)
    # the fix-up issues its first chunk's loads before it reads the carry, even in spans of
    # one chunk (then the next chunk's loads are masked off)
    _run(kernel, (row_progs, K), *ws,
         consts + (2, fold, int(pdl), int(_PREFETCH)) + block[1:], dependent, spec)


_CONSTEXPRS = ("EST", "REVERSE", "VNEXT", "RATIO", "HAS_TERM", "HAS_TRUNC", "GAMMA_T",
               "LAMBDA_T", "HAS_ROW0", "HAS_ROW1", "PG_MIX", "STARTS_AT", "PHASE", "FOLD", "PDL",
               "PREFETCH", "NEXT_GATHER", "TWO_LEVEL", "GROUP", "DESCEND", "CONTIG_ROWS",
               "SPLIT", "BLOCK_N", "BLOCK_T", "ALIGN_T", "ALIGN_N")
_CARRY_CONSTEXPRS = ("HAS_INIT", "BLOCK_K", "PDL")
_FILL_CONSTEXPRS = ("VALUE", "BLOCK", "PDL")
_FILL_BLOCK = 1024
# (kernel, device, constexprs, options, argument specialisation) -> (launch function, its
# leading arguments, CompiledKernel): see _launcher_of
_compiled = {}


def _run(kernel, grid, args, objs, consts, options, spec, names=_CONSTEXPRS) -> None:
    """``kernel[grid](*args, **dict(zip(names, consts)))``, the first time through Triton's JIT
    (with the tensors ``objs`` (position, tensor) in place of their addresses), after that
    through the compiled kernel's launcher directly.

    Why: Triton's per-call argument binding and specialisation cost ~30 us a launch of the
    ~60-argument scan kernel on the H200's host (a whole GAE call: 78 us, of which launch 43 us;
    2026-11-30). ``spec`` holds everything Triton specialises on (each pointer's dtype and
    16-byte alignment, every integer argument's value), so one key is one Triton
    specialisation; floats are always fp32. Triton's own path serves the interpreter, tuner
    workers (they wrap the kernel) and Triton versions whose launcher we have not checked."""
    if _DIRECT and type(kernel) is JITFunction and _no_launch_hooks():
        dev = torch.cuda.current_device()
        key = (kernel, dev, consts, options, *spec)
        known = _compiled.get(key)
        if known is not None:
            run, head, ck = known
            run(grid[0], grid[1], 1, torch._C._cuda_getCurrentRawStream(dev), *head, *args,
                *consts)
        else:
            ck = kernel[grid](*_tensors(args, objs), **dict(zip(names, consts)),
                              **_options(options))
            if len(_compiled) > 4096:   # many distinct shapes: start over rather than grow
                _compiled.clear()
            run, head = _launcher_of(ck)
            _compiled[key] = (run, head, ck)
        _replay.record_launch(run, head, grid, args, objs, consts, dev)
        return
    _replay.not_replayable()
    kernel[grid](*_tensors(args, objs), **dict(zip(names, consts)), **_options(options))


def _lookback_window(K: int, block_n: int = 1, warps: int = 1) -> int:
    """Spans a look-back step reads at once: all K of a row, within ``_LOOKBACK_WINDOW``, and
    at most ``_LOOKBACK_WORDS`` summaries a thread for a tile of ``block_n`` rows."""
    w = min(max(_np2(K), _LOOKBACK_WINDOW[0]), _LOOKBACK_WINDOW[1])
    return max(2, min(w, 32 * warps * _LOOKBACK_WORDS // block_n))


def _options(options: tuple) -> dict:
    # (num_warps, num_stages, maxnreg, launch_pdl) as launch keywords; no register cap, no
    # keyword; launch_pdl only when set (a compile option of triton's CUDA backend)
    out = {"num_warps": options[0], "num_stages": options[1]}
    if options[2] is not None:
        out["maxnreg"] = options[2]
    if options[3]:
        out["launch_pdl"] = True
    return out


# Programmatic dependent launch (sm_90+) of a call's second and later launches: the look-back
# scan beside its fill, the chunked carry pass and fix-up beside the launch before. H200, the
# fourteenth session's tuned configs, PDL vs plain (fifteenth session, compare_configs.py
# --pdl-ab): discounted returns 8x65536 6.4 vs 6.9 us, 1x1048576 10.6 vs 11.1; GAE 32x32768 9.6
# vs 10.4, 8x262144 18.7 vs 19.4; V-trace 1x1048576 16.3 vs 17.6; forced 1x1024/w4 look-back
# spans within 0.3 us either way (the fill is short).
_PDL = True
# A call's first launch a programmatic dependent one too, waiting before it touches memory
# (scan.py). A streaming kernel of 3 reads and 2 writes a step, 20 launches in a graph (H200,
# twenty-third session, benchmarks/pdl_first_probe.py): 524288 steps in 512 programs 2.78 ->
# 2.40 us a launch, in 2048 2.62 -> 2.53; 2097152 in 2048 7.34 -> 7.01; 65536 1.62 -> 1.40.
# Letting the next launch start at once as well lost there (2.62 -> 3.13, 8.84 -> 10.96 at
# 8192 programs): the last launch of a call does not.
_PDL_FIRST = True
_pdl_devices: dict = {}     # torch.device -> bool


def _pdl_capable(device) -> bool:
    """Whether launches on ``device`` may be programmatic dependent ones: a CUDA GPU of sm_90 or
    newer, compiled (not interpreted), by a Triton that has both the launch option and the
    in-kernel wait (``_triton_has_pdl``)."""
    ok = _pdl_devices.get(device)
    if ok is None:
        ok = _pdl_devices[device] = (
            device.type == "cuda" and os.environ.get("TRITON_INTERPRET") != "1"
            and _triton_has_pdl() and torch.cuda.get_device_capability(device)[0] >= 9)
    return ok and _PDL


def _triton_has_pdl() -> bool:
    # the compile option and the instructions (triton 3.6 on the H200, read in 3.9's source);
    # rlscan accepts triton >= 3.2, which may lack either
    try:
        from triton.backends.nvidia.compiler import CUDAOptions
        import triton.language.extra.cuda as cuda
    except ImportError:
        return False
    return ("launch_pdl" in getattr(CUDAOptions, "__dataclass_fields__", {})
            and hasattr(cuda, "gdc_wait") and hasattr(cuda, "gdc_launch_dependents"))


def _tensors(args: list, objs: list) -> list:
    # Triton's own path specialises on (and checks) tensors, not addresses
    args = list(args)
    for i, x in objs:
        args[i] = x
    return args


def _no_launch_hooks() -> bool:
    # profilers (proton) register launch hooks; then Triton's own path runs them. Spelled out:
    # a generator over the pair cost 0.27 us a call, on the path of every replay
    rt = knobs.runtime
    h = rt.launch_enter_hook
    if h is not None and getattr(h, "calls", None) != []:
        return False
    h = rt.launch_exit_hook
    return h is None or getattr(h, "calls", None) == []


def _launcher_of(ck):
    """(function, arguments) such that ``function(gx, gy, 1, stream, *arguments, *args)``
    launches the compiled kernel ``ck`` with no launch hooks: on triton 3.6, for kernels that
    need no per-launch scratch memory, its C launch function itself, skipping the Python
    wrapper (``CudaLauncher.__call__``) that only allocates that scratch and forwards; else
    ``ck.run``.

    Why: the wrapper re-packs the ~90 arguments and builds two closures on every launch: 1.3-2.1
    us of a 14-24 us replayed call at 4096x128 on the H200's host (host_cost.py, side by side,
    two device calls, 2026-12-01)."""
    run = ck.run
    fn = getattr(run, "launch", None)
    if (_RAW_LAUNCH and type(run).__name__ == "CudaLauncher"
            and type(fn).__name__ == "builtin_function_or_method"    # no tensordesc wrapper
            and getattr(run, "global_scratch_size", 1) == 0
            and getattr(run, "profile_scratch_size", 1) == 0):
        return fn, (ck.function, run.launch_cooperative_grid, run.launch_pdl, None, None,
                    ck.packed_metadata, None, None, None)
    return run, (ck.function, ck.packed_metadata, None, None, None)


def _triton_version() -> tuple:
    try:
        return tuple(int(v) for v in triton.__version__.split(".")[:2])
    except ValueError:
        return ()


def _direct_launch_ok() -> bool:
    """The compiled-kernel launcher is called as triton 3.6-3.9 call it (checked against both
    sources), and the kernel's signature is what ``launch`` passes."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        return False
    version = _triton_version()
    names = list(fused_scan_kernel.arg_names)
    return (3, 6) <= version <= (3, 9) and names[-len(_CONSTEXPRS):] == list(_CONSTEXPRS) \
        and len(names) == 47 + len(_CONSTEXPRS) and list(chunk_carry_kernel.arg_names) == [
            "WA", "WB", "WC", "ROW0", "N", "K", *_CARRY_CONSTEXPRS] \
        and list(fill_kernel.arg_names) == ["W", "n", *_FILL_CONSTEXPRS]


_DIRECT = _direct_launch_ok()
# whether the kernels were defined under Triton's interpreter (TRITON_INTERPRET=1 at import)
_INTERPRETED = type(fused_scan_kernel).__name__ == "InterpretedFunction"


def _replay_allowed() -> bool:
    """Recorded plans may replay (rlscan/_replay.py): nothing a replay would bypass is active,
    and no torch.compile trace (which takes the op of rlscan/_custom_op.py)."""
    return (not torch.compiler.is_compiling() and _forced is None
            and _layout.PATH_OVERRIDE is None and not _layout.POISON_OUTPUTS
            and _no_launch_hooks())


# The C launch function's arguments are those of triton 3.6's CudaLauncher.__call__ (read in
# its source); 3.7-3.9 changed the wrapper, and their launches keep it.
_RAW_LAUNCH = _triton_version() == (3, 6)

if _DIRECT:
    _replay._gate = _replay_allowed
