"""Device time of one candidate: BENCHMARKS.md's "device" method, with rotated inputs.

``calls`` calls (at least 20) are captured in one CUDA graph, call ``i`` reading input set
``i % n_sets``; the graph is replayed after a warm-up replay, and the result is the median
replay time divided by ``calls``. Launch overhead is hidden, and because the input sets
together are several times the L2 cache, a small shape cannot run from L2 as it would if
one input were read over and over. What each captured call returns is held until the graph is
gone, so no call writes into the output block of the call before it (the graph's pool would
hand it over), which could keep the writes in L2 (``bench.device_us`` likewise).

Slow candidates (long rows walked by few programs take milliseconds) get fewer replays, so one
candidate costs about ``budget_s`` of device time. A candidate that two eager calls already show
``prune`` times slower than the best so far (allowing for launch latency) is not captured at
all: it cannot win, and on few-row long-horizon shapes a bad row-block config takes 20 ms a call.

The graph is captured with ``capture_begin``/``capture_end`` on a side stream, not ``with
torch.cuda.graph()``, whose garbage collection and cache emptying on every entry cost more
than timing a fast candidate. Each graph keeps its own private memory pool, freed with it
(reusing one ``graph_pool_handle`` after its graph is gone trips an allocator assert in
torch 2.11).
"""
import math
import statistics
from typing import Callable, Optional, Tuple

import torch

from rlscan.kernels import lookback_state

L2_ROTATION = 3          # input sets together span this many L2 caches
MAX_SETS = 256
# What host work can add to one eagerly timed call (seen: 150-600 us for a 6 us kernel on a
# fresh stream), so an eager time only rules out what is far slower than that.
LAUNCH_SLACK_US = 2000.0


def l2_bytes(device) -> int:
    props = torch.cuda.get_device_properties(device)
    return int(getattr(props, "L2_cache_size", 0) or 50 << 20)


def n_input_sets(bytes_per_set: int, l2: int) -> int:
    """How many distinct input sets to rotate through so L2 cannot hold them all."""
    return max(1, min(MAX_SETS, math.ceil(L2_ROTATION * l2 / max(bytes_per_set, 1))))


def copy_bandwidth(device, nbytes: int = 1 << 30) -> float:
    """Device-to-device copy bandwidth in bytes/s, bytes read + written (BENCHMARKS.md floor)."""
    src = torch.empty(nbytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)
    best = math.inf
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src)
        b.record()
        b.synchronize()
        best = min(best, a.elapsed_time(b) * 1e-3)
    del src, dst
    return 2 * nbytes / best


def eager_rules_out(time_once: Callable[[], float], cutoff_us: Optional[float],
                    prune: float) -> Tuple[float, bool]:
    """``(µs, ruled out)``: does one eager call show the candidate ``prune`` times slower than
    ``cutoff_us`` (the best so far) beyond :data:`LAUNCH_SLACK_US`, on a second look too?

    One eager time can hold a host stall between its events: the H100's first tune (thirty-ninth
    session) ruled out a candidate in each of 6 buckets on one call of 2.1-35.6 ms where the
    bucket's winner took 4.1-25.2 µs (among them the H200's winner at gae bf16 4096x128, which
    wins 16384x128 on the H100, and retuned with this second look won 4096x128 at 4.0 µs), so a
    candidate is ruled out only when a second call is as slow too (the faster of the two
    counts)."""
    def slow(us: float) -> bool:
        return cutoff_us is not None and us - LAUNCH_SLACK_US > prune * cutoff_us
    us = time_once()
    if slow(us):
        us = min(us, time_once())
    return us, slow(us)


class GraphTimer:
    """Callable ``timer(call, n_sets, config, cutoff_us=None) -> µs per call``.

    ``call(i)`` runs the candidate once on input set ``i``; it must already have run once
    outside the graph (compiled, checked). ``cutoff_us``: the best time so far."""

    def __init__(self, device, calls: int = 20, replays: int = 20, budget_s: float = 0.08,
                 prune: float = 2.0):
        self.device = torch.device(device)
        self.calls, self.replays, self.budget_s, self.prune = calls, replays, budget_s, prune
        self.stream = torch.cuda.Stream(self.device)

    def __call__(self, call: Callable[[int], object], n_sets: int, config=None,
                 cutoff_us: Optional[float] = None) -> float:
        main = torch.cuda.current_stream(self.device)
        self.stream.wait_stream(main)
        with torch.cuda.stream(self.stream):   # warm-up off the default stream, as capture wants
            for i in range(min(n_sets, 2)):
                call(i)
            once_us, ruled_out = eager_rules_out(lambda: self._eager_us(call), cutoff_us,
                                                 self.prune)
        main.wait_stream(self.stream)
        if ruled_out:
            return once_us
        calls = n_sets * math.ceil(self.calls / n_sets)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.stream(self.stream):
            held = []
            graph.capture_begin()
            try:
                for i in range(calls):
                    held.append(call(i % n_sets))
            finally:
                graph.capture_end()
        try:
            graph.replay()                      # warm-up replay
            first = self._replays_ms(graph, 1)[0]
            if cutoff_us is not None and first * 1e3 / calls > self.prune * cutoff_us:
                return first * 1e3 / calls
            n = max(3, min(self.replays, int(self.budget_s * 1e3 / max(first, 1e-3))))
            times = [first] + self._replays_ms(graph, n - 1)
            return statistics.median(times) * 1e3 / calls
        finally:
            del graph, held
            lookback_state.release_captured()   # that graph's look-back workspaces

    def _eager_us(self, call) -> float:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        call(0)
        b.record()
        b.synchronize()
        return a.elapsed_time(b) * 1e3

    def _replays_ms(self, graph, n: int):
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(n)]
        for a, b in events:
            a.record()
            graph.replay()
            b.record()
        torch.cuda.synchronize(self.device)
        return [a.elapsed_time(b) for a, b in events]
