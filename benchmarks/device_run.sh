#!/usr/bin/env bash
# The device calls of a measurement round (run from the repo root; $OUT collects the logs).
#   bash benchmarks/device_run.sh tune-bench   # retune the default grid into $OUT/tdb (~400 s),
#                                              # then rlscan-bench with that DB: fp32 time-last
#                                              # grid with the eager-loop baseline (~80 s)
#   bash benchmarks/device_run.sh bench-more   # (DB committed) fp32 time-major grid, bf16 GAE, V-trace +
#                                              # discounted, bf16 time-major (~4.5 min)
#   bash benchmarks/device_run.sh gpu-tests    # pytest -m gpu (~270 s)
#   bash benchmarks/device_run.sh verify       # rlscan-verify --profile thorough --jobs 14 (~470 s,
#                                              # CPU-bound; VERIFY_PROFILE=dev: ~100 s)
#   bash benchmarks/device_run.sh probes       # two-level groups of 8 steps against 4, bf16
#                                              # (compare_configs, forced configs; ~2 min)
# One mode per call: together they exceed a call's 10 minutes. VERIFY_S / BENCH_S cap phases.
R=$PWD
rm -rf /tmp/site   # pip --target does not replace an existing package on a warm machine
python3 -m pip install -q --no-deps --no-build-isolation --target /tmp/site . >/dev/null 2>&1; rm -rf build
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
cd /tmp
T0=$(date +%s)
case "${1:-verify}" in
tune-bench)
  timeout -s INT 470 python3 -m rlscan.tune.cli --out $OUT/tdb > $OUT/tune.log 2>&1
  grep -v "Warn\|_warn" $OUT/tune.log | tail -3
  cp $OUT/tdb/nvidia-h200.json /tmp/site/rlscan/tuning_db/nvidia-h200.json
  echo "tune took $(( $(date +%s) - T0 )) s"
  timeout ${BENCH_S:-100} python3 -m rlscan.tune.bench --baselines loop --out $OUT/b1 2>&1 | grep -v "Warn\|_warn" | tail -3 ;;
bench-more)
  # with the retuned DB committed: the time-major fp32 grid, bf16 GAE + discounted returns (~3 min)
  timeout 120 python3 -m rlscan.tune.bench --layouts time_major --baselines "" --out $OUT/b3 2>&1 | grep -v "Warn\|_warn" | tail -3
  timeout 80 python3 -m rlscan.tune.bench --estimators gae,discounted_returns,vtrace --dtypes bfloat16 --baselines "" --out $OUT/b2 2>&1 | grep -v "Warn\|_warn" | tail -2
  # bf16 + bool flags in time-major buffers (CONTIG_ROWS, ninth session)
  timeout 80 python3 -m rlscan.tune.bench --estimators gae,discounted_returns,vtrace --dtypes bfloat16 --layouts time_major --baselines "" --out $OUT/b4 2>&1 | grep -v "Warn\|_warn" | tail -2
  rm -f $OUT/b2/bench.png $OUT/b4/bench.png ;;
gpu-tests)
  # alone: 357 tests in 269 s (eighth session); beside the benches or the verifier they were cut
  (cd $R/tests && timeout 420 python3 -m pytest . -m gpu -v -p no:cacheprovider -o addopts="" \
    --durations=12 > $OUT/gpu_tests.log 2>&1)
  tail -3 $OUT/gpu_tests.log ;;
verify)
  # the thorough profile alone (~470 s with 14 workers; the dev profile: 79 runs in 102 s)
  timeout -s INT -k 20 ${VERIFY_S:-540} python3 -m rlscan.verify.cli --profile ${VERIFY_PROFILE:-thorough} \
    --jobs 14 > $OUT/verify.log 2>&1
  grep -v "Warning\|_warn" $OUT/verify.log | tail -14 ;;
probes)
  # groups of 8 steps against 4 in the two-level tile (GROUP, configs.py), bf16 + bool, time-last
  export PYTHONPATH=/tmp/site:$R/benchmarks
  G=row_block:2x128:w2:2l,row_block:2x128:w1:2l:g8,row_block:4x128:w2:2l:g8,row_block:2x256:w2:2l:g8
  G=$G,row_block:1x256:w1:2l,row_block:1x256:w1:2l:g8,row_block:1x1024:w1:2l,row_block:1x1024:w1:2l:g8
  for est in discounted_returns gae vtrace; do
    timeout 120 python3 $R/benchmarks/compare_configs.py --estimator $est --dtype bfloat16 \
      --shapes 65536x128,131072x256,16384x512,1024x8192 --configs $G 2>&1 | grep -v "Warn\|_warn"
  done ;;
*) echo "usage: device_run.sh tune-bench|bench-more|gpu-tests|verify|probes" >&2; exit 2 ;;
esac
echo "took $(( $(date +%s) - T0 )) s"
