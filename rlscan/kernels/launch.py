"""Host side of the fused scan kernel: launch a call's config (``tuning.select_config``: its
GPU's DB entry, else ``heuristic.heuristic_config``), one program per BLOCK_N rows."""
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
from .configs import for_odd_rows as _for_odd_rows
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


_MAX_SPANS = 65535   # CUDA's limit on a grid's y dimension (the spans of a row)
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
# Two-level tiles (time-last) hold groups of no more steps than the power of two dividing T
# and the row strides: a row whose length is odd or 2 mod 4 allows no 4-step load, and with
# groups of 4 Triton's coalescing pass lays the loads 1 step a thread with 4 lanes along a
# group, a layout that reaches the scan (ptxas of triton 3.6, sm_90, fp32 300x2050 / 300x2051,
# groups of 4 -> 2 / 1: GAE split over 8 warps 77 -> 64 / 109 -> 80 registers, over 16 89 -> 64
# / 108 -> 79, V-trace over 8 118 -> 90 / 128 -> 114, barriers a chunk 20 -> 6 / 20 -> 14;
# bf16's 8x256 split tile at 2052 (4 mod 8), groups of 8 -> 4: GAE 104 -> 94, V-trace 164 -> 113;
# probes/2026-12-07_fifty-seventh_session_group_alignment_registers.txt). H100, 2 rounds, the
# tuned and heuristic configs of GAE, V-trace and discounted returns at 8 lengths, shrunk vs
# configured groups: odd T fp32 x0.90 (30 timings, 4 slower: the 4-warp split tile, which odd
# rows no longer run, configs.for_odd_rows), bf16 x0.59 (30 of 30 faster); 2 mod 4 fp32 x0.82,
# bf16 x0.77 (24 of 24; GAE fp32 500x1030 10.86 -> 8.04 us; benchmarks/results/probes/
# 2026-12-07_fifty-seventh_session_group_ab_h100.txt).
_GROUP_BY_ALIGNMENT = True
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
# Two-level tiles on rows of T a multiple of 16 (so the JIT specialises T as such) whose row
# strides are odd, as a slice x[:, :T] of rows of T + 1 leaves them (groups of one step; 2 or 4
# in 512- or 1024-step chunks): the scan kernel compiled with T unspecialised, which is then
# the kernel of odd T exactly. With T specialised, on an H200, GAE fp32 4x256/w4/sp4 at 300x2048
# in rows of 2049 died of a misaligned address, and 8x128/w8/sp8 took 20.01 us against 9.77
# (1500x4096: 133.96 vs 59.71); ptxas (triton 3.6, sm_90): 1.2-1.6x the registers, 2-4x the
# barriers a chunk (GAE 4x256/w4/sp4 188 / 52 against 154 / 14). benchmarks/results/probes/
# 2026-12-07_fifty-eighth_session_odd_stride_{h200,registers}.txt. Strides of 2 mod 4 (groups of
# 2) or more compile the same either way.
_ODD_STRIDE_KERNEL = triton.jit(fused_scan_kernel.fn, do_not_specialize=("T",))
_UNSPEC_T_FOR_ODD_STRIDES = True


def _cdiv(a: int, b: int) -> int:
    # plain ints: triton.cdiv and triton.next_power_of_2 are jit (constexpr) functions, and
    # calling them from Python costs ~4 us each
    return -(-a // b)


def _np2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _pow2_dividing(*ints: int) -> int:
    """The largest power of two up to 16 that divides every one of ``ints`` (0 counts as any)."""
    g = math.gcd(*ints)
    return min(g & -g, 16) if g else 16


def _align(*ints: int) -> int:
    """The largest power of two below 16 that divides every one of ``ints`` (0 counts as any),
    for the kernel's ALIGN_T / ALIGN_N; 1 where they are all multiples of 16, which Triton's
    own specialisation already sees (the compiled kernel is then the one it was before)."""
    p2 = _pow2_dividing(*ints)
    return 1 if p2 == 16 else p2


def _aligned_group(align: int, block_t: int) -> int:
    """The most steps a thread of a two-level tile may hold for rows whose length and strides
    the power of two ``align`` divides: ``align``, but at most 8 parts of 32 groups a chunk
    (``configs.two_level_fits``), so a 1024-step chunk keeps groups of 4, a 512-step one 2."""
    return max(align, block_t // 256)


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
            # one row's stride scales no address (its row index is 0): said as 0, a multiple
            # of 16, x[:, :T] of one row of T + 1 (a language model's values) keeps the
            # groups, vector loads and kernel of a contiguous row
            sr = sr if pb.N > 1 else 0
            args += (ptr, sr, st)
            spec += (sr, st)
            row_strides.append(sr)
            time_strides.append(st)
        else:
            args.append(ptr)
    time_last = out0.stride(1) == 1
    p2_t = _pow2_dividing(pb.T, *row_strides)         # one gcd a call: ALIGN_T and GROUP
    if p2_t == 1 and time_last and _forced is None:
        cfg = _for_odd_rows(cfg, pb.N, pb.T)          # T or a row stride odd
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
    if two_level and _GROUP_BY_ALIGNMENT and p2_t < group:
        group = _aligned_group(p2_t, bt)
    kernel = _lane_rows_kernel if scalar else fused_scan_kernel
    if two_level and p2_t == 1 and not pb.T & 15 and _UNSPEC_T_FOR_ODD_STRIDES:
        kernel = _ODD_STRIDE_KERNEL                   # odd strides, T specialised otherwise
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
             int(descend), contig, split, bn, bt, 1 if p2_t == 16 else p2_t, align_n)
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
