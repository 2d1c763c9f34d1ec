"""What ``rlscan-tune --prune F`` would have done to every retune in git history: for each commit
that changed ``tuning_db/nvidia-h200.json``, against the commit before it, the share of
candidate runs it would have timed and the buckets whose new winner it would have skipped (with
how much slower the best timed candidate was). Needs no GPU: it replays the stored timings.

    python benchmarks/prune_history.py                 # factors 1.2, 1.3, 1.5
    python benchmarks/prune_history.py --factors 1.3 --db tuning_db/nvidia-h200.json
"""
import argparse
import json
import subprocess
from pathlib import Path

from rlscan import tuning
from rlscan.tune import prune

ROOT = Path(__file__).resolve().parent.parent


def _git(*args) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def replay(before: dict, after: dict, factor: float):
    """(buckets retuned, runs timed, runs in all, [(loss, key, new winner)]) for one retune."""
    earlier, later = prune.earlier_timings(before), prune.earlier_timings(after)
    heuristic_us = {key: e.get("heuristic_us") for key, e in _entries(after)}
    retuned = timed = total = 0
    missed = []
    for key, (winner_us, timings) in later.items():
        if key not in earlier or earlier[key][1] == timings:
            continue                              # a bucket this retune did not touch
        retuned += 1
        old_winner, old = earlier[key]
        times = {lab: v for lab, v in timings.items()
                 if isinstance(v, (int, float)) and not isinstance(v, bool)}
        # the heuristic is always timed; entries name it only by its time
        heuristic = {lab for lab, v in times.items() if v == heuristic_us.get(key)}
        kept = {lab for lab in timings if lab in heuristic
                or not ((r := prune.ratio_to_winner(old.get(lab), old_winner)) is not None
                        and r > factor)}
        total += len(timings)
        timed += len(kept)
        if not times:
            continue
        best_lab = min(times, key=times.get)
        if best_lab not in kept:
            kept_times = [times[lab] for lab in kept if lab in times]
            loss = min(kept_times) / times[best_lab] if kept_times else float("inf")
            missed.append((loss, key, best_lab))
    return retuned, timed, total, sorted(missed, reverse=True)


def _entries(doc: dict):
    for kernel, section in (doc.get("kernels") or {}).items():
        for e in section.get("entries") or []:
            try:
                yield tuning.entry_key(kernel, e), e
            except ValueError:
                continue


def _where(key) -> str:
    est, dtype, layout, kr, kt = key
    return f"{est} {dtype} {layout} {1 << kr}..{(2 << kr) - 1} x {1 << kt}..{(2 << kt) - 1}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--factors", default="1.2,1.3,1.5")
    p.add_argument("--db", default="tuning_db/nvidia-h200.json")
    args = p.parse_args(argv)
    revs = _git("log", "--reverse", "--format=%h", "--", args.db).split()
    docs = [json.loads(_git("show", f"{rev}:{args.db}")) for rev in revs]
    for factor in (float(f) for f in args.factors.split(",")):
        print(f"factor {factor}")
        for rev, before, after in zip(revs[1:], docs, docs[1:]):
            retuned, timed, total, missed = replay(before, after, factor)
            if not retuned:
                continue
            worst = (f"; worst {missed[0][0]:.3f}x slower, {_where(missed[0][1])} "
                     f"(new winner {missed[0][2]})" if missed else "")
            print(f"  {rev}: {retuned} buckets retuned, {timed}/{total} runs timed "
                  f"({timed / max(total, 1):.0%}), new winner skipped in {len(missed)}{worst}")


if __name__ == "__main__":
    main()
