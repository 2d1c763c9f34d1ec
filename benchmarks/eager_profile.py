"""Where an eager call's time goes at long horizons: rlscan-bench's loop and full columns there
exceed both the host cost of a call and its device time (twenty-second session's grid: 1x1M
discounted returns loop 47.9 us, full 78.8, device 10.6; 4096x128 loop ~15, full ~22).

    python benchmarks/eager_profile.py --cells gae:1x1048576,vtrace:8x262144 --trace-dir DIR

Per cell, without a profiler: loop (200 calls between events, best of 3, as rlscan-bench),
enqueue (the host's time for those 200 calls before any synchronisation), full (one synchronised
call, median), device (CUDA graph of 20 calls on the same input); then a bare launch's loop
right after. Then under torch.profiler (kineto) 100 eager calls and 20 synchronised ones, a
per-call summary: the kernels and memsets the GPU ran and how long, the gaps between them, and
the CUDA runtime / driver calls the host made (a synchronisation or an allocation shows here).
"""
import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict

import torch

from rlscan.tune import grid
from rlscan.tune.bench import bare_launch, device_us, full_us, loop_pair_us, warm_host


def enqueue_us(fn, calls=200):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def summarise(trace_path, calls, label):
    with open(trace_path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    gpu = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")),
                 key=lambda e: e["ts"])
    by_name = defaultdict(list)
    for e in gpu:
        by_name[(e["cat"], e["name"][:60])].append(e["dur"])
    gaps = [b["ts"] - (a["ts"] + a["dur"]) for a, b in zip(gpu, gpu[1:])]
    lines = [f"-- {label}: {len(gpu)} GPU ops for {calls} calls"]
    for (cat, name), durs in sorted(by_name.items(), key=lambda kv: -sum(kv[1])):
        lines.append(f"   gpu {cat:10s} {name:60s} x{len(durs) / calls:4.1f}/call "
                     f"median {statistics.median(durs):7.2f} us")
    if gaps:
        gaps.sort()
        lines.append(f"   gaps between GPU ops: median {gaps[len(gaps) // 2]:.2f} us, p90 "
                     f"{gaps[len(gaps) * 9 // 10]:.2f}, max {gaps[-1]:.1f}, sum/call "
                     f"{sum(gaps) / calls:.2f}")
    host = defaultdict(list)
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            host[e["name"]].append(e["dur"])
    for name, durs in sorted(host.items(), key=lambda kv: -sum(kv[1]))[:10]:
        lines.append(f"   host {name:40s} x{len(durs) / calls:5.2f}/call median "
                     f"{statistics.median(durs):7.2f} us, total/call {sum(durs) / calls:7.2f}")
    ops = defaultdict(list)
    for e in events:
        if e.get("cat") == "cpu_op":
            ops[e["name"]].append(e["dur"])
    for name, durs in sorted(ops.items(), key=lambda kv: -sum(kv[1]))[:6]:
        lines.append(f"   cpu_op {name:38s} x{len(durs) / calls:5.2f}/call total/call "
                     f"{sum(durs) / calls:7.2f} us")
    return "\n".join(lines)


def profile(fn, calls, synced, trace_path):
    from torch.profiler import ProfilerActivity, profile as prof
    with prof(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        if synced:
            for _ in range(synced):
                fn()
                torch.cuda.synchronize()
    p.export_chrome_trace(trace_path)


def python_profile(fn, calls=2000, top=14):
    """cProfile of ``calls`` eager calls (synchronised every 100): the host's Python-level
    split, the C launcher and torch's allocations included as builtins."""
    import cProfile
    import io
    import pstats
    pr = cProfile.Profile()
    pr.enable()
    for i in range(calls):
        fn()
        if i % 100 == 99:
            torch.cuda.synchronize()
    pr.disable()
    buf = io.StringIO()
    pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(top)
    return "\n".join(line for line in buf.getvalue().splitlines() if line.strip())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default="gae:4096x128,gae:1x1048576,discounted_returns:1x1048576,"
                    "vtrace:8x262144,gae:8x262144,gae:8x65536")
    ap.add_argument("--trace-dir", default="")
    ap.add_argument("--host-warmup", type=float, default=2.0)
    ap.add_argument("--cprofile", action="store_true", help="a cProfile of each cell's calls "
                    "instead of the kineto trace")
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("eager_profile.py needs a CUDA device", file=sys.stderr)
        return 2
    warm_host(a.host_warmup)
    table = []
    for spec in a.cells.split(","):
        est, shape = spec.split(":")
        (N, T), = grid.parse_shapes(shape)
        call = grid.place(grid.draw(grid.Cell(est, N, T, "float32", "time_last"), 0, "cuda"),
                          "time_last", "cuda")
        fn = lambda: grid.run(est, call)   # noqa: E731
        for _ in range(20):
            fn()
        loop, bare = loop_pair_us(fn, bare_launch())
        enq = statistics.median(enqueue_us(fn) for _ in range(3))
        full = full_us(fn)
        time.sleep(0.5)
        bare_after = loop_pair_us(bare_launch(), None)[0]
        dev = device_us([fn])
        table.append(f"{est:18s} {N}x{T:<8d} loop {loop:6.1f} enqueue {enq:6.1f} full {full:6.1f} "
                     f"device {dev:6.1f} | bare launch beside {bare:5.1f}, alone {bare_after:5.1f}")
        print(table[-1], flush=True)
        if a.cprofile:
            print(python_profile(fn), flush=True)
            continue
        path = os.path.join(a.trace_dir or "/tmp", f"trace_{est}_{N}x{T}.json")
        profile(fn, 100, 0, path)
        print(summarise(path, 100, f"{est} {N}x{T}, 100 eager calls"), flush=True)
        profile(fn, 0, 20, path + ".synced")
        print(summarise(path + ".synced", 20, f"{est} {N}x{T}, 20 synchronised calls"),
              flush=True)
        if not a.trace_dir:
            os.remove(path)
        os.remove(path + ".synced")
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
