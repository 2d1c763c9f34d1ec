"""Which tuned two-level tiles lose their footing at odd alignment: ptxas, no GPU.

At an odd T or an odd row stride (``x[:, :T]`` of rows of T + 1) the launcher shrinks a
two-level tile's groups to one step (two or four in 512- and 1024-step chunks) and no load
takes two steps; the fifty-ninth session found one DB tile that then spilled and ran x5 slower
(H100 bf16 GAE 1024x8192, 1x1024/w1/2l/g8). This survey compiles every time-last two-level
entry of the shipped DBs that ``configs.for_odd_rows`` does not swap for 1x512/w4, at its
bucket's shape as tuned and one step shorter as ``for_odd_rows`` runs it there (odd T: the
kernel odd strides run too; since the sixtieth session look-back tiles in one level and every
tile uncapped, the odd config named where it differs), with ``kernel_resources.py``'s launches
and Triton's own ptxas for sm_90, and prints per launch: registers, spill stores, barriers a
launch and H200 waves, aligned -> odd. Rows that spill or whose waves grow by half are the
tiles to time first (``device_run.sh odd-tiles-ab``).

    PYTHONPATH=/tmp/t36 python benchmarks/odd_alignment_survey.py [--estimators gae,vtrace]

Use triton 3.6's wheel (kernel_resources.py's docstring): later versions emit other code.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_resources import launch_reports, waves  # noqa: E402 - a sibling script

from rlscan.kernels import configs as C  # noqa: E402
from rlscan.tune import grid  # noqa: E402

_DBS = ("nvidia-h200.json", "nvidia-h100-80gb-hbm3.json")
_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tuning_db")


def entries(estimators):
    """(db, estimator, dtype, N, T, config) of every time-last two-level entry that
    for_odd_rows does not swap for 1x512/w4 one step short of its bucket's shape, one per
    (estimator, dtype, config)."""
    seen = set()
    for db in _DBS:
        with open(os.path.join(_ROOT, db)) as f:
            doc = json.load(f)
        for est, section in doc["kernels"].items():
            if est not in estimators:
                continue
            for e in section["entries"]:
                cfg, (N, T) = e["config"], e["shape"]
                if (e["layout"] != "time_last" or not cfg.get("TWO_LEVEL")
                        or C.for_odd_rows(cfg, N, T - 1) is C._ODD_ROWS_CONFIG):
                    continue
                key = (est, e["dtype"], C.label(cfg))
                if key not in seen:
                    seen.add(key)
                    yield db.split(".")[0], est, e["dtype"], N, T, cfg


def report(est, N, T, cfg, dtype):
    """[(phase, registers, spill stores, barriers, waves)] of each scan launch of the cell."""
    return [(consts["PHASE"], r["registers"], r["spill_stores"], ptx.count("bar.sync"),
             waves(programs, r["registers"], options[0]))
            for consts, options, programs, ptx, r in launch_reports(est, N, T, cfg, dtype)]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--estimators", default="discounted_returns,gae,lambda_returns,vtrace,retrace")
    args = p.parse_args(argv)
    estimators = args.estimators.split(",")
    for est in estimators:
        if est not in grid.ESTIMATORS:
            p.error(f"--estimators: unknown {est!r}; expected some of {grid.ESTIMATORS}")
    print("db     estimator          dtype    NxT           config                           "
          "phase regs       spill      bar      waves       flag  odd config")
    for db, est, dtype, N, T, cfg in entries(estimators):
        odd = C.for_odd_rows(cfg, N, T - 1)
        for a, o in zip(report(est, N, T, cfg, dtype), report(est, N, T - 1, odd, dtype)):
            flag = "SPILL" if o[2] > a[2] else ("waves" if o[4] > 1.5 * a[4] + 0.05 else "")
            print(f"{db[:6]:<6} {est:<18} {dtype:<8} {f'{N}x{T}':<13} "
                  f"{C.label(cfg).replace('/s1', ''):<32} {a[0]:>5} {a[1]:>4} -> {o[1]:<4} "
                  f"{a[2]:>4} -> {o[2]:<4} {a[3]:>3} -> {o[3]:<3} {a[4]:>5.2f} -> {o[4]:<5.2f} "
                  f"{flag:<5} {'' if odd is cfg else C.label(odd).replace('/s1', '')}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
