"""The CPU path (rlscan/_torch_path.py): whole eager calls as shipped (chunked scan, rows in
blocks), against the same calls on whole tensors with the log-depth doubling scan it used before
and with a Python loop over time.

    python benchmarks/cpu_path.py                                  # seven estimators, 5 shapes
    python benchmarks/cpu_path.py --estimators gae --shapes 4096x128 --threads 2

Inputs are rlscan-bench's (tune/grid.py: fp32, time-last, episode ends at 2%). Each figure is
the best of ``--reps`` calls after one warm-up; the loop is skipped past 8192 steps. Writes
benchmarks/results/cpu_path.json and .md unless ``--out`` says elsewhere.
"""
import argparse
import json
import platform
import time
from pathlib import Path

import torch

import rlscan
from rlscan import _layout, _torch_path
from rlscan.tune import grid

SHAPES = "4096x128,16384x512,64x1024,8x65536,1x1048576"
SCANS = {"shipped": None, "doubling": _torch_path.doubling_scan,   # None: the shipped path
         "loop": _torch_path.sequential_scan}
MAX_LOOP_STEPS = 8192


def best_ms(fn, reps):
    fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def measure(estimators, shapes, reps):
    rows = []
    for N, T in shapes:
        for est in estimators:
            call = grid.draw(grid.Cell(est, N, T, "float32", "time_last"))
            row = {"estimator": est, "N": N, "T": T}
            outputs = {}
            for name, fn in SCANS.items():
                if name == "loop" and T > MAX_LOOP_STEPS:
                    row[name] = None
                    continue
                # a baseline runs on whole tensors, as before the chunked scan
                _layout.PATH_OVERRIDE = None if fn is None else (
                    lambda pb, o0, o1, fn=fn: _torch_path.solve(pb, o0, o1, scan_fn=fn))
                try:
                    row[name] = best_ms(lambda: grid.run(est, call), reps)
                    outputs[name] = grid.run(est, call)
                finally:
                    _layout.PATH_OVERRIDE = None
            # the three must agree, or the timing compares different work
            for name, out in outputs.items():
                for o, ref in zip(out, outputs["shipped"]):
                    torch.testing.assert_close(o, ref, rtol=1e-4, atol=1e-4, equal_nan=True)
            rows.append(row)
            loop = "—" if row["loop"] is None else f"{row['loop']:.1f}"
            print(f"{est:20s} {N:>6}x{T:<8} shipped {row['shipped']:8.1f} ms  doubling "
                  f"{row['doubling']:8.1f}  loop {loop}", flush=True)
    return rows


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def write(rows, meta, out: Path):
    out.mkdir(parents=True, exist_ok=True)
    (out / "cpu_path.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")

    def ms(v):
        return "—" if v is None else f"{v:.1f}"

    lines = [f"# rlscan on CPU tensors ({meta['date']})", "",
             f"`python benchmarks/cpu_path.py` on {meta['machine']}, torch {meta['torch']}, "
             f"{meta['threads']} threads. Whole eager calls (validation, coefficients, scan, "
             "outputs), fp32, time-last, best of "
             f"{meta['reps']}; ms. *shipped*: the chunked scan (ALGORITHMS.md §2.5), rows in "
             "blocks of 2**20 elements; *doubling*: whole tensors and the log-depth scan, as "
             "before; *loop*: whole tensors and a Python loop over time (skipped past "
             f"{MAX_LOOP_STEPS} steps).", "",
             "| estimator | shape | shipped | doubling | loop | doubling ÷ shipped |",
             "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['estimator']} | {r['N']}×{r['T']} | {ms(r['shipped'])} | "
                     f"{ms(r['doubling'])} | {ms(r['loop'])} | "
                     f"{r['doubling'] / r['shipped']:.2f} |")
    (out / "cpu_path.md").write_text("\n".join(lines) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--estimators", default=",".join(grid.ESTIMATORS))
    p.add_argument("--shapes", default=SHAPES)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = measure(args.estimators.split(","), grid.parse_shapes(args.shapes), args.reps)
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": cpu_name(),
            "torch": torch.__version__, "rlscan": rlscan.__version__,
            "threads": torch.get_num_threads(), "reps": args.reps}
    write(rows, meta, args.out)


if __name__ == "__main__":
    main()
