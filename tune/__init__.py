"""The tuner behind ``rlscan-tune`` (installed as ``rlscan.tune``).

grid.py     the shape grid of BENCHMARKS.md and each estimator's inputs
timing.py   device time of one candidate: CUDA-graph replays over rotated input sets
workers.py  float64 references and Triton compiles in worker processes, ahead of the timer
sweep.py    per bucket: check every candidate against float64, time it, keep the fastest
db.py       merge the winners into ``<gpu-slug>.json``, atomically, under a file lock
cli.py      the command line

The run-time side (reading the DB, choosing a config per call) is rlscan/tuning.py; the
candidate spaces are rlscan/kernels/configs.py, beside the kernels.
"""
