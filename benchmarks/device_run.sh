#!/usr/bin/env bash
# One device call (run from the repo root; $OUT collects the logs): GPU tests and
# rlscan-verify --profile thorough (8 estimators in parallel, CPU-bound) side by side, then
# rlscan-bench (fp32 grid with the eager-loop baseline, bf16 GAE and discounted returns).
# VERIFY_S / BENCH_S / BENCH2_S cap each phase (seconds).
R=$PWD
python3 -m pip install -q --no-deps --no-build-isolation --target /tmp/site . >/dev/null 2>&1; rm -rf build
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
mkdir -p /tmp/v; cd /tmp
T0=$(date +%s)
for e in gae vtrace retrace lambda_returns discounted_returns eligibility_traces episodic_cumsum linear_scan; do
  OMP_NUM_THREADS=1 timeout -s INT ${VERIFY_S:-300} python3 -m rlscan.verify.cli --profile thorough --estimator $e > /tmp/v/$e.log 2>&1 &
done
(cd $R/tests && OMP_NUM_THREADS=2 timeout 290 python3 -m pytest . -m gpu -q -p no:cacheprovider -o addopts="" > $OUT/gpu_tests.log 2>&1) &
wait
echo "verify+tests took $(( $(date +%s) - T0 )) s"
for e in gae vtrace retrace lambda_returns discounted_returns eligibility_traces episodic_cumsum linear_scan; do
  echo "=== $e"; grep -v "Warning\|_warn" /tmp/v/$e.log
done > $OUT/verify_thorough.log
tail -3 $OUT/gpu_tests.log
grep -h "^\[\|total\|pass\|FAIL" $OUT/verify_thorough.log | grep -c pass
T1=$(date +%s)
timeout ${BENCH_S:-170} python3 -m rlscan.tune.bench --baselines loop --out $OUT/b1 2>&1 | grep -v "Warn\|_warn" | tail -3
timeout ${BENCH2_S:-60} python3 -m rlscan.tune.bench --estimators gae,discounted_returns --dtypes bfloat16 --baselines "" --out $OUT/b2 2>&1 | grep -v "Warn\|_warn" | tail -2
rm -f $OUT/b2/bench.png
echo "bench took $(( $(date +%s) - T1 )) s"
