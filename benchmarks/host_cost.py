"""Host cost of one eager call on a CUDA machine: rlscan-bench's loop figure, repeated, for a
replayed call (rlscan/_replay.py), the same through Triton's Python launch wrapper (on triton
3.6, where rlscan skips it: launch._launcher_of) and for the whole path.

    python benchmarks/host_cost.py                       # GAE, discounted returns, V-trace
    python benchmarks/host_cost.py --shapes 4096x128,1x1048576 --runs 8
    python benchmarks/host_cost.py --series discounted_returns,gae,vtrace,gae

``--series``: the replayed calls' host time as a series (median µs a call of each block of 2,000
calls, timed one by one), estimators in the order given, so a slow phase shows whether it follows
the estimator or the clock; then each one's replay split into its parts.

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


def _series(order, N, T, blocks=8, per_block=2000):
    """Per-block medians of single-call host times, then a replay's parts (µs)."""
    calls = {}
    for est in dict.fromkeys(order):
        cell = grid.Cell(est, N, T, "float32", "time_last")
        calls[est] = grid.place(grid.draw(cell, 0, "cuda"), "time_last", "cuda")
        grid.run(est, calls[est])
        grid.run(est, calls[est])
    t_start = time.perf_counter()
    for est in order:
        call, clock = calls[est], time.perf_counter_ns
        meds = []
        for _ in range(blocks):
            ts = []
            for _ in range(per_block):
                t0 = clock()
                grid.run(est, call)
                ts.append(clock() - t0)
            torch.cuda.synchronize()
            ts.sort()
            meds.append((ts[len(ts) // 2] / 1e3, ts[len(ts) * 99 // 100] / 1e3))
        print(f"{time.perf_counter() - t_start:6.1f} s {est:18s} {N}x{T} median per block: "
              f"{' '.join(f'{m:.1f}' for m, _ in meds)}  (p99: "
              f"{' '.join(f'{p:.0f}' for _, p in meds)})", flush=True)
    for est, call in calls.items():
        srcs = [*call.args, *call.kwargs.values()]
        x = call.args[0]
        sig = lambda: tuple((a.shape, a.stride(), a.dtype, a.device, a.data_ptr() & 15)  # noqa
                            if isinstance(a, torch.Tensor) else (type(a), a) for a in srcs)
        n_out = grid.n_outputs(est)
        alloc = lambda: [torch.empty_like(x) for _ in range(n_out)]   # noqa: E731
        whole = host_us(lambda: grid.run(est, call), n=2000)
        saved = {k: p.launches for k, p in _replay._plans.items() if p is not None}
        for p in _replay._plans.values():
            if p is not None:
                p.launches = tuple((lambda *a: None, *rest) for _, *rest in p.launches)
                p.compile()
        no_launch = host_us(lambda: grid.run(est, call), n=2000)
        for k, launches in saved.items():
            _replay._plans[k].launches = launches
            _replay._plans[k].compile()
        print(f"{est:18s} replay {whole:5.1f} us: launches {whole - no_launch:4.1f}, "
              f"{n_out} empty_like {host_us(alloc, n=2000):4.1f}, signature "
              f"{host_us(sig, n=2000):4.1f}, replay without launches {no_launch:4.1f}",
              flush=True)


def _plans() -> int:
    return sum(p is not None for p in _replay._plans.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--estimators", default="gae,discounted_returns,vtrace")
    ap.add_argument("--shapes", default="4096x128")
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--series", default="", help="estimators in order (see above)")
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("host_cost.py needs a CUDA device", file=sys.stderr)
        return 2
    if a.series:
        for N, T in grid.parse_shapes(a.shapes):
            _series(a.series.split(","), N, T)
        return 0
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
