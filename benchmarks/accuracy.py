"""Largest error of every estimator against the float64 sequential reference, on the GPU.

    python benchmarks/accuracy.py [--out DIR]

Shapes (4096 rows, 128 steps) and (512, 4096), fp32 and bf16 inputs (bool flags); γ = 0.99,
λ = 0.95, ~5% terminations, ~2% truncations. bf16 errors are measured against the reference
evaluated on the bf16-rounded inputs, so they show the kernel's error, not the input rounding.
Writes accuracy.json and accuracy.md.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
import cases  # noqa: E402

SHAPES = [(4096, 128), (512, 4096)]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default="benchmarks/results")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = p.parse_args()
    rows = []
    for shape in SHAPES:
        for est in cases.ESTIMATORS:
            kw, _ = cases.make(est, shape, seed=1, gamma=0.99, lmbda=0.95)
            for dtype in (torch.float32, torch.bfloat16):
                k = {n: (v.to(dtype) if isinstance(v, torch.Tensor) and v.is_floating_point()
                         else v) for n, v in kw.items()}
                out = cases.as_tuple(cases.call(est, k, args.device))
                expected = cases.as_tuple(cases.reference(est, k))
                err = max(float(np.nanmax(np.abs(o.double().cpu().numpy() - e)))
                          for o, e in zip(out, expected))
                mag = max(float(np.abs(e).max()) for e in expected)
                finite = all(bool(torch.isfinite(o).all()) for o in out)
                rows.append(dict(estimator=est, rows=shape[0], steps=shape[1],
                                 dtype=str(dtype).replace("torch.", ""), max_abs_err=err,
                                 max_abs_ref=mag, all_finite=finite))
                print(f"{est:20s} {shape!s:14s} {rows[-1]['dtype']:9s} max|err| {err:.2e}"
                      f"  (max|ref| {mag:.1f})", flush=True)
    os.makedirs(args.out, exist_ok=True)
    dev = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    with open(os.path.join(args.out, "accuracy.json"), "w") as f:
        json.dump({"device": dev, "torch": torch.__version__, "results": rows}, f, indent=1)
    with open(os.path.join(args.out, "accuracy.md"), "w") as f:
        f.write(f"# Max |error| vs the float64 reference ({dev}, torch {torch.__version__})\n\n")
        f.write("| estimator | rows × steps | dtype | max abs error | max abs value |\n")
        f.write("|---|---|---|---:|---:|\n")
        for r in rows:
            f.write(f"| {r['estimator']} | {r['rows']} × {r['steps']} | {r['dtype']} | "
                    f"{r['max_abs_err']:.2e} | {r['max_abs_ref']:.1f} |\n")


if __name__ == "__main__":
    main()
