#!/usr/bin/env bash
# The device calls of a measurement round (run from the repo root; $OUT collects the logs).
#   bash benchmarks/device_run.sh tune-bench   # retune the default grid into $OUT/tdb (~400 s),
#                                              # then rlscan-bench with that DB: fp32 time-last
#                                              # grid with the eager-loop baseline (~80 s)
#   bash benchmarks/device_run.sh bench-more   # (DB committed) fp32 time-major grid, bf16 GAE +
#                                              # discounted, bf16 time-major (~4.5 min)
#   bash benchmarks/device_run.sh gpu-tests    # pytest -m gpu (~270 s)
#   bash benchmarks/device_run.sh verify       # rlscan-verify --profile thorough --jobs 14 (~470 s,
#                                              # CPU-bound; VERIFY_PROFILE=dev: ~100 s)
#   bash benchmarks/device_run.sh probes       # side-by-side probes queued in benchmarks/NOTES.md:
#                                              # standalone scans (wdesc), time-major bool/bf16
#                                              # loads (kernel_ab) (~5 min; no retune needed)
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
  # queued by the eighth session (the commands of its own probes are in
  # results/probes/2026-12-01_two_level_order_time_major_tiles.txt): the standalone scans with
  # the cross-warp backward scan over warps in descending time (``wdesc``), then time-major
  # loads of 4 rows a thread for bool flags and bf16 inputs (patches/time_major_rows4.patch)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  timeout 150 python3 $R/benchmarks/reverse_scan_probe.py 2>&1 | grep -v "Warn\|_warn"
  CELLS=4096x128@row_block:16x64:w8,65536x128@row_block:256x4:w2,131072x256@row_block:128x8:w1,16384x512@row_block:32x64:w4,1024x8192@chunked:128x4:w1:c8
  for dt in bfloat16 float32; do
    timeout 150 python3 $R/benchmarks/kernel_ab.py $R/benchmarks/patches/time_major_rows4.patch \
      --dtype $dt --layout time_major --estimators gae,discounted_returns,vtrace --cells $CELLS \
      2>&1 | grep -v "Warn\|_warn"
  done
  # time-major cells with too few 128-row programs (NOTES item 1): smaller tiles, shorter spans
  TM=row_block:32x64:w4,row_block:64x8:w1,row_block:64x16:w2,chunked:128x4:w1:c2,chunked:128x4:w1:c4,chunked:128x8:w1:c2,chunked:256x4:w2:c4
  timeout 90 python3 $R/benchmarks/compare_configs.py --estimator gae --layout time_major \
    --shapes 16384x512,4096x512,16384x128,4096x2048 --configs $TM 2>&1 | grep -v "Warn\|_warn" ;;
*) echo "usage: device_run.sh tune-bench|bench-more|gpu-tests|verify|probes" >&2; exit 2 ;;
esac
echo "took $(( $(date +%s) - T0 )) s"
