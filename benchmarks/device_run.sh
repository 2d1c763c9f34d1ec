#!/usr/bin/env bash
# One device call (run from the repo root; $OUT collects the logs): GPU tests and
# rlscan-verify --profile thorough --jobs 14 (CPU-bound) side by side, then
# rlscan-bench (fp32 grid with the eager-loop baseline, bf16 GAE and discounted returns).
# VERIFY_S / BENCH_S / BENCH2_S cap each phase (seconds).
R=$PWD
python3 -m pip install -q --no-deps --no-build-isolation --target /tmp/site . >/dev/null 2>&1; rm -rf build
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
cd /tmp
T0=$(date +%s)
timeout -s INT -k 20 ${VERIFY_S:-420} python3 -m rlscan.verify.cli --profile thorough --jobs 14 \
  > $OUT/verify_thorough.log 2>&1 &
(cd $R/tests && OMP_NUM_THREADS=2 timeout 290 python3 -m pytest . -m gpu -q -p no:cacheprovider -o addopts="" > $OUT/gpu_tests.log 2>&1) &
wait
echo "verify+tests took $(( $(date +%s) - T0 )) s"
tail -3 $OUT/gpu_tests.log
grep -v "Warning\|_warn" $OUT/verify_thorough.log | tail -14
T1=$(date +%s)
timeout ${BENCH_S:-170} python3 -m rlscan.tune.bench --baselines loop --out $OUT/b1 2>&1 | grep -v "Warn\|_warn" | tail -3
timeout ${BENCH2_S:-60} python3 -m rlscan.tune.bench --estimators gae,discounted_returns --dtypes bfloat16 --baselines "" --out $OUT/b2 2>&1 | grep -v "Warn\|_warn" | tail -2
rm -f $OUT/b2/bench.png
echo "bench took $(( $(date +%s) - T1 )) s"
