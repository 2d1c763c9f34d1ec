"""GAE or discounted returns on time-last rows sliced from rows one or two steps longer (odd and
2 mod 4 row strides at T a multiple of 16 or not), through the public API, against the same
call on contiguous copies: one line ``OK``/``ERR`` a cell.

    CUDA_LAUNCH_BLOCKING=1 python benchmarks/sliced_rows_probe.py gae row_block:4x256:w4:2l:sp4

``CONFIG`` is a ``compare_configs.py`` name (forced) or ``auto`` (what the call picks; its
``which_config`` printed first). Run one config a process: a misaligned address poisons the
CUDA context, and the first error ends the run. The fifty-eighth session's H200 runs found the
4-warp split tile on the kernel that specialises T dying here (compare_configs.py --row-pad 1
--tspec-ab); with launch._ODD_STRIDE_KERNEL every tile ran clean
(benchmarks/results/probes/2026-12-07_fifty-eighth_session_odd_stride_h200.txt).
"""
import argparse
import contextlib
import sys

import torch

import rlscan
from rlscan.kernels.launch import force_config

from compare_configs import parse_config  # noqa: E402 - a sibling script

CELLS = ((300, 2048, 2), (300, 2050, 1), (300, 2048, 1), (1500, 4096, 1))   # N, T, extra steps


def run(est: str, r, v, term):
    return (rlscan.gae(r, v, term, gamma=0.99, lmbda=0.95)[0] if est == "gae"
            else rlscan.discounted_returns(r, term, gamma=0.99))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("estimator", choices=("gae", "discounted_returns"))
    p.add_argument("config", help="a compare_configs.py config name, or auto")
    p.add_argument("dtype", nargs="?", default="float32", choices=("float32", "bfloat16"))
    args = p.parse_args(argv)
    est, name, dtype = args.estimator, args.config, args.dtype
    if not torch.cuda.is_available():
        print("sliced_rows_probe needs a CUDA GPU", file=sys.stderr)
        return 2
    cfg = None if name == "auto" else parse_config(name)
    gen = torch.Generator(device="cuda").manual_seed(0)
    for N, T, pad in CELLS:
        def sliced(flag=False):
            x = torch.rand(N, T + pad, device="cuda", generator=gen)
            return ((x < 0.05) if flag else x.to(getattr(torch, dtype)))[:, :T]
        r, v, term = sliced(), sliced(), sliced(flag=True)
        cell = f"{est} {N}x{T}+{pad} {dtype} {name}"
        try:
            if cfg is None:
                print("which:", rlscan.which_config(est, r).config)
            with force_config(**cfg) if cfg else contextlib.nullcontext():
                out = run(est, r, v, term)
            torch.cuda.synchronize()
            ref = run(est, r.contiguous(), v.contiguous(), term.contiguous())
            print(f"OK {cell}: max |difference| from contiguous "
                  f"{(out.float() - ref.float()).abs().max().item():.3g}", flush=True)
        except Exception as e:  # noqa: BLE001 - report the cell, then stop (the context is gone)
            print(f"ERR {cell}: {type(e).__name__} {str(e)[:80]}", flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
