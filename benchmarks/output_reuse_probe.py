"""Whether rlscan-bench's device column keeps a call's writes in L2 (prepared in the twenty-sixth
session, not yet run). The public calls allocate their outputs per call; inside a captured graph
the caching allocator may hand a call the block the call before it freed, so every call of the
graph writes the same lines, which may stay in L2 and never reach DRAM, while the streaming
reference (stream_floor.py, since the twenty-sixth session) writes each input set's own outputs.
Per cell: how many distinct first-output addresses a graph of the grid's calls writes, then the
device time (rlscan-bench's method, input sets spanning three L2 caches) as rlscan-bench takes it
and with every call's outputs held until the graph is captured (so no block is reused).

    python benchmarks/output_reuse_probe.py --estimators discounted_returns,gae \\
        --shapes 4096x128,16384x128,8x262144,1x1048576
"""
import argparse
import sys

import torch

from rlscan.tune import grid, timing
from rlscan.tune.bench import device_us, input_set_count


def distinct_outputs(fns) -> int:
    """Distinct first-output addresses of one call of each of ``fns`` captured in one graph."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fns[0]()
    torch.cuda.current_stream().wait_stream(side)
    seen, g = set(), torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for f in fns:
            seen.add(f()[0].data_ptr())
    return len(seen)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--estimators", default="discounted_returns,gae")
    p.add_argument("--shapes", default="4096x128,16384x128,8x262144,1x1048576")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("output_reuse_probe needs a CUDA GPU", file=sys.stderr)
        return 2
    l2 = timing.l2_bytes(torch.device("cuda"))
    print("| estimator | cell | input sets | distinct outputs | device us | outputs held |")
    print("|---|---|---:|---:|---:|---:|")
    for est in args.estimators.split(","):
        for shape in args.shapes.split(","):
            N, T = map(int, shape.split("x"))
            cell = grid.Cell(est, N, T, "float32", "time_last")
            c0 = grid.place(grid.draw(cell, 0, "cuda"), "time_last", "cuda")
            n = input_set_count(grid.traffic_bytes(c0, grid.n_outputs(est)), l2)
            calls = [c0] + [grid.place(grid.draw(cell, i, "cuda"), "time_last", "cuda")
                            for i in range(1, n)]
            fns = [(lambda c=c: grid.run(est, c)) for c in calls]
            held = []
            kept = [(lambda f=f: held.append(f())) for f in fns]
            distinct = distinct_outputs(fns)
            us = device_us(fns)
            us_held = device_us(kept)
            held.clear()
            print(f"| {est} | {shape} | {n} | {distinct} | {us:.2f} | {us_held:.2f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
