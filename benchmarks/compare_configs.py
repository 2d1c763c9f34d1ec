"""Time chosen launch configs side by side on chosen cells (GPU), the way the performance notes
compare strategies and tiles before they enter the tuner's candidate space.

    python benchmarks/compare_configs.py --estimator gae --shapes 1x1048576,8x65536 \\
        --configs heuristic,chunked:2x128:w2:c1,chunked:1x1024:w4:c1,lookback:1x1024:w4:c1

A config is ``heuristic`` (the built-in one), ``tuned`` (the shipped DB's for the cell; the
heuristic where the DB has none) or
``STRATEGY:BNxBT:wWARPS[:cCHUNKS_PER_SPAN][:2l[:gGROUP]][:spSPLIT][:rREGS]`` (``2l``: the
two-level backward scan, ``TWO_LEVEL``; ``gGROUP``: its steps a thread, 4, 8 or 16; ``spSPLIT``:
tile rows a row, ``SPLIT``; ``rREGS``: ``maxnreg``, the register cap).
``--ascending-time-major`` runs time-major backward scans the old way (ascending lanes and
triton's reverse scan) instead of over descending lanes, for an A/B of the two.
Per cell: the floor and, per config, the CUDA-graph device time in µs (rlscan-bench's method),
with ``!`` after configs whose first output differs from the first config's by more than 1e-3.
"""
import argparse
import sys

import torch

from rlscan.kernels import configs as C
from rlscan.kernels import launch
from rlscan.kernels.launch import force_config, heuristic_config
from rlscan.tune import grid
from rlscan.tune.bench import copy_bandwidth, device_us
from rlscan.tuning import which_config


def parse_config(text: str):
    """``heuristic`` -> None; ``tuned`` -> "tuned"; ``chunked:1x1024:w4:c1`` -> a validated
    config dict."""
    if text == "heuristic":
        return None
    if text == "tuned":
        return "tuned"
    parts = text.split(":")
    regs = None
    if len(parts) > 3 and parts[-1].startswith("r"):
        regs, parts = parts[-1], parts[:-1]
    split = None
    if len(parts) > 3 and parts[-1].startswith("sp"):
        split, parts = parts[-1], parts[:-1]
    group = None
    if len(parts) > 4 and parts[-1].startswith("g"):
        group, parts = parts[-1], parts[:-1]
    two_level = parts[-1] == "2l"
    if two_level:
        parts = parts[:-1]
    try:
        strategy, tile, warps = parts[0], parts[1], parts[2]
        bn, bt = (int(v) for v in tile.split("x"))
        cfg = {"strategy": strategy, "BLOCK_N": bn, "BLOCK_T": bt,
               "num_warps": int(warps.lstrip("w")), "num_stages": 1}
        if len(parts) > 3:
            cfg["CHUNKS_PER_SPAN"] = int(parts[3].lstrip("c"))
        if len(parts) > 4:
            raise ValueError
        if two_level:
            cfg["TWO_LEVEL"] = True
        if regs is not None:
            cfg["maxnreg"] = int(regs[1:])
        if group is not None:
            cfg["GROUP"] = int(group[1:])
        if split is not None:
            cfg["SPLIT"] = int(split[2:])
    except (IndexError, ValueError):
        raise argparse.ArgumentTypeError(
            f"config {text!r}: expected heuristic or "
            "tuned or STRATEGY:BNxBT:wWARPS[:cCHUNKS][:2l[:gGROUP]][:spSPLIT][:rREGS]") from None
    try:
        return C.validate(cfg)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"config {text!r}: {e}") from None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--estimator", default="gae", choices=grid.ESTIMATORS)
    p.add_argument("--shapes", type=grid.parse_shapes, required=True)
    p.add_argument("--dtype", default="float32", choices=grid.DTYPES)
    p.add_argument("--layout", default="time_last", choices=grid.LAYOUTS)
    p.add_argument("--ascending-time-major", action="store_true",
                   help="time-major backward scans over ascending lanes "
                        "(launch._DESCEND_TIME_MAJOR off)")
    p.add_argument("--configs", required=True,
                   type=lambda s: [(c, parse_config(c)) for c in s.split(",") if c])
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("compare_configs needs a CUDA GPU", file=sys.stderr)
        return 2
    if args.ascending_time_major:
        launch._DESCEND_TIME_MAJOR = False
    bw, est = copy_bandwidth(), args.estimator
    for N, T in args.shapes:
        cell = grid.Cell(est, N, T, args.dtype, args.layout)
        calls = [grid.place(grid.draw(cell, i, "cuda"), args.layout, "cuda") for i in range(3)]
        floor = grid.traffic_bytes(calls[0], grid.n_outputs(est)) / bw * 1e6
        first, parts = None, []
        for name, cfg in args.configs:
            if cfg == "tuned":
                cfg = which_config(est, calls[0].args[0],
                                   time_dim=0 if args.layout == "time_major" else -1).config
            if cfg is None:
                cfg = heuristic_config(N, T, args.layout == "time_major")
            try:
                with force_config(**cfg):
                    out = grid.run(est, calls[0])[0].float()
                    us = device_us([(lambda c=c: grid.run(est, c)) for c in calls])
            except Exception as e:  # noqa: BLE001 - report and go on (compile/resource errors)
                parts.append(f"{name}=ERR({type(e).__name__})")
                continue
            first = out if first is None else first
            bad = (out - first).abs().max().item() > 1e-3
            parts.append(f"{name}={us:.1f}" + ("!" if bad else ""))
        mode = " asc" if args.ascending_time_major else ""
        print(f"{est} {args.dtype} {args.layout}{mode} {N}x{T} floor {floor:.1f} | "
              + " ".join(parts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
