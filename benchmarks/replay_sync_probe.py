"""Device time of a cell's CUDA-graph replays timed two ways, in turns, in one process (GPU).

``rlscan-bench``'s device column times each replay from an idle GPU: it waits for a replay's
end event before it enqueues the next, so each interval also holds the graph launch's own
latency. The tuner (``timing.GraphTimer``) enqueues every replay and its events first and waits
once, so a replay's launch overlaps the one before. The shipped DB's tuner timings sit 0.38-0.56
µs a call under the grid's device column on the small cells (quartiles, twenty-ninth session:
same configs, but other machines); if the way of waiting is the cause, the grid's small-cell
figures carry ~0.45 µs of launch latency, as much as several cells miss floor + 3 µs by.
This probe times each cell's tuned config both ways (``bench.device_us``, ``back_to_back``)
and with the tuner's own timer (``timing.GraphTimer``) ``--rounds`` times in turns, beside a
graph of 20 one-element ``torch.add`` calls, where the difference is the launch's latency alone.
Thirtieth session (H200, `results/probes/2026-12-04_thirtieth_session_replay_sync.txt`): idle
minus back-to-back 0.01-0.30 µs a call (median 0.08; the adds 0.06-0.07), the tuner's timer
within 0.01 of back-to-back: the way of timing is not the gap, which lies between machines and
processes.

    python benchmarks/replay_sync_probe.py --estimators gae,vtrace --shapes 64x512,4096x128
"""
import argparse
import os
import statistics
import sys

import torch

from rlscan.tune import grid, timing
from rlscan.tune.bench import device_us

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_configs import grid_calls, interleaved, summary  # noqa: E402 - a sibling

SHAPES = "64x512,4096x128,16384x128,4096x512,512x4096,8x65536,32x32768,1x1048576,65536x128"


def three_ways(fns, rounds: int):
    """(idle, back_to_back, tuner): each a list of ``rounds`` device times per call (µs)."""
    timer = timing.GraphTimer("cuda")
    return interleaved([lambda: device_us(fns), lambda: device_us(fns, back_to_back=True),
                        lambda: timer(lambda i: fns[i](), len(fns))], rounds)


def line(name: str, idle, back, tuner) -> str:
    return (f"{name:<30} idle {summary(idle):<22} back-to-back {summary(back):<22} "
            f"tuner {summary(tuner):<22} "
            f"idle-back {statistics.median(idle) - statistics.median(back):+.2f} "
            f"idle-tuner {statistics.median(idle) - statistics.median(tuner):+.2f}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--estimators", default="gae,vtrace,discounted_returns")
    p.add_argument("--shapes", type=grid.parse_shapes, default=grid.parse_shapes(SHAPES))
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error(f"--rounds {args.rounds}: expected at least 1")
    for est in args.estimators.split(","):
        if est not in grid.ESTIMATORS:
            p.error(f"--estimators: unknown {est!r}; expected some of {grid.ESTIMATORS}")
    if not torch.cuda.is_available():
        print("replay_sync_probe needs a CUDA GPU", file=sys.stderr)
        return 2
    l2 = timing.l2_bytes(torch.device("cuda"))
    x = torch.zeros(1, device="cuda")
    print(line("torch.add, 1 element", *three_ways([lambda: x.add_(1)], args.rounds)),
          flush=True)
    for est in args.estimators.split(","):
        for N, T in args.shapes:
            calls = grid_calls(est, N, T, l2)
            fns = [(lambda c=c: grid.run(est, c)) for c in calls]
            print(line(f"{est} {N}x{T}", *three_ways(fns, args.rounds)), flush=True)
            del calls, fns
    return 0


if __name__ == "__main__":
    sys.exit(main())
