"""Does a cell's device time follow the GPU's clock? (GPU)

The placement probe (thirty-first session) found V-trace and GAE at 64x512 ~0.35 µs faster in
the first seconds of a process than afterwards, whatever the placement of their inputs: three
configs, two estimators, the same step. This probe times ``--cells`` (the DB's configs, the
grid's input sets, ``bench.device_us``) round-robin for ``--seconds`` while ``nvidia-smi``
samples the SM and memory clocks, power and the clock-event reasons every ``--sample-ms``, then
prints each timing beside the clocks read nearest to it, and the median timing a cell per SM
clock. Timings that split with the SM clock say the two modes are clocks (which no one may
change here: METHOD.md), not the kernels.

    python benchmarks/clock_probe.py --cells vtrace:64x512,gae:64x512,gae:131072x256 --seconds 30
"""
import argparse
import bisect
import os
import statistics
import subprocess
import sys
import time

import torch

from rlscan.kernels.heuristic import heuristic_config
from rlscan.kernels.launch import force_config
from rlscan.tune import grid, timing
from rlscan.tune.bench import device_us

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_configs import grid_calls, tuned_config  # noqa: E402 - a sibling

_FIELDS = ("clocks.sm", "clocks.mem", "power.draw", "temperature.gpu")
_REASONS = ("clocks_event_reasons.active", "clocks_throttle_reasons.active")


def parse_cells(text: str):
    """``est:NxT,...`` -> [(est, N, T), ...]."""
    out = []
    for item in text.split(","):
        est, _, shape = item.partition(":")
        if est not in grid.ESTIMATORS or "x" not in shape:
            raise argparse.ArgumentTypeError(
                f"--cells: {item!r}; expected ESTIMATOR:NxT with ESTIMATOR one of "
                f"{', '.join(grid.ESTIMATORS)}")
        N, T = (int(v) for v in shape.split("x"))
        out.append((est, N, T))
    return out


def start_sampler(path: str, sample_ms: int):
    """``nvidia-smi`` writing ``time,<_FIELDS>,reasons`` lines to ``path`` every ``sample_ms``
    (the first reasons field this driver knows): (process, its output file), or None where
    nvidia-smi is missing or knows neither field."""
    for reasons in _REASONS:
        query = ",".join(("timestamp",) + _FIELDS + (reasons,))
        try:
            probe = subprocess.run(["nvidia-smi", f"--query-gpu={query}",
                                    "--format=csv,noheader"], capture_output=True, text=True)
        except FileNotFoundError:
            return None
        if probe.returncode == 0:
            out = open(path, "w")
            return subprocess.Popen(["nvidia-smi", f"--query-gpu={query}",
                                     "--format=csv,noheader,nounits", f"-lms={sample_ms}"],
                                    stdout=out, stderr=subprocess.DEVNULL), out
    return None


def read_samples(path: str):
    """[(wall seconds, {field: text})] from the sampler's file, in order."""
    out = []
    with open(path) as f:
        lines = f.readlines()
    for line in lines:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != len(_FIELDS) + 2:
            continue
        try:
            stamp = time.mktime(time.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S"))
            stamp += float("0." + parts[0].split(".")[1]) if "." in parts[0] else 0.0
        except ValueError:
            continue
        out.append((stamp, dict(zip(_FIELDS + ("reasons",), parts[1:]))))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cells", type=parse_cells,
                   default=parse_cells("vtrace:64x512,gae:64x512,gae:131072x256"))
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--sample-ms", type=int, default=50)
    p.add_argument("--idle", type=float, default=0.0,
                   help="seconds to sleep between rounds (0: back to back, as the tuner runs)")
    p.add_argument("--log", default=os.path.join(os.environ.get("OUT", "."), "clocks.csv"))
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.sample_ms < 10 or args.idle < 0:
        p.error("--seconds > 0, --sample-ms >= 10, --idle >= 0")
    if not torch.cuda.is_available():
        print("clock_probe needs a CUDA GPU", file=sys.stderr)
        return 2
    l2 = timing.l2_bytes(torch.device("cuda"))
    measures = []
    for est, N, T in args.cells:
        sets = grid_calls(est, N, T, l2)
        cfg = tuned_config(est, sets[0]) or heuristic_config(N, T, False)

        def measure(est=est, sets=sets, cfg=cfg):
            with force_config(**cfg):
                return device_us([(lambda c=c: grid.run(est, c)) for c in sets])
        measure()                                   # compile and capture outside the timeline
        measures.append((f"{est} {N}x{T}", measure))
    sampler = start_sampler(args.log, args.sample_ms)
    time.sleep(0.5)
    rows, t0 = [], time.time()
    while time.time() - t0 < args.seconds:
        for name, measure in measures:
            at = time.time()
            rows.append((at, name, measure()))
        if args.idle:
            time.sleep(args.idle)
    time.sleep(0.3)
    if sampler is not None:
        proc, out = sampler
        proc.terminate()
        proc.wait()
        out.close()
    samples = read_samples(args.log) if sampler is not None else []
    stamps = [s for s, _ in samples]

    def clocks_at(at):
        if not samples:
            return {f: "?" for f in _FIELDS + ("reasons",)}
        i = min(max(bisect.bisect_left(stamps, at), 0), len(samples) - 1)
        return samples[i][1]
    print(f"{len(rows)} timings over {args.seconds:.0f} s, {len(samples)} clock samples "
          f"({args.log})")
    by_clock = {}
    for k, (at, name, us) in enumerate(rows):
        c = clocks_at(at)
        by_clock.setdefault((name, c["clocks.sm"]), []).append(us)
        if k % max(1, len(rows) // 40) == 0:
            print(f"t={at - t0:6.2f}s {name:<18} {us:8.2f} µs  SM {c['clocks.sm']:>5} MHz "
                  f"mem {c['clocks.mem']:>5} {c['power.draw']:>7} W {c['temperature.gpu']:>3} C "
                  f"reasons {c['reasons']}")
    print("median µs a cell by SM clock (count)")
    for (name, sm), ts in sorted(by_clock.items()):
        print(f"  {name:<18} SM {sm:>5} MHz {statistics.median(ts):8.2f} ({len(ts)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
