#!/usr/bin/env bash
# The device calls of a measurement round (run from the repo root; $OUT collects the logs).
#   bash benchmarks/device_run.sh tune-bench   # retune the default grid into $OUT/tdb (~440 s),
#                                              # then rlscan-bench with that DB: fp32 time-last
#                                              # grid with the eager-loop baseline (~80 s)
#   bash benchmarks/device_run.sh bench-more   # (DB committed) fp32 time-major grid, bf16 GAE, V-trace,
#                                              # discounted, bf16 time-major (~30 s after a tune)
#   bash benchmarks/device_run.sh gpu-tests    # pytest -m gpu in 8 processes side by side
#                                              # (~150 s; one process: ~700 s). Fallback:
#                                              # gpu-tests-1 then gpu-tests-2, two calls.
#                                              # NORESET=1: first compare_configs.py
#                                              # --no-resets at γ = 1 and 0.95, tuned vs
#                                              # chunked (~40 s); VERIFY_ALSO="--property P":
#                                              # rlscan-verify beside the shards
#   bash benchmarks/device_run.sh verify       # rlscan-verify --profile thorough --jobs 14 (~470 s,
#                                              # CPU-bound; VERIFY_PROFILE=dev: ~100 s)
#   bash benchmarks/device_run.sh fixup-ab     # the fix-up's wait after its first scan (patch) vs
#                                              # shipped, forced; look-back windows (~3 min)
#   bash benchmarks/device_run.sh early-stores-ab # look-back spans storing what no carry reaches
#                                              # before they look back (patch) vs shipped (40 s)
#   bash benchmarks/device_run.sh nearest-first-ab # look-back spans waiting for their nearest
#                                              # predecessor first (patch) vs shipped (126 s)
#   bash benchmarks/device_run.sh output-reuse # do the grid's calls reuse one output block in
#                                              # its graphs; device time freed vs held (29 s)
#   bash benchmarks/device_run.sh lookback-ncu # Nsight Compute on the look-back at 8x262144 beside
#                                              # chunked and the one-pass no-carry bound (44 s)
#   bash benchmarks/device_run.sh lookback-ab  # look-back spans publishing their leaving value
#                                              # (patch) vs shipped, with and without resets
#                                              # (~2 min)
#   bash benchmarks/device_run.sh decay-walk   # look-back on rows without resets whose
#                                              # coefficients decay (γ < 1), vs tuned (~3 min)
#   bash benchmarks/device_run.sh group16-ab   # bf16 two-level tiles in groups of 16 steps a
#                                              # thread against the DB's configs (forced, ~2 min)
#   bash benchmarks/device_run.sh pdl-ab       # programmatic dependent launches on and off, long
#                                              # and mid rows, tuned and look-back (~3 min)
#   bash benchmarks/device_run.sh fill-ab      # look-back on the stream's persistent workspace
#                                              # (no fill) vs a filled one vs none (results
#                                              # wrong), forced and the stale DB's; 512x4096 at
#                                              # 4 and 8 warps a program (~3 min)
#   bash benchmarks/device_run.sh tune-mid     # rlscan-tune on the 16 cells where a retune
#                                              # stalled (twentieth session), traceback if it
#                                              # still does (~2.5 min)
#   bash benchmarks/device_run.sh regcap-ab    # register caps on the long-horizon tiles vs the
#                                              # DB's configs (~4 min)
#   bash benchmarks/device_run.sh bf16cap-ab   # register caps on the bf16 winners holding the
#                                              # most registers, forced vs the DB (~2 min)
#   bash benchmarks/device_run.sh replay-sync  # device time with each replay from an idle GPU vs
#                                              # back to back (the tuner's way) (~60 s)
#   bash benchmarks/device_run.sh walk-slack   # bounded walks at γλ = 0.9405 vs the old picks,
#                                              # without episode ends and with (~3 min)
#   bash benchmarks/device_run.sh tm-lookback  # time-major look-back spans of 128-row tiles forced
#                                              # (lost, thirty-second session), stream_floor.py --bf16,
#                                              # a short clock_probe run (~6 min)
#   bash benchmarks/device_run.sh lane-rows-ab # time-major tiles of one row a lane forced beside
#                                              # the tuned configs (thirty-third session), then
#                                              # their GPU tests (~4 min)
#   bash benchmarks/device_run.sh tm-probe     # time_major_probe.py: persistent look-back spans of
#                                              # one row a lane against the tuned linear_scan,
#                                              # whose DB now has lane-row tiles (~3 min)
#   bash benchmarks/device_run.sh group-ab     # two-level groups by T's alignment vs the configs'
#                                              # at odd / 2 mod 4 lengths, then (TESTS_S=S)
#                                              # the two-level GPU tests (~5 min)
#   bash benchmarks/device_run.sh stride-ab    # rows sliced from rows one step longer (odd
#                                              # strides): T unspecialised vs specialised, the
#                                              # split tiles vs 1x512/w4 (~4 min)
#   bash benchmarks/device_run.sh oddn-ab      # time-major odd env counts beside even ones,
#                                              # tuned/heuristic vs lane-row tiles (~3 min)
#   bash benchmarks/device_run.sh ab           # any configs forced beside the tuned one: AB_ESTS,
#                                              # AB_SHAPES, AB_CONFIGS, AB_LAYOUT, AB_DTYPE
#   bash benchmarks/device_run.sh clocks       # timings beside nvidia-smi's SM clock, back to
#                                              # back and with idle gaps (~60 s)
#   bash benchmarks/device_run.sh placement    # a cell's device time over input sets placed at
#                                              # other addresses in one process: V-trace 64x512's
#                                              # two modes a process (thirtieth session) (~1 min)
#   bash benchmarks/device_run.sh few-rows     # time-major 8x65536 and 8x262144 retuned with
#                                              # the few-row spans into the tree's DB, then
#                                              # the fp32 time-major grid (~3.5 min)
#   bash benchmarks/device_run.sh retune-buckets # RETUNE="gae:bfloat16:time_last:4096x128 ..."
#                                              # retuned unpruned into the tree's DB (6-17 s each)
#   bash benchmarks/device_run.sh compile      # torch.compile around rlscan::scan: its GPU tests,
#                                              # host cost eager / compiled / CUDA graph (~3 min?)
#   bash benchmarks/device_run.sh bench-suite  # pytest -m benchmark: the pytest-benchmark suite of
#                                              # four cells in both layouts (~1 min)
#   bash benchmarks/device_run.sh tm-grids     # the fp32 time-major grid, then the bf16 one of
#                                              # three estimators (~2 min)
#   bash benchmarks/device_run.sh off-grid-bench # the heuristic's GPU tests, then the grid of the
#                                              # off-grid shape sets with the DB (~4 min)
#   bash benchmarks/device_run.sh stand-in     # the fp32 time-last grid on a same-architecture
#                                              # GPU's DB, this GPU's own removed (~40 s)
#   bash benchmarks/device_run.sh grid-pinned  # the fp32 time-last grid (loop baseline) pinned
#                                              # to one core (CORE, default 3; ~110 s; with the
#                                              # loop baseline working again 98 cells took 120 s
#                                              # on an H100: keep BENCH_S at 200)
#   bash benchmarks/device_run.sh loop-cores   # the loop column at 4096x128 (every estimator)
#                                              # with the process pinned to each of CORES in
#                                              # turn, then host_cost.py (~2.5 min)
#   bash benchmarks/device_run.sh eager-profile # long-horizon eager calls profiled; a first launch
#                                              # as a programmatic dependent one (~4 min)
#   bash benchmarks/device_run.sh pdl-first-ab # first launches dependent vs plain, stale DB (~4 min)
#   bash benchmarks/device_run.sh probes       # long-horizon launches alone (phase_probe.py),
#                                              # host cost of a launch argument
#                                              # (launch_cost_probe.py), host_cost.py (~3 min)
#   bash benchmarks/device_run.sh sl-retune    # the time-major buckets of discounted returns, GAE,
#                                              # λ-returns at 64x512 and 4096 rows retuned (pruned
#                                              # 1.3) with the SCALAR_LOADS twin of 16x64/w8 into
#                                              # the tree's DB (fifty-first session; ran on an H100
#                                              # in the fifty-fourth: 17 s)
#   bash benchmarks/device_run.sh unaligned-tm # rlscan-bench --shapes unaligned, time-major, fp32
#                                              # and bf16, no baselines (~50 s on an H100)
#   bash benchmarks/device_run.sh leads-ab     # the fifty-fourth session's audit leads, forced:
#                                              # 512-1023 rows x 384-1023 steps time-major (8x128/
#                                              # w8), 8192-16383 rows x 128-1023 (32x16/w1 lane
#                                              # rows), time-last 128-1023 rows split 16/8 vs
#                                              # 4x256/w4/sp4, and 128-255 rows x 1024-2047; then
#                                              # the tens-of-rows GPU tests (~3 min; not yet run)
#   bash benchmarks/device_run.sh odd-tiles-ab # two-level tiles at odd alignment (fifty-ninth
#                                              # session): 512-/1024-step tiles at odd strides
#                                              # and odd T against 1x512/w4 and plain tiles, long
#                                              # horizons' spans, the register-capped tiles that
#                                              # spill there (ODD_CAPS=0: not) (410 s on an
#                                              # H100, sixtieth session; out of time after 8 of
#                                              # the 16 row-block runs: CHECK_S)
#   bash benchmarks/device_run.sh odd-groups-ab # at odd T, configured groups with contiguity 1
#                                              # said (patch) vs the shipped groups of one step
#                                              # (103 s on an H100)
#   bash benchmarks/device_run.sh odd-lookback-check # odd alignment's one-level look-back
#                                              # (tuned) vs the two-level tiles it replaced; the
#                                              # heuristic's spans vs look-back (LBH=0: not)
#                                              # off the grid (~6 min)
#   bash benchmarks/device_run.sh edge-ab      # untuned buckets just below a tuned one run its
#                                              # entry (tuned) vs the heuristic (untuned), T - 1,
#                                              # N - 1, T - T/40 (~6 min)
#   bash benchmarks/device_run.sh prefetch2-ab # two chunks of loads in flight (patch) vs one,
#                                              # forced (76 s on an H100; lost)
#   bash benchmarks/device_run.sh walks-ab     # fp32 time-major: the fifty-second session's walks
#                                              # of long rows (heuristic) against the spans and
#                                              # 16x64/w8; 8x128/w8 against 16x64/w8 at
#                                              # 1504-3000 rows below 1024 steps; GAE's split
#                                              # time-last rows against 1x512/w4 (<= 9 min; ran
#                                              # on an H100 in the fifty-third session:
#                                              # results/probes/2026-12-07_fiftythird_*)
# One mode per call: together they exceed a call's 10 minutes. VERIFY_S / BENCH_S / SHARD_S cap
# phases.
R=$PWD
rm -rf /tmp/site   # pip --target does not replace an existing package on a warm machine
python3 -m pip install -q --no-deps --no-build-isolation --target /tmp/site . >/dev/null 2>&1; rm -rf build
# DB=path: a tuning DB to use instead of the tree's (a warm machine keeps the last retune's
# in /tmp/tdb_last.json: DB=/tmp/tdb_last.json right after tune-bench)
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
# the DB file of the GPU in hand (nvidia-h200, nvidia-h100-80gb-hbm3, ...)
SLUG=$(python3 -c "import torch; from rlscan import tuning; print(tuning.gpu_slug(torch.cuda.get_device_name()))")
echo "device: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader) -> $SLUG.json"
TDB=/tmp/site/rlscan/tuning_db/$SLUG.json
if [ -n "${DB:-}" ] && [ -f "$DB" ]; then cp "$DB" $TDB; fi
cd /tmp
T0=$(date +%s)
case "${1:-verify}" in
tune-bench)
  # TUNE_S: the tune's cap (a SIGINT; default 490 s, the shipped kernel's tune took 368 s in the
  # twenty-first session); BENCH_S=0: no grid after it (a tune of more candidates wants the
  # call's whole 600 s: the grid then in its own call, DB=/tmp/tdb_last.json grid-pinned)
  # TUNE_ARGS: a part of the grid (e.g. "--dtypes float32"), merged into the tree's DB (a kernel
  # whose source changed loses its old entries: tune.db.merge). A full retune took 553 s for 400
  # of 512 buckets in the twenty-seventh session (every timed call's outputs held, r64 look-back
  # candidates): it no longer fits one call; tune in two parts, committing the first's DB.
  # After a kernel edit, TUNE_ARGS="--prune 1.3" times only what came within 1.3x of each
  # bucket's earlier winner in the tree's DB (tune/prune.py; a quarter to a half of the runs)
  # A first tune of another GPU (no DB of its own yet), pruned by the H200's rankings (the
  # H100's, thirty-ninth session: 512 buckets in 499 s, TUNE_S=560 BENCH_S=0):
  # TUNE_ARGS="--prune 1.3 --prune-from /tmp/site/rlscan/tuning_db/nvidia-h200.json"
  if [ -n "${TUNE_ARGS:-}" ]; then
    mkdir -p $OUT/tdb && if [ -f $TDB ]; then cp $TDB $OUT/tdb/; fi
  fi
  timeout -s INT ${TUNE_S:-490} python3 -m rlscan.tune.cli --out $OUT/tdb ${TUNE_ARGS:-} > $OUT/tune.log 2>&1
  grep -v "Warn\|_warn" $OUT/tune.log | tail -3
  if [ -n "${TUNE_ARGS2:-}" ]; then  # a second part merged into the same DB (cap TUNE2_S)
    timeout -s INT ${TUNE2_S:-240} python3 -m rlscan.tune.cli --out $OUT/tdb $TUNE_ARGS2 \
      > $OUT/tune2.log 2>&1
    grep -v "Warn\|_warn" $OUT/tune2.log | tail -3
  fi
  cp $OUT/tdb/$SLUG.json $TDB
  cp $OUT/tdb/$SLUG.json /tmp/tdb_last.json
  echo "tune took $(( $(date +%s) - T0 )) s"
  if [ "${BENCH_S:-80}" != 0 ]; then
    timeout ${BENCH_S:-80} python3 -m rlscan.tune.bench --baselines loop --out $OUT/b1 2>&1 | grep -v "Warn\|_warn" | tail -3
  fi
  rm -f $OUT/b1/bench.png $OUT/tdb/*.lock ;;
bench-more)
  # with the retuned DB committed: the time-major fp32 grid, bf16 GAE + discounted returns (~3 min)
  # FP32=1 first: the fp32 time-last grid with the loop baseline (~110 s on a fresh machine:
  # 100 s cut 13 cells in the eighteenth session)
  if [ -n "${FP32:-}" ]; then
    timeout ${BENCH_S:-160} python3 -m rlscan.tune.bench --baselines loop --out $OUT/b1 2>&1 | grep -v "Warn\|_warn" | tail -3
    rm -f $OUT/b1/bench.png
  fi
  timeout 120 python3 -m rlscan.tune.bench --layouts time_major --baselines "" --out $OUT/b3 2>&1 | grep -v "Warn\|_warn" | tail -3
  timeout 80 python3 -m rlscan.tune.bench --estimators gae,discounted_returns,vtrace --dtypes bfloat16 --baselines "" --out $OUT/b2 2>&1 | grep -v "Warn\|_warn" | tail -2
  # bf16 + bool flags in time-major buffers (CONTIG_ROWS, ninth session)
  timeout 80 python3 -m rlscan.tune.bench --estimators gae,discounted_returns,vtrace --dtypes bfloat16 --layouts time_major --baselines "" --out $OUT/b4 2>&1 | grep -v "Warn\|_warn" | tail -2
  rm -f $OUT/b2/bench.png $OUT/b4/bench.png ;;
gpu-tests)
  # pytest -m gpu in SHARDS processes side by side (tests/conftest.py RLSCAN_TEST_SHARD): most
  # of a GPU test is Triton compiling on the CPU, and the host has 16 cores (one process: ~700
  # s, fifteenth session; 8 shards: 152 s, the slowest shard 145 s, sixteenth session)
  S=${SHARDS:-8}
  if [ -n "${NORESET:-}" ]; then   # first, alone on the GPU: rows with no reset, gamma = D,
    # lambda = 1; the tuned config for the call's coefficients (a bounded walk at D = 0.95)
    for e in gae discounted_returns; do
      for d in 1.0 0.95; do
        (export PYTHONPATH=/tmp/site:$R/benchmarks; timeout 60 python3 $R/benchmarks/compare_configs.py \
          --no-resets --decay $d --estimator $e --shapes 1x1048576,8x262144 \
          --configs tuned,chunked:1x256:w1:c2:2l 2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/no_reset.txt)
      done
    done
  fi
  # GPU_K="expr": only the tests pytest -k selects (a rerun of the ones a change touched)
  # VERIFY_ALSO="--property P ...": rlscan-verify runs beside the shards (VERIFY_JOBS workers)
  if [ -n "${VERIFY_ALSO:-}" ]; then
    timeout -s INT -k 20 ${VERIFY_S:-220} python3 -m rlscan.verify.cli --profile thorough \
      --jobs ${VERIFY_JOBS:-4} --split-examples 200 $VERIFY_ALSO > $OUT/verify_rest.log 2>&1 &
  fi
  for i in $(seq 0 $((S - 1))); do
    (cd $R/tests && RLSCAN_TEST_SHARD=$i/$S timeout ${SHARD_S:-540} python3 -m pytest . -m gpu -q -rfEs \
      -p no:cacheprovider -o addopts="" ${GPU_K:+-k "$GPU_K"} > /tmp/gpu_shard_$i.log 2>&1) &
  done
  wait
  for i in $(seq 0 $((S - 1))); do echo "## shard $i/$S"; cat /tmp/gpu_shard_$i.log; done \
    > $OUT/gpu_tests.log
  grep -h "passed\|failed\|error" /tmp/gpu_shard_*.log | grep -v "^FAILED\|^ERROR"
  [ -f $OUT/verify_rest.log ] && grep -v "Warning\|_warn" $OUT/verify_rest.log | tail -14 ;;
gpu-tests-1|gpu-tests-2)
  # the fallback, one process in two calls: gpu-tests-1 the five largest parametrised tests,
  # gpu-tests-2 the rest (the whole suite outgrew a call: 76% in 540 s, fifteenth session)
  HEAVY="two_level_backward or chunk_edges or rows_split or two_level_groups or matches_float"
  case "$1" in gpu-tests-1) K="$HEAVY" ;; *) K="not ($HEAVY)" ;; esac
  (cd $R/tests && timeout 540 python3 -m pytest . -m gpu -v -p no:cacheprovider -o addopts="" \
    -k "$K" --durations=12 > $OUT/gpu_tests.log 2>&1)
  tail -3 $OUT/gpu_tests.log ;;
verify)
  # the thorough profile alone (~470 s with 14 workers; the dev profile: 79 runs in 102 s)
  # VERIFY_ARGS: more rlscan-verify arguments (e.g. "--property matches_reference")
  # runs of over 200 examples in parts: the longest run (V-trace's reference match, 304 s in
  # the sixteenth session) no longer bounds the call; a SIGINT at VERIFY_S prints what finished
  timeout -s INT -k 20 ${VERIFY_S:-540} python3 -m rlscan.verify.cli --profile ${VERIFY_PROFILE:-thorough} \
    --jobs 14 --split-examples 200 ${VERIFY_ARGS:-} > $OUT/verify.log 2>&1
  grep -v "Warning\|_warn" $OUT/verify.log | tail -14 ;;
probes)
  # what a launch argument costs on the host (before cutting the scan kernel's 47 + 22), then
  # where a replay's time goes
  export PYTHONPATH=/tmp/site:$R/benchmarks
  # where a long-horizon call's device time goes: each launch alone, a stream, empty launches
  timeout 150 python3 $R/benchmarks/phase_probe.py 2>&1 | grep -v "Warn\|_warn"
  timeout 120 python3 $R/benchmarks/launch_cost_probe.py 2>&1 | grep -v "Warn\|_warn"
  timeout 120 python3 $R/benchmarks/launch_cost_probe.py --constexprs 22 --counts 0,47 2>&1 | grep -v "Warn\|_warn"
  timeout 120 python3 $R/benchmarks/host_cost.py --shapes 4096x128,8x65536 2>&1 | grep -v "Warn\|_warn" ;;
eager-profile)
  # where a long-horizon eager call's time goes (eager_profile.py: loop, enqueue, full, device,
  # then a kineto trace's per-call summary), then what a call's first launch would save as a
  # programmatic dependent one (pdl_first_probe.py, a streaming kernel in a graph) (~4 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  timeout 100 python3 $R/benchmarks/pdl_first_probe.py 2>&1 | grep -v "Warn\|_warn" | tee $OUT/pdl_first.txt
  timeout ${PROFILE_S:-300} python3 $R/benchmarks/eager_profile.py ${PROFILE_ARGS:-} 2>&1 | grep -v "Warn\|_warn" > $OUT/eager_profile.txt
  tail -8 $OUT/eager_profile.txt ;;
pdl-first-ab)
  # a call's first launch as a programmatic dependent one vs plain, on the stale DB's configs
  # (the kernel edit that adds its wait), the grid's small cells; the GPU tests it touches first
  export PYTHONPATH=/tmp/site:$R/benchmarks
  (cd $R/tests && timeout 200 python3 -m pytest . -m gpu -q -p no:cacheprovider -o addopts="" \
    -k "back_to_back or capture or persistent or matches_float64 or programmatic" 2>&1 | tail -4)
  for e in ${ESTIMATORS:-discounted_returns gae lambda_returns vtrace retrace eligibility_traces episodic_cumsum}; do
    timeout 150 python3 $R/benchmarks/compare_configs.py --estimator $e --stale-db --pdl-first-ab \
      --shapes ${SHAPES:-64x512,4096x128,16384x128,4096x512,512x4096,256x8192,128x16384,8x65536,32x32768,8x262144,1x1048576} \
      --configs tuned 2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/pdl_first_ab.txt
  done ;;
pdl-ab)
  # later launches of a call (look-back after its fill, chunked carry pass and fix-up) as
  # programmatic dependent ones or plain, on the tuned configs and a forced look-back tile
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for e in discounted_returns gae vtrace episodic_cumsum; do
    timeout 120 python3 $R/benchmarks/compare_configs.py --estimator $e --stale-db --pdl-ab \
      --shapes 1x1048576,8x262144,8x65536,32x32768,128x16384,256x8192,512x4096 \
      --configs tuned,lookback:1x1024:w4:c1 2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/pdl_ab.txt
  done ;;
fixup-ab)
  # the fix-up waiting for the carry after its first chunk's scan (patches/
  # fixup_wait_after_scan.patch) against the shipped kernel, on the long-horizon winners and the
  # new 1x256/w1 spans (kernel_ab.py, forced); then look-back windows other than 64-256 (noop
  # patch: both columns are the shipped kernel)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  C=1x1048576@chunked:1x512:w1:c1:2l,1x1048576@chunked:1x256:w1:c2:2l
  C=$C,8x262144@chunked:2x128:w2:c4:2l,8x65536@chunked:2x128:w2:c1:2l
  C=$C,32x32768@chunked:2x128:w2:c4:2l,8x262144@chunked:1x256:w1:c2:2l
  timeout 300 python3 $R/benchmarks/kernel_ab.py $R/benchmarks/patches/fixup_wait_after_scan.patch \
    --estimators discounted_returns,gae,vtrace,retrace --cells $C 2>&1 | grep -v "Warn\|_warn" \
    | tee $OUT/fixup_ab.txt
  C=1x1048576@lookback:1x512:w1:c1:2l,32x32768@lookback:1x512:w1:c1:2l
  C=$C,8x65536@lookback:1x1024:w4:c1,1x1048576@lookback:1x256:w1:c1:2l
  for w in 32:32 64:256 1024:1024; do
    echo "## look-back window $w" | tee -a $OUT/window_ab.txt
    timeout 100 python3 $R/benchmarks/kernel_ab.py $R/benchmarks/patches/noop.patch \
      --lookback-window $w --estimators gae,retrace --cells $C 2>&1 | grep -v "Warn\|_warn" \
      | tee -a $OUT/window_ab.txt
  done ;;
lookback-ab)
  # look-back spans publishing the value leaving them once folded (patches/
  # lookback_inclusive.patch) against the shipped kernel, on the grid's data (~5% episode ends)
  # and on rows with none and gamma = lambda = 1, where every shipped span walks back to span 0
  # (seventeenth session: GAE 1x1M tuned look-back 59.3 us, chunked 14.5). If the patch removes
  # that cliff for <= 1 us on the grid's data, configs.LOOKBACK_MAX_SPANS can go up.
  export PYTHONPATH=/tmp/site:$R/benchmarks
  C=1x1048576@lookback:1x512:w1:c1:2l,1x1048576@lookback:1x256:w1:c1:2l
  C=$C,8x262144@lookback:1x256:w1:c1:2l,32x32768@lookback:1x256:w1:c1:2l
  C=$C,8x65536@lookback:1x1024:w4:c1,1x1048576@chunked:1x256:w1:c2:2l
  for data in "" --no-resets; do
    echo "## ${data:-grid data}" | tee -a $OUT/lookback_ab.txt
    timeout 150 python3 $R/benchmarks/kernel_ab.py $R/benchmarks/patches/lookback_inclusive.patch \
      $data --estimators gae,discounted_returns --cells $C 2>&1 | grep -v "Warn\|_warn" \
      | tee -a $OUT/lookback_ab.txt
  done ;;
early-stores-ab)
  # look-back spans storing the outputs no carry reaches before they look back
  # (patches/lookback_early_stores.patch, twenty-fourth session, unmeasured) against the shipped
  # kernel, forced look-back tiles: the grid's data, then rows without episode ends (where it
  # can only cost) (40 s; lost everywhere, twenty-sixth session)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  C=8x262144@lookback:1x256:w1:c1:2l,1x1048576@lookback:1x512:w1:c1:2l
  C=$C,1x1048576@lookback:1x256:w1:c1:2l,32x32768@lookback:1x256:w1:c1:2l
  C=$C,32x32768@lookback:1x512:w1:c1:2l,8x65536@lookback:1x256:w1:c1:2l
  for data in "" --no-resets; do
    E=gae,discounted_returns,vtrace,eligibility_traces
    [ -n "$data" ] && E=gae,discounted_returns
    echo "## ${data:-grid data}" | tee -a $OUT/early_stores_ab.txt
    timeout 240 python3 $R/benchmarks/kernel_ab.py $R/benchmarks/patches/lookback_early_stores.patch \
      $data --estimators $E --cells $C 2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/early_stores_ab.txt
  done ;;
prefetch2-ab)
  # two chunks of loads in flight (patches/prefetch_two_chunks.patch, fifty-ninth session) vs
  # one, forced: the mid cells' split-row winners (one program an SM walking 4-16 chunks), the
  # forward scans' plain split tiles, a time-major walk; ptxas (CPU): +16-33 registers, none
  # spilled but V-trace 16x256/w16/sp16 (~3 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  P=$R/benchmarks/patches/prefetch_two_chunks.patch
  C=128x16384@row_block:16x128:w16:2l:sp16,128x16384@row_block:16x256:w16:2l:sp16
  C=$C,256x8192@row_block:16x128:w16:2l:sp16,256x8192@row_block:8x256:w8:2l:sp8
  C=$C,512x4096@row_block:8x128:w8:2l:sp8,1024x8192@row_block:4x256:w4:2l:sp4
  timeout 200 python3 $R/benchmarks/kernel_ab.py $P --rounds 3 \
    --estimators discounted_returns,gae,vtrace,lambda_returns --cells $C 2>&1 \
    | grep -v "Warn\|_warn" | tee -a $OUT/prefetch2_ab.txt
  C=128x16384@row_block:32x128:w32:sp32,256x8192@row_block:16x128:w16:sp16
  C=$C,512x4096@row_block:8x128:w8:sp8,256x8192@row_block:1x2048:w8
  timeout 90 python3 $R/benchmarks/kernel_ab.py $P --rounds 3 \
    --estimators eligibility_traces,episodic_cumsum --cells $C 2>&1 \
    | grep -v "Warn\|_warn" | tee -a $OUT/prefetch2_ab.txt
  timeout 60 python3 $R/benchmarks/kernel_ab.py $P --rounds 3 --layout time_major \
    --estimators discounted_returns,gae --cells 16384x512@row_block:32x64:w4 2>&1 \
    | grep -v "Warn\|_warn" | tee -a $OUT/prefetch2_ab.txt ;;
nearest-first-ab)
  # look-back spans waiting first for their nearest predecessor alone, then the window of 8
  # before it (patches/lookback_nearest_first.patch, twenty-sixth session) against the shipped
  # kernel on the DB's look-back tiles: the grid's data, then rows without episode ends (126 s;
  # no gain, twenty-sixth session)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  C=8x65536@lookback:1x256:w1:c1:2l,32x32768@lookback:1x256:w1:c1:2l
  C=$C,32x32768@lookback:1x512:w1:c1:2l,1x1048576@lookback:1x512:w1:c1:2l
  C=$C,8x262144@lookback:1x256:w1:c1:2l,8x262144@lookback:1x512:w1:c1:2l
  C=$C,32x32768@lookback:1x1024:w4:c1,1x1048576@lookback:1x1024:w4:c1
  for data in "" --no-resets; do
    E=gae,discounted_returns,lambda_returns,vtrace,retrace,eligibility_traces,episodic_cumsum
    [ -n "$data" ] && E=gae,discounted_returns,episodic_cumsum
    echo "## ${data:-grid data}" | tee -a $OUT/nearest_first_ab.txt
    timeout 240 python3 $R/benchmarks/kernel_ab.py $R/benchmarks/patches/lookback_nearest_first.patch \
      $data --estimators $E --cells $C 2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/nearest_first_ab.txt
  done ;;
output-reuse)
  # whether the grid's calls write the same output block in every call of its graph when their
  # outputs are freed inside it, and the device column freed vs held (held: rlscan-bench's and
  # the tuner's way since the twenty-seventh session; benchmarks/output_reuse_probe.py; 29 s)
  # PROBE_ARGS: the probe's --estimators / --shapes
  export PYTHONPATH=/tmp/site:$R/benchmarks
  timeout 150 python3 $R/benchmarks/output_reuse_probe.py ${PROBE_ARGS:-} 2>&1 | grep -v "Warn\|_warn" \
    | tee $OUT/output_reuse.md ;;
lookback-ncu)
  # where a look-back program's time goes (NOTES "What limits us now" 4): Nsight Compute's
  # speed of light, occupancy, warp states and stall sampling on discounted returns 8x262144
  # (the grid's data), forced look-back 1x256/w1/2l, beside the tuned (chunked) config's
  # launches, the bare recurrence's look-back of the same tile and the one-pass probe's
  # no-carry kernel of it (its lower bound); then, per look-back kernel, the stall samples
  # per SASS instruction where this ncu prints its source page (44 s; it does: ncu 2025.3)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  NCU="ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats"
  NCU="$NCU --section WarpStateStats --section SchedulerStats --section SourceCounters"
  NCU="$NCU --section MemoryWorkloadAnalysis"
  F=$OUT/ncu_lookback.txt
  ncu --version 2>&1 | tail -1 | tee $F
  for run in "lb discounted_returns lookback:1x256:w1:c1:2l 2 1" \
             "ch discounted_returns tuned 6 3" \
             "lbs linear_scan lookback:1x256:w1:c1 2 1"; do
    set -- $run
    echo "## $2 8x262144 $3" | tee -a $F
    timeout 150 $NCU --kernel-name regex:"fused_scan_kernel|chunk_carry_kernel" \
      --launch-skip $4 --launch-count $5 --export /tmp/ncu_$1 -f \
      python3 $R/benchmarks/ncu_targets.py --cell $2:8x262144 --config $3 >> $F 2>&1
    timeout 60 ncu --import /tmp/ncu_$1.ncu-rep --print-details all >> $F 2>&1
  done
  echo "## one-pass probe, bound 256/w1 (no carry)" | tee -a $F
  timeout 120 $NCU --kernel-name _onepass --launch-skip 2 --launch-count 1 --export /tmp/ncu_op \
    -f python3 $R/benchmarks/onepass_probe.py --cells 8x262144 --tiles 256:1 --ncu bound >> $F 2>&1
  timeout 60 ncu --import /tmp/ncu_op.ncu-rep --print-details all >> $F 2>&1
  for r in lb lbs op; do   # per-instruction stall samples (an option of recent ncu CLIs)
    timeout 60 ncu --import /tmp/ncu_$r.ncu-rep --page source --csv --print-source sass \
      > $OUT/ncu_source_$r.csv 2>&1 || echo "source page of $r: ncu said $(tail -1 $OUT/ncu_source_$r.csv)"
  done
  grep -i "duration\|achieved occupancy\|dram throughput\|warp cycles per issued\|## " $F | head -60 ;;
fill-ab)
  # the look-back's fill: the persistent workspace the scan keeps clean (PHASE 4) against the
  # call's own filled workspace (PHASE 3: rlscan's fill kernel, torch, a memset) and no fill
  # (nineteenth session: the fill cost 1.4-2.3 us a call)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for e in gae discounted_returns vtrace retrace; do
    timeout 100 python3 $R/benchmarks/compare_configs.py --fill-ab --stale-db --estimator $e \
      --shapes 1x1048576,32x32768,8x65536,8x262144 \
      --configs tuned,lookback:1x256:w1:c1:2l,lookback:1x512:w1:c1:2l 2>&1 \
      | grep -v "Warn\|_warn" | tee -a $OUT/fill_ab.txt
    # many rows, several warps a program (where the twentieth session's retune stalled before
    # the barrier in PHASE 4; a config that spins shows as a time-out)
    timeout 60 python3 $R/benchmarks/compare_configs.py --fill-ab --stale-db --estimator $e \
      --shapes 512x4096 --configs lookback:1x1024:w4:c1,lookback:1x2048:w8:c1 2>&1 \
      | grep -v "Warn\|_warn" | tee -a $OUT/fill_ab.txt
  done ;;
tune-mid)
  # the cells where the twentieth session's retune stalled (GAE and V-trace at 512x4096 and
  # 16384x512: 16 cells, 4 done in 170 s then); every thread's traceback if it runs past
  # TUNE_MID_S (default 150 s; ~60 s of it is the first compiles)
  timeout -s KILL $(( ${TUNE_MID_S:-150} + 30 )) python3 -c "
import faulthandler, runpy, sys
faulthandler.dump_traceback_later(${TUNE_MID_S:-150}, exit=True)
sys.argv = ['rlscan-tune', '--estimators', 'gae,vtrace', '--shapes', '512x4096,16384x512',
            '--out', '$OUT/tdb_mid', '--no-table']
runpy.run_module('rlscan.tune.cli', run_name='__main__')" > $OUT/tune_mid.log 2>&1
  grep -v "Warn\|_warn" $OUT/tune_mid.log | grep "eta\|File\|Thread" | tail -40 ;;
regcap-ab)
  # a register cap (maxnreg) on the long-horizon tiles: look-back 1x256/w1/2l takes 72 registers
  # (discounted), 96 (GAE), 128 (V-trace), so 28 / 21 / 16 one-warp programs an SM by registers
  # against the 32-block limit, and Nsight measured 33.8% achieved occupancy, 29% of stalls on
  # the predecessor poll (twenty-sixth session): do capped builds, with more programs resident,
  # wait less? Forced against the DB's configs (221 s; r64 look-back won for discounted and GAE
  # and became a candidate). Twenty-eighth: λ-returns and Retrace (Retrace 8x262144 24.1 ->
  # 20.9 at r64). Twenty-ninth: caps between 64 and uncapped (V-trace's span: 128 registers, no
  # spills at 96, 44 bytes at 80, 180 at 64 by kernel_resources.py; r96 became V-trace's twin):
  # ESTS="vtrace retrace" SHAPES=8x65536,32x32768,8x262144,1x1048576 CONFIGS=tuned,
  # lookback:1x256:w1:c1:2l,lookback:1x256:w1:c1:2l:r64,lookback:1x256:w1:c1:2l:r72,
  # lookback:1x256:w1:c1:2l:r80,lookback:1x256:w1:c1:2l:r96,lookback:1x256:w1:c1:2l:r112
  # Next (twenty-ninth session's wave audit: V-trace's fix-up at 70 registers takes 1.11 waves):
  # ESTS=vtrace SHAPES=8x262144,8x65536 CONFIGS=tuned,chunked:2x128:w2:c4:2l:r64,
  # chunked:2x128:w2:c4:2l:r72 ROUNDS=5 (every A/B here: ROUNDS=N times each config N times,
  # round-robin, and prints the median [range])
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for e in ${ESTS:-discounted_returns gae vtrace}; do
    timeout 150 python3 $R/benchmarks/compare_configs.py --estimator $e --rounds ${ROUNDS:-1} \
      --shapes ${SHAPES:-8x65536,32x32768,8x262144,1x1048576,128x16384} \
      --configs ${CONFIGS:-tuned,chunked:1x256:w1:c2:2l,chunked:1x256:w1:c2:2l:r64,chunked:1x256:w1:c2:2l:r48,lookback:1x256:w1:c1:2l,lookback:1x256:w1:c1:2l:r64,lookback:1x256:w1:c1:2l:r48,chunked:2x128:w2:c4:2l:r40,row_block:16x256:w16:2l:sp16:r64} \
      2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/regcap_ab.txt
  done ;;
bf16cap-ab)
  # register caps on the bf16 winners that hold the most registers (twenty-eighth session,
  # kernel_resources.py as launched: GAE 1024x8192 1x1024/w1/2l 212 registers, 9 warps an SM;
  # V-trace 1024x8192 4x256/w4/2l/g8/sp4 117; V-trace 65536x128 4x128/w2/2l/g8 94), forced
  # against the DB's choice (~2 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  ab() {  # estimator shapes configs
    timeout 100 python3 $R/benchmarks/compare_configs.py --estimator $1 --dtype bfloat16 \
      --rounds ${ROUNDS:-1} --shapes $2 --configs tuned,$3 2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/bf16cap_ab.txt
  }
  G=row_block:1x1024:w1:2l
  ab gae 1024x8192 $G:r64,$G:r80,$G:r96,$G:r112,$G:g8,$G:g8:r96,row_block:4x256:w4:2l:g8:sp4:r96
  S=row_block:4x256:w4:2l:g8:sp4
  ab vtrace 1024x8192 $S:r64,$S:r80,$S:r96,$S:r112
  ab retrace 1024x8192 $S:r64,$S:r80,$S:r96
  V=row_block:4x128:w2:2l:g8
  ab vtrace 65536x128,16384x512 $V:r64,$V:r72,$V:r80,row_block:1x128:w1:2l:r64
  ab gae 65536x128,16384x512 row_block:2x128:w1:2l:g8:r64,row_block:2x128:w1:2l:g8:r80,row_block:1x256:w1:2l:g8:r64 ;;
replay-sync)
  # the grid's device column (each replay timed from an idle GPU) against the tuner's way
  # (replays back to back, one wait), in turns, on the tuned configs (~60 s; see the script)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  timeout ${PROBE_S:-150} python3 $R/benchmarks/replay_sync_probe.py ${PROBE_ARGS:-} 2>&1 \
    | grep -v "Warn\|_warn" | tee $OUT/replay_sync.txt ;;
placement)
  # does V-trace 64x512's mode (2.86 or 3.19 us a process, the same config) follow where its
  # input sets land? placement_probe.py: 6 placements after growing spacers, 5 rounds each, the
  # DB's tile and 1x512/w8 (bimodal in the twenty-ninth session), GAE as a control (agreed
  # within 0.02 between tuner and grid)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for a in "--estimator vtrace" "--estimator vtrace --config row_block:1x512:w8" \
           "--estimator gae" ${PLACEMENT_ARGS:+"$PLACEMENT_ARGS"}; do
    timeout 120 python3 $R/benchmarks/placement_probe.py $a 2>&1 | grep -v "Warn\|_warn" \
      | tee -a $OUT/placement.txt
  done ;;
walk-slack)
  # the first window's limit with one span of slack (thirty-first session): γλ = 0.9405 now takes
  # the entries' bounded_walk look-back at 8x262144 and 1x1M. Tuned (the new pick) against the
  # old pick, rows without episode ends at 0.9405 and at the new limit 0.9436, then the grid's
  # data; bf16 long cells; the GPU test of the pick (~3 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  cc() { timeout 120 python3 $R/benchmarks/compare_configs.py --rounds 3 "$@" 2>&1 \
    | grep -v "Warn\|_warn" | tee -a $OUT/walk_slack.txt; }
  for nr in "--no-resets --decay 0.9405" "--no-resets --decay 0.9436" ""; do
    echo "## $nr" | tee -a $OUT/walk_slack.txt
    cc --estimator gae --shapes 8x262144 $nr --configs tuned,chunked:2x128:w2:c4:2l
    cc --estimator gae --shapes 1x1048576 $nr --configs tuned,lookback:1x512:w1:c1:2l,chunked:1x256:w1:c2:2l
    cc --estimator lambda_returns --shapes 8x262144 $nr --configs tuned,chunked:2x128:w2:c4:2l
    cc --estimator eligibility_traces --shapes 1x1048576 $nr --configs tuned,lookback:1x1024:w4:c1
  done
  timeout 150 python3 -m rlscan.tune.bench --estimators gae,retrace,lambda_returns,eligibility_traces \
    --dtypes bfloat16 --shapes 8x262144,1x1048576 --baselines "" --out $OUT/bf16_long 2>&1 \
    | grep -v "Warn\|_warn" | tail -2
  rm -f $OUT/bf16_long/bench.png
  (cd $R/tests && timeout 120 python3 -m pytest test_estimators.py -m gpu -q -p no:cacheprovider \
    -o addopts="" -k long_row_without_episode_ends 2>&1 | tail -3) ;;
persistent)
  # persistent look-back programs with the next chunk's loads in flight, on the bare recurrence,
  # against the tuned linear_scan (persistent_lookback_probe.py; thirty-first session: one-warp
  # tiles and a no-fill lower bound added; ~2 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  timeout 240 python3 $R/benchmarks/persistent_lookback_probe.py 2>&1 | grep -v "Warn\|_warn" \
    | tee $OUT/persistent.txt ;;
tma-walk)
  # row walks with TMA loads pipelined by Triton (shared memory, no registers) against the
  # shipped register prefetch, on the bare recurrence at the mid cells (tma_walk_probe.py; ~2 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  timeout 60 python3 $R/benchmarks/tma_walk_probe.py --check 2>&1 | grep -v "Warn\|_warn" | tail -12 \
    | tee $OUT/tma_walk.txt
  timeout 300 python3 $R/benchmarks/tma_walk_probe.py 2>&1 | grep -v "Warn\|_warn" \
    | tee -a $OUT/tma_walk.txt ;;
tm-lookback)
  # look-back spans of 128-row time-major tiles (one read; the tuner has only chunked spans
  # there, which read the inputs twice) forced beside the tuned config, 3 rounds; then the
  # streaming floor of the bf16-input mixes, and a short clock_probe run (its last fix)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for est in ${TM_ESTS:-discounted_returns gae vtrace}; do
    timeout ${TM_S:-130} python3 $R/benchmarks/compare_configs.py --rounds 3 --layout time_major \
      --estimator $est --shapes ${TM_SHAPES:-4096x512,16384x512,4096x2048,512x4096,16384x128} \
      --configs ${TM_CONFIGS:-tuned,lookback:128x4:w1:c1,lookback:128x8:w1:c1,lookback:256x4:w2:c1} \
      2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/tm_lookback.txt
  done
  timeout 60 python3 $R/benchmarks/stream_floor.py --bf16 2>&1 | grep -v "Warn\|_warn" \
    | tee $OUT/stream_floor_bf16.md
  timeout 40 python3 $R/benchmarks/clock_probe.py --seconds 5 2>&1 | grep -v "Warn\|_warn" \
    | tail -5 | tee $OUT/clocks.txt ;;
lane-rows-ab)
  # time-major tiles of one row a lane (configs LANE_ROWS: walks and chunked spans) forced
  # beside the tuned config, 2 rounds; then the GPU tests of the time-major lanes (LR_TESTS=0:
  # none). LR_ESTS, LR_SHAPES, LR_CONFIGS, LR_ROUNDS, LR_S: what to compare
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for est in ${LR_ESTS:-discounted_returns gae vtrace}; do
    timeout ${LR_S:-100} python3 $R/benchmarks/compare_configs.py --rounds ${LR_ROUNDS:-2} \
      --layout time_major --estimator $est \
      --shapes ${LR_SHAPES:-16384x512,65536x128,131072x256,16384x128,4096x512,4096x2048,1024x8192} \
      --configs ${LR_CONFIGS:-tuned,row_block:32x8:w1:lr,row_block:32x16:w1:lr,row_block:64x8:w2:lr,row_block:32x4:w1:lr,chunked:32x8:w1:c8:lr} \
      2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/lane_rows_ab.txt
  done
  if [ "${LR_TESTS:-1}" != 0 ]; then
    (cd $R/tests && timeout 200 python3 -m pytest test_estimators.py -m gpu -q -p no:cacheprovider \
      -o addopts="" -k "descending_lanes or ascending_lanes_in_time_major" 2>&1 | tail -3)
  fi ;;
ab)
  # a forced A/B of any configs beside the tuned one (compare_configs.py): AB_ESTS, AB_SHAPES,
  # AB_CONFIGS, AB_LAYOUT (time_last), AB_DTYPE (float32), AB_ROUNDS (2), AB_S (a cap per
  # estimator, 120 s); then, with AB_BF16_TM=1, the bf16 time-major grid of bench-more (b4)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for est in ${AB_ESTS:-discounted_returns gae vtrace}; do
    timeout ${AB_S:-120} python3 $R/benchmarks/compare_configs.py --rounds ${AB_ROUNDS:-2} \
      --layout ${AB_LAYOUT:-time_last} --dtype ${AB_DTYPE:-float32} --estimator $est \
      --shapes ${AB_SHAPES:-8x262144,1x1048576,32x32768,8x65536} --configs ${AB_CONFIGS:-tuned} \
      2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/ab.txt
  done
  if [ -n "${AB_BF16_TM:-}" ]; then
    export PYTHONPATH=/tmp/site
    timeout 90 python3 -m rlscan.tune.bench --estimators gae,discounted_returns,vtrace --dtypes bfloat16 \
      --layouts time_major --baselines "" --out $OUT/b4 2>&1 | grep -v "Warn\|_warn" | tail -2
    rm -f $OUT/b4/bench.png
  fi ;;
tm-probe)
  # the bare recurrence in persistent look-back programs of one-row-a-lane spans (probe) against
  # the tuned linear_scan time-major call (since the thirty-third session often a lane-row walk
  # or chunked spans), at 8 warps an SM and at TMP_WARPS (default 10: every program of the probe
  # must stay resident, and its 16-step spans take 186 registers, 10 warps an SM; 8-step ones
  # 122, 16). Its interpreter check is a CPU test (tests/test_tuning.py)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for w in 8 ${TMP_WARPS-10}; do   # TMP_WARPS= : one pass
    echo "## persistent warps an SM: $w" | tee -a $OUT/tm_probe.txt
    timeout 150 python3 $R/benchmarks/time_major_probe.py --persistent-warps $w \
      --variants ${TMP_VARIANTS:-walk:32:32:1,persistent-incl:16:32:1:2,persistent-incl:8:32:1:2} \
      2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/tm_probe.txt
  done ;;
clocks)
  # does a cell's device time follow the SM clock? clock_probe.py: three cells round-robin for
  # 30 s back to back, then 20 s with 1 s idle between rounds, nvidia-smi sampling every 50 ms
  export PYTHONPATH=/tmp/site:$R/benchmarks
  timeout 90 python3 $R/benchmarks/clock_probe.py --seconds ${CLOCK_S:-30} ${CLOCK_ARGS:-} 2>&1 \
    | grep -v "Warn\|_warn" | tee $OUT/clocks.txt
  timeout 90 python3 $R/benchmarks/clock_probe.py --seconds 20 --idle 1 \
    --log $OUT/clocks_idle.csv ${CLOCK_ARGS:-} 2>&1 | grep -v "Warn\|_warn" \
    | tee $OUT/clocks_idle.txt ;;
grid-pinned)
  # the fp32 time-last grid with the eager-loop baseline, pinned to core CORE (default 3, whose
  # loop figures sat mid-range in loop-cores, twenty-first session) (~110 s on a fresh machine)
  timeout ${BENCH_S:-200} taskset -c ${CORE:-3} python3 -m rlscan.tune.bench --baselines loop \
    --out $OUT/b1 2>&1 | grep -v "Warn\|_warn" | tail -3
  rm -f $OUT/b1/bench.png ;;
retune-buckets)
  # single buckets retuned without pruning into the tree's DB (RETUNE="est:dtype:layout:NxT
  # ..."): those where one stalled eager call had ruled a rival out, before
  # tune/timing.eager_rules_out took a second look (thirty-ninth session, H100: 6-17 s each)
  mkdir -p $OUT/tdb && cp $TDB $OUT/tdb/
  for b in $RETUNE; do
    IFS=: read -r e d l s <<< "$b"
    timeout -s INT 120 python3 -m rlscan.tune.cli --out $OUT/tdb --no-table --estimators $e \
      --dtypes $d --layouts $l --shapes $s >> $OUT/retune.log 2>&1
    grep -v "Warn\|_warn" $OUT/retune.log | grep "buckets tuned\|us " | tail -2
  done
  cp $OUT/tdb/$SLUG.json $TDB; cp $OUT/tdb/$SLUG.json /tmp/tdb_last.json; rm -f $OUT/tdb/*.lock ;;
sl-retune)
  # 36 buckets (3 estimators x 2 dtypes x 6 shapes); SL_S caps the tune (SIGINT: what finished
  # is written); the 16x64/w8 winners of these buckets were tuned with vectors only
  mkdir -p $OUT/tdb && cp $TDB $OUT/tdb/
  timeout -s INT ${SL_S:-300} python3 -m rlscan.tune.cli --out $OUT/tdb --prune 1.3 \
    --estimators gae,lambda_returns,discounted_returns --dtypes float32,bfloat16 \
    --layouts time_major --shapes 4096x128,4096x256,4096x512,4096x1024,4096x2048,64x512 \
    > $OUT/tune_sl.log 2>&1
  grep -v "Warn\|_warn" $OUT/tune_sl.log | tail -45
  cp $OUT/tdb/$SLUG.json $TDB; cp $OUT/tdb/$SLUG.json /tmp/tdb_last.json; rm -f $OUT/tdb/*.lock ;;
walks-ab)
  # forced, outputs checked against the shipped config (compare_configs.py): the heuristic's
  # row blocks at 2048-8192 rows x 2048-4095 steps against the spans they replace, and the
  # lane-row spans of 128-1023 rows x 4096+ steps (300x5000, 700x6000) against the same;
  # then 8x128/w8 where 16x64/w8 makes under a wave
  # WALKS_PARTS picks the three parts (default 123): a call can pair part 1 with gpu-tests
  export PYTHONPATH=/tmp/site:$R/benchmarks
  P=${WALKS_PARTS:-123}
  [[ $P == *1* ]] && for e in gae lambda_returns vtrace retrace discounted_returns; do
    timeout 55 python3 $R/benchmarks/compare_configs.py --rounds 2 --layout time_major \
      --estimator $e --shapes 4096x2048,5000x3000,3000x2500,2100x3500,8192x2048,300x5000,700x6000 \
      --configs heuristic,chunked:128x4:w1:c8,row_block:16x64:w8,row_block:8x128:w8 2>&1 \
      | grep -v "Warn\|_warn" | tee -a $OUT/walks_ab.txt
  done
  # part 2: the fifty-third session's 8x128/w8 rule (2048-4095 rows x 512-1023 steps while
  # one wave) at its edges and beyond (1504x608, 3000x400) against the 16x64/w8 tiles; its
  # bf16 spans at 4096-8191 rows x 1024-2047 steps (5000x1200) against the same; 1500x1500
  # (fp32 8x128/w8 lost to the lane-row spans there: that rule was dropped)
  [[ $P == *2* ]] && for dt in float32 bfloat16; do
    for e in ${WALK8_ESTS:-discounted_returns gae vtrace eligibility_traces}; do
      timeout 40 python3 $R/benchmarks/compare_configs.py --rounds 2 --layout time_major \
        --dtype $dt --estimator $e \
        --shapes 2048x512,3000x700,2500x900,1504x608,3000x400,5000x1200,1500x1500 \
        --configs heuristic,row_block:16x64:w8:sl,row_block:8x128:w8,chunked:32x8:w1:c8:lr \
        2>&1 | grep -v "Warn\|_warn" \
        | tee -a $OUT/walk8_ab.txt
    done
  done
  [[ $P == *3* ]] && for e in gae lambda_returns; do
    timeout 35 python3 $R/benchmarks/compare_configs.py --rounds 2 --estimator $e \
      --shapes 1200x6000,2500x5000,1100x20000,3000x2500 \
      --configs heuristic,row_block:1x512:w4,row_block:4x256:w4:2l:sp4 2>&1 \
      | grep -v "Warn\|_warn" | tee -a $OUT/wide_rows_ab.txt
  done ;;
leads-ab)
  # forced, outputs checked: where the fifty-fourth session's audit (results/probes/2026-12-07_
  # fiftyfourth_session_tens_of_rows_ab_h100.txt) found the heuristic 1.1-1.3x the best tile
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for e in ${LEADS_ESTS:-gae discounted_returns vtrace retrace}; do
    timeout 40 python3 $R/benchmarks/compare_configs.py --rounds 2 --layout time_major \
      --estimator $e --shapes 700x700,600x900,900x500,520x1000,800x400,1000x1000 \
      --configs heuristic,row_block:8x128:w8,row_block:16x64:w8:sl,chunked:32x8:w1:c8:lr 2>&1 \
      | grep -v "Warn\|_warn" | tee -a $OUT/leads_ab.txt
    timeout 30 python3 $R/benchmarks/compare_configs.py --rounds 2 --layout time_major \
      --estimator $e --shapes 12000x200,9000x300,10000x600,8192x128,15000x900 \
      --configs heuristic,row_block:32x16:w1:lr,row_block:16x64:w8:sl,row_block:32x64:w4 2>&1 \
      | grep -v "Warn\|_warn" | tee -a $OUT/leads_ab.txt
    timeout 40 python3 $R/benchmarks/compare_configs.py --rounds 2 --estimator $e \
      --shapes 300x3000,400x2500,600x9000,200x3000,700x2100,200x1500,300x1200,150x1800 \
      --configs heuristic,row_block:16x128:w16:2l:sp16,row_block:8x128:w8:2l:sp8,row_block:4x256:w4:2l:sp4,row_block:1x512:w4 \
      2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/leads_ab.txt
    # time-major 128-1023 rows x 4096+ steps: lane-row spans (the rule) against 128x4 spans
    timeout 30 python3 $R/benchmarks/compare_configs.py --rounds 2 --layout time_major \
      --estimator $e --shapes 200x12000,300x5000,150x20000,500x8000,800x6000 \
      --configs heuristic,chunked:32x16:w1:c4:lr,chunked:128x4:w1:c8,chunked:32x8:w1:c4 2>&1 \
      | grep -v "Warn\|_warn" | tee -a $OUT/leads_ab.txt
    [ $(( $(date +%s) - T0 )) -gt 420 ] && { echo "leads-ab: out of time after $e"; break; }
  done
  (cd $R/tests && timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -o addopts="" \
    test_estimators.py test_tuning.py -k "tens or 1024_steps or long_rows" 2>&1 | tail -3) ;;
leads-check)
  # the fifty-fifth session's fp32 rules from leads-ab, forced off the shapes that chose them,
  # against the configs they replaced; the same tiles in bf16, where the heuristic keeps the
  # old ones (an estimator at a time while CHECK_S lasts); then the rules' GPU tests (~7 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for e in ${CHECK_ESTS:-gae discounted_returns vtrace eligibility_traces}; do
    for dt in float32 bfloat16; do
      timeout 35 python3 $R/benchmarks/compare_configs.py --rounds 2 --layout time_major \
        --dtype $dt --estimator $e --shapes 640x600,960x800,580x1000,1000x384,760x1020 \
        --configs heuristic,row_block:8x128:w8,chunked:16x64:w8:c1:sl,chunked:32x8:w1:c8:lr \
        2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/leads_check.txt
      timeout 35 python3 $R/benchmarks/compare_configs.py --rounds 2 --dtype $dt --estimator $e \
        --shapes 250x2200,450x3500,130x1100,480x1900,350x1600,180x3900 --configs \
        heuristic,row_block:8x128:w8:2l:sp8,row_block:16x128:w16:2l:sp16,row_block:1x512:w4 2>&1 \
        | grep -v "Warn\|_warn" | tee -a $OUT/leads_check.txt
    done
    case $e in discounted_returns|eligibility_traces)
      timeout 30 python3 $R/benchmarks/compare_configs.py --rounds 2 --layout time_major \
        --estimator $e --shapes 8500x250,11000x500,13000x160,14500x700,9500x1000 \
        --configs heuristic,row_block:16x64:w8:sl,row_block:32x64:w4,row_block:32x16:w1:lr 2>&1 \
        | grep -v "Warn\|_warn" | tee -a $OUT/leads_check.txt ;;
    vtrace)   # a lead (leads-ab): 32-row spans for V-trace's few hundred long time-major rows
      timeout 30 python3 $R/benchmarks/compare_configs.py --rounds 2 --layout time_major \
        --estimator $e --shapes 200x12000,300x5000,150x20000,500x8000,800x6000,400x9000 \
        --configs heuristic,chunked:32x8:w1:c4,chunked:32x8:w1:c8:lr 2>&1 \
        | grep -v "Warn\|_warn" | tee -a $OUT/leads_check.txt ;;
    esac
    [ $(( $(date +%s) - T0 )) -gt ${CHECK_S:-280} ] && { echo "leads-check: out of time after $e"; break; }
  done
  [ "${TESTS_S:-150}" != 0 ] && (cd $R/tests && timeout ${TESTS_S:-150} python3 -m pytest -q \
    -m gpu -p no:cacheprovider -o addopts="" test_estimators.py \
    -k "untuned_mid_sized or untuned_long_time_last" 2>&1 | tail -3) ;;
rules-check)
  # the fifty-sixth session's rules: bf16 time-major 560-1023 rows (since: from 640) and time-last
  # below 512 rows on cells neither leads-ab nor leads-check timed, then the GPU tests of every
  # heuristic rule (GPU_K below) in 8 processes side by side (~4 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for e in ${CHECK_ESTS:-gae vtrace discounted_returns}; do
    timeout 35 python3 $R/benchmarks/compare_configs.py --rounds 2 --layout time_major \
      --dtype bfloat16 --estimator $e --shapes 600x768,900x950,1000x1020,700x450,560x700 \
      --configs heuristic,row_block:8x128:w8,chunked:16x64:w8:c1:sl,chunked:32x8:w1:c8:lr \
      2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/rules_check.txt
    timeout 35 python3 $R/benchmarks/compare_configs.py --rounds 2 --dtype bfloat16 \
      --estimator $e --shapes 140x1024,500x1030,256x4000,400x2048,128x3000 --configs \
      heuristic,row_block:8x128:w8:2l:sp8,row_block:16x128:w16:2l:sp16,row_block:1x512:w4 2>&1 \
      | grep -v "Warn\|_warn" | tee -a $OUT/rules_check.txt
  done
  GPU_K="${GPU_K:-untuned or long_rows or walk}" SHARD_S=${SHARD_S:-200} bash -c "cd $R && bash benchmarks/device_run.sh gpu-tests" ;;
odd-steps-ab)
  # time-last rows whose length is not a multiple of 4 (fifty-sixth session, ptxas on CPU,
  # probes/2026-12-07_fiftysixth_session_odd_steps_registers.txt): the split two-level tiles
  # take 1.3-2.7x the registers there (GAE sp8 300x2051 109 against 60 at 2048; sp16 108 against
  # 40: 2.27 waves), 1x512/w4 1.1x. Each tile against its aligned neighbour, fp32 and bf16,
  # then rlscan-bench on the odd-lengths set (~7 min). Since the fifty-seventh session the
  # launcher shrinks such tiles' groups (group-ab times that); the patch stays a scan.py option
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for e in ${CHECK_ESTS:-gae vtrace discounted_returns}; do
    for dt in float32 bfloat16; do
      timeout 55 python3 $R/benchmarks/compare_configs.py --rounds 2 --dtype $dt --estimator $e \
        --shapes 300x2048,300x2050,300x2051,500x1024,500x1030,500x1031,256x4096,256x4097,1500x4096,1500x4097 \
        --configs tuned,heuristic,row_block:8x128:w8:2l:sp8,row_block:16x128:w16:2l:sp16,row_block:4x256:w4:2l:sp4,row_block:1x512:w4 \
        2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/odd_steps.txt
    done
    [ $(( $(date +%s) - T0 )) -gt ${CHECK_S:-280} ] && { echo "odd-steps-ab: out of time after $e"; break; }
  done
  # the patch that keeps the tile's layout there (contiguity 1 said on its lanes), shipped vs
  # patched at lengths that are not multiples of 4 only (at multiples of 4 it costs the vector loads)
  timeout 90 python3 $R/benchmarks/kernel_ab.py $R/benchmarks/patches/odd_length_contiguity.patch \
    --rounds 2 --estimators gae,vtrace,discounted_returns --cells \
    300x2051@row_block:8x128:w8:2l:sp8,300x2050@row_block:16x128:w16:2l:sp16,500x1030@row_block:8x128:w8:2l:sp8,1500x4097@row_block:4x256:w4:2l:sp4 \
    2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/odd_steps.txt
  # then rlscan-bench on those lengths (tune/grid.py "odd-lengths"; BENCH_S=0: not)
  [ "${BENCH_S:-150}" != 0 ] && { timeout ${BENCH_S:-150} python3 -m rlscan.tune.bench \
    --shapes odd-lengths --layouts time_last --dtypes float32,bfloat16 --baselines "" \
    --out $OUT/bo 2>&1 | grep -v "Warn\|_warn" | tail -3; rm -f $OUT/bo/bench.png; } ;;
group-ab)
  # two-level tiles holding groups of no more steps than the power of two dividing T
  # (launch._GROUP_BY_ALIGNMENT, fifty-seventh session: ptxas on CPU gives the split tiles
  # their aligned registers and barriers back at T = 2 mod 4, most of them at odd T) against
  # the config's groups at every T (compare_configs --group-ab: shipped/group4), fp32 and bf16,
  # tuned and heuristic configs at lengths odd, 2 mod 4 and (bf16) 4 mod 8, and 1x512/w4 (no
  # two-level scan) beside them; then the GPU tests of two-level tiles (~6 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for e in ${CHECK_ESTS:-gae vtrace discounted_returns}; do
    for dt in float32 bfloat16; do
      timeout 60 python3 $R/benchmarks/compare_configs.py --rounds 2 --dtype $dt --estimator $e \
        --group-ab --shapes ${GROUP_SHAPES:-300x2051,300x2050,300x2052,500x1030,256x4097,1500x4097,1024x8191,128x16383} \
        --configs tuned,heuristic,row_block:1x512:w4 2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/group_ab.txt
    done
    [ $(( $(date +%s) - T0 )) -gt ${CHECK_S:-260} ] && { echo "group-ab: out of time after $e"; break; }
  done
  [ "${TESTS_S:-0}" != 0 ] && GPU_K="${GPU_K:-two_level or split or groups_of or odd}" \
    SHARD_S=$TESTS_S bash -c "cd $R && bash benchmarks/device_run.sh gpu-tests" ;;
stride-ab)
  # time-last rows of T a multiple of 16 sliced from rows one step longer (compare_configs
  # --row-pad 1: odd row strides; fifty-eighth session). Two-level groups shrink to one step as
  # at odd T, and the launcher runs them on the kernel with T unspecialised (on the kernel that
  # specialises T, the H200's 8-warp split tile took x2.0-2.2 the time and the 4-warp one died
  # of a misaligned address, so --tspec-ab leaves that tile out); then the launcher's swap of
  # the 4-warp split tile for 1x512/w4 there, as at odd T (configs.for_odd_rows) (~4 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for run in ${STRIDE_RUNS:-gae:float32 vtrace:float32 discounted_returns:float32 gae:bfloat16}; do
    timeout 60 python3 $R/benchmarks/compare_configs.py --rounds 2 --estimator ${run%%:*} \
      --dtype ${run##*:} --row-pad ${ROW_PAD:-1} --tspec-ab \
      --shapes ${STRIDE_SHAPES:-1500x4096,300x2048,1024x8192,4000x1024} \
      --configs tuned,row_block:8x128:w8:2l:sp8,row_block:2x128:w2:2l,row_block:1x512:w4 2>&1 \
      | grep -v "Warn\|_warn" | tee -a $OUT/stride_ab.txt
    timeout 40 python3 $R/benchmarks/compare_configs.py --rounds 2 --estimator ${run%%:*} \
      --dtype ${run##*:} --row-pad ${ROW_PAD:-1} --shapes ${STRIDE_SHAPES:-1500x4096,300x2048,1024x8192,4000x1024} \
      --configs row_block:4x256:w4:2l:sp4,row_block:1x512:w4 2>&1 \
      | grep -v "Warn\|_warn" | tee -a $OUT/stride_ab.txt
    [ $(( $(date +%s) - T0 )) -gt ${CHECK_S:-260} ] && { echo "stride-ab: out of time after $run"; break; }
  done ;;
odd-tiles-ab)
  # two-level tiles of 512- and 1024-step chunks at odd alignment (groups of 2 and 4 kept: 8
  # or more parts a thread; fifty-ninth session, H100: GAE bf16 1024x8192 in rows of 8193, the
  # H100 DB's 1x1024/w1/2l/g8 268.5 us against 53.3 for 1x512/w4; ptxas GAE bf16: 255
  # registers and 1044 bytes spilled, against 214 and none aligned). Rows of T + 1 (odd
  # strides), then odd T, against the same tiles without the two-level scan and 1x512/w4; then
  # long horizons' look-back and chunked spans, aligned / rows of T + 1 / odd T (~5 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for run in ${ODDT_RUNS:-gae:bfloat16 gae:float32 discounted_returns:float32 vtrace:bfloat16}; do
    for pad in "--row-pad 1" ""; do
      SH=${ODDT_SHAPES:-1024x8192,4096x2048,128x16384,64x32768}
      [ -z "$pad" ] && SH=${ODDT_SHAPES2:-1024x8191,4096x2047,128x16383,64x32767}
      timeout 60 python3 $R/benchmarks/compare_configs.py --rounds 2 --estimator ${run%%:*} \
        --dtype ${run##*:} $pad --shapes $SH --configs tuned,row_block:1x1024:w1:2l:g8,row_block:1x1024:w1,row_block:1x512:w1:2l,row_block:1x512:w4,row_block:16x512:w16:2l:sp16 \
        2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/odd_tiles_ab.txt
    done
    [ $(( $(date +%s) - T0 )) -gt ${CHECK_S:-200} ] && { echo "odd-tiles-ab: out of time after $run"; break; }
  done
  for e in ${LH_ESTS:-gae discounted_returns}; do
    for pad in "" "--row-pad 1"; do
      timeout 60 python3 $R/benchmarks/compare_configs.py --rounds 2 --estimator $e $pad \
        --shapes 1x1048576,8x262144,8x65536 --configs tuned,lookback:1x512:w1:c1:2l,lookback:1x512:w1:c1,lookback:1x256:w1:c1:2l,lookback:1x256:w1:c1,chunked:1x512:w1:c1:2l:g8,chunked:1x512:w1:c1 \
        2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/odd_tiles_ab.txt
    done
    timeout 60 python3 $R/benchmarks/compare_configs.py --rounds 2 --estimator $e \
      --shapes 1x1048575,8x262143,8x65535 --configs tuned,lookback:1x512:w1:c1:2l,lookback:1x512:w1:c1,lookback:1x256:w1:c1:2l,lookback:1x256:w1:c1,chunked:1x512:w1:c1:2l:g8,chunked:1x512:w1:c1 \
      2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/odd_tiles_ab.txt
  done
  # the register-capped tiles that spill at odd T (probes/2026-12-07_fifty-ninth_session_odd_
  # alignment_survey.txt: look-back 1x256/w1/2l/r64 104-152 bytes, V-trace's chunked
  # 2x128/w2/c4/2l/r64 136-140, 1x128/w1/2l/r32 16-68, 2x128/w2/2l/r40 68): capped, uncapped,
  # without the two-level scan, at odd T ("odd-caps"; ODD_CAPS=0: not)
  [ "${ODD_CAPS:-1}" != 0 ] && for run in gae:32x32767:lookback:1x256:w1:c1 \
      discounted_returns:32x32767:lookback:1x256:w1:c1 vtrace:8x262143:chunked:2x128:w2:c4 \
      discounted_returns:4096x127:row_block:2x128:w2 lambda_returns:131072x255:row_block:1x128:w1; do
    e=${run%%:*}; rest=${run#*:}; sh=${rest%%:*}; tile=${rest#*:}
    cap=r64; case $tile in *2x128:w2) cap=r40 ;; *1x128:w1) cap=r32 ;; esac
    timeout 50 python3 $R/benchmarks/compare_configs.py --rounds 2 --estimator $e --shapes $sh \
      --configs tuned,$tile:2l:$cap,$tile:2l,$tile 2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/odd_tiles_ab.txt
  done ;;
odd-lookback-check)
  # (sixtieth session) odd alignment runs a DB's two-level look-back tiles in one level, without
  # their register cap (configs.for_odd_rows): tuned (that) against the two-level tiles it
  # replaced, in rows of T + 1 and at odd T, the estimators odd-tiles-ab left out too (~3 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for run in ${OLB_RUNS:-gae:float32 vtrace:float32 lambda_returns:float32 retrace:float32 gae:bfloat16 vtrace:bfloat16}; do
    timeout 60 python3 $R/benchmarks/compare_configs.py --rounds 2 --estimator ${run%%:*} \
      --dtype ${run##*:} --row-pad 1 --shapes 8x65536,32x32768,64x16384,8x262144 \
      --configs tuned,lookback:1x256:w1:c1:2l:r64,lookback:1x256:w1:c1:2l,lookback:1x256:w1:c1 \
      2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/odd_lookback_check.txt
    timeout 40 python3 $R/benchmarks/compare_configs.py --rounds 2 --estimator ${run%%:*} \
      --dtype ${run##*:} --shapes 8x100001,32x40001 \
      --configs tuned,lookback:1x256:w1:c1:2l:r64,lookback:1x256:w1:c1:2l,lookback:1x256:w1:c1 \
      2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/odd_lookback_check.txt
    [ $(( $(date +%s) - T0 )) -gt ${CHECK_S:-400} ] && { echo "odd-lookback-check: out of time after $run"; break; }
  done
  # then the heuristic's chunked spans (untuned buckets of tens of long rows) against look-back
  # spans that stay within LOOKBACK_MAX_SPANS (LBH=0: not)
  [ "${LBH:-1}" != 0 ] && for run in ${LBH_RUNS:-gae:float32 discounted_returns:float32 vtrace:float32 lambda_returns:float32 gae:bfloat16}; do
    timeout 70 python3 $R/benchmarks/compare_configs.py --rounds 2 --estimator ${run%%:*} \
      --dtype ${run##*:} --shapes 8x40000,12x30000,32x20000,48x20000,20x40000,16x50000,40x12000 \
      --configs tuned,lookback:1x256:w1:c1:2l,lookback:1x256:w1:c1:2l:r64,lookback:1x512:w1:c1:2l \
      2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/lookback_heuristic_check.txt
    [ $(( $(date +%s) - T0 )) -gt ${LBH_S:-480} ] && { echo "lookback heuristic: out of time after $run"; break; }
  done ;;
edge-ab)
  # (sixty-first session) untuned buckets just below a tuned one (N or T within 1/32 of its
  # first value: tuning._buckets_above) run that bucket's entry: tuned (that) against untuned
  # (the heuristic as it ran before), T - 1 at the grid's time-last cells (fp32 GAE, discounted
  # returns, V-trace; bf16 GAE, V-trace), then N - 1 and T - T/40, then time-major T - 1; the
  # which_config of each first (~6 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  TM1=1x1048575,8x65535,8x262143,32x32767,64x511,128x16383,256x8191,512x4095,1024x8191,4096x127,4096x511,4096x2047,16384x127,16384x511,65536x127,131072x255
  NM1=127x16384,255x8192,511x4096,1023x8192,4095x128,4095x512,16383x128,16383x512,65535x128,131071x256
  TEV=1x1022362,8x63898,8x255590,32x31948,64x498,128x15974,256x7986,512x3994,1024x7986,4096x498,4096x1996,16384x498,131072x250
  python3 -c "
import torch, rlscan
for sh in '$TM1,$NM1,$TEV'.split(','):
    N, T = map(int, sh.split('x'))
    for lay in ('time_last', 'time_major'):
        x = torch.empty(N, T, device='cuda') if lay == 'time_last' else torch.empty(T, N, device='cuda').t()
        c = rlscan.which_config('gae', x)
        print(lay, sh, c.source.split('/')[-1], c.rows[0], c.steps[0], c.config)
" 2>&1 | grep -v Warn | tee $OUT/edge_which.txt | awk '{print $1,$2,$3,$4,$5}' | column -c 200
  for run in ${EDGE_RUNS:-gae:float32:TM1 discounted_returns:float32:TM1 vtrace:float32:TM1 gae:bfloat16:TM1 vtrace:bfloat16:TM1 gae:float32:NM1 gae:float32:TEV discounted_returns:bfloat16:TM1}; do
    IFS=: read e d list <<< "$run"
    timeout 120 python3 $R/benchmarks/compare_configs.py --rounds 2 --estimator $e --dtype $d \
      --shapes ${!list} --configs tuned,untuned 2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/edge_ab.txt
    [ $(( $(date +%s) - T0 )) -gt ${CHECK_S:-420} ] && { echo "edge-ab: out of time after $run"; break; }
  done
  [ "${EDGE_TM:-1}" != 0 ] && timeout 120 python3 $R/benchmarks/compare_configs.py --rounds 2 \
    --estimator gae --layout time_major --shapes $TM1 --configs tuned,untuned 2>&1 \
    | grep -v "Warn\|_warn" | tee -a $OUT/edge_ab.txt ;;
odd-groups-ab)
  # at odd T, two-level tiles keeping their configured groups with contiguity 1 said on their
  # lanes (patches/odd_length_contiguity.patch, kernel_ab.py --configured-groups) against the
  # shipped groups of one step: ptxas (fifty-ninth session, CPU) gives them back about the
  # aligned kernel's registers where the shipped ones take x1.3-2 (bf16 discounted returns
  # 4x128/w2/g8 at 131072x255 64 against 108, aligned 56; GAE look-back 1x256/w1/r64 at
  # 32x32767 16 bytes spilled against 148; 16x512/w16/sp16 none against 116) (~4 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  P=$R/benchmarks/patches/odd_length_contiguity.patch
  C=4096x127@row_block:2x128:w2:2l,300x2051@row_block:8x128:w8:2l:sp8
  C=$C,512x4095@row_block:8x256:w8:2l:sp8,128x16383@row_block:16x512:w16:2l:sp16
  C=$C,32x32767@lookback:1x256:w1:c1:2l:r64,32x32767@lookback:1x256:w1:c1:2l
  C=$C,8x262143@chunked:2x128:w2:c4:2l:r64,16384x511@row_block:1x256:w1:2l
  timeout 200 python3 $R/benchmarks/kernel_ab.py $P --configured-groups --rounds 2 \
    --estimators gae,discounted_returns,vtrace --cells $C 2>&1 | grep -v "Warn\|_warn" \
    | tee -a $OUT/odd_groups_ab.txt
  C=131072x255@row_block:4x128:w2:2l:g8,16384x511@row_block:1x256:w1:2l:g8
  C=$C,4096x127@row_block:4x128:w2:2l:g8,512x4095@row_block:8x256:w8:2l:g8:sp8
  timeout 120 python3 $R/benchmarks/kernel_ab.py $P --configured-groups --rounds 2 \
    --dtype bfloat16 --estimators gae,discounted_returns --cells $C 2>&1 \
    | grep -v "Warn\|_warn" | tee -a $OUT/odd_groups_ab.txt ;;
oddn-ab)
  # time-major buffers of an odd env count, beside the even neighbour: at odd N the specialised
  # kernel compiles to its scalar-load form (fifty-seventh session, ptxas: GAE 8x128/w8 90
  # registers, 2 programs an SM where the heuristic's one-wave bounds count 3). Tuned and
  # heuristic configs against lane-row tiles (no vector loads to lose) and 4-warp tiles (~3 min)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  for run in ${ODDN_RUNS:-gae:float32 vtrace:float32 gae:bfloat16}; do
    timeout 70 python3 $R/benchmarks/compare_configs.py --rounds 2 --layout time_major \
      --estimator ${run%%:*} --dtype ${run##*:} \
      --shapes ${ODDN_SHAPES:-1001x512,1008x512,4095x128,4096x128,16383x64,16384x64} \
      --configs tuned,heuristic,row_block:64x8:w2:lr,row_block:32x16:w1:lr,row_block:8x128:w4 \
      2>&1 | grep -v "Warn\|_warn" | tee -a $OUT/oddn_ab.txt
    [ $(( $(date +%s) - T0 )) -gt ${CHECK_S:-240} ] && { echo "oddn-ab: out of time after $run"; break; }
  done ;;
unaligned-tm)
  # N not a multiple of 16 (and 9000, 1000, 1500: 8 but not 16) under launch._tells_n's rules
  timeout ${BENCH_S:-170} python3 -m rlscan.tune.bench --shapes unaligned --layouts time_major \
    --dtypes float32,bfloat16 --baselines "" --host-warmup 0.5 --out $OUT/bu 2>&1 \
    | grep -v "Warn\|_warn" | tail -3
  rm -f $OUT/bu/bench.png ;;
few-rows)
  # the time-major buckets of FEW_SHAPES (8x65536,8x262144) retuned with spans of one-warp
  # 8-row tiles as candidates (configs._SPANNED_TIME_MAJOR_FEW_ROWS*; forty-third session,
  # H100: the 16 of 8x262144 in 28 s, all won by them) into the tree's DB, then (FEW_GRID=0:
  # not) the fp32 time-major grid on it (~3 min)
  mkdir -p $OUT/tdb && cp $TDB $OUT/tdb/
  timeout -s INT 200 python3 -m rlscan.tune.cli --out $OUT/tdb --shapes ${FEW_SHAPES:-8x65536,8x262144} \
    --layouts time_major --dtypes float32,bfloat16 > $OUT/tune_few_rows.log 2>&1
  grep -v "Warn\|_warn" $OUT/tune_few_rows.log | grep "time_major  8\|buckets tuned"
  cp $OUT/tdb/$SLUG.json $TDB; rm -f $OUT/tdb/*.lock
  if [ "${FEW_GRID:-1}" != 0 ]; then
    timeout 120 python3 -m rlscan.tune.bench --layouts time_major --baselines "" --out $OUT/b3 \
      2>&1 | grep -v "Warn\|_warn" | tail -3
  fi ;;
bench-suite)
  # the pytest-benchmark suite (tests/test_benchmarks.py, -m benchmark): eager calls of four
  # cells in both layouts, each round synchronised; JSON in $OUT/bench_suite.json (~1 min)
  (cd $R/tests && timeout ${SUITE_S:-240} python3 -m pytest . -m benchmark -q -rfEs \
    -p no:cacheprovider -o addopts="" --benchmark-json $OUT/bench_suite.json \
    --benchmark-columns min,median,mean,max,rounds 2>&1 | grep -v "Warn\|_warn" \
    | tee $OUT/bench_suite.log | tail -16) ;;
tm-grids)
  # the fp32 time-major grid (b3), then the bf16 one of GAE, discounted returns and V-trace (b4),
  # on the tree's DB (109 s on an H100, forty-fourth session)
  timeout 150 python3 -m rlscan.tune.bench --layouts time_major --baselines "" --out $OUT/b3 \
    2>&1 | grep -v "Warn\|_warn" | tail -2
  timeout 120 python3 -m rlscan.tune.bench --estimators gae,discounted_returns,vtrace \
    --dtypes bfloat16 --layouts time_major --baselines "" --out $OUT/b4 2>&1 \
    | grep -v "Warn\|_warn" | tail -2
  rm -f $OUT/b4/bench.png ;;
off-grid-bench)
  # (DB with the off-grid buckets in the tree) the heuristic's GPU tests (their shapes are tuned
  # now: the tests hide the DB), then rlscan-bench on the named off-grid sets: fp32 time-last
  # (bl) and time-major (bm) (~4 min on an H100)
  (cd $R/tests && timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -o addopts="" \
    test_estimators.py -k "untuned" 2>&1 | tail -3)
  timeout 130 python3 -m rlscan.tune.bench --shapes off-grid-envs,off-grid-sequences \
    --layouts time_last --baselines "" --out $OUT/bl 2>&1 | grep -v "Warn\|_warn" | tail -2
  timeout 70 python3 -m rlscan.tune.bench --shapes off-grid-envs --layouts time_major \
    --baselines "" --out $OUT/bm 2>&1 | grep -v "Warn\|_warn" | tail -2
  rm -f $OUT/bl/bench.png $OUT/bm/bench.png ;;
stand-in)
  # the fp32 time-last grid on a stand-in's DB: this GPU's own DB file removed, rlscan.tuning
  # takes a loaded DB of the same compute capability and SM count (and says which) (~40 s)
  rm -f $TDB
  timeout ${BENCH_S:-200} python3 -m rlscan.tune.bench --baselines "" --out $OUT/b5 \
    > $OUT/stand_in.log 2>&1
  grep -m1 "no tuning DB" $OUT/stand_in.log; grep -v "Warn\|_warn" $OUT/stand_in.log | tail -2
  rm -f $OUT/b5/bench.png ;;
compile)
  # torch.compile around the op rlscan::scan (rlscan/_custom_op.py, fortieth session, built on
  # CPU): tests/test_compile.py's GPU tests, then compile_probe.py's host cost a call
  (cd $R/tests && timeout 300 python3 -m pytest test_compile.py -m gpu -q -p no:cacheprovider \
    -o addopts="" 2>&1 | tail -3)
  timeout 240 python3 $R/benchmarks/compile_probe.py 2>&1 | grep -v "Warn\|_warn" \
    | tee $OUT/compile_probe.md | tail -8 ;;
loop-cores)
  # the host half of a call follows the core a process runs on (nineteenth session: GAE
  # 4096x128 18-36 us by core): the same cells pinned to several cores, one after another
  for c in ${CORES:-0 3 7 11 15}; do
    echo "## core $c" | tee -a $OUT/loop_cores.txt
    timeout 60 taskset -c $c python3 -m rlscan.tune.bench --shapes 4096x128 --baselines "" \
      --out /tmp/lc$c 2>&1 | grep -v "Warn\|_warn" | grep "^\[" | tee -a $OUT/loop_cores.txt
  done
  timeout 150 taskset -c ${CORES_HC:-3} python3 $R/benchmarks/host_cost.py 2>&1 \
    | grep -v "Warn\|_warn" | tee $OUT/host_cost.txt | tail -30 ;;
decay-walk)
  # how far a look-back walk goes on rows without resets when the coefficients decay: γ = D,
  # λ = 1 underflows to an exact 0 after ~103 / -ln(D) steps (0.9999: the whole row; 0.999:
  # 103k steps; 0.995: 21k; 0.99: 10k; 0.95: 2k), against the tuned (chunked) config
  export PYTHONPATH=/tmp/site:$R/benchmarks
  L=tuned,lookback:1x512:w1:c1:2l,lookback:1x256:w1:c1:2l,lookback:1x1024:w4:c1
  for e in gae discounted_returns; do
    for d in 1.0 0.9999 0.999 0.995 0.99 0.95; do
      timeout 60 python3 $R/benchmarks/compare_configs.py --estimator $e --no-resets --decay $d \
        --shapes 1x1048576,8x262144 --configs $L 2>&1 | grep -v "Warn\|_warn" \
        | tee -a $OUT/decay_walk.txt
    done
  done ;;
group16-ab)
  # groups of 16 (32 bytes of bf16 a thread; valid configs since the fourteenth session, not yet
  # tuner candidates) against the shipped DB's choice on the big bf16 cells
  export PYTHONPATH=/tmp/site:$R/benchmarks
  G=row_block:4x128:w1:2l:g16,row_block:8x128:w2:2l:g16,row_block:2x256:w1:2l:g16
  G=$G,row_block:4x256:w2:2l:g16,row_block:1x512:w1:2l:g16,row_block:4x512:w4:2l:g16:sp4
  for e in discounted_returns gae vtrace; do
    timeout 150 python3 $R/benchmarks/compare_configs.py --estimator $e --dtype bfloat16 \
      --shapes 65536x128,131072x256,16384x512,4096x2048,1024x8192 --configs tuned,$G --stale-db 2>&1 \
      | grep -v "Warn\|_warn" | tee -a $OUT/group16_ab.txt
  done ;;
*) echo "usage: device_run.sh tune-bench|sl-retune|unaligned-tm|off-grid-bench|bench-more|retune-buckets|stand-in|ab|gpu-tests[-1|-2]|verify|pdl-ab|fixup-ab|lookback-ab|fill-ab|decay-walk|group16-ab|grid-pinned|loop-cores|tune-mid|regcap-ab|bf16cap-ab|replay-sync|placement|clocks|walk-slack|persistent|tma-walk|tm-lookback|probes" >&2
   exit 2 ;;
esac
echo "took $(( $(date +%s) - T0 )) s"
