"""``rlscan-tune --prune F``: skip the candidates an earlier tune of the same bucket found more
than F times slower than its winner.

Any edit to the kernel's source retires the whole DB (its source hash changes), and a full
retune times ~7,600 candidate runs: 946 s of an H200 in two device calls (twenty-eighth
session), most of a session's device time. Most of those runs are configs that lost by a wide
margin and lose again. Replayed over the retunes of ``tuning_db/nvidia-h200.json`` in git
history (``benchmarks/prune_history.py``, its output in
``benchmarks/results/prune_history.txt``), F = 1.3 from 46973fd on (18 retunes, 8 of them of
all 512 buckets) would have timed 25-48% of each retune's runs (but 1ca29e9's, 40 entries of
one timing each, merged from a log); the new winner would have been
skipped in no bucket in 13 of them, 1-2 buckets in 4, and 9 of 512 in d874f2c (the folded
look-back), the best timed candidate then at most 1.14x slower (bf16 time-major discounted
returns, 131072 rows). The kernel's early rewrites changed the rankings more (3ad8570: 17
buckets, up to 1.24x): after an edit that changes which tiles can be fast, time everything.
On the H200 (thirty-sixth session, ``benchmarks/results/probes/2026-12-05_thirtysixth_session_
prune_vs_full.txt``): GAE fp32 at three shapes, both layouts, unpruned 109 runs in 38 s, pruned
35 runs in 8 s, the same winner in all 6 buckets. The float64 references are not pruned.

The earlier timings come from the DB file the tune merges into (else the GPU's shipped one),
whatever kernel source they were measured on: after an edit they are stale, but their ranking
mostly holds. A bucket without an earlier entry times everything. The heuristic config is
always timed (it is the baseline each entry reports), and so is every candidate the earlier
entry holds no time for: new candidates, and those that failed or were rejected then. A pruned
candidate is written to the new entry's ``timings`` as ``"pruned: 1.62x"``, its ratio to the
winner of the tune that last timed it, so a later ``--prune`` carries it forward and
``--reselect`` ignores it like any candidate without a time.
"""
import re
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from rlscan import tuning
from rlscan.kernels import configs as C

PRUNED = "pruned: "
_PRUNED_RE = re.compile(r"pruned: ([0-9.]+)x")

Key = Tuple[str, str, str, int, int]     # (estimator, dtype, layout, rows k, steps k)


def pruned_text(ratio: float) -> str:
    return f"{PRUNED}{ratio:.2f}x"


def earlier_timings(doc: Optional[dict]) -> Dict[Key, Tuple[float, dict]]:
    """{bucket key: (winner µs, timings)} of every entry in a DB document, any source hash.
    Entries that cannot be read are skipped (they only make the tune time more)."""
    out: Dict[Key, Tuple[float, dict]] = {}
    for kernel, section in ((doc or {}).get("kernels") or {}).items():
        for e in (section or {}).get("entries") or []:
            try:
                key = tuning.entry_key(kernel, e)
                winner_us = float(e["median_us"])
            except (ValueError, KeyError, TypeError):
                continue
            if winner_us > 0 and isinstance(e.get("timings"), dict):
                out[key] = (winner_us, e["timings"])
    return out


def ratio_to_winner(value, winner_us: float) -> Optional[float]:
    """A stored timing as a multiple of its entry's winner: a time divided by it, a carried
    ``pruned: Rx`` as R; None for anything else (failed, rejected: time it again)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value / winner_us
    if isinstance(value, str):
        m = _PRUNED_RE.fullmatch(value)
        if m:
            return float(m.group(1))
    return None


def prune(cands: List[dict], key: Key, earlier: Dict[Key, Tuple[float, dict]], factor: float,
          keep_label: str) -> Tuple[List[dict], Dict[str, float]]:
    """(the candidates to time, {label: ratio} of those skipped) for one bucket: a candidate
    is skipped if the earlier entry of ``key`` holds it at more than ``factor`` times its
    winner; ``keep_label`` (the heuristic) never is."""
    if key not in earlier:
        return list(cands), {}
    winner_us, timings = earlier[key]
    kept, skipped = [], {}
    for cfg in cands:
        lab = C.label(cfg)
        r = ratio_to_winner(timings.get(lab), winner_us)
        if lab != keep_label and r is not None and r > factor:
            skipped[lab] = r
        else:
            kept.append(cfg)
    return kept, skipped


def earlier_doc(out_dir: Path, slug: str,
                from_file: Optional[Path] = None) -> Tuple[Optional[dict], Optional[Path]]:
    """The DB document a tune into ``out_dir`` prunes against, and its path: ``from_file``
    where given (``--prune-from``: any GPU's DB, e.g. a sibling chip's for a first tune of a
    new one; TuningDBError if it cannot be read), else the file the tune merges into, else the
    shipped one of the GPU (a first tune into the user overlay)."""
    if from_file is not None:
        return tuning.parse_db(Path(from_file)).doc, Path(from_file)
    for directory in (out_dir, tuning.shipped_dir()):
        if directory is None:
            continue
        path = Path(directory) / f"{slug}.json"
        if path.exists():
            try:
                return tuning.parse_db(path, expect_slug=slug).doc, path
            except tuning.TuningDBError:
                continue
    return None, None


def for_cells(earlier: Dict[Key, Tuple[float, dict]], factor: float) -> Callable:
    """``(cell, candidates) -> (to time, {label: ratio} skipped)`` for ``tune.sweep.run``."""
    from . import sweep

    def cut(cell, cands):
        key = (cell.estimator, cell.dtype, cell.layout, tuning.bucket_index(cell.N),
               tuning.bucket_index(cell.T))
        return prune(cands, key, earlier, factor, C.label(sweep.heuristic_for(cell)))
    return cut
