"""``python -m rlscan``: what this machine runs, for a bug report or a performance question.

Versions; which path CUDA and CPU calls take; the tuning DBs loaded (where from, how many
buckets, the GPU each was made on); and for every visible GPU the DB that serves it: its own, a
stand-in's (a GPU of the same compute capability and SM count, rlscan/tuning.py), or none (the
heuristic configs, usually slower: run ``rlscan-tune``), and the sibling DBs whose entries serve
the buckets its DB lacks. Reads files and device properties only;
launches nothing.
"""
import collections
import os
import platform
import sys
import warnings

import torch

from . import __version__, tuning


_KINDS = {"db": "shipped", "overlay": "from the overlay"}   # tuning.load's label kinds


def _db_lines() -> list:
    read = ", ".join(f"{'shipped' if kind == 'db' else kind} {d}" for kind, d in tuning._layers)
    lines = [f"tuning DBs, read from {read or 'nowhere'}:"]
    if not tuning._index:
        return lines + ["  none loaded: every call uses the heuristic configs"]
    for slug, table in sorted(tuning._index.items()):
        sources = collections.Counter(label.split(":", 1)[0] for _, label, _ in table.values())
        where = ", ".join(f"{n} {_KINDS.get(kind, kind)}" for kind, n in sorted(sources.items()))
        arch = tuning._db_devices.get(slug)
        made = (f"sm_{arch[0][0]}{arch[0][1]}, {arch[1]} SMs, {arch[2] >> 20} MiB L2"
                if arch else "device not recorded")
        lines.append(f"  {slug}: {len(table)} buckets ({where}); made on {made}")
    return lines


def _gpu_lines() -> list:
    if not torch.cuda.is_available():
        return ["CUDA: no device; CPU tensors run the torch implementation"
                + (" (RLSCAN_INTERPRET=1: Triton's interpreter instead)"
                   if os.environ.get("RLSCAN_INTERPRET") == "1" else "")]
    from .kernels import launch      # imports Triton and defines the kernels
    lines = ["CUDA: Triton kernels, launched "
             + ("directly through the compiled launcher (replayed per call signature)"
                if launch._DIRECT else "through Triton's own path (no replay)")]
    for i in range(torch.cuda.device_count()):
        device = torch.device("cuda", i)
        p = torch.cuda.get_device_properties(device)
        own = tuning.gpu_slug(p.name)
        chosen = dict(tuning._db_slugs)           # (a first choice warns: kept for the calls)
        with warnings.catch_warnings():          # the stand-in's warning: said below instead
            warnings.simplefilter("ignore", tuning.RLScanTuningWarning)
            served = tuning._db_slug(device)
        tuning._db_slugs.clear()
        tuning._db_slugs.update(chosen)
        if served in tuning._index and served == own:
            db = f"its own DB, {own}"
        elif served in tuning._index:
            db = f"no DB of its own ({own}); the stand-in {served}'s"
        else:
            db = f"no DB ({own}): heuristic configs; run rlscan-tune for tuned ones"
        siblings = tuning._siblings(served)
        if siblings:
            db += f"; buckets it lacks from {', '.join(siblings)} where tuned there"
        lines.append(f"  cuda:{i} {p.name} (sm_{p.major}{p.minor}, {p.multi_processor_count} "
                     f"SMs): {db}")
    return lines


def report() -> str:
    import triton
    head = (f"rlscan {__version__}, torch {torch.__version__}, triton {triton.__version__}, "
            f"Python {platform.python_version()}")
    return "\n".join([head, *_gpu_lines(), *_db_lines()])


def main() -> None:
    print(report())


if __name__ == "__main__":
    sys.exit(main())
