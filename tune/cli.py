"""``rlscan-tune``: measure every candidate config on this GPU and write the winners to its
tuning DB.

    rlscan-tune                          # the standard grid, every estimator: ~16 min on an H200
    rlscan-tune --quick --estimators gae # a smoke test
    rlscan-tune --shapes 2048x256,16x100000 --estimators gae,vtrace
    rlscan-tune --shapes off-grid-envs   # common buckets off the grid (tune/grid.py NAMED_SHAPES)
    rlscan-tune --out tuning_db          # write the shipped DB of this GPU model
    rlscan-tune --reselect tuning_db/nvidia-h200.json   # re-pick winners after a candidate
                                         # rule changed, from the stored timings (no GPU)
    rlscan-tune --out tuning_db --prune 1.3   # after a kernel edit: time only what came within
                                         # 1.3x of each bucket's earlier winner (tune/prune.py)
    rlscan-tune --out tuning_db --prune 1.3 --prune-from tuning_db/nvidia-h200.json
                                         # a first tune of another GPU, pruned by the H200's

Writes ``<out>/<gpu-slug>.json`` (default ``out``: the user overlay directory that
``import rlscan`` reads, see rlscan/tuning.py), merging with what is there.
"""
import argparse
import json
import os
import platform
import signal
import sys
import time
from pathlib import Path
from typing import List, Optional

from rlscan import tuning

from . import grid


def _factor(text: str) -> float:
    try:
        f = float(text)
    except ValueError:
        f = float("nan")
    if not f >= 1.0 or f == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite number >= 1, e.g. 1.3")
    return f


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rlscan-tune", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--estimators", type=grid.comma_list(grid.ESTIMATORS),
                   default=list(grid.ESTIMATORS),
                   help="comma list (default: all): " + ", ".join(grid.ESTIMATORS))
    p.add_argument("--quick", action="store_true",
                   help=f"smoke test: shapes {grid.QUICK_SHAPES}, at most 6 candidates each")
    p.add_argument("--shapes", type=grid.shapes_arg, default=None,
                   help="ROWSxSTEPS comma list instead of the standard grid of BENCHMARKS.md; "
                        "names stand for sets: " + ", ".join(grid.NAMED_SHAPES))
    p.add_argument("--dtypes", type=grid.comma_list(grid.DTYPES), default=list(grid.DTYPES),
                   help="comma list (default: all): " + ", ".join(grid.DTYPES))
    p.add_argument("--layouts", type=grid.comma_list(grid.LAYOUTS), default=list(grid.LAYOUTS),
                   help="comma list (default: all): " + ", ".join(grid.LAYOUTS)
                        + " ([N, T] and [T, N] buffers)")
    p.add_argument("--out", type=Path, default=None,
                   help=f"directory of the DB file (default: {tuning.user_dir()})")
    p.add_argument("--device", default="cuda", help="CUDA device (default: the current one)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes compiling and computing references ahead (default: CPUs - 2; "
                        "0 = do everything in this process)")
    p.add_argument("--max-candidates", type=int, default=None,
                   help="measure at most this many candidates per bucket, spread evenly over "
                        "its space (default: all; --quick: 6)")
    p.add_argument("--prune", type=_factor, default=None, metavar="F",
                   help="skip candidates the DB being merged into (else the shipped one) holds "
                        "at more than F times their bucket's winner, whatever kernel they were "
                        "timed on: 1.3 timed 25-48%% of the runs of the recent retunes in git "
                        "history, and skipped the new winner in 0-2 buckets of each but one "
                        "(9 of 512), the best timed then <= 14%% slower (tune/prune.py)")
    p.add_argument("--prune-from", type=Path, default=None, metavar="DB_FILE",
                   help="with --prune: prune against DB_FILE, a DB of any GPU, instead (a "
                        "first tune of a GPU pruned by a sibling chip's rankings, e.g. an "
                        "H100 by the shipped H200 DB)")
    p.add_argument("--no-table", action="store_true", help="skip the closing table")
    p.add_argument("--reselect", type=Path, default=None, metavar="DB_FILE",
                   help="measure nothing: re-pick each entry of DB_FILE among the configs that "
                        "are still candidates, from the timings stored with it (no GPU needed)")
    return p


def device_meta(device, bandwidth: float, l2: int) -> dict:
    import torch
    props = torch.cuda.get_device_properties(device)
    return {"name": props.name, "capability": [props.major, props.minor],
            "sm_count": props.multi_processor_count, "l2_bytes": l2,
            "copy_gbps": round(bandwidth / 1e9, 1)}


def software_meta() -> dict:
    import torch
    import triton
    import rlscan
    return {"torch": torch.__version__, "triton": triton.__version__,
            "cuda": torch.version.cuda, "rlscan": rlscan.__version__,
            "python": platform.python_version()}


def main(argv: Optional[List[str]] = None) -> int:
    args = parser().parse_args(argv)
    if args.prune_from is not None and args.prune is None:
        print("rlscan-tune: --prune-from needs --prune F (the factor to prune by)",
              file=sys.stderr)
        return 2
    if args.reselect is not None:
        return _reselect(args.reselect)
    import torch
    from . import db, prune, sweep, timing
    from .workers import Workers

    if not torch.cuda.is_available():
        print("rlscan-tune: no CUDA device; tuning measures the GPU it runs on", file=sys.stderr)
        return 2
    device = torch.device(args.device)
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    torch.cuda.set_device(device)
    out = args.out if args.out is not None else tuning.user_dir()
    slug = tuning.gpu_slug(torch.cuda.get_device_name(device))
    try:
        db.read_existing(db.db_path(out, slug), slug)     # fail now, not after the sweep
    except tuning.TuningDBError as e:
        print(f"rlscan-tune: {e}", file=sys.stderr)
        return 2

    prune_with = None
    if args.prune is not None:
        try:
            doc, source = prune.earlier_doc(out, slug, args.prune_from)
        except tuning.TuningDBError as e:
            print(f"rlscan-tune: --prune-from {args.prune_from}: {e}", file=sys.stderr)
            return 2
        earlier = prune.earlier_timings(doc)
        prune_with = prune.for_cells(earlier, args.prune)
        print(f"rlscan-tune: --prune {args.prune}: against {len(earlier)} earlier entries"
              + (f" of {source}" if source else " (no earlier DB: timing everything)"),
              file=sys.stderr)
    shapes = args.shapes or (grid.QUICK_SHAPES if args.quick else grid.STANDARD_SHAPES)
    cells = grid.cells(shapes, args.estimators, args.dtypes, args.layouts)
    n_workers = max(0, (os.cpu_count() or 2) - 2) if args.workers is None else args.workers
    start = time.monotonic()
    l2 = timing.l2_bytes(device)
    bandwidth = timing.copy_bandwidth(device)
    print(f"rlscan-tune: {torch.cuda.get_device_name(device)} ({slug}), {len(cells)} cells, "
          f"{n_workers} workers, copy bandwidth {bandwidth / 1e12:.2f} TB/s, L2 {l2 >> 20} MiB",
          file=sys.stderr)
    results: list = []
    interrupted = False
    # `timeout` and schedulers send SIGTERM: keep what is measured, as for Ctrl-C
    signal.signal(signal.SIGTERM, _interrupt)
    with Workers(n_workers, str(device)) as workers:
        try:
            sweep.run(cells, device, timing.GraphTimer(device), workers, l2_bytes=l2,
                      bandwidth=bandwidth, progress=sweep.Progress(len(cells), sys.stderr),
                      max_candidates=args.max_candidates or (6 if args.quick else None),
                      results=results, prune_with=prune_with)
        except (KeyboardInterrupt, sweep.SweepAborted) as e:
            interrupted = True
            why = "interrupted" if isinstance(e, KeyboardInterrupt) else f"stopped: {e}"
            print(f"\nrlscan-tune: {why}; writing the {len(results)} buckets finished",
                  file=sys.stderr)
        compiles = list(workers.compile_seconds)
    new = sweep.entries_by_kernel(results)
    try:
        path = db.write_entries(out, device_meta(device, bandwidth, l2), software_meta(), new)
    except (tuning.TuningDBError, OSError) as e:
        # the file went bad (or away) during the sweep: keep the measurements anyway
        rescue = Path(f"rlscan-tune-{slug}-{os.getpid()}.unsaved.json").resolve()
        rescue.write_text(json.dumps(new, indent=1))
        print(f"rlscan-tune: could not write the DB ({e}); the entries are in {rescue}",
              file=sys.stderr)
        return 2
    elapsed = time.monotonic() - start
    if not args.no_table:
        print(sweep.table(results))
    failed = [r for r in results if r.winner is None]
    n_cand = sum(len(r.measured) for r in results)
    print(f"rlscan-tune: {len(results) - len(failed)}/{len(results)} buckets tuned "
          f"({n_cand} candidate runs) in {elapsed:.0f} s; wrote {path}", file=sys.stderr)
    if prune_with is not None:
        n_pruned = sum(len(r.pruned or {}) for r in results)
        print(f"rlscan-tune: --prune skipped {n_pruned} of {n_pruned + n_cand} candidate runs",
              file=sys.stderr)
    if compiles:
        print(f"rlscan-tune: {len(compiles)} kernels compiled ahead by workers, "
              f"{sum(compiles) / len(compiles):.2f} s each on average", file=sys.stderr)
    for line in sweep.time_report(results):
        print(f"rlscan-tune: {line}", file=sys.stderr)
    for r in results:
        if r.winner is None:
            why = r.measured[0].status if r.measured else "no candidates"
            print(f"rlscan-tune: no candidate passed for {r.cell}: it keeps the heuristic "
                  f"(first: {why})", file=sys.stderr)
    return 1 if failed or interrupted else 0


def _reselect(path: Path) -> int:
    from . import db
    try:
        changes = db.reselect_file(path)
    except (tuning.TuningDBError, OSError) as e:
        print(f"rlscan-tune: --reselect: {e}", file=sys.stderr)
        return 2
    for line in changes:
        print(line)
    print(f"rlscan-tune: {len(changes)} changes in {path}", file=sys.stderr)
    return 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
