"""How well one GPU's tuned configs serve another GPU, read from two tuning DBs (no GPU needed).

    python benchmarks/cross_gpu_configs.py tuning_db/nvidia-h100-80gb-hbm3.json \\
        tuning_db/nvidia-h200.json [--md out.md]

For every bucket of TARGET (the DB tuned on the GPU in question), the time its tune measured
for SOURCE's winner of the same bucket, divided by TARGET's winner: what a user of the target
GPU would lose running the source GPU's DB instead of its own. Beside it, the heuristic's time
over the winner (what an untuned GPU runs). Buckets where the tune did not time the source's
winner (pruned, failed, or not a candidate there) are counted apart.
"""
import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from rlscan import tuning  # noqa: E402
from rlscan.kernels import configs as C  # noqa: E402


def winners(doc: dict) -> dict:
    out = {}
    for kernel, section in doc["kernels"].items():
        for e in section["entries"]:
            out[tuning.entry_key(kernel, e)] = e
    return out


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def compare(target: dict, source: dict):
    """{(dtype, layout): {"src": [ratios], "heur": [ratios], "untimed": n}} and the worst cells."""
    src = winners(source)
    groups = defaultdict(lambda: {"src": [], "heur": [], "untimed": 0})
    worst = []
    for key, e in winners(target).items():
        g = groups[(key[1], key[2])]
        win = float(e["median_us"])
        if e.get("heuristic_us"):
            g["heur"].append(float(e["heuristic_us"]) / win)
        if key not in src:
            g["untimed"] += 1
            continue
        t = (e.get("timings") or {}).get(C.label(src[key]["config"]))
        if not isinstance(t, (int, float)) or isinstance(t, bool):
            g["untimed"] += 1
            continue
        g["src"].append(t / win)
        worst.append((t / win, key, tuple(e["shape"]), C.label(src[key]["config"]),
                       C.label(e["config"])))
    worst.sort(reverse=True)
    return groups, worst


def table(groups, worst, target_name: str, source_name: str, n_worst: int = 10) -> str:
    lines = [f"Configs tuned on {source_name} run on {target_name}: time ÷ {target_name}'s own "
             "winner, per bucket (from the target tune's timings).", "",
             "| dtype | layout | buckets | source's winner: geomean | max | > 1.10× | "
             "heuristic: geomean | max | not timed |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (dt, lay), g in sorted(groups.items()):
        s, h = g["src"], g["heur"]
        lines.append(f"| {dt} | {lay} | {len(s) + g['untimed']} | {geomean(s):.3f} | "
                     f"{max(s, default=float('nan')):.2f} | {sum(x > 1.10 for x in s)} | "
                     f"{geomean(h):.3f} | {max(h, default=float('nan')):.2f} | {g['untimed']} |")
    lines += ["", f"Worst {n_worst}: ratio, bucket, shape, source's winner, target's winner", ""]
    lines += [f"- {r:.2f}× {k[0]} {k[1]} {k[2]} {shape[0]}x{shape[1]}: {a} vs {b}"
              for r, k, shape, a, b in worst[:n_worst]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("target", type=Path, help="the DB tuned on the GPU in question")
    p.add_argument("source", type=Path, help="the DB whose winners would run there instead")
    p.add_argument("--md", type=Path, default=None, help="also write the table here")
    args = p.parse_args(argv)
    target, source = (json.loads(f.read_text()) for f in (args.target, args.source))
    groups, worst = compare(target, source)
    text = table(groups, worst, target["device"]["name"], source["device"]["name"])
    print(text)
    if args.md:
        args.md.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
