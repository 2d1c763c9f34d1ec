"""Registers, spills and instruction counts of the scan kernel for sm_90, without a GPU.

Register pressure decides how many warps an SM holds (benchmarks/NOTES.md, "What limits us
now" 7), and earlier sessions read it from ptxas by hand. For each estimator and forced config
this script makes the standard grid's call (``rlscan.tune.grid``; ``--dtype``, ``--layout``) on CPU
tensors with the launcher's ``_run`` replaced by a recorder, so it gets exactly the constexprs,
options and arguments of every launch the H200 would make (programmatic dependent launches on);
it then compiles each launch of ``fused_scan_kernel`` with Triton's compiler for
``GPUTarget("cuda", 90, 32)`` (no driver needed), specialised on those arguments by the JIT's
own binder (``_as_launched``), runs the ptxas Triton itself uses for sm_90
(``-v``) and prints: registers a thread, spill bytes, the SM's resident warps those registers
allow (65,536 registers, 64 warps, 32 blocks), the launch's programs and the waves they take on
the H200's 132 SMs at that residency (1.08: a second wave of 8%), PTX lines, shuffles
(``shfl.sync``) and barriers (``bar.sync``).

    python benchmarks/kernel_resources.py --estimators gae,vtrace --shape 8x65536 \\
        --configs row_block:2x128:w2:2l,chunked:1x512:w1:c1:2l,lookback:1x1024:w4:c1

Configs are ``compare_configs.py`` names, or ``tuned``: the shipped H200 DB's choice for the
cell's call (its γ, λ, c̄: a ``bounded_walk`` where they allow one). The numbers are for the
Triton installed here; the H200 runs triton 3.6, whose ptxas and code generation differ from
later ones: use its wheel
(``pip install --no-deps --target /tmp/t36 triton==3.6.0``, then ``PYTHONPATH=/tmp/t36``),
which gives the 72 registers Nsight Compute measured on the H200 for discounted returns'
look-back 1x256/w1/2l at 8x262144 (before the binder: 94, every pointer *fp32 and unaligned).
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from rlscan.kernels import configs as C
from rlscan.kernels import launch as L
from rlscan.kernels import scan as S
from rlscan.tune import grid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_configs import padded_rows, parse_config, tuned_config  # noqa: E402 - a sibling script

_POINTERS = ("P0", "P1", "TERM", "TRUNC", "NV", "X1", "X2", "G", "L", "ROW0", "ROW1", "O0",
             "O1", "WA", "WB", "WC")
_FLOATS = ("gamma", "lmbda", "rho_bar", "c_bar", "pg_rho_bar")


SMS = 132            # the H200's streaming multiprocessors
GPU = "NVIDIA H200"  # whose shipped DB ``tuned`` reads


def _grid_call(est: str, N: int, T: int, dtype: str, layout: str, row_pad: int = 0) -> grid.Call:
    """The grid's call of this cell on CPU tensors (input set 0); ``row_pad``: time-last rows as
    views of rows that many steps longer (``compare_configs.padded_rows``)."""
    call = grid.place(grid.draw(grid.Cell(est, N, T, dtype, layout)), layout, "cpu")
    return padded_rows(call, row_pad) if row_pad else call


def tuned(est: str, N: int, T: int, dtype: str = "float32", layout: str = "time_last"):
    """The shipped H200 DB's config for the grid's call of this cell (``compare_configs``'s
    ``tuned_config``, read offline: ``gpu`` names the H200)."""
    return tuned_config(est, _grid_call(est, N, T, dtype, layout), layout, gpu=GPU)


def launches(est: str, N: int, T: int, cfg: dict, dtype: str = "float32",
             layout: str = "time_last", row_pad: int = 0):
    """[(constexprs, options, arguments, programs, kernel), ...] of the scan-kernel launches of
    one call of the grid's cell, as the launcher makes them on a GPU with programmatic
    dependent launch (``arguments``: the launch's own, tensors in place of their addresses;
    ``programs``: the launch grid's size; ``kernel``: ``fused_scan_kernel`` or, for tiles of
    one row a lane, its twin with the time strides unspecialised, or, for two-level tiles at
    odd row strides, the one with T unspecialised)."""
    seen = []

    def record(kernel, grid_, args, objs, consts, options, spec, names=L._CONSTEXPRS):
        if kernel in (L.fused_scan_kernel, L._lane_rows_kernel, L._ODD_STRIDE_KERNEL):
            seen.append((dict(zip(names, consts)), options, L._tensors(args, objs),
                         math.prod(grid_), kernel))

    call = _grid_call(est, N, T, dtype, layout, row_pad)
    saved = (L._run, L._INTERPRETED, L._pdl_capable, os.environ.get("RLSCAN_INTERPRET"))
    L._run, L._INTERPRETED, L._pdl_capable = record, True, (lambda device: True)
    os.environ["RLSCAN_INTERPRET"] = "1"          # CPU tensors take the kernel path
    try:
        with L.force_config(**cfg):
            grid.run(est, call)                   # the outputs are never written
    finally:
        L._run, L._INTERPRETED, L._pdl_capable = saved[:3]
        if saved[3] is None:
            os.environ.pop("RLSCAN_INTERPRET")
        else:
            os.environ["RLSCAN_INTERPRET"] = saved[3]
    return seen


TARGET = GPUTarget("cuda", 90, 32)


def _as_launched(consts: dict, options: tuple, arguments, fn=None) -> ASTSource:
    """The source Triton's JIT itself builds for this launch: its binder's specialisation of
    the real arguments (each pointer's dtype, bool flags as *i1, 16-byte alignment; integers
    equal to 1 as constants, divisible by 16 as such), so ptxas sees the vectorised loads of a
    real launch. Without it (the first version of this script: every pointer *fp32, nothing
    aligned) look-back 1x256/w1/2l of discounted returns at 8x262144 came out at 94 registers
    where Nsight Compute measured 72 on the H200 (twenty-sixth session's lookback_ncu.txt)."""
    from triton.compiler import make_backend
    from triton.runtime.jit import create_function_from_signature
    fn = fn or S.fused_scan_kernel
    backend = make_backend(TARGET)
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    kwargs = dict(consts, **L._options(options))
    bound, spec, opts = binder(*arguments, **kwargs)
    _, signature, constexprs, attrs = fn._pack_args(backend, kwargs, bound, spec, opts)
    return ASTSource(fn, signature, constexprs, attrs)


def compile_ptx(consts: dict, options: tuple, arguments=None, kernel=None) -> str:
    """PTX of fused_scan_kernel for sm_90 with these constexprs and launcher options,
    specialised on ``arguments`` as the JIT would be (the JIT's own binder, triton 3.6 to 3.9);
    without arguments, every pointer *fp32 and nothing aligned (what this script did before:
    no vectorised load, and wrong for bf16 or bool inputs). ``kernel``: the one launched
    (``launches``), by default fused_scan_kernel."""
    if arguments is not None:
        src = _as_launched(consts, options, arguments, kernel)
        return triton.compile(src, target=TARGET, options=L._options(options)).asm["ptx"]
    fn = S.fused_scan_kernel
    sig = {}
    for name in fn.arg_names:
        if name in consts:
            sig[name] = "constexpr"
        elif name in _POINTERS:
            sig[name] = {"TERM": "*fp32", "WA": "*i64" if consts["PHASE"] >= 3 else "*fp32"}.get(
                name, "*fp32")
        else:
            sig[name] = "fp32" if name in _FLOATS else "i32"
    src = ASTSource(fn, sig, constexprs={(fn.arg_names.index(k),): v for k, v in consts.items()})
    return triton.compile(src, target=TARGET, options=L._options(options)).asm["ptx"]


def ptxas_report(ptx: str) -> dict:
    """Registers and spill bytes from Triton's own ptxas (``-v``) for sm_90a."""
    from triton.backends.nvidia.compiler import get_ptxas
    ptxas = get_ptxas(90).path        # the one Triton itself runs for sm_90 (triton 3.6, 3.9)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        res = subprocess.run([ptxas, "-v", "-arch=sm_90a", path, "-o", os.path.join(d, "k.o")],
                             capture_output=True, text=True, check=True)
    text = res.stdout + res.stderr
    regs = re.search(r"Used (\d+) registers", text)
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)
    return {"registers": int(regs.group(1)) if regs else None,
            "spill_stores": int(spill.group(1)) if spill else 0,
            "spill_loads": int(spill.group(2)) if spill else 0}


def resident_warps(registers: int, num_warps: int) -> int:
    """Warps an SM holds at that register count (sm_90: 65,536 registers, 64 warps, registers
    allocated per warp in units of 256)."""
    per_warp = -(-registers * 32 // 256) * 256
    blocks = min(65536 // (per_warp * num_warps), 32, 64 // num_warps)
    return blocks * num_warps


def waves(programs: int, registers: int, num_warps: int) -> float:
    """Waves of ``programs`` on the H200 at the residency those registers allow (inf where no
    block fits)."""
    blocks = resident_warps(registers, num_warps) // num_warps
    return programs / (SMS * blocks) if blocks else float("inf")


def launch_reports(est: str, N: int, T: int, cfg: dict, dtype: str = "float32",
                   layout: str = "time_last", row_pad: int = 0):
    """Per scan launch of the cell's call (``launches``): (constexprs, options, programs, PTX,
    ``ptxas_report``)."""
    for consts, options, arguments, programs, kernel in launches(est, N, T, cfg, dtype, layout,
                                                                 row_pad):
        ptx = compile_ptx(consts, options, arguments, kernel)
        yield consts, options, programs, ptx, ptxas_report(ptx)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--estimators", default="gae")
    p.add_argument("--shape", type=grid.parse_shapes, default=[(4096, 128)], help="NxT")
    p.add_argument("--configs", default="row_block:2x128:w2:2l")
    p.add_argument("--dtype", default="float32", choices=grid.DTYPES)
    p.add_argument("--layout", default="time_last", choices=grid.LAYOUTS)
    p.add_argument("--row-pad", type=int, default=0,
                   help="time-last rows as views of rows this many steps longer (odd: odd row "
                        "strides)")
    args = p.parse_args(argv)
    if args.row_pad < 0 or (args.row_pad and args.layout != "time_last"):
        p.error(f"--row-pad {args.row_pad}: expected a count >= 0, time-last layout only")
    (N, T), = args.shape
    print(f"triton {triton.__version__}, sm_90, {args.dtype} {args.layout} {N}x{T}"
          f"{f' (rows of T+{args.row_pad})' if args.row_pad else ''}; per scan launch")
    print(f"{'estimator':<18} {'config':<32} phase regs spill(st/ld) warps/SM programs waves "
          f"ptx shfl bar")
    for est in args.estimators.split(","):
        if est not in grid.ESTIMATORS:
            p.error(f"--estimators: unknown {est!r}; expected some of {grid.ESTIMATORS}")
        for name in args.configs.split(","):
            cfg = parse_config(name)
            if cfg == "tuned":
                cfg = tuned(est, N, T, args.dtype, args.layout)
                name = "tuned " + C.label(cfg).replace("/s1", "")
            if not isinstance(cfg, dict):
                p.error(f"--configs: {name!r} is not a launch config")
            for consts, options, programs, ptx, r in launch_reports(
                    est, N, T, cfg, args.dtype, args.layout, args.row_pad):
                print(f"{est:<18} {name:<32} {consts['PHASE']:>5} {r['registers']:>4} "
                      f"{r['spill_stores']:>5}/{r['spill_loads']:<5} "
                      f"{resident_warps(r['registers'], options[0]):>8} {programs:>8} "
                      f"{waves(programs, r['registers'], options[0]):>5.2f} "
                      f"{ptx.count(chr(10)):>5} {ptx.count('shfl.sync'):>4} "
                      f"{ptx.count('bar.sync'):>3}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
