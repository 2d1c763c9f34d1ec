"""Host cost of one eager call on a CUDA machine: rlscan-bench's loop figure, repeated, for a
replayed call (rlscan/_replay.py), the same through Triton's Python launch wrapper (on triton
3.6, where rlscan skips it: launch._launcher_of) and for the whole path.

    python benchmarks/host_cost.py                       # GAE, discounted returns, V-trace
    python benchmarks/host_cost.py --shapes 4096x128,1x1048576 --runs 8

Writes nothing; benchmarks/results/host_cost_h200.md holds the H200's figures.
"""
import argparse
import statistics
import sys
import time

import torch

from rlscan import _replay
from rlscan.kernels import launch
from rlscan.tune import grid
from rlscan.tune.bench import loop_us


def host_us(fn, n=3000, reps=5):
    """Host time of one call (perf_counter over n calls, best of reps)."""
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def _plans() -> int:
    return sum(p is not None for p in _replay._plans.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--estimators", default="gae,discounted_returns,vtrace")
    ap.add_argument("--shapes", default="4096x128")
    ap.add_argument("--runs", type=int, default=8)
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("host_cost.py needs a CUDA device", file=sys.stderr)
        return 2
    for N, T in grid.parse_shapes(a.shapes):
        for est in a.estimators.split(","):
            cell = grid.Cell(est, N, T, "float32", "time_last")
            call = grid.place(grid.draw(cell, 0, "cuda"), "time_last", "cuda")
            fn = lambda: grid.run(est, call)   # noqa: E731
            fn()
            gate, raw0 = _replay._gate, launch._RAW_LAUNCH
            variants = [("replay", gate, raw0), ("whole path", None, raw0)]
            if raw0:      # the same replay through Triton's Python wrapper
                variants.insert(1, ("replay, wrapper", gate, False))
            for label, g, raw in variants:
                _replay._gate, launch._RAW_LAUNCH = g, raw
                launch._compiled.clear()
                _replay.forget()
                fn()
                loops = [loop_us(fn) for _ in range(a.runs)]
                print(f"{est:18s} {N}x{T:<8d} {label:15s} loop {statistics.median(loops):6.1f} "
                      f"(runs: {' '.join(f'{x:.1f}' for x in loops)})  perf_counter "
                      f"{host_us(fn):6.1f} us  ({_plans()} plan(s) recorded)", flush=True)
            _replay._gate, launch._RAW_LAUNCH = gate, raw0
    x = torch.empty(4096, 128, device="cuda")
    two = host_us(lambda: (torch.empty_like(x), torch.empty_like(x)))
    print(f"two torch.empty_like: {two:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
