"""The CPU path (rlscan/_torch_path.py): whole eager calls as shipped (chunked scan, rows in
blocks), against the same calls on whole tensors with the log-depth doubling scan it used before
and with a Python loop over time.

    python benchmarks/cpu_path.py                                  # seven estimators, 5 shapes
    python benchmarks/cpu_path.py --estimators gae --shapes 4096x128 --threads 2

    python benchmarks/cpu_path.py --against e05034c                # + that revision's CPU path
    python benchmarks/cpu_path.py --layouts time_last,time_major   # [T, N] buffers too

Inputs are rlscan-bench's (tune/grid.py: fp32, episode ends at 2%; [T, N] buffers placed as
the tuner places them). Each figure is the best of ``--reps`` calls after one warm-up, the
variants taking turns call by call (the dev box's speed drifts by up to ±50% within minutes);
the loop is skipped past 8192 steps.
``--against REV``: also time ``rlscan/_torch_path.py`` as it was at git revision REV (whole
calls, its own blocks and scan). Writes benchmarks/results/cpu_path.json and .md unless
``--out`` says elsewhere.
"""
import argparse
import importlib.util
import itertools
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import torch

import rlscan
from rlscan import _layout, _torch_path
from rlscan.tune import grid

SHAPES = "4096x128,16384x512,64x1024,8x65536,1x1048576"
MAX_LOOP_STEPS = 8192


def path_at(rev: str):
    """``rlscan/_torch_path.py`` at git revision ``rev``, loaded as a module of the installed
    package (its relative imports resolve to the current rlscan)."""
    root = Path(__file__).resolve().parent.parent
    source = subprocess.run(["git", "show", f"{rev}:rlscan/_torch_path.py"], cwd=root,
                            check=True, capture_output=True, text=True).stdout
    name = f"rlscan._torch_path_at_{rev}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "rlscan"
    sys.modules[name] = module
    exec(compile(source, f"<{rev}:rlscan/_torch_path.py>", "exec"), module.__dict__)  # noqa: S102
    return module


def variants(against=None) -> dict:
    """name -> the path override (``_layout.PATH_OVERRIDE``): None for the shipped path; the
    baselines run on whole tensors, as before the chunked scan."""
    out = {"shipped": None}
    for name, fn in (("doubling", _torch_path.doubling_scan),
                     ("loop", _torch_path.sequential_scan)):
        out[name] = lambda pb, o0, o1, fn=fn: _torch_path.solve(pb, o0, o1, scan_fn=fn)
    if against:
        out[f"at {against}"] = path_at(against).run
    return out


def measure(estimators, shapes, reps, against=None, layouts=("time_last",)):
    paths = variants(against)
    rows = []
    for (N, T), layout, est in itertools.product(shapes, layouts, estimators):
        call = grid.place(grid.draw(grid.Cell(est, N, T, "float32", "time_last")), layout,
                          "cpu")
        names = [n for n in paths if not (n == "loop" and T > MAX_LOOP_STEPS)]

        def run(name):
            _layout.PATH_OVERRIDE = paths[name]
            try:
                t0 = time.perf_counter()
                out = grid.run(est, call)
                return time.perf_counter() - t0, out
            finally:
                _layout.PATH_OVERRIDE = None

        outputs = {name: run(name)[1] for name in names}          # warm-up
        best = dict.fromkeys(names, float("inf"))
        for _ in range(reps):
            for name in names:
                best[name] = min(best[name], run(name)[0])
        # they must agree, or the timing compares different work
        for name, out in outputs.items():
            for o, ref in zip(out, outputs["shipped"]):
                torch.testing.assert_close(o, ref, rtol=1e-4, atol=1e-4, equal_nan=True)
        row = {"estimator": est, "N": N, "T": T, "layout": layout}
        row.update({name: (best[name] * 1e3 if name in best else None) for name in paths})
        rows.append(row)
        print(f"{est:20s} {N:>6}x{T:<8} {layout:10s} " + "  ".join(
            f"{name} {'—' if row[name] is None else f'{row[name]:.1f}'}" for name in paths),
            flush=True)
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

    then = f"at {meta['against']}" if meta.get("against") else None
    extra = (f" {then} | {then} ÷ shipped |", "---:|---:|") if then else ("", "")

    lines = [f"# rlscan on CPU tensors ({meta['date']})", "",
             f"`python benchmarks/cpu_path.py` on {meta['machine']}, torch {meta['torch']}, "
             f"{meta['threads']} threads. Whole eager calls (validation, coefficients, scan, "
             "outputs), fp32, best of "
             f"{meta['reps']}; ms. *shipped*: the chunked scan (ALGORITHMS.md §2.5), rows in "
             "blocks of 2**20 elements; *doubling*: whole tensors and the log-depth scan that "
             "the chunked one replaced; *loop*: whole tensors and a Python loop over time "
             "(both with the shipped coefficient code; the loop is skipped past "
             f"{MAX_LOOP_STEPS} steps). The variants take turns call by call.",
             *([f"*at {meta['against']}*: the CPU path at that git revision, timed in turns "
                "with the others."] if meta.get("against") else []), "",
             "| estimator | shape | layout | shipped | doubling | loop | doubling ÷ shipped |"
             + extra[0],
             "|---|---|---|---:|---:|---:|---:|" + extra[1]]
    for r in rows:
        line = (f"| {r['estimator']} | {r['N']}×{r['T']} | {r.get('layout', 'time_last')} | "
                f"{ms(r['shipped'])} | "
                f"{ms(r['doubling'])} | {ms(r['loop'])} | {r['doubling'] / r['shipped']:.2f} |")
        if then:
            line += f" {ms(r[then])} | {r[then] / r['shipped']:.2f} |"
        lines.append(line)
    (out / "cpu_path.md").write_text("\n".join(lines) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--estimators", default=",".join(grid.ESTIMATORS))
    p.add_argument("--shapes", default=SHAPES)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    p.add_argument("--layouts", default="time_last",
                   help="comma list of time_last ([N, T] buffers) and time_major ([T, N])")
    p.add_argument("--against", metavar="REV", help="also time the CPU path at this git revision")
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = measure(args.estimators.split(","), grid.parse_shapes(args.shapes), args.reps,
                   args.against, args.layouts.split(","))
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": cpu_name(),
            "torch": torch.__version__, "rlscan": rlscan.__version__,
            "threads": torch.get_num_threads(), "reps": args.reps, "against": args.against}
    write(rows, meta, args.out)


if __name__ == "__main__":
    main()
