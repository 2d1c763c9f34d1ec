"""Whether a public call costs more device time than its tuned config forced: per cell, the
kernels one eager call launches (torch.profiler), then the CUDA-graph device time (rlscan-bench's
method, input sets spanning three L2 caches) of the call as shipped, with recorded-plan replay
off, and under force_config(tuned). Asked because V-trace and Retrace 64x512 took 3.2-3.3 us in
the grids and 2.8-2.9 forced in compare_configs.py (twenty-sixth session); within one process
the three agreed within 0.04 us (one fused_scan_kernel each), so the gap was the process's,
not the path's.

    python benchmarks/call_path_probe.py --estimators vtrace,retrace,gae --shapes 64x512,4096x128
"""
import sys

import torch

from rlscan import _replay
from rlscan.kernels.launch import force_config
from rlscan.tune import grid
from rlscan.tune.bench import device_us

from compare_configs import grid_calls, probe_cells, tuned_config  # a sibling script


def kernels_of(fn):
    """Names of the GPU kernels one call of ``fn`` launches, in order."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]


def main(argv=None) -> int:
    cli = probe_cells("call_path_probe", __doc__, "vtrace,retrace,gae", "64x512,4096x128", argv)
    if cli is None:
        return 2
    l2, cells = cli
    for est, N, T in cells:
        shape = f"{N}x{T}"
        calls = grid_calls(est, N, T, l2)
        cfg = tuned_config(est, calls[0])
        fns = [(lambda c=c: grid.run(est, c)) for c in calls]
        print(f"{est} {shape} tuned {cfg}")
        print("  kernels:", ", ".join(k[:40] for k in kernels_of(fns[0])))
        shipped = device_us(fns)
        gate = _replay._gate
        _replay._gate = lambda: False
        try:
            no_replay = device_us(fns)
        finally:
            _replay._gate = gate
        with force_config(**cfg):
            print("  kernels forced:", ", ".join(k[:40] for k in kernels_of(fns[0])))
            forced = device_us(fns)
        print(f"  device us: shipped {shipped:.2f}  no replay {no_replay:.2f}  "
              f"forced {forced:.2f}  ({len(calls)} input sets)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
