"""The performance issue's targets read from an rlscan-bench run, and one run against another.

    python benchmarks/grid_report.py benchmarks/results/bench_fp32_time_last_h100.json
    python benchmarks/grid_report.py benchmarks/results/stand_in_h100.log \\
        --against benchmarks/results/bench_fp32_time_last_h100.json --md out.md

RUN is rlscan-bench's ``bench.json`` or its saved stdout (one ``[i/n] est NxT dtype layout
device D floor F`` line a cell: what survives where the JSON did not come back). Per dtype and
layout: how many cells whose floor is at least 20 µs run within 1.25x of it, how many of the
rest within floor + 3 µs, and the worst cells of each kind by their ratio or excess. With
``--against``: each common cell's device time over the other run's (geomean, spread, worst).
"""
import argparse
import json
import math
import re
from pathlib import Path

from rlscan.tune.bench import cell_name, target_lines

_LINE = re.compile(r"\[\d+/\d+\]\s+(\w+)\s+(\d+)x(\d+)\s+(\w+)\s+(\w+)\s+device\s+([\d.]+)"
                   r"\s+floor\s+([\d.]+)")


def load(path: Path) -> dict:
    """{(estimator, N, T, dtype, layout): (device µs, floor µs)}"""
    text = path.read_text()
    if path.suffix == ".json":
        return {(r["estimator"], r["N"], r["T"], r["dtype"], r["layout"]):
                (r["device_us"], r["floor_us"]) for r in json.loads(text)["results"]}
    return {(m[1], int(m[2]), int(m[3]), m[4], m[5]): (float(m[6]), float(m[7]))
            for m in _LINE.finditer(text)}


def against(cells: dict, other: dict, worst: int = 8) -> list:
    common = sorted((cells[k][0] / other[k][0], k) for k in cells.keys() & other.keys())
    if not common:
        return ["- no cell in common"]
    gm = math.exp(sum(math.log(r) for r, _ in common) / len(common))
    lines = [f"- {len(common)} common cells: device time ÷ the other run's, geomean {gm:.3f}, "
             f"{common[0][0]:.2f}-{common[-1][0]:.2f}x; over 1.10x: "
             f"{sum(r > 1.10 for r, _ in common)}, under 0.90x: {sum(r < 0.90 for r, _ in common)}"]
    lines += [f"  - {r:.2f}x {cell_name(k)} {k[3]} {k[4]}: {cells[k][0]:.1f} vs "
              f"{other[k][0]:.1f} us" for r, k in common[::-1][:worst]]
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run", type=Path, help="bench.json or a saved rlscan-bench stdout")
    p.add_argument("--against", type=Path, default=None, help="another run, the same formats")
    p.add_argument("--md", type=Path, default=None, help="also write the report here")
    args = p.parse_args(argv)
    cells = load(args.run)
    if not cells:
        p.error(f"run: no cells read from {args.run} (bench.json or rlscan-bench's stdout)")
    out = [f"Targets ({args.run.name}):", *target_lines(cells)]
    if args.against is not None:
        out += ["", f"Against {args.against.name}:", *against(cells, load(args.against))]
    text = "\n".join(out) + "\n"
    print(text, end="")
    if args.md is not None:
        args.md.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
