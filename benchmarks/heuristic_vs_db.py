"""The heuristic configs judged by the timings the tuner stored: no GPU needed.

Every DB entry keeps the time of each candidate config it measured (``timings``), so the time
of any heuristic's choice for the entry's shape can be read back wherever that config was a
candidate. Three reports:

    python benchmarks/heuristic_vs_db.py tuning_db/*.json                 # heuristic ÷ winner
    python benchmarks/heuristic_vs_db.py tuning_db/*.json --against 44a48a0   # vs that revision
    python benchmarks/heuristic_vs_db.py tuning_db/*.json --below        # the bucket-above rule

The first lists the (layout, dtype, rows bucket, steps bucket) groups where
``heuristic.heuristic_config`` is furthest from the tuned winners (geomean over the group's
entries, and the config that would have done best there). The second compares the current
heuristic with the one at a git revision (``rlscan/kernels/heuristic.py``, or ``launch.py``
before the heuristic had its own module), entry by entry where the two
choose differently: new ÷ old time, per DB and shape. How the forty-sixth session chose its
rules (benchmarks/NOTES.md). The third (``--below``) is a proxy for ``tuning._buckets_above``,
which runs an entry at the shapes one step (T - 1) or one row (N - 1) below its bucket where
the heuristic ran before: the stored time, at the entry's shape, of the heuristic's config for
the shape below, ÷ the winner's (per DB, layout, dtype and which side; one step away, the
shapes differ in alignment only, which neither side's number sees). A config not timed in an
entry (not a candidate there, or pruned by ``rlscan-tune --prune``) is counted as untimed,
never guessed. Forward scans drop the two-level flag at launch, so a ``/2l`` label missing
from an entry is read without it.
"""
import argparse
import importlib.util
import inspect
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from rlscan import tuning
from rlscan.kernels import configs
from rlscan.tune import grid as tune_grid

_FULL = {"strategy": "row_block", "num_warps": 4, "num_stages": 1}   # the launcher's defaults


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def label_of(heuristic, kernel, e, sms=None, shape=None) -> str:
    """The label of ``heuristic``'s config for entry ``e`` of ``kernel`` (for ``shape``, default
    the entry's) as the tuner timed it: the dtype's item size, the estimator and the DB's GPU's
    SM count ``sms`` passed where that revision's heuristic takes them, the flags the launcher
    ignores for ``kernel`` dropped (``configs.honoured``)."""
    N, T = shape or e["shape"]
    params = inspect.signature(heuristic).parameters
    kw = {k: v for k, v in (("itemsize", tune_grid.itemsize(e["dtype"])), ("estimator", kernel),
                            ("sms", sms)) if k in params}
    cfg = {**_FULL, **heuristic(N, T, e["layout"] == "time_major", **kw)}
    return configs.label(configs.validate(configs.honoured(cfg, kernel)))


def time_of(entry, label):
    t = entry["timings"].get(label, entry["timings"].get(label.replace("/2l", "")))
    return t if isinstance(t, (int, float)) and not isinstance(t, bool) else None


def entries(paths):
    for path in paths:
        with open(path) as f:
            db = json.load(f)
        sms = (db.get("device") or {}).get("sm_count")
        for kernel, section in sorted(db["kernels"].items()):
            for e in section["entries"]:
                if e.get("timings") and len(e.get("shape") or ()) == 2:
                    yield Path(path).stem, kernel, e, sms


def worst_groups(paths, heuristic, top=20) -> str:
    groups, best = defaultdict(list), defaultdict(lambda: defaultdict(list))
    untimed = 0
    for _, kernel, e, sms in entries(paths):
        N, T = e["shape"]
        key = (e["layout"], e["dtype"], tuning.bucket(N), tuning.bucket(T))
        t = time_of(e, label_of(heuristic, kernel, e, sms))
        if t is None:
            untimed += 1
            continue
        groups[key].append(t / e["median_us"])
        for lab, v in e["timings"].items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                best[key][lab].append(v / e["median_us"])
    out = ["| layout | dtype | rows | steps | entries | heuristic ÷ winner | best single config "
           "(÷ winner, entries) |", "|---|---|---|---|---:|---:|---|"]
    ranked = sorted(groups.items(), key=lambda kv: -geomean(kv[1]))[:top]
    for (layout, dtype, rows, steps), r in ranked:
        n = len(r)
        cands = [(geomean(v), lab, len(v)) for lab, v in best[(layout, dtype, rows, steps)].items()
                 if len(v) >= 0.8 * n]
        best_text = "none timed in 80% of them"
        if cands:
            g, lab, m = min(cands)
            best_text = f"{lab} ({g:.2f}×, {m})"
        out.append(f"| {layout} | {dtype} | {rows[0]}..{rows[1]} | {steps[0]}..{steps[1]} | {n} "
                   f"| {geomean(r):.2f}× | {best_text} |")
    out.append(f"\n{untimed} entries did not time the heuristic's config.")
    return "\n".join(out) + "\n"


def compare(paths, old, new) -> str:
    """New ÷ old heuristic time per (DB, shape, layout, dtype) where they differ."""
    ratios, untimed = defaultdict(list), defaultdict(int)
    for slug, kernel, e, sms in entries(paths):
        N, T = e["shape"]
        a, b = label_of(old, kernel, e, sms), label_of(new, kernel, e, sms)
        if a == b:
            continue
        key = (slug, N, T, e["layout"], e["dtype"])
        ta, tb = time_of(e, a), time_of(e, b)
        if ta is None or tb is None:
            untimed[key] += 1
        else:
            ratios[key].append(tb / ta)
    out = ["| DB | shape | layout | dtype | entries | new ÷ old (geomean) | range | untimed |",
           "|---|---|---|---|---:|---:|---|---:|"]
    for key in sorted(set(ratios) | set(untimed)):
        slug, N, T, layout, dtype = key
        r = ratios.get(key, [])
        span = f"{min(r):.2f}–{max(r):.2f}" if r else "—"
        out.append(f"| {slug} | {N}x{T} | {layout} | {dtype} | {len(r)} | {geomean(r):.3f} | "
                   f"{span} | {untimed.get(key, 0)} |")
    every = [x for r in ratios.values() for x in r]
    worst = f", worst {max(every):.2f}" if every else ""
    out.append(f"\nAll: {geomean(every):.3f} over {len(every)} timed entries{worst}; "
               f"{sum(untimed.values())} untimed.")
    return "\n".join(out) + "\n"


def below(paths, heuristic) -> str:
    """The heuristic's config for (N, T - 1) and (N - 1, T) timed at each entry's (N, T), ÷ the
    winner's time, where that shape is within 1/32 of the entry's bucket (``tuning.
    _buckets_above``: T or N >= 33)."""
    ratios, untimed = defaultdict(list), defaultdict(int)
    for slug, kernel, e, sms in entries(paths):
        N, T = e["shape"]
        for side, shape in (("T - 1", (N, T - 1)), ("N - 1", (N - 1, T))):
            if min(shape) < 1 or (tuning.bucket_index(N), tuning.bucket_index(T)) not in \
                    tuning._buckets_above(*shape):
                continue
            key = (slug, e["layout"], e["dtype"], side)
            t = time_of(e, label_of(heuristic, kernel, e, sms, shape))
            if t is None:
                untimed[key] += 1
            else:
                ratios[key].append((t / e["median_us"], kernel, N, T))
    out = ["| DB | layout | dtype | shape | timed | heuristic below ÷ winner (geomean) | worst "
           "| untimed |", "|---|---|---|---|---:|---:|---|---:|"]
    for key in sorted(set(ratios) | set(untimed)):
        r = ratios.get(key, [])
        worst = max(r) if r else None
        worst_text = f"{worst[0]:.2f} ({worst[1]} {worst[2]}x{worst[3]})" if worst else "—"
        out.append(f"| {' | '.join(key)} | {len(r)} | {geomean([x[0] for x in r]):.3f} | "
                   f"{worst_text} | {untimed.get(key, 0)} |")
    return "\n".join(out) + "\n"


def heuristic_at(revision: str):
    """``heuristic_config`` at a git revision: rlscan/kernels/heuristic.py, or launch.py for a
    revision from before that module."""
    root = Path(__file__).resolve().parents[1]
    for name in ("heuristic.py", "launch.py"):
        shown = subprocess.run(["git", "show", f"{revision}:rlscan/kernels/{name}"], cwd=root,
                               capture_output=True, text=True)
        if shown.returncode == 0:
            break
    shown.check_returncode()          # neither file there: git's error, not a silent fallback
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "heuristic_at_revision.py"
        path.write_text(shown.stdout)
        # a module of rlscan.kernels, so that the file's relative imports resolve
        spec = importlib.util.spec_from_file_location("rlscan.kernels._heuristic_at_revision",
                                                      path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module.heuristic_config


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("db", nargs="+")
    p.add_argument("--against", metavar="REV",
                   help="compare with the heuristic of this git revision instead")
    p.add_argument("--top", type=int, default=20)
    p.add_argument("--below", action="store_true",
                   help="the heuristic's config for the shapes one step or row below each "
                        "entry's, timed at the entry's, ÷ the winner's")
    args = p.parse_args(argv)
    os.environ.pop("TRITON_INTERPRET", None)     # the GPU's rules, not the interpreter's tiles
    from rlscan.kernels.heuristic import heuristic_config
    if args.below:
        sys.stdout.write(below(args.db, heuristic_config))
    elif args.against:
        sys.stdout.write(compare(args.db, heuristic_at(args.against), heuristic_config))
    else:
        sys.stdout.write(worst_groups(args.db, heuristic_config, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
