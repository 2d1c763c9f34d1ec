"""Markdown summary of a tuning DB file (what benchmarks/results/tune_h200.md is made from).

    python benchmarks/tune_report.py tuning_db/nvidia-h200.json --seconds 202 > tune_h200.md
    python benchmarks/tune_report.py tuning_db/nvidia-h100-80gb-hbm3.json \
        --shapes off-grid-envs,off-grid-sequences > tune_h100_off_grid.md   # those buckets only

Per (dtype, layout): the tuned ÷ heuristic geomean (each entry stores the heuristic config's
time, measured in the same sweep), tuned ÷ floor, and the worst bucket among those whose floor
is at least 20 µs; then every bucket.
"""
import argparse
import json
import math
import sys
from collections import Counter, defaultdict

from rlscan import tuning
from rlscan.kernels import configs
from rlscan.tune import grid
from rlscan.tune.prune import PRUNED


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def rows_of(db):
    for est, kernel in sorted(db["kernels"].items()):
        for e in kernel["entries"]:
            yield est, e


def _walk_text(w: dict) -> str:
    spans = w.get("walk_spans", configs.LOOKBACK_FIRST_WINDOW)
    worst = (f"; no episode ends {w['worst_us']:.2f} / {w['winner_worst_us']:.2f}"
             if "worst_us" in w else "")
    return (f"{configs.label(w['config'])} {w['median_us']:.2f} "
            f"(≤ {configs.walk_decay_limit(w['config'], spans):.4f}, {spans} spans{worst})")


def _why(status: str) -> str:
    """A stored non-time's reason: the error type of ``failed: Type: text``, or wrong outputs
    for ``rejected: ...`` (the check against the float64 reference)."""
    kind, _, rest = status.partition(":")
    if kind == "rejected":
        return "wrong outputs"
    return rest.strip().split(":")[0] or kind


def report(db, seconds=None, shapes=None, shapes_text="") -> str:
    rows = list(rows_of(db))
    if shapes is not None:      # the buckets of these shapes only
        keep = {(tuning.bucket_index(n), tuning.bucket_index(t)) for n, t in shapes}
        rows = [(est, e) for est, e in rows
                if (tuning.bucket_index(e["rows"][0]), tuning.bucket_index(e["steps"][0])) in keep]
    dev, sw = db["device"], db["software"]
    failed = Counter((name, _why(t)) for _, e in rows for name, t in e["timings"].items()
                     if isinstance(t, str) and not t.startswith(PRUNED))
    pruned = sum(isinstance(t, str) and t.startswith(PRUNED)
                 for _, e in rows for t in e["timings"].values())
    runs = sum(len(e["timings"]) for _, e in rows) - pruned
    what = f"the buckets of {shapes_text}" if shapes is not None else "the shipped tuning DB"
    out = [f"# rlscan-tune on the {dev['name']}: {what}", ""]
    took = f", **{seconds:.0f} s**" if seconds else ""
    out.append(f"{len(rows)} buckets, {runs} candidate runs{took}; torch {sw['torch']}, triton "
               f"{sw['triton']}. Times are CUDA-graph replays with L2-rotated inputs (µs); floor "
               f"= bytes / {dev['copy_gbps'] / 1000:.2f} TB/s copy bandwidth.")
    if pruned:
        out.append(f"{pruned} of the runs were skipped by `rlscan-tune --prune` (an earlier "
                   f"tune found them far slower than their bucket's winner).")
    if failed:
        out.append("Candidates not measured: " + ", ".join(
            f"{k} in {v} bucket{'s' if v > 1 else ''} ({why})"
            for (k, why), v in sorted(failed.items())) + ".")
    out += ["", "## Tuned ÷ heuristic, and tuned ÷ floor", "",
            "| dtype | layout | buckets | vs heuristic (geomean) | best | tuned slower | "
            "÷ floor (geomean) | worst bucket with floor ≥ 20 µs |",
            "|---|---|---:|---:|---:|---:|---:|---|"]
    groups = defaultdict(list)
    for est, e in rows:
        groups[(e["dtype"], e["layout"])].append((est, e))
    for key in sorted(groups) + [("all", "all")]:
        g = [r for k in sorted(groups) for r in groups[k]] if key[0] == "all" else groups[key]
        gain = [e["heuristic_us"] / e["median_us"] for _, e in g if e.get("heuristic_us")]
        over = [e["median_us"] / e["floor_us"] for _, e in g]
        big = [(e["median_us"] / e["floor_us"], est, e) for est, e in g if e["floor_us"] >= 20]
        worst = "—"
        if big:
            r, est, e = max(big, key=lambda x: x[0])
            worst = (f"{est} rows {e['rows'][0]}..{e['rows'][1]} steps {e['steps'][0]}.."
                     f"{e['steps'][1]}: {e['median_us']:.1f} µs, floor {e['floor_us']:.1f} "
                     f"({r:.2f}×)")
        out.append(f"| {key[0]} | {key[1]} | {len(g)} | {geomean(gain):.2f}× | "
                   f"{max(gain):.2f}× | {sum(x < 1 for x in gain)} | {geomean(over):.2f} | "
                   f"{worst} |")
    wins = Counter(e["config"]["strategy"] for _, e in rows)
    two = Counter(e["config"]["strategy"] for _, e in rows if e["config"].get("TWO_LEVEL"))
    capped = Counter(f"r{e['config']['maxnreg']}" for _, e in rows if e["config"].get("maxnreg"))
    groups = Counter(f"{e['dtype']} g{e['config']['GROUP']}" for _, e in rows
                     if e["config"].get("GROUP", 4) != 4)
    splits = Counter(f"sp{e['config']['SPLIT']}" for _, e in rows if e["config"].get("SPLIT"))
    out += ["", "Winning strategies: " + ", ".join(f"{k} {v}" for k, v in wins.most_common())
            + "; of these with the two-level backward scan (`/2l`): "
            + (", ".join(f"{k} {v}" for k, v in two.most_common()) or "none")
            + "; under a register cap (`/rN`): "
            + (", ".join(f"{k} {v}" for k, v in sorted(capped.items())) or "none")
            + "; with groups of 8 or 16 steps a thread (`/g8`, `/g16`): "
            + (", ".join(f"{k} {v}" for k, v in sorted(groups.items())) or "none")
            + "; with a row over several warps (`/spN`): "
            + (", ".join(f"{k} {v}" for k, v in sorted(splits.items())) or "none") + ".", "",
            "## Every bucket", "",
            "| estimator | dtype | layout | rows | steps | config | µs | floor µs | vs heuristic |",
            "|---|---|---|---|---|---|---:|---:|---:|"]
    for est, e in sorted(rows, key=lambda r: (r[0], r[1]["dtype"], r[1]["layout"],
                                                r[1]["rows"][0], r[1]["steps"][0])):
        c = e["config"]
        label = configs.label(c)
        gain = e["heuristic_us"] / e["median_us"] if e.get("heuristic_us") else float("nan")
        out.append(f"| {est} | {e['dtype']} | {e['layout']} | {e['rows'][0]}..{e['rows'][1]} | "
                   f"{e['steps'][0]}..{e['steps'][1]} | {label} | {e['median_us']:.2f} | "
                   f"{e['floor_us']:.2f} | {gain:.2f}x |")
    walks = [(est, e) for est, e in rows if e.get("bounded_walk")]
    if walks:
        out += ["", "## Look-back beyond 256 spans a row (`bounded_walk`)", "",
                "Faster than the bucket's winner on the tuner's data, kept apart: a call runs the "
                "first whose rows stay within 256 spans or whose walk back its scalar "
                "coefficients end within its `walk_spans` (per-step |a| = γ, γ·λ or γ·λ·c̄ at "
                "most the limit; `configs.walk_decay_limit`): the first window (8 spans), or 72 "
                "where on rows without episode ends it took at most 15% more than the winner "
                "(µs there: config / winner).",
                "", "| estimator | dtype | rows | steps | winner µs | bounded walk: config µs "
                "(|a| ≤ limit) |", "|---|---|---|---|---:|---|"]
        for est, e in sorted(walks, key=lambda r: (r[0], r[1]["dtype"], r[1]["rows"][0],
                                                   r[1]["steps"][0])):
            alts = ", ".join(_walk_text(w) for w in e["bounded_walk"])
            out.append(f"| {est} | {e['dtype']} | {e['rows'][0]}..{e['rows'][1]} | "
                       f"{e['steps'][0]}..{e['steps'][1]} | {e['median_us']:.2f} | {alts} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("db")
    p.add_argument("--seconds", type=float, help="how long the sweep took (from its log)")
    p.add_argument("--shapes", help="only the buckets of these shapes (NxT or a name of "
                                    "tune/grid.py's NAMED_SHAPES, comma list)")
    args = p.parse_args(argv)
    shapes = grid.parse_shapes(args.shapes) if args.shapes else None
    with open(args.db) as f:
        sys.stdout.write(report(json.load(f), args.seconds, shapes, args.shapes or ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
