"""``rlscan-bench``: rlscan against the bandwidth floor and the baselines a user would pick.

    rlscan-bench                                   # standard grid, every estimator, fp32, time-last
    rlscan-bench --estimators gae --dtypes float32,bfloat16 --layouts time_last,time_major
    rlscan-bench --baselines compile,loop --shapes 4096x128,8x65536
    rlscan-bench --plot benchmarks/results/bench.json   # redraw the heatmap from a JSON

Per cell (BENCHMARKS.md's method): **device** = a CUDA graph of at least 20 calls, replay / calls
(median of 20 replays; the graph rotates over enough input sets to span three L2 caches, as the
tuner does, ``timing.n_input_sets``, each set equally often, and every call in it writes outputs
of its own, so they too go to DRAM); **loop** = 200 eager calls between
events / 200 (best of 3; the process first makes eager calls for ``--host-warmup`` seconds, so
that the loop figures are the steady state of a training loop: on the H200's host a process's
calls got ~27% cheaper after ~1.5 s of them, eleventh session); **full** = sync, event, one call,
event, sync (median of 60); **floor** = the call's bytes
(inputs read once, outputs written once) / the measured copy bandwidth. Beside the grid, at its
start and end, the host's own reference points (BENCHMARKS.md's): the loop figure of a bare
Triton launch of a one-element kernel and of a ``torch.add``, because the loop column follows the
host: on the H200's VM the same script ran GAE 4096x128 at 18-36 us depending on which of the
16 cores its process was pinned to, a bare launch at 10-18 (nineteenth session,
``benchmarks/NOTES.md``), and the host drifted within a grid (twenty-first session: torch.add
7.9 -> 12.8 us from start to end). So each cell's loop also times a bare launch, the two
taking turns (**bare launch**): the loop less it is what rlscan adds on that host.
Baselines, measured in the same run: ``compile`` = torch.compile of rlscan's torch path on
the GPU with the vectorised log-depth doubling scan (``_torch_path.doubling_scan``), ``loop`` =
an eager sequential loop over time (skipped past 8192 steps). Writes bench.json, bench.md and
bench.png (device ÷ floor heatmap) under ``--out``.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import triton
import triton.language as tl

from . import grid, timing

DEFAULT_OUT = os.path.join("benchmarks", "results")
BASELINES = ("compile", "loop")   # _baseline's kinds


def _events():
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def device_us(fns, calls=20, replays=20, hold_outputs=True, back_to_back=False):
    """Median CUDA-graph replay time / call: at least ``calls`` calls in the graph and every one
    of ``fns`` (one per input set, in rotation) the same number of times.

    Each replay is timed from an idle GPU (its events synchronised before the next replay), so
    a replay's interval also holds the graph launch's own latency, ~1/``calls`` of it a call;
    ``back_to_back``: the replays and their events enqueued together and synchronised once,
    as the tuner times (``timing.GraphTimer``), so each replay's launch overlaps the one
    before (``benchmarks/replay_sync_probe.py`` measures both).

    ``hold_outputs``: keep what every captured call returns until the replays are done, so each
    call of the graph writes its own output memory. Otherwise a call's outputs, freed before the
    next call is captured, are the block the next call gets from the graph's pool: every call
    writes the same lines, which can stay in L2 and never reach DRAM, and the figure is low by up
    to the outputs' write-back (``benchmarks/output_reuse_probe.py`` measures both)."""
    calls = len(fns) * math.ceil(calls / len(fns))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for f in fns[:2]:
            f()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    held = []
    with torch.cuda.graph(g):
        for i in range(calls):
            out = fns[i % len(fns)]()
            if hold_outputs:
                held.append(out)
    g.replay()
    times, pending = [], []
    for _ in range(replays):
        a, b = _events()
        a.record()
        g.replay()
        b.record()
        if back_to_back:
            pending.append((a, b))
        else:
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e3 / calls)
    if pending:
        torch.cuda.synchronize()
        times = [a.elapsed_time(b) * 1e3 / calls for a, b in pending]
    return statistics.median(times)


def loop_us(fn, calls=200, reps=3):
    return loop_pair_us(fn, None, calls, reps)[0]


def loop_pair_us(fn, ref, calls=200, reps=3):
    """(fn's loop µs, ref's loop µs): ``calls`` eager calls between events, best of ``reps``,
    the two taking turns so that both see the host in the same state (``ref`` None: fn alone)."""
    timed = [f for f in (fn, ref) if f is not None]
    best = {}
    for f in timed:
        f()
    torch.cuda.synchronize()
    for _ in range(reps):
        for f in timed:
            a, b = _events()
            a.record()
            for _ in range(calls):
                f()
            b.record()
            b.synchronize()
            best[f] = min(best.get(f, math.inf), a.elapsed_time(b) * 1e3 / calls)
    return best[fn], best.get(ref)


def full_us(fn, reps=60):
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        a, b = _events()
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return statistics.median(times)


def warm_host(seconds: float) -> None:
    """Eager calls of GAE at 4096x128 for ``seconds`` (synchronised every 100, so the GPU's
    queue stays short): the host's steady state before any loop figure is taken."""
    call = grid.place(grid.draw(grid.Cell("gae", 4096, 128, "float32", "time_last"), 0,
                                "cuda"), "time_last", "cuda")
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(100):
            grid.run("gae", call)
        torch.cuda.synchronize()


@triton.jit
def _one_element(x_ptr):
    tl.store(x_ptr, 1.0)


def bare_launch():
    """A callable that launches a one-program Triton kernel storing one float: the least any
    eager Triton call pays on this host."""
    x = torch.zeros(1, device="cuda")
    return lambda: _one_element[(1,)](x)


def host_references() -> dict:
    """Loop µs of a bare Triton launch and of ``torch.add``: what any eager GPU call pays on
    this host now, to read the loop column against."""
    x = torch.zeros(1, device="cuda")
    return {"bare_triton_launch": loop_us(bare_launch()),
            "torch_add": loop_us(lambda: torch.add(x, 1))}


def copy_bandwidth(nbytes=1 << 31):
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)
    a, b = _events()
    a.record()
    for _ in range(5):
        dst.copy_(src)
    b.record()
    b.synchronize()
    bw = 2 * nbytes * 5 / (a.elapsed_time(b) * 1e-3)
    del src, dst
    return bw


def _baseline(kind):
    """A callable(problem, out0, out1) that solves the problem with a torch baseline."""
    from rlscan import _torch_path
    if kind == "loop":
        return lambda pb, o0, o1: _torch_path.solve(pb, o0, o1, scan_fn=_torch_path.sequential_scan)
    compiled = torch.compile(_torch_path.solve, dynamic=False)
    return lambda pb, o0, o1: compiled(pb, o0, o1, scan_fn=_torch_path.doubling_scan)


def _call_with_path(path, est, call):
    from rlscan import _layout
    old, _layout.PATH_OVERRIDE = _layout.PATH_OVERRIDE, path
    try:
        return grid.run(est, call)
    finally:
        _layout.PATH_OVERRIDE = old


def input_set_count(nbytes: int, l2: int) -> int:
    """Input sets for a device-time graph of calls moving ``nbytes`` each: enough that together
    they span ``timing.L2_ROTATION`` times ``l2`` bytes, at least 4 (so no cell is timed from
    L2; rlscan-bench, compare_configs.py and kernel_ab.py alike)."""
    return max(4, timing.n_input_sets(nbytes, l2))


def bench_cell(est, N, T, dtype, layout, baselines, bw, sets, l2=0):
    """One cell's row. ``sets``: input sets rotated in the device column's graph; 0: enough that
    together they span ``timing.L2_ROTATION`` times ``l2`` bytes (at least 4)."""
    cell = grid.Cell(est, N, T, dtype, layout)
    calls = [grid.place(grid.draw(cell, 0, "cuda"), layout, "cuda")]
    nbytes = grid.traffic_bytes(calls[0], grid.n_outputs(est))
    if sets == 0:
        sets = input_set_count(nbytes, l2)
    calls += [grid.place(grid.draw(cell, i, "cuda"), layout, "cuda") for i in range(1, sets)]
    fns = [(lambda c=c: grid.run(est, c)) for c in calls]
    floor = nbytes / bw * 1e6
    loop, bare = loop_pair_us(fns[0], bare_launch())
    row = dict(estimator=est, N=N, T=T, dtype=dtype, layout=layout, input_sets=sets,
               floor_us=floor, device_us=device_us(fns), loop_us=loop, bare_launch_loop_us=bare,
               full_us=full_us(fns[0]))
    row["device_over_floor"] = row["device_us"] / floor
    for kind in baselines:
        if kind == "loop" and T > 8192:
            row[f"{kind}_device_us"] = None
            continue
        path = _baseline(kind)
        f = lambda c=calls[0]: _call_with_path(path, est, c)   # noqa: E731
        try:
            f()
            row[f"{kind}_device_us"] = device_us([f], calls=5 if kind == "loop" else 20,
                                                 replays=5 if kind == "loop" else 20)
        except Exception as e:   # a baseline that cannot compile or capture is reported
            row[f"{kind}_device_us"] = None
            row[f"{kind}_error"] = f"{type(e).__name__}: {str(e)[:200]}"
        if row[f"{kind}_device_us"]:
            row[f"speedup_vs_{kind}"] = row[f"{kind}_device_us"] / row["device_us"]
    return row


# The performance issue's targets (../shared/BENCHMARKS.md): device within 1.25x of the floor
# where the floor is at least 20 µs, within floor + 3 µs elsewhere.
BIG_FLOOR_US, BIG_RATIO, SMALL_SLACK_US = 20.0, 1.25, 3.0


def cell_name(key) -> str:
    """``gae 4096x128`` for a cell key (estimator, N, T, ...)."""
    return f"{key[0]} {key[1]}x{key[2]}"


def target_lines(cells) -> list:
    """Markdown bullets, per (dtype, layout): how many cells meet the targets, the worst misses.
    ``cells``: {(estimator, N, T, dtype, layout): (device µs, floor µs)}."""
    groups: dict = {}
    for k, v in cells.items():
        groups.setdefault((k[3], k[4]), {})[k] = v
    lines = []
    for (dtype, layout), g in sorted(groups.items()):
        big = sorted(((d / f, k) for k, (d, f) in g.items() if f >= BIG_FLOOR_US), reverse=True)
        small = sorted(((d - f, k) for k, (d, f) in g.items() if f < BIG_FLOOR_US), reverse=True)
        ok_big = sum(r <= BIG_RATIO for r, _ in big)
        ok_small = sum(x <= SMALL_SLACK_US for x, _ in small)
        gm = math.exp(sum(math.log(d / f) for d, f in g.values()) / len(g))
        lines.append(f"- {dtype} {layout}: {len(g)} cells, device/floor geomean {gm:.2f}; "
                     f"floor >= {BIG_FLOOR_US:.0f} us within {BIG_RATIO}x: {ok_big}/{len(big)}"
                     + (f" ({big[-1][0]:.2f}-{big[0][0]:.2f}x)" if big else "")
                     + f"; the rest within floor + {SMALL_SLACK_US:.0f} us: "
                       f"{ok_small}/{len(small)}")
        worst = [f"{cell_name(k)} {g[k][0]:.1f} us, floor {g[k][1]:.1f} ({r:.2f}x)"
                 for r, k in big[:3] if r > BIG_RATIO]
        worst += [f"{cell_name(k)} {g[k][0]:.1f} us, floor {g[k][1]:.1f} (+{x:.1f})"
                  for x, k in small[:5] if x > SMALL_SLACK_US]
        lines += [f"  - worst: {w}" for w in worst]
    return lines


def write_markdown(rows, meta, path):
    with open(path, "w") as f:
        f.write(f"# rlscan-bench on {meta['device']} ({meta['date']})\n\n")
        f.write(f"torch {meta['torch']}, triton {meta['triton']}; copy bandwidth "
                f"{meta['bandwidth_tb_s']:.2f} TB/s. Times in µs; device = CUDA-graph replay"
                + (f" over input sets spanning {timing.L2_ROTATION} L2 caches of "
                   f"{meta['l2_bytes'] >> 20} MiB" if meta.get("l2_bytes") else "") + "; "
                f"loop after {meta.get('host_warmup_s', 0):g} s of eager calls.")
        refs = [(when, meta[f"host_{when}"]) for when in ("start", "end")
                if f"host_{when}" in meta]
        if refs:
            f.write(" The host's reference points (loop µs): " + "; ".join(
                f"at the {when}, a bare Triton launch {r['bare_triton_launch']:.1f}, torch.add "
                f"{r['torch_add']:.1f}" for when, r in refs) + ".")
        f.write("\n\n")
        f.write("| estimator | N | T | dtype | layout | full | loop | bare launch | device | "
                "floor | device/floor | compile(vec) | × | eager loop | × |\n")
        f.write("|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
        fmt = lambda v: "—" if v is None else f"{v:.1f}"   # noqa: E731
        for r in rows:
            f.write(f"| {r['estimator']} | {r['N']} | {r['T']} | {r['dtype']} | {r['layout']} | "
                    f"{r['full_us']:.1f} | {r['loop_us']:.1f} | "
                    f"{fmt(r.get('bare_launch_loop_us'))} | {r['device_us']:.1f} | "
                    f"{r['floor_us']:.1f} | {r['device_over_floor']:.2f} | "
                    f"{fmt(r.get('compile_device_us'))} | {fmt(r.get('speedup_vs_compile'))} | "
                    f"{fmt(r.get('loop_device_us'))} | {fmt(r.get('speedup_vs_loop'))} |\n")
        f.write("\n## Targets\n\n" + "\n".join(target_lines(
            {(r["estimator"], r["N"], r["T"], r["dtype"], r["layout"]):
             (r["device_us"], r["floor_us"]) for r in rows})) + "\n")
        errors = sorted({(k[:-len("_error")], r[k]) for r in rows for k in r
                         if k.endswith("_error")})
        if errors:   # a baseline that could not run says why, not only "—"
            f.write("\n## Baselines that did not run\n\n" + "".join(
                f"- {kind}: {err}\n" for kind, err in errors))


def save(rows, meta, out):
    """bench.json and bench.md under ``out``."""
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump({"meta": meta, "results": rows}, f, indent=1)
    write_markdown(rows, meta, os.path.join(out, "bench.md"))


def plot(rows, path):
    """Heatmap of device ÷ floor: estimators × cells (fp32 time-last rows only if mixed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    keys = sorted({(r["dtype"], r["layout"]) for r in rows})
    fig, axes = plt.subplots(len(keys), 1, figsize=(14, 3.2 * len(keys)), squeeze=False)
    for ax, (dt, lay) in zip(axes[:, 0], keys):
        sub = [r for r in rows if r["dtype"] == dt and r["layout"] == lay]
        ests = list(dict.fromkeys(r["estimator"] for r in sub))
        cells = list(dict.fromkeys((r["N"], r["T"]) for r in sub))
        m = np.full((len(ests), len(cells)), np.nan)
        for r in sub:
            m[ests.index(r["estimator"]), cells.index((r["N"], r["T"]))] = r["device_over_floor"]
        im = ax.imshow(np.log2(m), cmap="RdYlGn_r", vmin=0, vmax=4, aspect="auto")
        ax.set_xticks(range(len(cells)), [f"{n}×{t}" for n, t in cells], rotation=45, ha="right")
        ax.set_yticks(range(len(ests)), ests)
        for i in range(len(ests)):
            for j in range(len(cells)):
                if not np.isnan(m[i, j]):
                    ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=7)
        ax.set_title(f"device time ÷ bandwidth floor ({dt}, {lay}); 1.00 = at the floor")
        fig.colorbar(im, ax=ax, label="log2(device/floor)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    p = argparse.ArgumentParser(prog="rlscan-bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--estimators", type=grid.comma_list(grid.ESTIMATORS),
                   default=list(grid.ESTIMATORS[:7]),
                   help="comma list of " + ", ".join(grid.ESTIMATORS) + " (default: all but "
                        "linear_scan)")
    p.add_argument("--shapes", type=grid.shapes_arg, default=None,
                   help="ROWSxSTEPS,... or names of sets: " + ", ".join(grid.NAMED_SHAPES)
                        + " (default: the standard grid)")
    p.add_argument("--dtypes", type=grid.comma_list(grid.DTYPES), default=["float32"],
                   help="comma list of " + ", ".join(grid.DTYPES) + " (default: float32)")
    p.add_argument("--layouts", type=grid.comma_list(grid.LAYOUTS), default=["time_last"],
                   help="comma list of " + ", ".join(grid.LAYOUTS) + " (default: time_last)")
    p.add_argument("--baselines", type=grid.comma_list(BASELINES, allow_empty=True),
                   default=list(BASELINES), help="comma list of " + ", ".join(BASELINES)
                                                 + "; empty for none")
    p.add_argument("--baseline-estimators", type=grid.comma_list(grid.ESTIMATORS),
                   default=["gae"], help="estimators that also run the baselines (they are slow)")
    p.add_argument("--sets", type=int, default=0,
                   help="input sets rotated in the device column's graph (default 0: enough to "
                        "span three L2 caches, at least 4; runs before the 2026-12-03 fix: 4)")
    p.add_argument("--host-warmup", type=float, default=2.0, metavar="S",
                   help="seconds of eager calls before the grid (default 2; see above)")
    p.add_argument("--out", default=DEFAULT_OUT)
    p.add_argument("--plot", default=None, help="only redraw the heatmap from this bench.json")
    args = p.parse_args(argv)
    if args.plot:
        with open(args.plot) as f:
            plot(json.load(f)["results"], os.path.splitext(args.plot)[0] + ".png")
        return 0
    if not torch.cuda.is_available():
        print("rlscan-bench needs a CUDA GPU", file=sys.stderr)
        return 2
    shapes = args.shapes or list(grid.STANDARD_SHAPES)
    ests, base, base_ests = args.estimators, args.baselines, set(args.baseline_estimators)
    bw = copy_bandwidth()
    l2 = timing.l2_bytes(torch.device("cuda"))
    meta = dict(device=torch.cuda.get_device_name(), torch=torch.__version__, l2_bytes=l2,
                triton=triton.__version__, bandwidth_tb_s=bw / 1e12,
                date=time.strftime("%Y-%m-%d"), host_warmup_s=args.host_warmup)
    warm_host(args.host_warmup)
    meta["host_start"] = host_references()
    rows = []
    todo = [(e, n, t, d, l) for d in args.dtypes for l in args.layouts
            for n, t in shapes for e in ests]
    os.makedirs(args.out, exist_ok=True)
    for i, (e, n, t, d, l) in enumerate(todo):
        r = bench_cell(e, n, t, d, l, base if e in base_ests else [], bw, args.sets, l2)
        rows.append(r)
        extra = "".join(f"  {k[11:]}×{r[k]:.0f}" for k in r if k.startswith("speedup_vs_"))
        print(f"[{i + 1}/{len(todo)}] {e:18s} {n:>6d}x{t:<7d} {d:8s} {l:10s} device "
              f"{r['device_us']:8.1f} floor {r['floor_us']:7.1f} ({r['device_over_floor']:5.2f}x)"
              f" loop {r['loop_us']:6.1f} (bare launch {r['bare_launch_loop_us']:4.1f}) full "
              f"{r['full_us']:6.1f}{extra}", flush=True)
        save(rows, meta, args.out)    # after every cell: a run cut short keeps what it measured
    meta["host_end"] = host_references()
    save(rows, meta, args.out)
    try:
        plot(rows, os.path.join(args.out, "bench.png"))
    except ImportError:
        print("matplotlib missing: no heatmap", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
