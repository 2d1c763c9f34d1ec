"""The sweep: for each cell, run every candidate, check it against float64, time it, pick the
fastest that passed.

The timer is injected (``timer(call, n_sets, config, cutoff_us=None) -> µs``), so the whole
selection and DB-writing path runs on a CPU with a fake timer in the tests; on a GPU it is
:class:`tune.timing.GraphTimer`.
"""
import contextlib
import gc
import time
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import torch

from rlscan.kernels import configs as C
from rlscan.kernels.launch import force_config
from rlscan.tuning import heuristic, sm_count

from . import grid, prune
from .timing import n_input_sets

# The tuner's gate against broken configs (wrong masking, chunk edges, partial blocks): an
# error of that kind is O(1); float32 rounding on these inputs stays below 1e-5.
RTOL = ATOL = 1e-4
# look-back configs beyond the span limit an entry keeps (bounded_walk): a call takes the first
# whose walk its coefficients bound, and longer spans are bounded more often (configs.py)
BOUNDED_WALK_KEPT = 4
# A bounded_walk config may serve walks up to configs.LOOKBACK_SECOND_REACH spans where, on rows
# without episode ends at the largest decay that allows, it takes at most this much more than
# the winner: what such calls may lose, against the 25-35% that calls with episode ends gain
# (GAE / discounted returns 1x1048576, 1x512/w1/2l at γ = 0.99 without them: +6% / +10% over
# chunked; with the grid's episode ends 7-8 us vs 10.3; eighteenth and twenty-first sessions).
WORST_MARGIN = 0.15


class SweepAborted(RuntimeError):
    """The device is unusable (a sticky CUDA error): measuring on would only record failures."""


class Measured(NamedTuple):
    config: dict
    label: str
    us: Optional[float]        # None unless status == "ok"
    status: str                # "ok", "rejected: <why>", "failed: <error>"


class WalkReach(NamedTuple):
    spans: int                   # configs.WALK_REACHES: the longest walk a call may make with it
    worst_us: Optional[float]    # its time on rows without episode ends (grid.without_episode_
    winner_us: Optional[float]   # ends, at the second reach's decay), and the winner's there


class CellResult(NamedTuple):
    cell: grid.Cell
    measured: List[Measured]
    winner: Optional[Measured]
    heuristic: Optional[Measured]
    floor_us: Optional[float]
    # look-back configs beyond the span limit that beat the winner, fastest first
    bounded_walk: Tuple[Measured, ...] = ()
    walk_reach: Tuple[WalkReach, ...] = ()      # one per bounded_walk config (where measured)
    seconds: Optional[Dict[str, float]] = None  # the cell's wall time by PHASES (run, tune_cell)
    pruned: Optional[Dict[str, float]] = None   # label -> ratio to an earlier winner (--prune)


# Where a cell's wall time goes (``CellResult.seconds``, summed by ``time_report``): waiting for
# the workers' float64 reference and compiles, drawing the input sets, each candidate's first
# call (loading or compiling its kernels, the float64 check), the timer, walk-reach timings.
# Why: a full retune took 409 s in the twenty-third session and 946 s (two calls) in the
# twenty-eighth, and its 512x4096 buckets alone took 93-121 s a dtype while the grid's model of
# new compiles there predicts ~10 s: the log should say where that went.
PHASES = ("references", "compiles", "inputs", "first_calls", "timing", "walk_reach")


@contextlib.contextmanager
def _clocked(seconds: Dict[str, float], phase: str):
    """Add the block's wall time to ``seconds[phase]``, whether it returns or raises."""
    start = time.perf_counter()
    try:
        yield
    finally:
        seconds[phase] = seconds.get(phase, 0.0) + time.perf_counter() - start


def check(outputs, refs) -> Optional[str]:
    """None if every output is within ``ATOL + RTOL·|ref|`` of the float64 reference (NaN
    fails), else where and by how much it is not."""
    for k, (o, r) in enumerate(zip(outputs, refs)):
        err = (o.double() - r).abs()
        bad = ~(err <= ATOL + RTOL * r.abs())
        if bool(bad.any()):
            i = int(bad.flatten().nonzero()[0])
            row, step = divmod(i, r.shape[1])
            return (f"output {k} off by {float(err.flatten()[i]):.3g} at row {row}, step {step} "
                    f"(ref {float(r.flatten()[i]):.6g})")
    return None


def _error_text(e: BaseException) -> str:
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {first}"[:200]


def heuristic_for(cell: grid.Cell) -> dict:
    """The config a call of ``cell``'s shape gets without a DB entry, spelled out without the
    flags the launcher ignores for the estimator (``configs.honoured``), so that it and the
    candidate it equals are timed once. The tuner's GPU (the current one) gives the SM count."""
    h = {"strategy": "row_block", **heuristic(cell.N, cell.T, cell.layout == "time_major",
                                              grid.itemsize(cell.dtype), cell.estimator,
                                              sm_count(torch.device("cuda")))}
    return C.validate(C.honoured(h, cell.estimator))


def with_heuristic(cands: List[dict], cell: grid.Cell) -> List[dict]:
    """The heuristic config first, then the rest: it is the baseline, and usually close to the
    best, so the timer can cut hopeless candidates short from the start."""
    h = heuristic_for(cell)
    return [h] + [c for c in cands if C.label(c) != C.label(h)]


def _measure(call: Callable, cell: grid.Cell, cfg: dict, refs, timer: Callable, n_sets: int,
             best: Optional[float], seconds: dict) -> Tuple[str, Optional[float]]:
    """One candidate: ``("ok", µs)``, ``("rejected: <why>", None)`` (wrong outputs) or
    ``("failed: <error>", None)``. An out-of-memory error is retried once."""
    for _ in range(2):
        try:
            with _clocked(seconds, "first_calls"):
                outs = grid.time_last(call(0), cell.layout)     # compiles on first use
                why = check(outs, refs)
                del outs
            if why is not None:
                return f"rejected: {why}", None
            with _clocked(seconds, "timing"):
                return "ok", float(timer(call, n_sets, cfg, cutoff_us=best))
        except torch.cuda.OutOfMemoryError as e:
            failed = f"failed: {_error_text(e)}"
        except Exception as e:  # noqa: BLE001 - compile errors, OutOfResources, launch failures
            return f"failed: {_error_text(e)}", None
        # Once more with the error's frames gone and the cache handed back: the H100's first
        # tune (80 GB; thirty-ninth session) lost two candidates of gae bf16 131072x256 to
        # out-of-memory errors with 59 GiB held by the timing process
        gc.collect()
        torch.cuda.empty_cache()
    return failed, None


def tune_cell(cell: grid.Cell, sets: Sequence[grid.Call], refs, candidates: Sequence[dict],
              timer: Callable, floor_us: Optional[float] = None) -> CellResult:
    """Measure every candidate on ``cell`` and pick the fastest that passes the check, among
    those within the look-back span limit; faster look-back configs beyond it (fastest first)
    go to ``bounded_walk`` (``configs.beyond_lookback_limit``).

    ``sets``: the placed input sets (set 0 is the checked one); ``refs``: float64 [N, T]
    reference outputs of set 0 on the same device."""
    hlabel = C.label(heuristic_for(cell))
    measured, best = [], None
    seconds = dict.fromkeys(("first_calls", "timing", "walk_reach"), 0.0)
    for cfg in candidates:
        lab = C.label(cfg)

        def call(i, cfg=cfg):
            with force_config(**cfg):
                return grid.run(cell.estimator, sets[i])
        status, us = _measure(call, cell, cfg, refs, timer, len(sets), best, seconds)
        measured.append(Measured(cfg, lab, us, status))
        if us is None:
            continue
        if not C.beyond_lookback_limit(cfg, cell.T):    # cut the rest short against winners only
            best = us if best is None else min(best, us)
    winner, bounded = pick([m for m in measured if m.status == "ok"], cell.T)
    heur = next((m for m in measured if m.label == hlabel), None)
    winner_times: dict = {}                     # decay -> the winner's time there
    with _clocked(seconds, "walk_reach"):
        reach = tuple(walk_reach(cell, sets, winner, m.config, timer, winner_times)
                      for m in bounded) if C.walk_can_be_bounded(cell.estimator) else ()
    return CellResult(cell, measured, winner, heur, floor_us, bounded, reach, seconds)


def walk_reach(cell: grid.Cell, sets: Sequence[grid.Call], winner: Measured, config: dict,
               timer: Callable, winner_times: Optional[dict] = None) -> WalkReach:
    """How far ``config`` (a bounded_walk look-back config) may walk: the second reach where, on
    ``sets`` without episode ends at the decay whose walks end within it, it gives the winner's
    results and takes at most ``WORST_MARGIN`` more time than the winner there; else the first
    window. ``winner_times``: the winner's times by decay, shared by a cell's configs (configs
    of one span length share the decay)."""
    beta = C.walk_decay_limit(config, C.LOOKBACK_SECOND_REACH)
    worst = [grid.without_episode_ends(s, beta) for s in sets]

    def runs(cfg):
        def call(i):
            with force_config(**cfg):
                return grid.run(cell.estimator, worst[i])
        return call
    first = WalkReach(C.LOOKBACK_FIRST_WINDOW, None, None)
    try:
        want = [o.double() for o in grid.time_last(runs(winner.config)(0), cell.layout)]
        if check(grid.time_last(runs(config)(0), cell.layout), want) is not None:
            return first
        winner_times = {} if winner_times is None else winner_times
        if beta not in winner_times:
            winner_times[beta] = float(timer(runs(winner.config), len(worst), winner.config))
        winner_us = winner_times[beta]
        us = float(timer(runs(config), len(worst), config))
    except Exception:  # noqa: BLE001 - as a candidate that fails: it keeps the first window
        return first
    spans = C.LOOKBACK_SECOND_REACH if us <= winner_us * (1 + WORST_MARGIN) else first.spans
    return WalkReach(spans, round(us, 3), round(winner_us, 3))


def pick(ok: Sequence[Measured], T: int) -> Tuple[Optional[Measured], Tuple[Measured, ...]]:
    """(the fastest of ``ok`` within the look-back span limit, the faster ones beyond it fastest
    first) for a cell of ``T`` steps; the tuner's and ``rlscan-tune --reselect``'s one rule."""
    within = [m for m in ok if not C.beyond_lookback_limit(m.config, T)]
    winner = min(within, key=lambda m: m.us) if within else None
    bounded = sorted((m for m in ok if C.beyond_lookback_limit(m.config, T)
                      and (winner is None or m.us < winner.us)), key=lambda m: m.us)
    return winner, tuple(bounded[:BOUNDED_WALK_KEPT]) if winner is not None else ()


# --------------------------------------------------------------------------- results -> DB
def entry(r: CellResult) -> Optional[dict]:
    """The DB entry of one cell (DESIGN.md §5), or None if no candidate passed."""
    if r.winner is None:
        return None
    c = r.cell
    lo_n, hi_n = _bucket(c.N)
    lo_t, hi_t = _bucket(c.T)
    return {
        "dtype": c.dtype, "layout": c.layout, "rows": [lo_n, hi_n], "steps": [lo_t, hi_t],
        "shape": [c.N, c.T],
        "config": dict(r.winner.config),
        "median_us": round(r.winner.us, 3),
        "floor_us": None if r.floor_us is None else round(r.floor_us, 3),
        "heuristic_us": None if r.heuristic is None or r.heuristic.us is None
        else round(r.heuristic.us, 3),
        "candidates": len(r.measured),
        "timings": {**{m.label: round(m.us, 3) if m.us is not None else m.status
                       for m in r.measured},
                    **{lab: prune.pruned_text(ratio) for lab, ratio in (r.pruned or {}).items()}},
        **({"bounded_walk": [{"config": dict(m.config), "median_us": round(m.us, 3),
                              **_reach_fields(r.walk_reach[i] if i < len(r.walk_reach) else None)}
                             for i, m in enumerate(r.bounded_walk)]} if r.bounded_walk else {}),
    }


REACH_FIELDS = ("walk_spans", "worst_us", "winner_worst_us")


def _reach_fields(reach: Optional[WalkReach]) -> dict:
    """A bounded_walk item's walk_spans and the two times behind it (none where not measured:
    the first window)."""
    if reach is None or reach.worst_us is None:
        return {}
    return dict(zip(REACH_FIELDS, (reach.spans, reach.worst_us, reach.winner_us)))


def _bucket(n: int):
    from rlscan.tuning import bucket
    return list(bucket(n))


def entries_by_kernel(results: Sequence[CellResult]) -> Dict[str, List[dict]]:
    out: Dict[str, List[dict]] = {}
    for r in results:
        e = entry(r)
        if e is not None:
            out.setdefault(r.cell.estimator, []).append(e)
    return out


def table(results: Sequence[CellResult]) -> str:
    """The closing table: bucket, chosen config, µs, floor µs, heuristic µs / chosen µs."""
    head = ("estimator", "dtype", "layout", "rows", "steps", "config", "us", "floor_us",
            "vs_heuristic")
    rows = [head]
    order = {e: i for i, e in enumerate(grid.ESTIMATORS)}
    for r in sorted(results, key=lambda r: (order[r.cell.estimator], r.cell.dtype,
                                            r.cell.layout, r.cell.N, r.cell.T)):
        c = r.cell
        lo_n, hi_n = _bucket(c.N)
        lo_t, hi_t = _bucket(c.T)
        w, h = r.winner, r.heuristic
        speed = (f"{h.us / w.us:.2f}x" if w is not None and h is not None and h.us is not None
                 else ("heuristic failed" if w is not None else "-"))
        rows.append((c.estimator, c.dtype, c.layout, f"{lo_n}..{hi_n}", f"{lo_t}..{hi_t}",
                     w.label if w is not None else "NONE PASSED",
                     f"{w.us:.2f}" if w is not None else "-",
                     f"{r.floor_us:.2f}" if r.floor_us is not None else "-", speed))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(str(v).ljust(wd) for v, wd in zip(row, widths)).rstrip()
                     for row in rows)


class Progress:
    """One stderr line rewritten in place on a terminal; a line every ~5% otherwise."""

    def __init__(self, total: int, stream, tty: Optional[bool] = None):
        self.total, self.stream = total, stream
        self.tty = stream.isatty() if tty is None else tty
        self.start = time.monotonic()
        self.done = 0
        self._next_print = 0

    def update(self, text: str) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.start
        eta = elapsed / self.done * (self.total - self.done)
        frac = self.done / max(self.total, 1)
        bar = "#" * int(frac * 24)
        line = (f"[{bar:<24}] {self.done}/{self.total} {elapsed:5.0f}s eta {eta:4.0f}s  {text}")
        if self.tty:
            self.stream.write("\r" + line[:150].ljust(150))
            if self.done == self.total:
                self.stream.write("\n")
        elif self.done >= self._next_print or self.done == self.total:
            self.stream.write(line + "\n")
            self._next_print = self.done + max(1, self.total // 20)
        self.stream.flush()


def time_report(results: Sequence[CellResult], slowest: int = 5) -> List[str]:
    """Lines saying where the sweep's wall time went: the total of each of ``PHASES`` over the
    cells, then the ``slowest`` cells with theirs (cells without ``seconds`` are skipped)."""
    timed = [r for r in results if r.seconds]
    if not timed:
        return []
    total = {p: sum(r.seconds.get(p, 0.0) for r in timed) for p in PHASES}
    lines = [f"time by phase over {len(timed)} buckets: "
             + ", ".join(f"{p.replace('_', ' ')} {total[p]:.0f} s" for p in PHASES)]
    for r in sorted(timed, key=lambda r: -sum(r.seconds.values()))[:slowest]:
        split = ", ".join(f"{p.replace('_', ' ')} {r.seconds[p]:.1f}" for p in PHASES
                          if r.seconds.get(p, 0.0) >= 0.05)
        lines.append(f"slow bucket {r.cell.estimator} {r.cell.N}x{r.cell.T} {r.cell.dtype} "
                     f"{r.cell.layout}: {sum(r.seconds.values()):.1f} s ({split}; "
                     f"{len(r.measured)} candidates)")
    return lines


def _device_still_works(device, cell: grid.Cell, r: CellResult) -> None:
    """After a bucket where nothing passed, make sure the device can still run anything."""
    try:
        torch.ones(1, device=device).add_(1).sum().item()
    except Exception as e:  # noqa: BLE001 - any error here means the context is gone
        first = r.measured[0].status if r.measured else ""
        raise SweepAborted(f"the device stopped working during {cell} ({_error_text(e)}; "
                           f"first candidate: {first})") from e


def prepare(cell: grid.Cell, device, indices) -> List[grid.Call]:
    """Input sets ``indices`` of ``cell``, drawn and placed on ``device``."""
    return [grid.place(grid.draw(cell, i, device), cell.layout, device) for i in indices]


def refs_on(device, refs) -> tuple:
    return tuple(torch.as_tensor(r, dtype=torch.float64).to(device) for r in refs)


def thin(cands: List[dict], keep: int) -> List[dict]:
    """At most ``keep`` candidates spread evenly over the list (for ``--quick``)."""
    if len(cands) <= keep:
        return cands
    step = (len(cands) - 1) / (keep - 1)
    return [cands[round(i * step)] for i in range(keep)]


def run(cells: Sequence[grid.Cell], device, timer: Callable, workers, *, l2_bytes: int = 0,
        bandwidth: Optional[float] = None, progress: Optional[Progress] = None,
        max_candidates: Optional[int] = None, lookahead: int = 24,
        results: Optional[List[CellResult]] = None,
        prune_with: Optional[Callable] = None) -> List[CellResult]:
    """Tune every cell in order. ``workers`` (tune.workers.Workers) computes references and
    compiles ahead of the timing loop, ``lookahead`` cells in advance. Finished cells are
    appended to ``results`` as they finish, so an interrupted sweep keeps them.
    ``prune_with``: ``(cell, candidates) -> (to time, {label: ratio} skipped)``
    (tune.prune.for_cells); skipped candidates are neither compiled nor timed."""
    skipped: Dict[grid.Cell, Dict[str, float]] = {}

    def space(cell):
        cands = C.candidates(cell.estimator, cell.N, cell.T, cell.layout, cell.dtype)
        if max_candidates is not None:
            cands = thin(cands, max_candidates)
        cands = with_heuristic(cands, cell)
        if prune_with is not None:
            cands, skipped[cell] = prune_with(cell, cands)
        return cands

    spaces = {}
    submitted = 0
    results = [] if results is None else results
    ref_key, refs = None, None
    for i, cell in enumerate(cells):
        while submitted < min(len(cells), i + 1 + lookahead):
            ahead = cells[submitted]
            spaces[ahead] = space(ahead)
            workers.submit_reference(ahead.reference_key)
            workers.submit_compiles(ahead, spaces[ahead])
            submitted += 1
        cands = spaces.pop(cell)
        waits: Dict[str, float] = {}
        with _clocked(waits, "references"):
            if cell.reference_key != ref_key:
                refs = None                      # free the last one before making the next
                ref_key = cell.reference_key
                refs = refs_on(device, workers.reference(ref_key))
        with _clocked(waits, "compiles"):
            workers.wait_compiles(cell, cands)
        with _clocked(waits, "inputs"):
            sets = prepare(cell, device, [0])
            nbytes = grid.traffic_bytes(sets[0], grid.n_outputs(cell.estimator))
            sets += prepare(cell, device,
                            range(1, n_input_sets(nbytes, l2_bytes) if l2_bytes else 1))
        floor = nbytes / bandwidth * 1e6 if bandwidth else None
        r = tune_cell(cell, sets, refs, cands, timer, floor)
        r = r._replace(seconds={**waits, **r.seconds}, pruned=skipped.pop(cell, None))
        del sets
        if torch.device(device).type == "cuda":
            # hand the cell's graph pools and input sets back to the driver: without it the
            # 512-bucket sweep with two-level candidates ran out of memory in its last bucket
            # (H200, 2026-12-01: 121 GiB held by the timing process)
            torch.cuda.empty_cache()
        results.append(r)
        if r.winner is None:
            _device_still_works(device, cell, r)
        if progress is not None:
            best = f"{r.winner.us:.1f}us {r.winner.label}" if r.winner else "none passed"
            progress.update(f"{cell}: {best}")
    return results
