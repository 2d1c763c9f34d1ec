"""Device time (CUDA-graph replay, BENCHMARKS.md method) of every estimator on a few cells.

    python benchmarks/quick_timing.py [--cells 4096x128,16384x512] [--out FILE]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
import cases  # noqa: E402

BW = 4.26e12   # measured device-to-device copy bandwidth of the H200 (BENCHMARKS.md)


def device_us(fn, calls=20, replays=20):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    times = []
    for _ in range(replays):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / calls)
    return sorted(times)[len(times) // 2]


def floor_us(kw, est):
    n = 0
    for v in kw.values():
        if isinstance(v, torch.Tensor):
            n += v.numel() * v.element_size()
    outs = 2 if est in ("gae", "vtrace") else 1
    n += outs * kw.get("rewards", kw.get("inputs")).numel() * 4
    return n / BW * 1e6


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cells", default="64x512,4096x128,16384x128,16384x512,512x4096,"
                                      "1024x8192,8x65536,1x1048576")
    p.add_argument("--estimators", default=",".join(cases.ESTIMATORS))
    p.add_argument("--out", default=None)
    args = p.parse_args()
    rows = []
    for cell in args.cells.split(","):
        N, T = map(int, cell.split("x"))
        for est in args.estimators.split(","):
            kw, _ = cases.make(est, (N, T), seed=0, gamma=0.99, lmbda=0.95)
            if est in ("gae", "vtrace", "lambda_returns"):
                kw.pop("bootstrap_values", None)
                kw["last_value"] = torch.randn(N)
                kw["truncated"] = None
            kw = {k: (v.cuda() if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
            fn = lambda: cases.call(est, kw)   # noqa: E731
            us = device_us(fn)
            fl = floor_us(kw, est)
            rows.append(dict(estimator=est, N=N, T=T, device_us=us, floor_us=fl))
            print(f"{est:20s} {N:>7d} x {T:<8d} device {us:9.1f} us  floor {fl:8.1f} us  "
                  f"ratio {us / fl:6.2f}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
