"""Candidate launch configs of the scan kernels, for the tuner (``rlscan-tune``) and for checking
tuning-DB entries.

A config is a plain dict, the fields of a ``triton.Config`` plus the strategy::

    {"strategy": "row_block", "BLOCK_N": 2, "BLOCK_T": 128, "num_warps": 2, "num_stages": 1}
    {"strategy": "chunked", ..., "CHUNKS_PER_SPAN": 16}
    {"strategy": "lookback", ..., "CHUNKS_PER_SPAN": 1}
    {"strategy": "row_block", "BLOCK_N": 1, "BLOCK_T": 128, "num_warps": 1, "TWO_LEVEL": True}
    {"strategy": "row_block", "BLOCK_N": 4, "BLOCK_T": 128, "num_warps": 2, "TWO_LEVEL": True,
     "GROUP": 8}
    {"strategy": "row_block", "BLOCK_N": 2, "BLOCK_T": 128, "num_warps": 2, "maxnreg": 32}
    {"strategy": "row_block", "BLOCK_N": 2, "BLOCK_T": 1024, "num_warps": 2, "TWO_LEVEL": True,
     "SPLIT": 2}
    {"strategy": "row_block", "BLOCK_N": 32, "BLOCK_T": 8, "num_warps": 1, "LANE_ROWS": True}
    {"strategy": "row_block", "BLOCK_N": 16, "BLOCK_T": 64, "num_warps": 8, "SCALAR_LOADS": True}

``strategy`` names the kernel strategy of DESIGN.md §4 (rlscan/kernels/launch.py):
``row_block``, BLOCK_N rows per program walking time in chunks of BLOCK_T; ``chunked``, every
row split into spans of CHUNKS_PER_SPAN chunks across programs (summaries, then a fix-up that
folds them, with a carry pass in between when there are too many: two or three launches, inputs
read twice); ``lookback``, the same spans in one launch, each finding its
carry from the summaries earlier spans publish (decoupled look-back).
``TWO_LEVEL`` (optional, default off) scans backward estimators' time-last chunks in two levels,
4 steps a thread and then across the row's threads (scan.py, ``_suffix_two_level``); it needs
every row of the tile inside one warp (``two_level_fits``) and is ignored for forward scans and
time-major buffers. ``GROUP`` (optional, 4, 8 or 16, default 4; 8 and 16 only with
``TWO_LEVEL``): steps a thread in the two-level tile.
``SPLIT`` (optional, 1, 2, 4, 8, 16 or 32, default 1; row blocks of time-last calls; a forward
scan's only with BLOCK_N = SPLIT): each row of the input on SPLIT of the tile's BLOCK_N rows, so
on SPLIT warps, which scan consecutive chunks of it at once (BLOCK_N / SPLIT rows a program).
``LANE_ROWS`` (optional, default off; time-major buffers, ignored for time-last ones): one row
a lane, BLOCK_N >= 32 * num_warps, a row's steps of a chunk in its thread's registers, where
time-major tiles otherwise hold 4 adjacent rows a thread (launch.py, ``_lane_rows_kernel``).
``SCALAR_LOADS`` (optional, default off; time-major buffers of discounted returns, GAE and
λ-returns, ignored otherwise: ``SCALAR_LOADS_ESTIMATORS``): loads of one value an
instruction, whatever N's divisibility (the kernel of ``LANE_ROWS``), where Triton would
vectorise along the rows of an N that is a multiple of 16.
``maxnreg`` (optional, default none) caps the registers of a thread (ptxas ``.maxnreg``): a
kernel over 32 registers cannot hold an SM's 2048 threads, and the small-tile row block is
latency-bound, so fewer resident warps mean fewer loads in flight.
A new strategy adds its name to ``STRATEGIES`` and its space to ``candidates``.

This module imports neither torch nor triton: ``import rlscan`` checks DB entries with it.
"""
import math
from typing import Dict, List, Optional, Sequence, Tuple

STRATEGIES = ("row_block", "chunked", "lookback")
BACKWARD = ("gae", "lambda_returns", "discounted_returns", "vtrace", "retrace")
SPANNED = ("chunked", "lookback")     # strategies that split rows into spans
LAYOUTS = ("time_last", "time_major")
DTYPES = ("float32", "bfloat16", "float16")

MAX_TILE = 16384            # BLOCK_N * BLOCK_T: the kernel keeps ~10 live [BN, BT] fp32 arrays
NUM_WARPS = (1, 2, 4, 8, 16, 32)   # 16, 32: rows split over that many warps (_SPLIT_ROWS)
NUM_STAGES = (1, 2, 3)
# 32 registers a thread: 64 warps an SM (full occupancy); 40: 48 warps; 48: 40; 64: 32; 72:
# 28; 80: 25; 96: 21; 112: 18. 72-112 are valid for forced A/Bs, not yet tuner candidates: the
# look-back 1x256/w1/2l spans of V-trace take 128 registers uncapped (16 warps an SM) and spill
# 180 bytes at 64, where they lost, 44 at 80 and none at 96 (21 warps); Retrace's take 96 and
# none spill at 64, where they won (8x262144 24.1 -> 20.9 us, twenty-eighth session). Registers
# by benchmarks/kernel_resources.py with triton 3.6's wheel, which gives discounted returns'
# span the 72 that Nsight Compute measured on the H200.
MAXNREG = (32, 40, 48, 64, 72, 80, 96, 112)

# The row-block kernel is latency-bound: small tiles, few warps, many programs. The first
# H200 sweep (GAE over the standard grid, fp32 and bf16, both layouts, 64 buckets) dropped
# chunked 1x128, 2 chunks per span, num_stages=2 (1x128/w2 at 4096x2048: 55.38 us vs 55.37
# with 1 stage), 64-step chunks and 8x64 tiles (up to 3x slower everywhere). Once the kernel's
# loads became contiguous (ascending time, reverse scan), wide tiles joined (GAE fp32, H200:
# 512x4096 1x2048/w8 16.5 us, 1x512/w4 20.4, chunked 24.4; 1024x8192 1x512/w4 56.6, chunked
# 85.2, 128-step walks 242); 4x128/w4 left (within 3% of 2x128/w2 on 6 cells, never ahead) and
# 2x256/w4 with it, unmeasured, to keep the sweep short.
# Kept small on purpose: every candidate costs a compile and ~0.09 s of timing per bucket, and
# the default sweep (512 buckets) must finish in 10 minutes.
_ROW_BLOCK = ((1, 128, 1), (1, 128, 2), (2, 128, 2), (1, 256, 2), (1, 512, 4), (1, 1024, 4),
              (1, 2048, 8))                          # (BN, BT, num_warps)
# time-major [T, N]: rows are adjacent in memory, so a tile must span many rows for its loads to
# coalesce; tiles one row wide read 4 bytes per 128-byte line (H200, GAE fp32 time-major:
# 4096x128 16x64/w8 7.8 us, 8x128/w8 7.8, 32x64/w4 11.6; 16384x512 88.1, 100.7, 79.6).
# Tiles of 128 rows a warp keep each row's steps of a chunk in one thread (triton lays 4 rows a
# thread on the 32 lanes), so the scan is a loop in registers: with descending lanes (launch.py)
# H200 fp32 time-major, 128x8/w1 vs 16x64/w8: discounted returns 65536x128 34.0 vs 61.1 us,
# 131072x256 101.3 vs 218.0; 256x4/w2: GAE 51.3 vs 68.1 and 166.1 vs 247.7, V-trace 69.8 vs 96.1
# and 197.2 vs 344.8. Too few such programs elsewhere (16384x512: 32x64/w4 51.1, 128x8/w1 92.1).
# 512x4/w4 and 128x4/w1 were never ahead of 256x4/w2, 128x32/w8 never ahead of 128x16/w4.
_ROW_BLOCK_TIME_MAJOR = ((8, 128, 8), (16, 64, 8), (32, 64, 4), (2, 128, 2), (128, 8, 1),
                         (256, 4, 2), (128, 16, 4))
# Spanned strategies (few rows, long horizons), (strategy, BN, BT, warps, chunks per span).
# H200, GAE fp32, chunked: 1x1048576 1x1024/w4 15.8 us, 2x128/w2 31.0 (half of each tile idle);
# 8x262144 2x128/w2 26.6, 1x1024/w4 28.6. Look-back wins V-trace and Retrace at 8x65536 only
# (10.5 vs 10.6 us); 1x2048/w8 look-back spans (thirteenth session) never won: 8x65536 GAE
# 18.5 vs 10.0 (1x1024/w4), 1x1048576 21.3 vs 16.0 (chunked), with the chained look-back; back
# since the look-back folds published summaries (bare recurrence, one program a chunk folding
# all earlier summaries: 2048/w8 9.8 / 6.6 / 8.0 us at 1x1M / 8x65536 / 32x32768, onepass_probe).
# Fourteenth session's retune: look-back wins 20 buckets (1x1024/w4 9, 1x512/w1/2l 10, 1x2048/w8
# 1: Retrace 8x65536 9.7 us vs chunked 10.7).
# One warp of 256 steps (seventeenth session, first look-back window of 8 spans): linear scan
# 1x1048576 look-back 1x256/w1 6.3 us forced, the DB's chunked 1x1024/w4 9.6 (tuner's timing).
_SPANNED = (("chunked", 2, 128, 2, 1), ("chunked", 2, 128, 2, 4), ("chunked", 1, 256, 2, 1),
            ("chunked", 1, 1024, 4, 1), ("lookback", 1, 1024, 4, 1), ("lookback", 1, 2048, 8, 1),
            ("lookback", 1, 256, 1, 1))
# Time-major spans of 128-row tiles, 8 chunks of 4 steps (H200 fp32, chunked 128x4/w1/c8 vs the
# best row block): discounted returns 1024x8192 54.6 us vs 178.4, 512x4096 19.6 vs 90.8,
# 4096x2048 57.6 vs 64.2; GAE 1024x8192 83.6 vs 193.5 (128x16/w4/c2: 125.2).
# Look-back spans of those tiles (one read) lost everywhere (thirty-second session, forced,
# fp32, 4096x512 / 16384x512 / 4096x2048: discounted returns 128x8/w1 51.1 / 150.6 / 202.4 us
# against the tuned 17.8 / 50.4 / 55.8; 128x4/w1 and 256x4/w2 slower still): a span of 4-8
# steps holds 217-255 registers (8 warps an SM) and its walk goes on until all 128 rows of the
# tile meet an episode end (probes/2026-12-04_thirtysecond_session_time_major_lookback.txt).
_SPANNED_TIME_MAJOR = (("chunked", 8, 128, 8, 1), ("chunked", 16, 64, 8, 1),
                       ("chunked", 128, 4, 1, 8), ("chunked", 128, 8, 1, 4))
# Few rows, long horizons (2-31 rows, at least 2**18 steps): spans of one-warp tiles of 8 rows
# (256 steps a span: 1,024 one-warp programs at 8x262144), where the tiles above leave most
# lanes of a warp without a row. H100, fp32, forced, 3 rounds, against the tuned configs
# (forty-third session, probes/2026-12-06_fortythird_session_tm_small_tile_lookback.txt):
# 8x262144 8x32/w1/c8 GAE 37.7 us vs 43.6, discounted returns 27.1 vs 29.5, V-trace 45.2 vs
# 50.6, eligibility traces 25.5 vs 29.3; lost at 8x65536 (GAE 24.9 vs 14.3: 256 programs),
# 32x32768 and 128x16384. Look-back spans of 8-32 row tiles (8x32/w1 to 32x32/w1) lost
# everywhere there (GAE 8x262144 55.5-157.4 us). The H100's retune of 8x262144 (probes/..._
# tune_few_rows_h100.log): 8x64/w1/c4 won 11 of 16 buckets, 8x32/w1/c8 5, at x0.68-0.89 the
# old winner's time (chunked 8x8/w1/c4; GAE fp32 43.4 -> 33.3 us, V-trace 50.1 -> 43.9). Off
# the grid (probes/..._few_rows_more.txt), GAE / discounted returns, the best of these three:
# 4x262144 29.0 / 23.4 us against 37.8 / 34.7, 16x262144 55.0 / 36.5 against 95.4 / 82.1,
# 8x1048576 114.9 / 81.1 against 160.1 / 134.9 (the heuristic's 16-row spans there); 8x16384
# lost (21.8 vs 7.3).
_SPANNED_TIME_MAJOR_FEW_ROWS = (("chunked", 8, 32, 1, 8), ("chunked", 8, 32, 1, 16),
                                ("chunked", 8, 64, 1, 4))
_FEW_ROWS_RANGE, _FEW_ROWS_MIN_STEPS = (2, 31), 1 << 18
# From 2**16 steps, spans of 4 chunks of 8x16 one-warp tiles too (64 steps a span: 1,024
# programs at 8x65536, where the tiles above make 128-256). H100, fp32, forced, 2 rounds,
# against the tuned configs (forty-fourth session, probes/2026-12-06_fortyfourth_session_tm_
# few_rows_ab.txt): 8x65536 discounted returns 11.5 us vs 12.3, GAE 13.4 vs 14.2, V-trace 15.5
# vs 15.6; 8x8 tiles in spans of 2 or 8 chunks, 8x4 and 16x8 lost there, and at 32x32768 it
# lost too (GAE 19.6 vs 16.4). The H100's retune of 8x65536 (probes/..._fortyfourth_session_
# tune_few_rows_h100.log): it won 13 of 16 buckets at x0.79-0.97 the old winner's time.
_SPANNED_TIME_MAJOR_FEW_ROWS_MID = (("chunked", 8, 16, 1, 4),)
_FEW_ROWS_MID_MIN_STEPS = 1 << 16
# Time-major tiles of one row a lane (LANE_ROWS; launch._lane_rows_kernel): a row's steps of a
# chunk in one thread and 32 rows a warp, where the tiles above hold 4 rows a thread (128 a
# warp) or spread a chunk over lanes. H200, fp32, forced, 2 rounds, against the tuned configs
# (thirty-third session, probes/2026-12-04_thirtythird_session_lane_rows_ab.txt): walks
# discounted returns 16384x512 32x16/w1 40.9 us vs 50.3, 65536x128 27.8 vs 33.6, 16384x128
# 12.4 vs 16.1; GAE 65536x128 64x8/w2 43.9 vs 51.0, 16384x128 32x16/w1 16.8 vs 18.9; V-trace
# 65536x128 32x4/w1 54.1 vs 69.3, 16384x128 64x8/w2 22.3 vs 26.1; even at 131072x256 and
# GAE / V-trace 16384x512. At 4096 rows every walk lost 1.9-3.8x (128 one-warp programs:
# discounted returns 4096x512 34.0 vs 17.8), hence _LANE_ROWS_MIN_ROWS. Chunked spans of them:
# discounted returns 4096x512 32x8/w1/c8 16.2 vs 17.8; GAE 1024x8192 77.6 vs 81.4, V-trace
# 97.6 vs 101.3; lost at 4096x2048 (57.3 vs 55.6, 79.8 vs 71.0). Against the DB retuned with
# them (probes/..._thirtythird_session_lane_rows_more.txt): 32x16/w1/c8 discounted returns
# 1024x8192 49.2 vs 53.5, 4096x2048 53.3 vs 54.3 (GAE, V-trace: 83-121 vs 71-97); 64x8/w2/c8,
# 32x4/w1/c16, 128x8/w4 and 64x16/w2 walks never ahead by more than 1%.
# Thirty-sixth session, time_major_probe.py (results/probes/2026-12-05_thirtysixth_session_
# tm_probe.txt): the probe's walk of 32-step chunks, 32x32/w1, ran the bare recurrence 16384x512
# in 34.8 us and 16384x128 in 10.9 against the tuned 32x16/w1 walk's 42.7 and 12.4; hence the
# 32-step walk and spans of 32-step chunks. Retuned (probes/..._thirtysixth_session_time_major_
# retune.log): 32x32/w1 walks won 14 of the 256 time-major buckets, the estimators of one or two
# inputs a step (linear_scan 16384x512 46.2 -> 33.9 us, discounted returns 41.0 -> 36.7);
# GAE, lambda-returns, V-trace and Retrace kept their tiles; no 32-step span won.
_LANE_ROWS_WALKS = (("row_block", 32, 4, 1, None), ("row_block", 32, 8, 1, None),
                    ("row_block", 32, 16, 1, None), ("row_block", 32, 32, 1, None),
                    ("row_block", 64, 8, 2, None))
_LANE_ROWS_SPANNED = (("chunked", 32, 8, 1, 8), ("chunked", 32, 16, 1, 4),
                      ("chunked", 32, 16, 1, 8), ("chunked", 32, 32, 1, 2),
                      ("chunked", 32, 32, 1, 4))
_LANE_ROWS_MIN_ROWS = 8192
# Tiles measured only with the two-level backward scan: one warp a row, 8-32 steps a thread.
# With triton's reverse scan a wide row wants 4-8 warps (1x512/w4), whose lanes it moves twice.
# 1x1024/w1 (8 parts) is not yet measured: registers (sm_90, ptxas of triton 3.9) 178 for
# discounted returns, no spills; V-trace 255 and 280 bytes of spills (1x512/w1: 162 GAE, 191
# V-trace; 1024x8192 winners: λ-returns and V-trace 1x512/w1, discounted returns 1x256/w1).
# Look-back spans of one warp a row (fourteenth session): the chunked 1x512/w1/2l's tile without
# its second read; 1x512/w1/2l wins 10 buckets (1x1048576: discounted returns 12.8 us vs
# chunked 13.8, GAE 14.9 vs 16.1, Retrace 16.0 vs 18.1), 1x1024/w1/2l none.
# 256 steps a warp (sixteenth session, not yet measured on the GPU): the 512-step fix-up holds
# two chunks (it prefetches) and takes, per ptxas of triton 3.6 (benchmarks/kernel_resources.py),
# 194 registers for GAE and 255 plus 148 bytes of spills for V-trace (the 1x1048576 V-trace
# winner, 10 and 8 warps an SM); 1x256/w1/2l spans take 90 and 149, no spills.
_TWO_LEVEL_ONLY = (("row_block", 1, 256, 1, None), ("row_block", 1, 512, 1, None),
                   ("row_block", 1, 1024, 1, None), ("chunked", 1, 512, 1, 1),
                   ("lookback", 1, 512, 1, 1), ("lookback", 1, 1024, 1, 1),
                   ("chunked", 1, 256, 1, 2), ("lookback", 1, 256, 1, 1))
_SPANNED_MAX_ROW_PROGRAMS = 512  # more row programs than this already fill the GPU
# A look-back span folds the nearest 8 spans, then walks back 64-256 at a time until a reset:
# in a row with no episode end and no decay (γ = λ = 1) it walks to span 0. H200, fp32, such
# rows (compare_configs.py --no-resets, seventeenth session), tuned look-back vs chunked
# 1x512/w1/c1/2l: GAE 1x1048576 (1x256/w1: 4096 spans) 59.3 vs 14.5 us, 8x262144 (1024 spans)
# 39.7 vs 23.6; discounted returns 1x1048576 51.9 vs 10.7; 32x32768 (128 spans) 8.3, as with
# resets. So a look-back config wins a bucket only where every call of it (up to twice its
# steps) has at most 256 spans, two steps back at most (within_lookback_limit holds older DBs'
# configs to it at run time).
LOOKBACK_MAX_SPANS = 256
# Beyond it, a walk also stops where the composed a is an exact 0: in float32 a product of
# factors at most β < 1 is, ~150·ln 2 / -ln β steps back (below 2**-150), plus one span for
# rounding (walk_decay_limit). Look-back beyond the limit beat chunked only where the
# walk ends inside the first window the kernel folds (8 spans, scan._fold_published). H200, fp32,
# no episode ends, γ = D, λ = 1, GAE 1x1048576 look-back 1x512/w1/2l vs the tuned chunked config
# (eighteenth session, compare_configs.py --decay): D = 0.95 (~2k steps, 4 spans) 9.1 vs 12.3 us,
# 0.99 (10k steps) 12.9 vs 12.2, 1 27.0 vs 12.3; discounted returns 6.8 vs 9.6 at 0.95. So the
# tuner measures them too and keeps the faster ones apart (bounded_walk), for calls whose scalar
# coefficients bound the walk so (bounded_walk_config); 8x262144 gained nothing even at 0.95.
# They run too where the call's own rows stay within the limit though the bucket's longest do
# not: the tuner's 8x65536 (256 spans of 256 steps; bucket to 131071 steps) has them 0.6-1.8 us
# faster than its winner (twenty-first session's DB: GAE 6.5 vs 7.6, V-trace 7.3 vs 9.2).
LOOKBACK_FIRST_WINDOW = 8
# Past the first window a walk goes on in windows of 64-256 spans (launch._LOOKBACK_WINDOW), and
# what it costs is a step, not a slope: GAE 1x1048576 look-back 1x512/w1/2l on rows without
# episode ends (eighteenth session) took 9.1 us at D = 0.95 (4 spans), 12.9 at 0.99 (20 spans),
# 12.8 at 0.999 (~200 spans), 27.0 at 1, chunked 12.2-12.4 throughout; discounted returns 6.8 /
# 10.7 / 10.6 / 26.2 vs 9.6-9.8; 1x256/w1/2l 17.1 at 0.99. So a bounded_walk config may also
# run for walks that end within the first window and the narrowest wide one (SECOND_REACH spans)
# where the tuner found its time on such rows, at the largest decay that allows, within
# tune.sweep.WORST_MARGIN of the winner's (the entry's walk_spans): those calls without episode
# ends pay at most that; with them (the grid's data) they run 25-35% faster (1x1048576).
LOOKBACK_SECOND_REACH = LOOKBACK_FIRST_WINDOW + 64
WALK_REACHES = (LOOKBACK_FIRST_WINDOW, LOOKBACK_SECOND_REACH)
_WALK_NEVER_BOUNDED = ("episodic_cumsum", "linear_scan")
# The estimators whose time-major tiles honour SCALAR_LOADS (launch.py); the tuner measures
# the 16x64/w8 tiles of their time-major buckets twice, with Triton's vectors (N a multiple of
# 16) and with loads of one value (H100, forced, fiftieth session, 16x64/w8 discounted returns
# / GAE: 1504x608 bf16 20.2 / 22.2 us vectors, 14.4 / 16.9 scalar; fp32 x0.71-1.00).
SCALAR_LOADS_ESTIMATORS = ("discounted_returns", "gae", "lambda_returns")
# (BLOCK_N, BLOCK_T, num_warps): the tile whose vectors spread a chunk over lanes and warps,
# measured with scalar loads by the tuner, given them by the heuristic, never told ALIGN_N
SCALAR_LOADS_TILE = (16, 64, 8)


def honoured(config: dict, estimator: str) -> dict:
    """``config`` without the flags the launcher ignores for ``estimator`` (two-level and its
    group for the forward scans, ``SCALAR_LOADS`` outside ``SCALAR_LOADS_ESTIMATORS``): the
    form the tuner times and stores, so that a config and its twin are one label."""
    drop = set()
    if estimator not in BACKWARD:
        drop |= {"TWO_LEVEL", "GROUP"}
    if estimator not in SCALAR_LOADS_ESTIMATORS:
        drop.add("SCALAR_LOADS")
    return {k: v for k, v in config.items() if k not in drop}


_UNDERFLOW_NATS = 150 * math.log(2)
# Two-level row-block tiles also measured under a register cap (maxnreg). Uncapped, discounted
# returns' 2x128/w2/2l takes 47 registers: 20 blocks an SM, 62.5% occupancy, DRAM 59% busy (ncu,
# H200, 65536x128); capped at 40: 32.0 -> 28.2 us. 1x128/w1/2l at 32: GAE 16384x128 13.1 -> 12.3,
# Retrace 65536x128 52.9 -> 48.9. Tighter caps spill (V-trace 131072x256 2x128/w2/2l at 32:
# 870 us vs 199), and other row-block tiles did not gain (1x512/w4, 1x256/w1/2l: 0-80% slower).
# Look-back spans of 1x256/w1/2l take 72 (discounted) / 96 (GAE) / 128 (V-trace) registers
# (benchmarks/kernel_resources.py, as launched), so 28 / 21 / 16 one-warp programs fit an SM,
# and they wait on their predecessors' summaries; at 64 all 32 fit (twenty-seventh session,
# benchmarks/results/probes/*_regcap_ab.txt, H200): discounted 1x1048576 9.03 -> 7.50 us,
# 8x262144 14.90 -> 14.25; GAE 1x1048576 11.70 -> 11.05, 8x262144 21.22 -> 18.88; V-trace
# spills and loses (8x262144 27.3 -> 28.2). At 48 all lost. Retrace won too (twenty-eighth
# session: 8x262144 24.1 -> 20.9). V-trace's span at 96 spills nothing (twenty-ninth session,
# forced, 64 / 72 / 80 / 96 / 112 / uncapped: 1x1048576 15.84 / 15.79 / 14.47 / 13.86 / 14.31 /
# 14.24 us, 8x262144 28.50 / 27.10 / 25.33 / 26.10 / 27.92 / 27.60), so V-trace's twin is
# capped at 96, the others' at 64. V-trace's chunked 2x128/w2 tile (the DB's at 8x262144) takes
# 70 registers in its fix-up, 14 two-warp blocks an SM, so its 2,048 programs there take 1.11
# waves; at 64 (8 bytes of spill) 16 blocks, 0.97 waves (kernel_resources.py). Forced, 5 rounds
# (thirtieth session, `device_run.sh regcap-ab`): 8x262144 25.02 -> 23.85 us (r72 25.05);
# 8x65536 10.43 -> 10.63, where look-back (8.50) wins anyway.
# Keys: (strategy, BLOCK_N, BLOCK_T, num_warps, SPLIT, GROUP).
_REGISTER_CAPS = {("row_block", 2, 128, 2, 1, 4): 40, ("row_block", 1, 128, 1, 1, 4): 32,
                  ("lookback", 1, 256, 1, 1, 4): 64}
_REGISTER_CAPS_BY_ESTIMATOR = {"vtrace": {("lookback", 1, 256, 1, 1, 4): 96,
                                          ("chunked", 2, 128, 2, 1, 4): 64}}
# 16-bit inputs: the split tile 4x256/w4/sp4 in groups of 8 at 64 (twenty-ninth session, bf16,
# 1024x8192, forced, `device_run.sh bf16cap-ab`): Retrace 35.55 -> 31.75 us (floor 25.6), and
# in the retune GAE 34.7 -> 31.0; uncapped they take 76 (GAE) and 92 (Retrace) registers, 24 and
# 20 warps an SM, 32 at 64 (kernel_resources.py). V-trace's 117 spill 140 bytes at 64 and lost
# (41.62 -> 62.85; 41.92 at 112); discounted and lambda-returns take 56 and 64 already.
_REGISTER_CAPS_16BIT = {est: {("row_block", 4, 256, 4, 4, 8): 64} for est in ("gae", "retrace")}
# Forward scans (eligibility traces, episodic sums, linear_scan: no two-level scan) measure the
# plain look-back span 1x256/w1 at 64 too: it takes 72 registers, 28 one-warp programs an SM
# (8x262144's 8,192 programs in 2.22 waves), at 64 none spilled and 32 (1.94 waves)
# (kernel_resources.py, triton 3.6). Forced, 5 rounds (thirty-first session, H200, fp32):
# eligibility traces 1x1048576 9.23 -> 8.29 us, 8x262144 15.60 -> 14.58; episodic sums 9.19 ->
# 8.31, 15.50 -> 14.78; 32x32768 and 8x65536 even (+0.04 to +0.12). Their 16 long buckets
# retuned with it: picked in 7, and the grid's cells moved -0.2 to +0.6 us (noise: neutral).
_FORWARD_LOOKBACK_CAPS = {("lookback", 1, 256, 1, 1, 4): 64}

# Two-level tiles of groups of 8 steps a thread, for 16-bit inputs: a bf16 group of 4 loads 8
# bytes a thread with the same instructions and warps as fp32's 16, so bf16 ran at x0.83-0.88
# the fp32 time for x0.58-0.65 the bytes. H200, bf16 + bool, groups of 8 vs 4 (kernel_ab.py):
# discounted returns 65536x128 4x128/w2 21.8 us (best of 4: 26.0), 131072x256 2x256/w2 74.2
# (94.7); GAE 131072x256 1x256/w1 113.8 (130.4); V-trace 65536x128 4x128/w2 40.3 (45.4). fp32
# lost with them (discounted returns 65536x128 2x128/w2 33.2 vs 27.9).
# Groups of 16 (32 bytes of bf16 a thread; sm_90 builds take 146-241 registers against g8's
# 88-157): forced against the DB's choice on the big bf16 cells (fifteenth session,
# `device_run.sh group16-ab`), only the small tiles won, and only for discounted returns:
# 65536x128 4x128/w1/g16 16.9 us vs 21.6 (floor 13.7), 8x128/w2/g16 17.6; GAE 33.0 vs 31.1,
# V-trace 46.1 vs 40.6; wider g16 tiles lost everywhere (1x512/w1 discounted 1024x8192 28.2 vs
# 20.6; 4x512/w4/sp4 22.2).
GROUPS = (4, 8, 16)
SPLITS = (1, 2, 4, 8, 16, 32)
# Two-level row blocks that spread each row over SPLIT warps (BN = SPLIT tile rows, one input
# row a program), for rows too few to fill the GPU one warp a row. H200, fp32, forced configs
# (compare_configs.py, twelfth session, the exchange by a scan across warps for SPLIT > 2),
# against the eleventh session's best: discounted returns 1024x8192 4x256/w4/sp4 27.4 us vs
# 31.2 (1x1024/w1/2l), 512x4096 8x256/w8/sp8 8.3 vs 11.6, 256x8192 16x256/w16/sp16 8.8 vs 12.3,
# 128x16384 9.9 vs 13.0 (8x1024/w8/sp8); V-trace 1024x8192 4x256/w4/sp4 53.3 vs 55.5
# (2x128/w2/sp2), 128x16384 16x256/w16/sp16 18.7 vs 24.1; GAE 256x8192 8x256/w8/sp8 12.6 vs
# 15.1; Retrace 1024x8192 2x128/w2/sp2 52.9 vs 51.9 (1x512/w4). 2x512/w2, 4x512/w4, 4x1024/w4
# and 8x512/w8 never came first there. Where a warp a row fills the GPU they lose. 8x128/w8,
# 16x128/w16 and 32x256/w32 (more warps a row for 128-512 rows) are the tuner's to judge.
_SPLIT_ROWS = ((2, 128, 2, 2), (4, 256, 4, 4), (8, 128, 8, 8), (8, 256, 8, 8),
               (8, 1024, 8, 8), (16, 128, 16, 16), (16, 256, 16, 16), (16, 512, 16, 16),
               (32, 256, 32, 32))                               # (BN, BT, warps, SPLIT)
# Forward scans (eligibility traces, episodic sums): the same spread over warps with the plain
# scan (the two-level one is backward only); 128 steps a warp is one warp's load of 4 steps a
# lane, so each tile row stays on its own warp. H200, fp32, forced (thirteenth session):
# eligibility traces 128x16384 16x128/w16/sp16 10.2 us vs 11.4 (1x2048/w8), 256x8192 9.3 vs
# 9.2; no gain at 512x4096 or 1024x8192. They win 15 buckets (fp32 and bf16, 128-1024 rows).
# 32x128/w32 and 16x512/w16 as for backward scans, where at 128x16384 they come within 3% of
# the winner or win (discounted returns 32x256/w32 9.96 us vs 9.69, lambda-returns 16x512/w16
# 11.6 vs 12.2); eligibility traces and episodic sums there: 10.2-10.7 us against a floor of 5.9
# with 16 warps at most (twenty-first session's DB; unmeasured as forward candidates yet).
# A split tile whose one walk covers a row (bt * (SPLIT - 1) < T <= bt * SPLIT): 64x512 V-trace
# 4x128/w4/sp4 3.25 us [3.25-3.26] against the DB's 1x512/w8, 3.38 [3.02-3.39] and bimodal
# (twenty-ninth session, forced, 7 rounds; once: Retrace 3.23 vs 3.05, GAE 2.60 vs 2.66).
_SPLIT_ROWS_ONE_WALK = ((4, 128, 4, 4),)
_SPLIT_ROWS_FORWARD = ((4, 128, 4, 4), (8, 128, 8, 8), (16, 128, 16, 16), (8, 256, 8, 8),
                       (16, 256, 16, 16), (16, 512, 16, 16), (32, 128, 32, 32))
_SPLIT_ROWS_RANGE = (64, 2048)   # fewer rows: spans (chunked) win; more fill the GPU already
_GROUP8_16BIT = (("row_block", 2, 128, 1, None), ("row_block", 4, 128, 2, None),
                 ("row_block", 2, 256, 2, None), ("row_block", 1, 256, 1, None),
                 ("row_block", 1, 512, 1, None), ("row_block", 1, 1024, 1, None),
                 ("chunked", 2, 128, 1, 4), ("chunked", 1, 512, 1, 1))
_GROUP16_16BIT = (("row_block", 4, 128, 1, None), ("row_block", 8, 128, 2, None))


def next_pow2(n: int) -> int:
    """Smallest power of two >= n (1 for n <= 1)."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _is_pow2(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 1 and n & (n - 1) == 0


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# Time-last rows of odd length (no load takes two steps) that a config would give the two-level
# tile split over 4 warps (4x256/w4/sp4, any GROUP or register cap: the heuristic's rule for
# 1024+ rows, and DB buckets) run as 1x512/w4. H100, 2 rounds, the heuristic's tile (its groups
# shrunk to 1 by the launcher) against 1x512/w4, GAE / V-trace / bf16 discounted returns, fp32
# and bf16: 15 of 15 faster, x0.66-0.89 (1500x4097 GAE fp32 79.1 -> 56.9 us, 2000x2049 V-trace
# fp32 91.2 -> 60.2, 1024x8191 V-trace bf16 108.7 -> 96.6); fp32 discounted returns takes
# 1x512/w4 there already. The split over 8 warps (8x128/w8/sp8, 256-1023 rows) keeps its tile:
# 1x512/w4 won at 300x2051 (x0.88-0.94) and 400x4095 (5 of 6) but lost at 264x3001
# (x1.11-1.37). benchmarks/results/probes/2026-12-07_fifty-seventh_session_group_ab_h100.txt.
# Rows of even length with an odd row stride (x[:, :T] of rows of T + 1) too, the same two
# kernels as at odd T (ptxas: 4x256/w4/sp4 on launch._ODD_STRIDE_KERNEL 154 registers, 1x512/w4
# 64). H200, rows of T + 1, 2 rounds: GAE 1500x4096 64.30 -> 46.12 us, 1024x8192 88.62 -> 63.62,
# V-trace 92.26 -> 62.93, 119.26 -> 84.61 (probes/2026-12-07_fifty-eighth_session_odd_stride_
# h200.txt).
# Two-level tiles of 1024-step chunks too (the H100 DB's 1x1024/w1/2l at 4096x2048 and bf16
# GAE 1024x8192): their groups keep 4 steps there (at most 8 parts a thread,
# launch._aligned_group) with loads of one value each, and spill (ptxas, triton 3.6, sm_90,
# 4096x2048 in rows of 2049: 255 registers and 216-820 bytes of spill stores for discounted
# returns, GAE, lambda-returns, against 153-255 and none aligned). H100, bf16 GAE 1024x8192 in
# rows of 8193, 2 rounds: 268.5 us against 53.3 for 1x512/w4 (which also beat or tied the
# tuned config at 16 of 16 cells of 300-4000 rows x 1024-8192 steps there; fifty-ninth
# session, probes/2026-12-07_fifty-ninth_session_stride_ab_h100.txt). And every two-level tile
# from 1024 rows x 1024 steps: there 1x512/w4 ran within 1% of the tuned config or faster at
# all 12 odd-stride cells of 1024-4000 rows (the tuned 16x128/w16/sp16 of fp32 GAE 1024x8192
# 96.41 -> 66.17 us, 2x128/w2/2l at 4000x1024 x0.78-0.98, same file) and the fifty-seventh
# session's odd-T ones (1500x4097, 2000x2049, 1024x8191: x0.66-1.00); below 1024 rows it lost
# to split tiles (256x4097 x1.01-1.27, 128x16383 x1.9-2.8, 264x3001 x1.11-1.37).
_ODD_ROWS_MANY = 1024                            # rows and steps from which every tile swaps
_ODD_ROWS_SPLIT_TILE = (4, 256, 4, 4)            # BLOCK_N, BLOCK_T, num_warps, SPLIT
_ODD_ROWS_CONFIG = {"strategy": "row_block", "BLOCK_N": 1, "BLOCK_T": 512, "num_warps": 4,
                    "num_stages": 1}
# Look-back spans at odd alignment scan in one level, without a register cap: what remains of
# a two-level look-back config is these keys. H100, fp32, 2 rounds, forced (sixtieth session,
# probes/2026-12-07_sixtieth_session_odd_tiles_ab_h100.txt): 22 of 22 one-level spans faster
# than their two-level selves at odd T and in rows of T + 1, x0.48-0.88 (GAE 8x262143
# 1x512/w1 52.56 -> 30.59 us, 1x256/w1 37.68 -> 30.88; 32x32767 1x256/w1 19.58 -> 17.28, its
# capped two-level 17.55; discounted returns 8x262144 in rows of 262145 48.70 -> 19.67), where
# aligned rows keep two levels (GAE 8x65536 1x256/w1 8.40 us two-level, 9.07 one).
_ODD_LOOKBACK_KEYS = ("strategy", "BLOCK_N", "BLOCK_T", "num_warps", "num_stages",
                      "CHUNKS_PER_SPAN")


def for_odd_rows(config: Dict, N: int, T: int) -> Dict:
    """``config`` for N time-last rows of T steps whose length or a row stride is odd (the
    launcher's groups of one step): 1x512/w4 where it names a two-level row-block tile split
    over 4 warps (``_ODD_ROWS_SPLIT_TILE``), of 1024-step chunks, or any from 1024 rows x 1024
    steps (``_ODD_ROWS_MANY``); a two-level look-back tile's one-level self
    (``_ODD_LOOKBACK_KEYS``); any other two-level tile without its register cap; else
    ``config``."""
    if not config.get("TWO_LEVEL"):
        return config
    strategy = config.get("strategy", "row_block")
    if strategy == "lookback":
        return {k: v for k, v in config.items() if k in _ODD_LOOKBACK_KEYS}
    if strategy == "row_block" and (
            config["BLOCK_T"] >= 1024 or min(N, T) >= _ODD_ROWS_MANY
            or (config["BLOCK_N"], config["BLOCK_T"], config.get("num_warps", 4),
                config.get("SPLIT", 1)) == _ODD_ROWS_SPLIT_TILE):
        return _ODD_ROWS_CONFIG
    if "maxnreg" in config:
        # a cap tuned on the aligned kernel spills at odd alignment (ptxas, triton 3.6: 18 of
        # the DBs' capped two-level tiles, 16-140 bytes, fifty-ninth session, probes/2026-12-07_
        # fifty-ninth_session_odd_alignment_survey.txt). H100, fp32, forced, 2 rounds (sixtieth
        # session, ..._sixtieth_session_odd_tiles_ab_h100.txt), uncapped against capped at odd
        # T: V-trace 8x262143 chunked 2x128/w2/c4 45.77 us vs 56.54, discounted returns
        # 4096x127 2x128/w2 6.83 vs 7.87, λ-returns 131072x255 1x128/w1 174.83 vs 269.88.
        return {k: v for k, v in config.items() if k != "maxnreg"}
    return config


def two_level_fits(config: Dict) -> bool:
    """Whether a tile can scan in two levels: groups of GROUP (4, 8 or 16) steps, one a thread, at
    most 32 of them a row on one warp's lanes, at most 8 such parts of a row in each thread's
    registers (up to 1024 steps), every row inside one warp. Look-back spans too since they fold
    published summaries (fourteenth session); with the chained look-back before, GAE 1x1048576
    lookback 2x128/w2 took 72.2 us two-level vs 58.8."""
    bn, bt, warps = config["BLOCK_N"], config["BLOCK_T"], config.get("num_warps", 4)
    group = config.get("GROUP", 4)
    return group <= bt <= 1024 and bn * min(bt // group, 32) >= 32 * warps


def validate(config) -> Dict:
    """The config normalised (launcher defaults filled in), or ``ValueError`` saying what is
    wrong. Checks the structural rules only; whether it fits a shape is the tuner's business."""
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
    out = {"strategy": strategy, "BLOCK_N": bn, "BLOCK_T": bt, "num_warps": warps,
           "num_stages": stages}
    if strategy in SPANNED:
        cps = config.get("CHUNKS_PER_SPAN")
        if not isinstance(cps, int) or isinstance(cps, bool) or cps < 1:
            raise ValueError(f"{strategy} needs CHUNKS_PER_SPAN >= 1, got {cps!r}")
        if strategy == "lookback" and cps != 1:
            raise ValueError(f"lookback spans are one chunk (CHUNKS_PER_SPAN=1), got {cps!r}: "
                             "a program keeps its chunk in registers while it looks back")
        out["CHUNKS_PER_SPAN"] = cps
    two = config.get("TWO_LEVEL", False)
    if two not in (True, False, 0, 1):
        raise ValueError(f"TWO_LEVEL={two!r}; expected true or false")
    group = config.get("GROUP", 4)
    if group not in GROUPS or isinstance(group, bool) or (group != 4 and not two):
        raise ValueError(f"GROUP={group!r}; expected one of {GROUPS}, 8 and 16 only with "
                         f"TWO_LEVEL")
    if group != 4:
        out["GROUP"] = group
    if two:
        if not two_level_fits(out):
            raise ValueError(f"TWO_LEVEL needs GROUP to 1024 steps a row, every row inside one "
                             f"warp (BLOCK_N*min(BLOCK_T/GROUP, 32) >= 32*num_warps); "
                             f"got {label(out)}")
        out["TWO_LEVEL"] = True
    split = config.get("SPLIT", 1)
    if split not in SPLITS or isinstance(split, bool) or (split != 1 and not (
            strategy == "row_block" and bn % split == 0)):
        raise ValueError(f"SPLIT={split!r}; expected one of {SPLITS}, above 1 only for a "
                         f"row block whose BLOCK_N it divides")
    if split != 1:
        out["SPLIT"] = split
    lane_rows = config.get("LANE_ROWS", False)
    if lane_rows not in (True, False, 0, 1):
        raise ValueError(f"LANE_ROWS={lane_rows!r}; expected true or false")
    if lane_rows:
        if two or split != 1 or bn < 32 * warps:
            raise ValueError(f"LANE_ROWS (one row a lane) needs BLOCK_N >= 32*num_warps, no "
                             f"TWO_LEVEL and no SPLIT; got {label(out)}")
        out["LANE_ROWS"] = True
    scalar = config.get("SCALAR_LOADS", False)
    if scalar not in (True, False, 0, 1):
        raise ValueError(f"SCALAR_LOADS={scalar!r}; expected true or false")
    if scalar:
        out["SCALAR_LOADS"] = True
    regs = config.get("maxnreg")
    if regs is not None:
        if regs not in MAXNREG or isinstance(regs, bool):
            raise ValueError(f"maxnreg={regs!r}; expected one of {MAXNREG} (or none)")
        out["maxnreg"] = regs
    return out


def within_lookback_limit(config: Dict, T: int) -> Dict:
    """``config`` as ``launch()`` runs a tuned (not forced) one on rows of ``T`` steps: a
    look-back config whose rows would make more than ``LOOKBACK_MAX_SPANS`` spans runs as
    chunked spans of one chunk of the same tile (a row without resets would walk back over
    all of them)."""
    if config.get("strategy") != "lookback" or spans_within_limit(config, T):
        return config
    return dict(config, strategy="chunked", CHUNKS_PER_SPAN=1)


def beyond_lookback_limit(config: Dict, T: int) -> bool:
    """Whether ``config`` is a look-back config that may make more than ``LOOKBACK_MAX_SPANS``
    spans a row on calls of ``T``'s bucket (up to twice its steps): the tuner measures such
    candidates but keeps them out of the winner's place (an entry's ``bounded_walk``)."""
    return (config.get("strategy") == "lookback"
            and 2 * _cdiv(T, config["BLOCK_T"]) > LOOKBACK_MAX_SPANS)


def walk_can_be_bounded(estimator: str) -> bool:
    """Whether a scalar coefficient can bound ``estimator``'s look-back walks (not episodic
    sums, whose a is 1, nor linear_scan's per-step a)."""
    return estimator not in _WALK_NEVER_BOUNDED


def walk_fits_first_window(config: Dict, decay: Optional[float]) -> bool:
    """Whether a look-back walk of ``config``'s spans ends inside the first window it folds on
    any row whose every per-step factor a has ``|a| <= decay``, episode ends or not: the
    composition of the spans walked is then an exact float32 0 within ``LOOKBACK_FIRST_WINDOW``
    spans. ``decay`` None (unknown: per-step γ or λ tensors) or NaN: never."""
    return walk_ends_within(config, decay, LOOKBACK_FIRST_WINDOW)


def walk_ends_within(config: Dict, decay: Optional[float], spans: int) -> bool:
    """:func:`walk_fits_first_window` for a walk of at most ``spans`` spans."""
    return decay is not None and decay <= walk_decay_limit(config, spans)


def walk_decay_limit(config: Dict, spans: int = LOOKBACK_FIRST_WINDOW) -> float:
    """The largest per-step ``|a|`` with which ``config``'s look-back walks end within
    ``spans`` spans (by default the first window): its product over all but the last of them
    is at most 2**-150, below which a float32 product rounds to an exact 0; rounding leaves
    their composition at most the smallest subnormal, 2**-149, and the last span's product (at
    most 2**(-150 / (spans - 1)) < 1/2 for both reaches) makes that an exact 0
    (``tests/test_tuning.py``). Until the thirty-first session the slack was two spans: at
    256-step spans that kept γλ = 0.99 · 0.95 = 0.9405 (a common GAE setting; the grid's) just
    over the first window's limit (0.9345; now 0.9436). Only the time depends on it: a walk
    that has not ended goes on to the next window."""
    return math.exp(-_UNDERFLOW_NATS / ((spans - 1) * config["BLOCK_T"]))


def bounded_walk_config(bounded: Sequence[Tuple[Dict, int]], decay: Optional[float],
                        T: int) -> Optional[Dict]:
    """The first of ``bounded`` (a DB entry's ``(look-back config, walk_spans)`` pairs whose
    configs may pass the span limit in its bucket, fastest first) that may run on rows of ``T``
    steps, else None: one whose rows make at most ``LOOKBACK_MAX_SPANS`` spans (the limit every
    look-back config runs under: the bucket's longer rows would pass it, the call's do not) or
    whose walk ``decay`` ends within its ``walk_spans`` (``WALK_REACHES``)."""
    for config, spans in bounded:
        if spans_within_limit(config, T) or walk_ends_within(config, decay, spans):
            return config
    return None


def spans_within_limit(config: Dict, T: int) -> bool:
    """Whether rows of ``T`` steps make at most ``LOOKBACK_MAX_SPANS`` spans of ``config``'s."""
    return _cdiv(T, config["BLOCK_T"]) <= LOOKBACK_MAX_SPANS


def label(config: Dict) -> str:
    """A short stable name: ``row_block/2x128/w2/s1``, ``chunked/1x256/w2/s1/c8/2l/g8/r32``,
    ``row_block/2x1024/w2/s1/2l/sp2`` (tile rows x steps, warps, stages, chunks per span,
    two-level scan, its group size when not 4, tile rows a row when not 1, one row a lane,
    scalar loads, register cap)."""
    out = (f"{config.get('strategy', 'row_block')}/{config['BLOCK_N']}x{config['BLOCK_T']}"
           f"/w{config.get('num_warps', 4)}/s{config.get('num_stages', 1)}")
    if config.get("strategy") in SPANNED:
        out += f"/c{config['CHUNKS_PER_SPAN']}"
    if config.get("TWO_LEVEL"):
        out += "/2l"
    if config.get("GROUP", 4) != 4:
        out += f"/g{config['GROUP']}"
    if config.get("SPLIT", 1) != 1:
        out += f"/sp{config['SPLIT']}"
    if config.get("LANE_ROWS"):
        out += "/lr"
    if config.get("SCALAR_LOADS"):
        out += "/sl"
    if config.get("maxnreg"):
        out += f"/r{config['maxnreg']}"
    return out


def _row_block(N: int, T: int, layout: str) -> List[Dict]:
    np2, tp = next_pow2(N), next_pow2(T)
    tiles = _ROW_BLOCK_TIME_MAJOR if layout == "time_major" else _ROW_BLOCK
    out, seen = [], set()
    for bn, bt, warps in tiles:
        c = {"strategy": "row_block", "BLOCK_N": min(bn, np2), "BLOCK_T": min(bt, tp),
             "num_warps": warps, "num_stages": 1}
        if label(c) not in seen:                 # small N or T: tiles collapse onto each other
            seen.add(label(c))
            out.append(c)
    return out


def _spanned(N: int, T: int, layout: str) -> List[Dict]:
    if layout != "time_major":
        return _fit(N, T, _SPANNED)
    few_rows = _FEW_ROWS_RANGE[0] <= N <= _FEW_ROWS_RANGE[1]
    long_spans = _SPANNED_TIME_MAJOR_FEW_ROWS if few_rows and T >= _FEW_ROWS_MIN_STEPS else ()
    mid_spans = (_SPANNED_TIME_MAJOR_FEW_ROWS_MID if few_rows and T >= _FEW_ROWS_MID_MIN_STEPS
                 else ())
    return _fit(N, T, _SPANNED_TIME_MAJOR + long_spans + mid_spans)


def _fit(N: int, T: int, tiles) -> List[Dict]:
    """(strategy, BN, BT, warps, chunks per span) tiles clamped to the shape, each once; spanned
    ones only where they make at least two spans and not too many row programs."""
    out, seen = [], set()
    for strategy, bn, bt, warps, cps in tiles:
        bn, bt = min(bn, next_pow2(N)), min(bt, next_pow2(T))
        c = {"strategy": strategy, "BLOCK_N": bn, "BLOCK_T": bt, "num_warps": warps,
             "num_stages": 1}
        if strategy in SPANNED:
            row_progs, n_chunks = _cdiv(N, bn), _cdiv(T, bt)
            if row_progs > _SPANNED_MAX_ROW_PROGRAMS or 2 * cps > n_chunks:
                continue                         # fewer than two spans: that is the row block
            c["CHUNKS_PER_SPAN"] = cps
        if label(c) not in seen:
            seen.add(label(c))
            out.append(c)
    return out


def _register_cap(estimator: str, config: Dict, dtype: str) -> Optional[int]:
    """The register cap the tuner measures a tile under as well, or None: a two-level tile of a
    backward estimator, or a forward scan's plain look-back span."""
    key = (config["strategy"], config["BLOCK_N"], config["BLOCK_T"], config["num_warps"],
           config.get("SPLIT", 1), config.get("GROUP", 4))
    if estimator not in BACKWARD:
        return _FORWARD_LOOKBACK_CAPS.get(key)
    if dtype in ("bfloat16", "float16") and key in _REGISTER_CAPS_16BIT.get(estimator, {}):
        return _REGISTER_CAPS_16BIT[estimator][key]
    return _REGISTER_CAPS_BY_ESTIMATOR.get(estimator, {}).get(key, _REGISTER_CAPS.get(key))


def candidates(estimator: str, N: int, T: int, layout: str, dtype: str) -> List[Dict]:
    """Every config the tuner measures for one call shape, in a stable order.

    Backward estimators on time-last buffers also measure the two-level scan of every tile
    that fits it, right after the tile's plain scan: neither wins everywhere (H200, fp32,
    2x128/w2: discounted returns 4096x2048 27.7 us two-level vs 34.6, GAE 56.1 vs 44.8), and
    three small two-level tiles once more under a register cap (``_register_cap``: V-trace's
    own caps on look-back spans and chunked 2x128/w2; forward scans their plain 1x256/w1
    look-back span, time-last); for 64 to 2048 rows, two-level tiles
    that spread a row over warps (``_SPLIT_ROWS``, and ``_SPLIT_ROWS_ONE_WALK`` where one walk
    covers a row); with 16-bit inputs, those split tiles in groups of 8 (one of them capped
    too) and two-level tiles of groups of 8 and 16 steps (``_GROUP8_16BIT``,
    ``_GROUP16_16BIT``). Forward
    estimators on time-last buffers of 64 to 2048 rows measure plain tiles that spread a row
    over warps (``_SPLIT_ROWS_FORWARD``). Look-back tiles that may make more spans a row than
    ``LOOKBACK_MAX_SPANS`` (``beyond_lookback_limit``) are measured too, for an entry's
    ``bounded_walk``: they never take the winner's place. For episodic sums (a is 1) and
    linear_scan (a tensor a), whose walks no scalar coefficient bounds, only those within the
    limit on the bucket's shortest rows (``T``), the calls they may run for. Time-major calls
    also measure tiles of one row a lane (``LANE_ROWS``): walks from 8192 rows, chunked spans
    wherever such a tile fits the rows; those of 2-31 rows spans of one-warp 8-row tiles, of 16
    steps from 2**16 steps, of 32 and 64 steps from 2**18 (``_SPANNED_TIME_MAJOR_FEW_ROWS*``);
    the time-major calls of ``SCALAR_LOADS_ESTIMATORS`` each 16x64/w8 tile once more with
    ``SCALAR_LOADS``."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout={layout!r}; expected one of {LAYOUTS}")
    if N < 1 or T < 1:
        raise ValueError(f"N={N}, T={T}: no kernel runs for an empty problem")
    out = []
    two_level = estimator in BACKWARD and layout == "time_last"
    spanned = _spanned(N, T, layout)
    if estimator in _WALK_NEVER_BOUNDED:
        spanned = [c for c in spanned
                   if c["strategy"] != "lookback" or spans_within_limit(c, T)]
    for c in _row_block(N, T, layout) + spanned:
        out.append(validate(c))
        if (layout == "time_major" and estimator in SCALAR_LOADS_ESTIMATORS
                and (c["BLOCK_N"], c["BLOCK_T"], c["num_warps"]) == SCALAR_LOADS_TILE):
            out.append(validate(dict(c, SCALAR_LOADS=True)))
        if two_level and two_level_fits(c):
            out.append(validate(dict(c, TWO_LEVEL=True)))
            cap = _register_cap(estimator, c, dtype)
            if cap:
                out.append(validate(dict(c, TWO_LEVEL=True, maxnreg=cap)))
        elif estimator not in BACKWARD and layout == "time_last":
            cap = _register_cap(estimator, c, dtype)
            if cap:
                out.append(validate(dict(c, maxnreg=cap)))
    if two_level:
        seen = {label(c) for c in out}
        for c in _fit(N, T, _TWO_LEVEL_ONLY):
            c = dict(c, TWO_LEVEL=True)
            if two_level_fits(c) and label(c) not in seen:
                seen.add(label(c))
                out.append(validate(c))
        if _SPLIT_ROWS_RANGE[0] <= N <= _SPLIT_ROWS_RANGE[1]:
            # at least two walks of the split row, or one walk of a tile made for such rows
            tiles = [t for t in _SPLIT_ROWS if t[1] * t[3] < T]
            tiles += [t for t in _SPLIT_ROWS_ONE_WALK if t[1] * (t[3] - 1) < T <= t[1] * t[3]]
            for bn, bt, warps, split in tiles:
                c = validate({"strategy": "row_block", "BLOCK_N": bn, "BLOCK_T": bt,
                              "num_warps": warps, "num_stages": 1, "TWO_LEVEL": True,
                              "SPLIT": split})
                seen.add(label(c))
                out.append(c)
                # 16-bit inputs: the same in groups of 8 (16-byte loads a thread), where
                # each tile row still fills its warp (H200, thirteenth session's retune:
                # bf16 discounted returns 1024x8192 4x256/w4/sp4/g8 20.5 us vs 22.9)
                if dtype in ("bfloat16", "float16") and two_level_fits(dict(c, GROUP=8)):
                    c = validate(dict(c, GROUP=8))
                    seen.add(label(c))
                    out.append(c)
                    cap = _register_cap(estimator, c, dtype)
                    if cap:
                        c = validate(dict(c, maxnreg=cap))
                        seen.add(label(c))
                        out.append(c)
        if dtype in ("bfloat16", "float16"):
            for group, tiles in ((8, _GROUP8_16BIT), (16, _GROUP16_16BIT)):
                for c in _fit(N, T, tiles):
                    c = dict(c, TWO_LEVEL=True, GROUP=group)
                    if two_level_fits(c) and label(c) not in seen:
                        seen.add(label(c))
                        out.append(validate(c))
    elif (layout == "time_last" and estimator not in BACKWARD
          and _SPLIT_ROWS_RANGE[0] <= N <= _SPLIT_ROWS_RANGE[1]):
        for bn, bt, warps, split in _SPLIT_ROWS_FORWARD:
            if bt * split < T:
                out.append(validate({"strategy": "row_block", "BLOCK_N": bn, "BLOCK_T": bt,
                                     "num_warps": warps, "num_stages": 1, "SPLIT": split}))
    if layout == "time_major":
        out += [validate(c) for c in _lane_rows(N, T)]
    return out


def _lane_rows(N: int, T: int) -> List[Dict]:
    # time-major tiles of one row a lane that still hold BLOCK_N >= 32 * num_warps rows once
    # clamped to the shape: walks from _LANE_ROWS_MIN_ROWS rows, chunked spans at any count
    tiles = (_LANE_ROWS_WALKS if N >= _LANE_ROWS_MIN_ROWS else ()) + _LANE_ROWS_SPANNED
    return [dict(c, LANE_ROWS=True) for c in _fit(N, T, tiles)
            if c["BLOCK_N"] >= 32 * c["num_warps"]]


def to_triton_config(config: Dict):
    """The same config as a ``triton.Config`` (imports triton); the strategy fields ride in
    its kwargs."""
    import triton
    c = validate(config)
    kwargs = {k: v for k, v in c.items() if k not in ("num_warps", "num_stages", "maxnreg")}
    return triton.Config(kwargs, num_warps=c["num_warps"], num_stages=c["num_stages"],
                         maxnreg=c.get("maxnreg"))
