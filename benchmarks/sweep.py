"""Sweep the row-block kernel's configs on a few cells, to choose the launch heuristic.

    python benchmarks/sweep.py [--est gae] [--cells 4096x128,...] [--out FILE]
"""
import argparse
import itertools
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
import cases  # noqa: E402
from quick_timing import device_us, floor_us  # noqa: E402

from rlscan.kernels.launch import force_config  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--est", default="gae")
    p.add_argument("--cells", default="4096x128,16384x512,512x4096,64x512")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    rows = []
    for cell in args.cells.split(","):
        N, T = map(int, cell.split("x"))
        kw, _ = cases.make(args.est, (N, T), seed=0, gamma=0.99, lmbda=0.95)
        kw = {k: (v.cuda() if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        ref = cases.as_tuple(cases.call(args.est, kw))
        best = None
        for bn, bt, nw in itertools.product([1, 2, 4, 8, 16], [64, 128, 256, 512, 1024, 2048],
                                            [1, 2, 4, 8]):
            if bt > max(64, triton_np2(T)) or bn * bt > 16384 or bn * bt < 32 * nw:
                continue
            with force_config(BLOCK_N=bn, BLOCK_T=bt, num_warps=nw):
                try:
                    out = cases.as_tuple(cases.call(args.est, kw))
                    ok = all(torch.allclose(o, r, rtol=1e-4, atol=1e-4) for o, r in zip(out, ref))
                    us = device_us(lambda: cases.call(args.est, kw), calls=10, replays=10)
                except Exception as e:  # out of resources, compile failure
                    print(f"{cell} {bn} {bt} {nw} failed: {type(e).__name__}")
                    continue
            rows.append(dict(N=N, T=T, BLOCK_N=bn, BLOCK_T=bt, num_warps=nw, us=us, ok=ok))
            if ok and (best is None or us < best["us"]):
                best = rows[-1]
        fl = floor_us(kw, args.est)
        print(f"BEST {args.est} {cell}: {best} floor {fl:.1f} us", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


def triton_np2(n):
    return 1 << (max(n, 1) - 1).bit_length()


if __name__ == "__main__":
    main()
