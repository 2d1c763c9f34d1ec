"""Hashes of the scan kernel's sm_90 PTX for a sample of the shipped DBs' tuned launches.

A kernel edit marks every shipped DB stale (``tuning.kernel_source_hash``), even one that
cannot change the code of any tuned launch (a branch on a new constexpr that those launches
leave off). This script shows whether it did: from every tuning DB it takes one entry per class
of config (dtype, layout, strategy, two-level, lane rows, split rows, group; the estimators
taken in turn), makes that entry's own grid call (its bucket's shape) on CPU tensors the way
``kernel_resources.py`` does, compiles each launch of the scan kernel for sm_90 as the JIT
would specialise it, and prints one line a launch with a hash of its PTX without line info
(``.loc``, ``.file`` and the debug sections move with the source text). Run it in two
checkouts and compare:

    python benchmarks/ptx_identity.py > new.txt
    PYTHONPATH=/path/to/old/checkout python benchmarks/ptx_identity.py > old.txt
    diff old.txt new.txt && echo "same code for every sampled launch"

Only where nothing differs may the DBs' ``source_hash`` be moved to the new kernel's (their
timings are then of the same code); ``--restamp`` does that to the DB files given.
"""
import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_resources as K  # noqa: E402 - a sibling script

from rlscan import tuning  # noqa: E402
from rlscan.tune.db import atomic_write_json  # noqa: E402
from rlscan.kernels import configs as C  # noqa: E402

# (line by line: a first version let ``.*`` run over newlines and hashed only what came before
# the first .loc, the kernel's signature; the test of this script caught it)
_LINE_INFO = re.compile(r"^[ \t]*\.(?:loc|file)\b[^\n]*\n?", re.M)
_DEBUG_SECTIONS = re.compile(r"^[ \t]*\.section[ \t]+\.debug.*?^[ \t]*\}[ \t]*\n?", re.M | re.S)


def ptx_digest(ptx: str) -> str:
    """sha256 (16 hex digits) of PTX without its line info and debug sections."""
    code = _LINE_INFO.sub("", _DEBUG_SECTIONS.sub("", ptx))
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def sample(paths) -> list:
    """[(estimator, dtype, layout, N, T, config)]: one DB entry per class of config."""
    picked, seen = [], set()
    for path in paths:
        kernels = json.loads(Path(path).read_text())["kernels"]
        order = sorted(kernels)
        for i in range(max(len(s["entries"]) for s in kernels.values())):
            for k in order:
                entries = kernels[k]["entries"]
                if i >= len(entries):
                    continue
                e, c = entries[i], entries[i]["config"]
                key = (e["dtype"], e["layout"], c.get("strategy"), bool(c.get("TWO_LEVEL")),
                       bool(c.get("LANE_ROWS")), c.get("SPLIT", 1), c.get("GROUP"))
                if key not in seen:
                    seen.add(key)
                    picked.append((k, e["dtype"], e["layout"], *e["shape"], c))
    return picked


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dbs", nargs="*", default=None,
                    help="tuning DB files to sample (default: the shipped ones)")
    ap.add_argument("--restamp", nargs="*", default=None, metavar="DB",
                    help="set these DB files' source_hash to this checkout's kernel hash "
                         "instead (after a diff showed no change)")
    args = ap.parse_args(argv)
    shipped = sorted(Path(tuning.__file__).resolve().parent.parent.glob("tuning_db/*.json"))
    if args.restamp is not None:
        new = tuning.kernel_source_hash()
        for path in args.restamp or shipped:
            doc = json.loads(Path(path).read_text())
            for section in doc["kernels"].values():
                section["source_hash"] = new
            atomic_write_json(Path(path), doc)
            print(f"{path}: source_hash {new}")
        return 0
    for est, dtype, layout, n, t, cfg in sample(args.dbs or shipped):
        for i, (consts, options, arguments, _, kernel) in enumerate(
                K.launches(est, n, t, C.validate(dict(cfg)), dtype, layout)):
            ptx = K.compile_ptx(consts, options, arguments, kernel)
            print(est, dtype, layout, f"{n}x{t}", json.dumps(cfg, sort_keys=True), i,
                  ptx_digest(ptx), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
