"""Launch chosen rlscan calls a few times each, for Nsight Compute to profile (GPU):

    ncu --clock-control none --kernel-name fused_scan_kernel --launch-skip 2 --launch-count 1 \\
        --section SpeedOfLight --section Occupancy --section WarpStateStats \\
        python benchmarks/ncu_targets.py VARIANT

VARIANT: ``fwd`` / ``bwd`` (``linear_scan`` at 65536×128 forward / backward, shipped DB),
``disc`` (discounted returns 65536×128), ``bwd2l`` / ``bwdrev`` (the backward scan forced to
2×128/w2 with / without the two-level scan)."""
import sys

import torch

import rlscan
from rlscan.kernels.launch import force_config

N, T = 65536, 128
g = torch.Generator("cuda").manual_seed(0)
a = torch.rand(N, T, device="cuda", generator=g) * 0.99
b = torch.randn(N, T, device="cuda", generator=g)
done = (torch.rand(N, T, device="cuda", generator=g) < 0.01).float()
v = sys.argv[1]
cfg = {"bwd2l": dict(TWO_LEVEL=True), "bwdrev": {}}.get(v)
for _ in range(4):
    if cfg is not None:
        with force_config(strategy="row_block", BLOCK_N=2, BLOCK_T=128, num_warps=2, **cfg):
            rlscan.linear_scan(a, b, reverse=True)
    elif v == "disc":
        rlscan.discounted_returns(b, done, gamma=0.99)
    else:
        rlscan.linear_scan(a, b, reverse=(v == "bwd"))
torch.cuda.synchronize()
