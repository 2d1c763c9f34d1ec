"""Host cost of one Triton launch against the kernel's argument count, on a CUDA machine.

The scan kernel takes 47 runtime arguments and 22 constexprs, and its compiled launcher costs
6-8 us a launch on the H200's host (``host_cost_h200.md``). Before changing the kernel's
signature (a retune), measure what an argument costs: kernels that differ only in how many
int32 arguments (and constexprs) they take, each launched on one program that stores one
number, timed on the host (perf_counter over ``--calls`` launches, best of 5) through Triton's
``CompiledKernel.run`` and, on triton 3.6, through the C launch function that rlscan calls
(``launch._launcher_of``). The slope is the cost of one argument (the same launcher compiled
against a stub driver on a CPU: ~8 ns, results/probes/2026-12-01_tenth_session_launcher_args.txt;
the intercept is the driver's launch).

    python benchmarks/launch_cost_probe.py                 # 0, 8, 24, 48, 72, 96 arguments
    python benchmarks/launch_cost_probe.py --counts 0,47 --constexprs 22

Writes nothing; prints one row per kernel.
"""
import argparse
import importlib.util
import os
import sys
import tempfile

import torch


def _module(counts, constexprs):
    # triton.jit reads a kernel's source from its file: write the kernels to a module
    lines = ["import triton", "import triton.language as tl", ""]
    consts = [f"C{j}: tl.constexpr" for j in range(constexprs)]
    for n in counts:
        args = [f"a{i}" for i in range(n)]
        total = " + ".join(args + [f"C{j}" for j in range(constexprs)]) or "0"
        lines += ["@triton.jit", f"def k{n}(" + ", ".join(["P"] + args + consts) + "):",
                  f"    tl.store(P, {total})", ""]
    path = os.path.join(tempfile.mkdtemp(prefix="rlscan_launch_probe_"), "probe_kernels.py")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    spec = importlib.util.spec_from_file_location("probe_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--counts", default="0,8,24,48,72,96",
                    help="int32 arguments of each kernel, comma-separated")
    ap.add_argument("--constexprs", type=int, default=0,
                    help="constexpr arguments every kernel also takes (the scan kernel: 22)")
    ap.add_argument("--calls", type=int, default=20000)
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("launch_cost_probe.py needs a CUDA device", file=sys.stderr)
        return 2
    from rlscan.kernels import launch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from host_cost import host_us      # perf_counter over n calls, best of 5
    counts = [int(c) for c in a.counts.split(",")]
    mod = _module(counts, a.constexprs)
    out = torch.zeros(1, dtype=torch.int32, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    print(f"{'args':>5s} {'constexprs':>10s} {'run() us':>9s} {'C launch us':>12s}")
    rows = []
    for n in counts:
        # values that Triton does not specialise (1, or multiples of 16, would become constants)
        vals = [3 + 2 * i if (3 + 2 * i) % 16 else 5 for i in range(n)]
        consts = {f"C{j}": j for j in range(a.constexprs)}
        ck = getattr(mod, f"k{n}")[(1,)](out, *vals, **consts)
        args = [out.data_ptr(), *vals, *consts.values()]
        wrapped = host_us(lambda: ck.run(1, 1, 1, stream, ck.function, ck.packed_metadata,
                                         None, None, None, *args), a.calls)
        raw = float("nan")
        fn, head = launch._launcher_of(ck)
        if fn is not ck.run:
            raw = host_us(lambda: fn(1, 1, 1, stream, *head, *args), a.calls)
        expected = sum(vals) + sum(consts.values())
        torch.cuda.synchronize()
        if int(out.item()) != expected:
            print(f"k{n} stored {int(out.item())}, expected {expected}", file=sys.stderr)
            return 1
        rows.append((n, wrapped, raw))
        print(f"{n:5d} {a.constexprs:10d} {wrapped:9.2f} {raw:12.2f}", flush=True)
    if len(rows) > 1:
        (n0, w0, r0), (n1, w1, r1) = rows[0], rows[-1]
        print(f"slope: {(w1 - w0) / (n1 - n0) * 1e3:.0f} ns an argument through run(), "
              f"{(r1 - r0) / (n1 - n0) * 1e3:.0f} through the C launch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
