"""Estimators inside torch.compile on a CUDA machine: host cost per call (rlscan-bench's loop
figure) of an eager call, of a compiled function whose one graph holds the op rlscan::scan
(rlscan/_custom_op.py), of the same in mode="reduce-overhead" (a CUDA graph), and of a compiled
function that breaks its graph around the call (what a compiled step cost before the op, made
with torch._dynamo.disable); every compiled output checked bitwise against the eager one.

    python benchmarks/compile_probe.py                     # GAE, V-trace, discounted returns
    python benchmarks/compile_probe.py --shapes 4096x128,8x65536 --estimators gae

Prints a Markdown table (µs a call); writes nothing.
"""
import argparse
import os

import torch
import torch._dynamo

import rlscan
from rlscan.tune import grid
from rlscan.tune.bench import loop_us


MODES = ("eager", "compiled", "reduce-overhead", "graph break")


def _modes(fn):
    return {
        "eager": fn,
        "compiled": torch.compile(fn, fullgraph=True),
        "reduce-overhead": torch.compile(fn, fullgraph=True, mode="reduce-overhead"),
        "graph break": torch.compile(lambda *a, **k: torch._dynamo.disable(fn)(*a, **k) * 1),
    }


def main(argv=None):
    if os.environ.get("RLSCAN_POOL_HISTORY"):   # where a CUDA graph tree's stray block came from
        import torch._inductor.config as ic
        ic.triton.cudagraph_trees_history_recording = True
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--estimators", default="gae,vtrace,discounted_returns")
    ap.add_argument("--shapes", default="4096x128,8x65536")
    args = ap.parse_args(argv)
    rows = []
    for shape in args.shapes.split(","):
        N, T = (int(v) for v in shape.split("x"))
        for est in args.estimators.split(","):
            call = grid.place(grid.draw(grid.Cell(est, N, T, "float32", "time_last"), 0, "cuda"),
                              "time_last", "cuda")
            fn = getattr(rlscan, est)

            def first(*a, **k):     # one output, so that every mode returns a tensor
                out = fn(*a, **k)
                return out[0] if isinstance(out, tuple) else out
            torch._dynamo.reset()
            expected = first(*call.args, **call.kwargs).clone()
            cells = []
            for name, f in _modes(first).items():
                # compile, warm up, capture; no output held into the next call (a CUDA graph
                # tree's outputs live in its pool until then)
                same = all(torch.equal(f(*call.args, **call.kwargs), expected) for _ in range(3))
                us = loop_us(lambda: f(*call.args, **call.kwargs), calls=500, reps=5)
                cells.append(f"{us:.1f}" + ("" if same else " (differs!)"))
            rows.append(f"| {est} | {N}x{T} | " + " | ".join(cells) + " |")
    print("| estimator | shape | " + " | ".join(MODES) + " |")
    print("|---|---|" + "---|" * len(MODES))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
