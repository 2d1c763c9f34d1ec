"""A/B a patched scan kernel against the shipped one, without a retune.

Any edit to ``rlscan/kernels/scan.py`` marks the shipped tuning DB stale, so trying a kernel idea
the normal way costs a retune before its first number. This script instead builds the patched
kernel from a patch file in a scratch module and runs it side by side with the shipped one under
the same forced configs: on the GPU it times both (rlscan-bench's device column); anywhere it
first checks that the patched kernel gives the shipped kernel's results (on CPU set
``TRITON_INTERPRET=1 RLSCAN_INTERPRET=1`` before starting Python).

    python benchmarks/kernel_ab.py idea.patch --check                  # results only, small cells
    python benchmarks/kernel_ab.py idea.patch --estimators gae,discounted_returns \\
        --cells 65536x128@row_block:2x128:w2,1x1048576@chunked:1x1024:w4:c1

A patch file is a list of text replacements in scan.py, each old text occurring exactly once::

    <<<<
    s_a, s_b = tl.associative_scan((a, b), 1, _combine, reverse=REVERSE)
    ====
    s_a, s_b = my_backward_scan(a, b, REVERSE)
    >>>>

``--configured-groups``: the patched kernel's two-level tiles keep their configured groups at
any alignment (the shipped ones shrink them to the rows' alignment), for patches aimed at odd
lengths. At odd row strides each side runs its own twin with T unspecialised, as the launcher
does (``launch._ODD_STRIDE_KERNEL``).

Blocks are applied in order; text between blocks (and after ``#`` at the start of a line outside
them) is ignored, so a patch can carry its own notes. Per cell and config the output is
``shipped=µs patched=µs`` (``--rounds R``: the median and range of R timings each, taken in
turns from a moving start) and ``!`` after the patched figure when its first output differs from
the shipped one's by more than 1e-3 (relative to the output's scale).
"""
import argparse
import atexit
import importlib.util
import inspect
import os
import sys
import tempfile

import torch
import triton

from rlscan.kernels import launch as L
from rlscan.kernels import scan as S
from rlscan.kernels.launch import force_config
from rlscan.tune import grid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_configs import (interleaved, no_reset_call, parse_config,  # noqa: E402 - a sibling
                             summary, timed_calls)

START, MID, END = "<<<<", "====", ">>>>"


class PatchError(ValueError):
    pass


def parse_patch(text: str):
    """[(old, new), ...] from a patch file's text (see the module docstring)."""
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        if lines[i].strip() != START:
            i += 1
            continue
        try:
            mid = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == MID)
            end = next(j for j in range(mid + 1, len(lines)) if lines[j].strip() == END)
        except StopIteration:
            raise PatchError(f"patch block at line {i + 1}: expected '{MID}' then '{END}'") \
                from None
        old, new = "\n".join(lines[i + 1:mid]), "\n".join(lines[mid + 1:end])
        if not old.strip():
            raise PatchError(f"patch block at line {i + 1}: the old text is empty")
        blocks.append((old, new))
        i = end + 1
    if not blocks:
        raise PatchError(f"no '{START}' ... '{MID}' ... '{END}' block in the patch")
    return blocks


def apply_patch(source: str, blocks) -> str:
    """``source`` with every block's old text (found exactly once) replaced by its new text."""
    for k, (old, new) in enumerate(blocks, 1):
        n = source.count(old)
        if n != 1:
            first = old.strip().split("\n")[0][:70]
            raise PatchError(f"patch block {k}: its old text occurs {n} times in scan.py "
                             f"(expected once): {first!r}")
        source = source.replace(old, new)
    return source


def patched_module(blocks):
    """The scan module built from the patched source (a scratch file: Triton reads the source
    of jit functions from their file)."""
    src = apply_patch(open(inspect.getsourcefile(S)).read(), blocks)
    fd, path = tempfile.mkstemp(prefix="rlscan_scan_ab_", suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(src)
    atexit.register(os.remove, path)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def parse_cells(text: str):
    """``NxT@config,...`` -> [(N, T, config dict), ...] (configs as compare_configs names)."""
    out = []
    for item in filter(None, text.split(",")):
        shape, _, cfg = item.partition("@")
        try:
            (N, T), = grid.parse_shapes(shape)
        except (ValueError, argparse.ArgumentTypeError):
            raise argparse.ArgumentTypeError(f"cell {item!r}: expected NxT@config") from None
        if not cfg:
            raise argparse.ArgumentTypeError(f"cell {item!r}: expected NxT@config")
        out.append((N, T, cfg, parse_config(cfg)))
    return out


# --check: small cells that cross chunk edges and spans, with tiles the interpreter runs quickly
CHECK_CELLS = "5x53@row_block:2x16:w1,3x117@chunked:1x16:w1:c1,3x117@chunked:2x16:w2:c3," \
              "3x117@lookback:2x16:w1:c1"


def _window(text: str):
    """``LO:HI`` -> (LO, HI): powers of two, LO <= HI."""
    try:
        lo, hi = (int(v) for v in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected LO:HI") from None
    if not (0 < lo <= hi and lo & (lo - 1) == 0 and hi & (hi - 1) == 0):
        raise argparse.ArgumentTypeError(f"{text!r}: expected powers of two LO <= HI")
    return lo, hi


class Variant:
    """A scan kernel as the launcher would run it: the kernel, its twin with T unspecialised
    (what two-level tiles take at odd row strides, ``launch._ODD_STRIDE_KERNEL``) and whether
    two-level groups shrink to the rows' alignment (``launch._GROUP_BY_ALIGNMENT``)."""

    def __init__(self, kernel, twin, group_by_alignment=True):
        self.kernel, self.twin, self.group_by_alignment = kernel, twin, group_by_alignment


def run_with(variant, est, call, cfg):
    """The estimator's outputs with ``variant`` in place of the shipped scan kernel."""
    shipped = L.fused_scan_kernel, L._ODD_STRIDE_KERNEL, L._GROUP_BY_ALIGNMENT
    L.fused_scan_kernel, L._ODD_STRIDE_KERNEL = variant.kernel, variant.twin
    L._GROUP_BY_ALIGNMENT = variant.group_by_alignment
    try:
        with force_config(**cfg):
            return grid.run(est, call)
    finally:
        L.fused_scan_kernel, L._ODD_STRIDE_KERNEL, L._GROUP_BY_ALIGNMENT = shipped


def differs(a, b) -> bool:
    a, b = a.double(), b.double()
    scale = max(a.abs().max().item(), 1.0)
    return bool(((a - b).abs().max() > 1e-3 * scale).item()) or \
        not torch.equal(torch.isnan(a), torch.isnan(b))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("patch", help="the patch file")
    p.add_argument("--estimators", default=",".join(grid.ESTIMATORS))
    p.add_argument("--cells", type=parse_cells, default=None,
                   help="NxT@config,... (default with --check: small cells over chunk edges)")
    p.add_argument("--dtype", default="float32", choices=grid.DTYPES)
    p.add_argument("--layout", default="time_last", choices=grid.LAYOUTS)
    p.add_argument("--no-resets", action="store_true",
                   help="rows without episode ends and γ = λ = 1 (compare_configs.py: the "
                        "look-back's worst case; GAE, discounted returns, episodic sums)")
    p.add_argument("--check", action="store_true",
                   help="compare results only (runs on CPU with the interpreter)")
    p.add_argument("--lookback-window", type=_window, default=None, metavar="LO:HI",
                   help="bounds of the spans a look-back step reads (launch._LOOKBACK_WINDOW; "
                        "small ones make the interpreter walk back over many windows)")
    p.add_argument("--configured-groups", action="store_true",
                   help="the patched kernel's two-level tiles keep their configured groups at "
                        "any alignment (launch._GROUP_BY_ALIGNMENT off; shipped: shrunk)")
    p.add_argument("--rounds", type=int, default=1,
                   help="times shipped and patched this many times each, alternating from a "
                        "moving start; prints the median and range (compare_configs.py)")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error(f"--rounds {args.rounds}: expected at least 1")
    if args.no_resets and (args.dtype, args.layout) != ("float32", "time_last"):
        p.error("--no-resets draws float32 time-last calls only")
    if args.lookback_window:
        L._LOOKBACK_WINDOW = args.lookback_window
    try:
        mod = patched_module(parse_patch(open(args.patch).read()))
    except (OSError, PatchError) as e:
        print(f"kernel_ab: {e}", file=sys.stderr)
        return 2
    cells = args.cells or parse_cells(CHECK_CELLS)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if not args.check and device == "cpu":
        print("kernel_ab: timing needs a CUDA GPU (use --check on CPU)", file=sys.stderr)
        return 2
    if not args.check:
        from rlscan.tune.bench import device_us
        from rlscan.tune.timing import l2_bytes
        l2 = l2_bytes(torch.device(device))
    L._compiled.clear()          # direct launches are keyed by kernel; start clean
    shipped_v = Variant(S.fused_scan_kernel, L._ODD_STRIDE_KERNEL)
    patched_v = Variant(mod.fused_scan_kernel,
                        triton.jit(mod.fused_scan_kernel.fn, do_not_specialize=("T",)),
                        not args.configured_groups)
    bad = 0
    for est in args.estimators.split(","):
        for N, T, name, cfg in cells:
            cell = grid.Cell(est, N, T, args.dtype, args.layout)
            if args.no_resets:
                make = lambda i: no_reset_call(est, N, T, i, device)   # noqa: E731
            else:
                make = lambda i: grid.place(grid.draw(cell, i, device),   # noqa: E731
                                            args.layout, device)
            calls = [make(0)] if args.check else timed_calls(make, est, l2)
            ref = run_with(shipped_v, est, calls[0], cfg)
            out = run_with(patched_v, est, calls[0], cfg)
            wrong = any(differs(x, y) for x, y in zip(ref, out))
            bad += wrong
            line = f"{est} {N}x{T} {name}: " + ("DIFFERS" if wrong else "same results")
            if not args.check:
                measures = [(lambda k=k: device_us([(lambda c=c: run_with(k, est, c, cfg))
                                                    for c in calls]))
                            for k in (shipped_v, patched_v)]
                shipped, patched = (summary(t) for t in interleaved(measures, args.rounds))
                line = (f"{est} {N}x{T} {name}: shipped={shipped} patched={patched}"
                        + ("!" if wrong else ""))
            print(line, flush=True)
    return 1 if bad and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
