"""Launch one rlscan call at 65536×128 a few times, for Nsight Compute to profile (GPU):

    ncu --clock-control none --kernel-name fused_scan_kernel --launch-skip 2 --launch-count 1 \\
        --section SpeedOfLight --section Occupancy --section WarpStateStats \\
        python benchmarks/ncu_targets.py VARIANT

VARIANT: ``fwd`` / ``bwd`` (``linear_scan`` forward / backward, shipped DB), ``disc``
(discounted returns, shipped DB), ``bwd2l`` / ``bwdrev`` (the backward scan forced to 2×128/w2
with / without the two-level scan). The seventh session's readings are in
``results/probes/2026-12-01_register_caps.txt``."""
import argparse

import torch

import rlscan
from rlscan.kernels.launch import force_config

VARIANTS = ("fwd", "bwd", "disc", "bwd2l", "bwdrev")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("variant", choices=VARIANTS)
    v = p.parse_args(argv).variant
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


if __name__ == "__main__":
    raise SystemExit(main())
