"""Launch one rlscan call at 65536×128 a few times, for Nsight Compute to profile (GPU):

    ncu --clock-control none --kernel-name fused_scan_kernel --launch-skip 2 --launch-count 1 \\
        --section SpeedOfLight --section Occupancy --section WarpStateStats \\
        python benchmarks/ncu_targets.py VARIANT

VARIANT: ``fwd`` / ``bwd`` (``linear_scan`` forward / backward, shipped DB), ``disc``
(discounted returns, shipped DB), ``bwd2l`` / ``bwdrev`` (the backward scan forced to 2×128/w2
with / without the two-level scan). The seventh session's readings are in
``results/probes/2026-12-01_register_caps.txt``.

Or any grid cell under any forced config (``compare_configs.py`` names; ``tuned`` for the DB's),
on the tuner's input set 0 (fp32, time-last), ``--calls`` times:

    ncu ... python benchmarks/ncu_targets.py --cell discounted_returns:8x262144 \
        --config lookback:1x256:w1:c1:2l
"""
import argparse

import torch

import rlscan
from rlscan.kernels.launch import force_config

VARIANTS = ("fwd", "bwd", "disc", "bwd2l", "bwdrev")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("variant", nargs="?", choices=VARIANTS)
    p.add_argument("--cell", help="ESTIMATOR:NxT, instead of a variant")
    p.add_argument("--config", default="tuned", help="with --cell (compare_configs.py names)")
    p.add_argument("--calls", type=int, default=4)
    p.add_argument("--device", default="cuda", help="with --cell: cpu to check it in Triton's "
                   "interpreter (TRITON_INTERPRET=1 RLSCAN_INTERPRET=1)")
    args = p.parse_args(argv)
    if (args.variant is None) == (args.cell is None):
        p.error("give a variant or --cell, not both")
    if args.cell:
        return run_cell(p, args)
    v = args.variant
    N, T = 65536, 128
    g = torch.Generator("cuda").manual_seed(0)
    a = torch.rand(N, T, device="cuda", generator=g) * 0.99
    b = torch.randn(N, T, device="cuda", generator=g)
    done = (torch.rand(N, T, device="cuda", generator=g) < 0.01).float()
    for _ in range(4):
        if v in ("bwd2l", "bwdrev"):
            with force_config(strategy="row_block", BLOCK_N=2, BLOCK_T=128, num_warps=2,
                              TWO_LEVEL=(v == "bwd2l")):
                rlscan.linear_scan(a, b, reverse=True)
        elif v == "disc":
            rlscan.discounted_returns(b, done, gamma=0.99)
        else:
            rlscan.linear_scan(a, b, reverse=(v == "bwd"))
    torch.cuda.synchronize()
    return 0


def run_cell(p, args) -> int:
    from compare_configs import parse_config
    from rlscan.tune import grid
    try:
        est, shape = args.cell.split(":")
        (N, T), = grid.parse_shapes(shape)
    except ValueError:
        p.error(f"--cell {args.cell!r}: expected ESTIMATOR:NxT")
    try:
        cfg = parse_config(args.config)
    except argparse.ArgumentTypeError as e:
        p.error(str(e))
    call = grid.draw(grid.Cell(est, N, T, "float32", "time_last"), 0, device=args.device)
    for _ in range(args.calls):
        if cfg == "tuned":
            grid.run(est, call)
        else:
            with force_config(**cfg):
                grid.run(est, call)
    if args.device == "cuda":
        torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
