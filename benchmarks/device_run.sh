#!/usr/bin/env bash
# The device calls of a measurement round (run from the repo root; $OUT collects the logs).
#   bash benchmarks/device_run.sh tune-bench   # retune the default grid into $OUT/tdb (~400 s),
#                                              # then rlscan-bench with that DB: fp32 time-last
#                                              # grid with the eager-loop baseline (~80 s)
#   bash benchmarks/device_run.sh bench-more   # (DB committed) fp32 time-major grid, bf16 GAE +
#                                              # discounted (~3 min)
#   bash benchmarks/device_run.sh gpu-tests    # pytest -m gpu (~270 s)
#   bash benchmarks/device_run.sh verify       # rlscan-verify --profile thorough --jobs 14 (~470 s,
#                                              # CPU-bound; VERIFY_PROFILE=dev: ~100 s)
#   bash benchmarks/device_run.sh probes       # side-by-side probes (benchmarks/NOTES.md): the
#                                              # two-level tile order (kernel_ab) and time-major
#                                              # tiles (compare_configs) (~5 min; no retune needed)
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
  timeout 55 python3 -m rlscan.tune.bench --estimators gae,discounted_returns --dtypes bfloat16 --baselines "" --out $OUT/b2 2>&1 | grep -v "Warn\|_warn" | tail -2
  rm -f $OUT/b2/bench.png ;;
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
  # eighth session: the two-level tile's order (shipped [G, Q, BN, 4] vs the old [Q, BN, G, 4])
  # on time-last cells, then time-major tiles that keep a chunk's steps in each thread
  export PYTHONPATH=/tmp/site:$R/benchmarks
  CELLS=65536x128@row_block:2x128:w2:2l,65536x128@row_block:2x128:w2:2l:r40,65536x128@row_block:1x128:w1:2l:r32,16384x512@row_block:1x256:w1:2l,4096x2048@row_block:1x256:w1:2l,1024x8192@row_block:1x256:w1:2l,1024x8192@row_block:1x512:w1:2l,8x262144@chunked:2x128:w2:c4:2l
  timeout 150 python3 $R/benchmarks/kernel_ab.py $R/benchmarks/patches/two_level_old_order.patch \
    --estimators discounted_returns,gae,vtrace --cells $CELLS 2>&1 | grep -v "Warn\|_warn"
  TM=heuristic,row_block:16x64:w8,row_block:32x64:w4,row_block:128x4:w1,row_block:128x8:w1,row_block:256x4:w2,row_block:512x4:w4,row_block:128x16:w4,row_block:128x32:w8,chunked:128x4:w1:c8,chunked:128x16:w4:c2
  for e in discounted_returns gae vtrace eligibility_traces; do
    timeout 100 python3 $R/benchmarks/compare_configs.py --estimator $e --layout time_major \
      --shapes 4096x128,65536x128,16384x512,131072x256,4096x2048,1024x8192,512x4096,8x65536 \
      --configs $TM 2>&1 | grep -v "Warn\|_warn"
  done
  timeout 60 python3 $R/benchmarks/compare_configs.py --estimator discounted_returns \
    --layout time_major --ascending-time-major --shapes 4096x128,65536x128,16384x512,1024x8192 \
    --configs row_block:16x64:w8,row_block:128x4:w1,row_block:128x16:w4 2>&1 | grep -v "Warn\|_warn" ;;
*) echo "usage: device_run.sh tune-bench|bench-more|gpu-tests|verify|probes" >&2; exit 2 ;;
esac
echo "took $(( $(date +%s) - T0 )) s"
