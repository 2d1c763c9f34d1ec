"""Whether freeing a call's outputs inside the timed graph keeps its writes in L2. The public
calls allocate their outputs per call; inside a captured graph the caching allocator hands a call
the block the call before it freed, so every call of the graph writes the same lines, which may
stay in L2 and never reach DRAM, while the streaming reference (stream_floor.py) writes each input
set's own outputs. ``bench.device_us`` and ``timing.GraphTimer`` therefore hold every captured
call's outputs (since the twenty-seventh session). Per cell: how many distinct first-output
addresses a graph of the grid's calls writes when nothing is held, then the device time
(rlscan-bench's method, input sets spanning three L2 caches) without and with the outputs held.

    python benchmarks/output_reuse_probe.py --estimators discounted_returns,gae \\
        --shapes 4096x128,16384x128,8x262144,1x1048576
"""
import sys

import torch

from rlscan.tune import grid
from rlscan.tune.bench import device_us

from compare_configs import grid_calls, probe_cells   # a sibling script (its folder is on sys.path)


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
    cli = probe_cells("output_reuse_probe", __doc__, "discounted_returns,gae",
                      "4096x128,16384x128,8x262144,1x1048576", argv)
    if cli is None:
        return 2
    l2, cells = cli
    print("| estimator | cell | input sets | distinct outputs | device us, freed | held |")
    print("|---|---|---:|---:|---:|---:|")
    for est, N, T in cells:
        shape = f"{N}x{T}"
        calls = grid_calls(est, N, T, l2)
        fns = [(lambda c=c: grid.run(est, c)) for c in calls]
        distinct = distinct_outputs(fns)
        us = device_us(fns, hold_outputs=False)
        us_held = device_us(fns)
        print(f"| {est} | {shape} | {len(calls)} | {distinct} | {us:.2f} | {us_held:.2f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
