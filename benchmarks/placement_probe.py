"""Does a cell's device time follow where its input sets land in memory? (GPU)

V-trace at 64x512 runs in one of two modes a process, not a timing: its 4x128/w4/sp4 tile took
2.86 µs in the tuner and 3.18 in the grid on the same machine minutes later, 3.19-3.21 in
``replay_sync_probe.py`` on another (its three ways of timing alike there), and 1x512/w8 read
3.02 or 3.39 a process (twenty-ninth and thirtieth sessions); GAE and discounted returns at
64x512 agreed between tuner and grid within 0.02 µs. Every process draws its input sets anew.
This probe draws one cell's sets ``--placements`` times in one process, each after a spacer
allocation ``--spacer`` bytes larger than the one before (all kept alive, so each placement
lands elsewhere), and times every placement under one forced config (``--config``; ``tuned``,
the shipped DB's, by default) ``--rounds`` times, round-robin (``bench.device_us``). Timings
that split by placement, each placement's own rounds alike, say the mode follows the memory;
timings alike across placements say it does not (then it is the process or the machine).

    python benchmarks/placement_probe.py --estimator vtrace --shape 64x512 --placements 8
"""
import argparse
import os
import statistics
import sys

import torch

from rlscan.kernels.heuristic import heuristic_config
from rlscan.kernels.launch import force_config
from rlscan.tune import grid, timing
from rlscan.tune.bench import device_us

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_configs import (grid_calls, interleaved, parse_config,  # noqa: E402 - a sibling
                             summary, tuned_config)


def place(make_sets, placements: int, spacer: int, device):
    """``placements`` times: a spacer of ``k * spacer`` bytes (k = 0, 1, ...), then
    ``make_sets()``. A list of (spacer, sets): hold it while timing, so that no placement's
    memory is handed to the next."""
    if placements < 1:
        raise ValueError(f"placements={placements!r}; expected at least 1")
    if spacer < 0:
        raise ValueError(f"spacer={spacer!r}; expected a byte count >= 0")
    out = []
    for k in range(placements):
        pad = torch.empty(k * spacer, dtype=torch.uint8, device=device)
        out.append((pad, make_sets()))
    return out


def first_address(call: grid.Call) -> int:
    """The device address of a call's first tensor argument (its rewards or inputs)."""
    tensors = [a for a in call.args if isinstance(a, torch.Tensor)]
    tensors += [v for v in call.kwargs.values() if isinstance(v, torch.Tensor)]
    return tensors[0].data_ptr()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--estimator", default="vtrace", choices=grid.ESTIMATORS)
    p.add_argument("--shape", type=grid.parse_shapes, default=grid.parse_shapes("64x512"))
    p.add_argument("--dtype", default="float32", choices=grid.DTYPES)
    p.add_argument("--config", type=parse_config, default="tuned",
                   help="tuned (default), heuristic, or compare_configs.py's STRATEGY:BNxBT:... "
                        "form")
    p.add_argument("--placements", type=int, default=6)
    p.add_argument("--spacer", type=int, default=(1 << 20) + 4096 * 3 + 256,
                   help="bytes the spacer grows by from one placement to the next (default "
                        "1 MiB + 12.25 KiB: other offsets in a 2 MiB page and a 64 KiB one)")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args(argv)
    if len(args.shape) != 1:
        p.error(f"--shape: one NxT, got {len(args.shape)}")
    if args.placements < 1 or args.rounds < 1 or args.spacer < 0:
        p.error("--placements and --rounds: at least 1; --spacer: at least 0")
    if not torch.cuda.is_available():
        print("placement_probe needs a CUDA GPU", file=sys.stderr)
        return 2
    est, (N, T) = args.estimator, args.shape[0]
    l2 = timing.l2_bytes(torch.device("cuda"))
    placed = place(lambda: grid_calls(est, N, T, l2, args.dtype), args.placements, args.spacer,
                   "cuda")
    cfg = args.config
    if cfg == "tuned":
        cfg = tuned_config(est, placed[0][1][0])
    if cfg is None:
        cfg = heuristic_config(N, T, False)

    def measure(sets):
        with force_config(**cfg):
            return device_us([(lambda c=c: grid.run(est, c)) for c in sets])
    with force_config(**cfg):
        want = grid.run(est, placed[0][1][0])[0].float()
        for _, sets in placed[1:]:     # the same draws wherever they land
            if not torch.equal(grid.run(est, sets[0])[0].float(), want):
                print("placement_probe: results differ between placements", file=sys.stderr)
                return 1
    timings = interleaved([lambda s=sets: measure(s) for _, sets in placed], args.rounds)
    print(f"{est} {args.dtype} {N}x{T} config {cfg} ({len(placed[0][1])} input sets a "
          f"placement, {args.rounds} rounds)")
    for k, ((pad, sets), t) in enumerate(zip(placed, timings)):
        addr = first_address(sets[0])
        print(f"placement {k} spacer {pad.numel():>9} B first input {addr:#x} "
              f"(mod 2 MiB {addr % (2 << 20):#8x}) {summary(t)}", flush=True)
    medians = [statistics.median(t) for t in timings]
    print(f"medians {min(medians):.2f}-{max(medians):.2f} µs across placements; within a "
          f"placement at most {max(max(t) - min(t) for t in timings):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
