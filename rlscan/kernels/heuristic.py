"""The launch config of a call its GPU's tuning DB does not cover: rules chosen by measurement,
each with the figures that chose it (shapes ``N`` rows x ``T`` steps; time-major means [T, N]
buffers). ``rlscan-tune`` measures the configs for your own shapes instead."""
import math
import os
from typing import Optional

from .configs import (LOOKBACK_MAX_SPANS, SCALAR_LOADS_TILE, _cdiv, next_pow2 as _np2,
                      two_level_fits as _two_level_fits)

_SMS = 132   # the H200's and the H100 SXM's: the GPUs the rules below were measured on
# Time-major configs several of the heuristic's rules share: 8-row blocks of 128-step chunks on
# 8 warps, and spans of 8 chunks of 128x4 tiles on one warp (the long rows')
_ROW_BLOCK_8X128 = {"strategy": "row_block", "BLOCK_N": 8, "BLOCK_T": 128, "num_warps": 8}
_SPANS_128X4 = {"strategy": "chunked", "BLOCK_N": 128, "BLOCK_T": 4, "num_warps": 1,
                "CHUNKS_PER_SPAN": 8}
# spans of 4 chunks of one-warp 32x8 tiles: tens of long time-major rows, and fp32 V-trace's and
# Retrace's hundreds
_SPANS_32X8 = {"strategy": "chunked", "BLOCK_N": 32, "BLOCK_T": 8, "num_warps": 1,
               "CHUNKS_PER_SPAN": 4}
# spans of 8 chunks of 32x8 tiles of one row a lane: 560-4095 time-major rows of ~1024 steps
_LANE_SPANS_32X8 = dict(_SPANS_32X8, CHUNKS_PER_SPAN=8, LANE_ROWS=True)
# one-warp row blocks of 32 rows, one a lane, in 16-step chunks (many time-major rows)
_LANE_ROWS_32X16 = {"strategy": "row_block", "BLOCK_N": 32, "BLOCK_T": 16, "num_warps": 1,
                    "LANE_ROWS": True}


def heuristic_config(N: int, T: int, time_major: bool = False, itemsize: int = 4,
                     estimator: str = "", sms: Optional[int] = None) -> dict:
    """Small tiles, few warps, many programs: the row-block kernel is latency-bound, so what
    counts is how many loads are in flight across the GPU, not the work per program.
    ``itemsize``: bytes a per-step input (2 for bf16 and fp16 calls). ``estimator``: the
    kernel's name (``tuning.KERNEL_NAMES``), for the rules that hold for some estimators only
    (the split time-last rows of fp32 GAE, V-trace and Retrace, the time-major walks); ""
    gives what every estimator gets. ``sms``: the GPU's SM count (None: 132, the H200's), for
    the rules that size a launch to one wave of programs.

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
        if (itemsize >= 4 and 4096 <= T < 32768 and N < 1024
                and estimator in ("vtrace", "retrace")):
            # fp32 V-trace and Retrace there: spans of 4 chunks of 32x8/w1 (the tile of the tens
            # of long rows below), not the 128x4 spans. H100, forced (fifty-fifth and fifty-sixth
            # sessions, probes/2026-12-07_fiftyfifth_session_leads_ab_h100.txt and ..._fiftysixth_
            # session_leads_check_h100.txt): x0.88 (geomean of 16 timings, 14 faster) at 150x20000,
            # 200x12000, 300x5000, 400x9000, 800x6000 (V-trace 300x5000 25.3 us vs 34.2, Retrace
            # 150x20000 58.0 vs 70.8); at 500x8000 they lost (x1.04-1.05: V-trace 71.0 vs 67.8).
            return dict(_SPANS_32X8)
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
    if (time_major and not interpreted and itemsize >= 4 and 8192 <= N < 16384
            and 128 <= T < 1024 and estimator in ("discounted_returns", "eligibility_traces")):
        # fp32 discounted returns and eligibility traces, the lightest kernels: 32x64/w4 row
        # blocks, not 16x64/w8 (H100, forced, fifty-fifth session, probes/2026-12-07_
        # fiftyfifth_session_leads_ab_h100.txt): x0.78-0.99 over 10 cells of 8192-15000 rows x
        # 128-900 steps (discounted returns 12000x200 17.7 us vs 22.0, traces 10000x600 34.8
        # vs 42.7); the H100 tuner's 8192x128 and 8192x256 entries, x0.91 and x0.88
        # (heuristic_vs_db.py). The other estimators lost with them (x1.06 over 20 cells,
        # V-trace 9000x300 49.0 vs 38.3). Registers (ptxas of triton 3.6, kernel_resources.py,
        # same file): 150-151 for these two, 3 programs an SM, one wave to 12672 rows on 132
        # SMs; GAE's 191 and V-trace's 255 allow 2 (1.42 waves at 12000 rows). Past that one
        # wave the 32x16/w1 lane rows of 16384+ rows instead (fifty-sixth session, ..._fiftysixth_
        # session_leads_check_h100.txt): 13000x160 discounted returns / traces 15.3 / 15.3 us
        # against 32x64/w4's 20.5 / 19.6 and 16x64/w8's 19.7 / 18.9, 14500x700 60.2 / 62.6
        # against 67.7 / 64.2 and 65.0 / 61.8; 15000x900 77.3 against 89.3 (fifty-fifth).
        # Within the wave 32x64/w4 held off the cells that chose it: 8500x250, 11000x500,
        # 9500x1000 x0.74-0.88 the 16x64/w8 time (lane rows x1.20-1.43 its).
        if N <= 3 * 32 * (sms or _SMS):
            return {"strategy": "row_block", "BLOCK_N": 32, "BLOCK_T": 64, "num_warps": 4}
        return dict(_LANE_ROWS_32X16)
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
        if N < 4096 and (T >= 1024 or (T >= 768 and itemsize <= 2)):
            if N >= _long_rows_walk_from(estimator, itemsize):
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
            # 2-byte inputs from 768 steps (H100, forced, fifty-third session, same file):
            # bf16 2500x900 GAE / V-trace / discounted returns / traces 26.5 / 33.8 / 20.3 /
            # 20.1 us against 8x128/w8's 30.9 / 47.9 / 24.5 / 23.4 (V-trace's 16x64/w8 45.7);
            # at 3000x700 even (23.5 / 29.0 / 18.6 / 18.2 vs 22.7 / 34.8 / 18.8 / 18.0)
            return dict(_LANE_SPANS_32X8)
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
    if (time_major and not interpreted and per_sm and (560 if itemsize >= 4 else 640) <= N < 1024
            and 384 <= T < 1024):
        # 8x128/w8 row blocks (70-127 programs), not the one-chunk spans of 16x64/w8 tiles the
        # split below would make (H100, forced, fifty-fifth session, probes/2026-12-07_
        # fiftyfifth_session_leads_ab_h100.txt; six estimators, fp32): x0.52-0.90 their time at
        # 700x700, 600x900, 900x500, 800x400 and 1000x1000 (GAE 900x500 9.3 us vs 14.9,
        # eligibility traces 1000x1000 13.0 vs 23.4); at 520x1000 (65 programs) they lost
        # (x0.96-1.15: GAE 15.1 vs 13.9), hence from 560 rows, halfway to the 600 that won. Off
        # those cells (fifty-sixth session, ..._fiftysixth_session_leads_check_h100.txt; GAE,
        # discounted returns, V-trace, traces): 640x600, 960x800, 580x1000, 1000x384, 760x1020
        # x0.69 (geomean; 19 of 20 faster, worst x1.03). bf16 from 640 rows: below 768 steps
        # 8x128/w8, from there spans of 8 chunks of 32x8 lane-row tiles, as 1024-4095 rows take
        # (8x128/w8 lost at 580x1000, x1.10-1.37): x0.78 the one-chunk spans' time over 22
        # timings at 640x600, 700x450, 1000x384, 760x1020, 900x950, 960x800, 1000x1020 (22
        # faster, x0.61-0.97; V-trace 900x950 20.4 us vs 29.9). Below 640 rows bf16 keeps the
        # spans: these tiles x1.02 their time there (8 timings, 3 faster; GAE 560x700 14.4 vs
        # 11.0, 600x768 15.3 vs 13.9).
        if itemsize <= 2 and T >= 768:
            return dict(_LANE_SPANS_32X8)
        return dict(_ROW_BLOCK_8X128)
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
        return dict(_LANE_ROWS_32X16)
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
        return dict(_SPANS_32X8)
    if not time_major and not interpreted and 128 <= N < 1024 and (
            T >= 2048 or N < 512 and T >= 1024):
        # 128-1023 rows of 2048+ steps (a batch of long language-model sequences): each row on
        # SPLIT warps, one row a program (configs._SPLIT_ROWS; the tuned grid's winners there
        # are such tiles). 16 warps a row below 512 rows of 4096+ steps, else 8. Against the
        # heuristic before (1x512/w4 row blocks, or spans of 2x128/w2 below 256 rows): the tuner's
        # timings of the tile on the grid's 128-512-row buckets, x0.66 (H200, 48 buckets,
        # x0.50-0.93) and x0.70 (H100, 46); forced on 60 cells off the grid of 128-768 rows x
        # 2048-32768 steps, fp32 (four estimators) and bf16 (GAE, V-trace), x0.80 (H100, forty-
        # fifth session, probes/2026-12-06_fortyfifth_session_split_rows_heuristic_ab.txt;
        # x0.59-1.04): 300x16384 eligibility traces 23.7 us vs 31.5, bf16 V-trace 44.2 vs 66.4.
        # At 1024 rows the tuned grid's forward scans lost with them (x1.04-1.19).
        # Below 512 rows of 1024-4095 steps: 8 warps a row too, and from 1024 steps, not 2048
        # (H100, forced, fifty-fifth session, probes/2026-12-07_fiftyfifth_session_leads_ab_
        # h100.txt; six estimators, fp32): 8 warps against 16 at 200x3000, 300x3000 and
        # 400x2500, x0.68-0.91 (18 of 18; V-trace 300x3000 10.7 us vs 15.8); against 1x512/w4
        # at 150x1800, 200x1500 and 300x1200, x0.73-1.02 (17 of 18 faster; 150x1800 GAE 4.9 vs
        # 6.7). Off those cells, fp32 and bf16 (fifty-sixth session, ..._fiftysixth_session_
        # leads_check_h100.txt; GAE, discounted returns, V-trace, traces; 130-480 rows x
        # 1100-3900 steps): fp32 x0.91 16 warps' time (9 of 12 faster, worst x1.03 at 180x3900)
        # and x0.84 1x512/w4's (12 of 12); bf16, with 5 more cells (rules-check, same session,
        # ..._fiftysixth_session_rules_check_h100.txt; GAE, V-trace), x0.89 16 warps' time (18
        # timings, 13 faster; 180x3900 x1.04-1.07, GAE 256x4000 x1.11) and x0.81 1x512/w4's
        # (16, 14 faster; V-trace 350x1600 6.6 us vs 10.1). At 500x1030 (a length 2 mod 4)
        # 1x512/w4 had won (GAE 8.0 vs 10.9) until the launcher gave such rows groups of 2
        # steps (launch._GROUP_BY_ALIGNMENT; fifty-seventh session, ..._fifty-seventh_session_
        # group_ab_h100.txt): now 7.84 / 9.99 / 6.57 us against 7.98 / 10.24 / 6.80 (GAE /
        # V-trace / discounted returns). The tuned grid's 16 warps keep 4096+ steps (256x8192,
        # 128x16384).
        split = 16 if N < 512 and T >= 4096 else 8
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
    if (not time_major and not interpreted and itemsize >= 4 and estimator in _LOOKBACK_ESTIMATORS
            and 8 <= N < 64 and _LOOKBACK_STEPS[0] <= T <= _LOOKBACK_STEPS[1]):
        # Tens of rows of 12000-65536 steps, fp32 GAE and discounted returns: look-back spans
        # of 1x256/w1 two-level (the grid's 32x32768 and 64x16384 winners; GAE's capped at 64
        # registers, as the H100's are), not the chunked spans below. T stops where a row makes
        # LOOKBACK_MAX_SPANS spans: past it a walk back may need the call's decay, which the
        # heuristic does not see. H100, 2 rounds, against the chunked spans (sixtieth session,
        # probes/2026-12-07_sixtieth_session_lookback_heuristic_check_h100.txt): at 8x40000,
        # 12x30000, 32x20000, 48x20000, 20x40000, 16x50000, 40x12000 GAE capped x0.84-0.93
        # (40x12000 7.88 us vs 9.35; uncapped x0.78-1.00, x1.03 the capped time, geomean),
        # discounted returns uncapped x0.80-0.95 (16x50000 8.10 vs 10.15; capped x1.02 its
        # time); V-trace 4 faster, 3 slower (x0.84-1.09), and keeps the spans, as do the others
        # (untimed) and bf16 (untimed off the grid). At odd alignment the tile runs in one
        # level, uncapped (configs.for_odd_rows): GAE 8x65535 10.15 vs 14.53, 32x32767 17.28
        # vs 23.01, discounted returns 8.47 vs 11.58 and 13.61 vs 17.98 (same session,
        # ..._odd_tiles_ab_h100.txt).
        return dict(_LOOKBACK_1X256, **({"maxnreg": 64} if estimator == "gae" else {}))
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


# the look-back rule of tens of long fp32 rows (heuristic_config)
_LOOKBACK_ESTIMATORS = ("gae", "discounted_returns")
_LOOKBACK_1X256 = {"strategy": "lookback", "BLOCK_N": 1, "BLOCK_T": 256, "num_warps": 1,
                   "CHUNKS_PER_SPAN": 1, "TWO_LEVEL": True}
_LOOKBACK_STEPS = (12000, LOOKBACK_MAX_SPANS * _LOOKBACK_1X256["BLOCK_T"])

_MIN_WIDE_ROWS = 256   # below, wide row blocks leave the GPU idle and spans win
