#!/usr/bin/env bash
# The device calls of a measurement round (run from the repo root; $OUT collects the logs).
#   bash benchmarks/device_run.sh tune-bench   # retune the default grid into $OUT/tdb (~250 s),
#                                              # then rlscan-bench with that DB: fp32 grid with
#                                              # the eager-loop baseline, bf16 GAE + discounted,
#                                              # then the streaming-kernel floor (stream_floor.py)
#   bash benchmarks/device_run.sh verify       # pytest -m gpu beside rlscan-verify --profile
#                                              # thorough --jobs 14 (~380 s, CPU-bound)
#   bash benchmarks/device_run.sh probes       # side-by-side probes (benchmarks/NOTES.md): the
#                                              # persistent look-back probe, the standalone scans,
#                                              # two-level tiles and register caps on the big
#                                              # cells that miss (~3 min; no retune needed)
# One mode per call: together they exceed a call's 10 minutes. VERIFY_S / BENCH_S cap phases.
R=$PWD
rm -rf /tmp/site   # pip --target does not replace an existing package on a warm machine
python3 -m pip install -q --no-deps --no-build-isolation --target /tmp/site . >/dev/null 2>&1; rm -rf build
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
cd /tmp
T0=$(date +%s)
case "${1:-verify}" in
tune-bench)
  timeout -s INT 360 python3 -m rlscan.tune.cli --out $OUT/tdb > $OUT/tune.log 2>&1
  grep -v "Warn\|_warn" $OUT/tune.log | tail -3
  cp $OUT/tdb/nvidia-h200.json /tmp/site/rlscan/tuning_db/nvidia-h200.json
  echo "tune took $(( $(date +%s) - T0 )) s"
  timeout ${BENCH_S:-175} python3 -m rlscan.tune.bench --baselines loop --out $OUT/b1 2>&1 | grep -v "Warn\|_warn" | tail -3
  timeout 55 python3 -m rlscan.tune.bench --estimators gae,discounted_returns --dtypes bfloat16 --baselines "" --out $OUT/b2 2>&1 | grep -v "Warn\|_warn" | tail -2
  rm -f $OUT/b2/bench.png
  timeout 60 python3 $R/benchmarks/stream_floor.py > $OUT/stream_floor.md 2>&1; tail -4 $OUT/stream_floor.md ;;
verify)
  # 12 verifier workers leave the GPU tests 4 cores: beside 14 they overran 290 s (seventh
  # session; alone they take 30-180 s)
  timeout -s INT -k 20 ${VERIFY_S:-470} python3 -m rlscan.verify.cli --profile thorough --jobs 12 \
    > $OUT/verify_thorough.log 2>&1 &
  (cd $R/tests && OMP_NUM_THREADS=2 timeout 400 python3 -m pytest . -m gpu -q -p no:cacheprovider -o addopts="" > $OUT/gpu_tests.log 2>&1) &
  wait
  tail -3 $OUT/gpu_tests.log
  grep -v "Warning\|_warn" $OUT/verify_thorough.log | tail -14 ;;
probes)
  export PYTHONPATH=/tmp/site:$R/benchmarks
  timeout 120 python3 $R/benchmarks/persistent_lookback_probe.py 2>&1 | grep -v "Warn\|_warn"
  timeout 90 python3 $R/benchmarks/reverse_scan_probe.py 2>&1 | grep -v "Warn\|_warn"
  TILES=heuristic,row_block:2x128:w2:2l,row_block:2x128:w2:2l:r40,row_block:1x128:w1:2l:r32,row_block:1x256:w1:2l,row_block:1x512:w1:2l,row_block:1x1024:w1:2l,row_block:1x512:w4
  timeout 90 python3 $R/benchmarks/compare_configs.py --estimator discounted_returns \
    --shapes 65536x128,1024x8192 --configs $TILES 2>&1 | grep -v "Warn\|_warn"
  for e in lambda_returns vtrace; do
    timeout 60 python3 $R/benchmarks/compare_configs.py --estimator $e --shapes 1024x8192 \
      --configs $TILES 2>&1 | grep -v "Warn\|_warn"
  done ;;
*) echo "usage: device_run.sh tune-bench|verify|probes" >&2; exit 2 ;;
esac
echo "took $(( $(date +%s) - T0 )) s"
