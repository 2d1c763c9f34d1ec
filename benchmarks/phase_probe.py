"""Where a long-horizon call's device time goes (GPU): each launch of it alone, against a kernel
that only streams the same bytes and against empty launches.

Long horizons (few rows x 32k-1M steps) run chunked: one launch writes each span's summary,
a second folds the earlier summaries and writes the outputs (a third, the carry kernel, when
the summaries do not fit one tile). They sit 2-5x over the bandwidth floor, 5-14 us over it,
and nothing so far has said whether that is the launches' fixed cost, the inputs read twice, or
the scan. Per cell, CUDA-graph device time (rlscan-bench's method) of:

    call       the shipped call (tuned config)
    launch k   the call with every launch but the k-th dropped (the others' outputs are never
               written; the time is what that launch costs in the graph on its own)
    stream     a kernel that reads every input stream once and writes the outputs
    empty xK   K one-program launches of an empty kernel, back to back (graph launch cost)

    python benchmarks/phase_probe.py                       # default cells, fp32, time-last
    python benchmarks/phase_probe.py --estimators gae --shapes 1x1048576,8x65536

Replays are turned off so that every call goes through the launcher, where launches are
dropped; device time does not see the host.
"""
import argparse

import torch
import triton
import triton.language as tl

from rlscan import _replay
from rlscan.kernels import launch
from rlscan.tune import grid
from rlscan.tune.bench import copy_bandwidth, device_us

CELLS = "1x1048576,8x262144,8x65536,32x32768,128x16384"


@triton.jit
def _stream(X, Y, n, READS: tl.constexpr, WRITES: tl.constexpr, BLOCK: tl.constexpr):
    # READS fp32 streams of n elements laid end to end in X, WRITES in Y
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    s = tl.zeros([BLOCK], tl.float32)
    for i in tl.static_range(READS):
        s += tl.load(X + i * n + o, mask=m, other=0.0)
    for i in tl.static_range(WRITES):
        tl.store(Y + i * n + o, s, mask=m)


@triton.jit
def _empty(X):
    pass


def _only_launch(k):
    """A launch._run that passes on the k-th launch of each call (counted from 0) only."""
    run, seen = launch._run, [0]

    def one(*args, **kwargs):
        if seen[0] == k:
            run(*args, **kwargs)
        seen[0] += 1
    return one, seen


def launches_of(fn) -> int:
    """How many launches one call of ``fn`` makes."""
    count, run = [0], launch._run

    def counting(*args, **kwargs):
        count[0] += 1
        return run(*args, **kwargs)
    launch._run = counting
    try:
        fn()
    finally:
        launch._run = run
    return count[0]


def probe_cell(est, N, T, bw, sets=3):
    cell = grid.Cell(est, N, T, "float32", "time_last")
    calls = [grid.place(grid.draw(cell, i, "cuda"), "time_last", "cuda") for i in range(sets)]
    fns = [(lambda c=c: grid.run(est, c)) for c in calls]
    n_out = grid.n_outputs(est)
    nbytes = grid.traffic_bytes(calls[0], n_out)
    row = {"cell": f"{est} {N}x{T}", "floor": nbytes / bw * 1e6, "call": device_us(fns)}
    n = launches_of(fns[0])
    run = launch._run
    for k in range(n):
        one, seen = _only_launch(k)

        def wrapped(f):
            def call():
                seen[0] = 0
                f()
            return call
        launch._run = one
        try:
            row[f"launch {k}"] = device_us([wrapped(f) for f in fns])
        finally:
            launch._run = run
    # the same bytes as fp32 streams: reads = bytes / 4 / (N T) - outputs
    steps = N * T
    reads = max(1, round(nbytes / 4 / steps) - n_out)
    x = torch.randn(reads * steps, device="cuda")
    y = torch.empty(n_out * steps, device="cuda")
    block = 1024
    row["stream"] = device_us([lambda: _stream[(triton.cdiv(steps, block),)](
        x, y, steps, READS=reads, WRITES=n_out, BLOCK=block)])
    return row, n


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--estimators", default="discounted_returns,gae")
    p.add_argument("--shapes", type=grid.parse_shapes, default=grid.parse_shapes(CELLS))
    a = p.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("phase_probe.py needs a CUDA GPU")
    _replay._gate = lambda: False          # every call through the launcher (see above)
    bw = copy_bandwidth()
    z = torch.zeros(1, device="cuda")
    empty = {k: device_us([lambda k=k: [_empty[(1,)](z) for _ in range(k)]], calls=10)
             for k in (1, 2, 3)}
    print(f"copy bandwidth {bw / 1e12:.2f} TB/s; empty launches in a graph: "
          + ", ".join(f"x{k} {v:.2f} us" for k, v in empty.items()))
    print("| cell | floor | call | each launch alone | stream |")
    print("|---|---:|---:|---|---:|")
    for est in a.estimators.split(","):
        for N, T in a.shapes:
            row, n = probe_cell(est, N, T, bw)
            alone = " / ".join(f"{row[f'launch {k}']:.1f}" for k in range(n))
            print(f"| {row['cell']} | {row['floor']:.1f} | {row['call']:.1f} | {alone} "
                  f"| {row['stream']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
