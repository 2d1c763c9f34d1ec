"""Writing the tuning DB: merge new entries into ``<dir>/<gpu-slug>.json``, atomically, locked.

Two tuners writing the same file at once both land their entries: each takes an exclusive
``fcntl.flock`` on the sidecar ``<file>.lock``, re-reads the file, merges, writes a temporary
file in the same directory and renames it over the old one (readers never see half a file).
An existing file that is corrupt or of another schema is never overwritten: the write fails
with :class:`rlscan.tuning.TuningDBError` and the file stays as it was.
"""
import contextlib
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Dict, Iterator, List, Optional

from rlscan import tuning

try:
    import fcntl
except ImportError:          # not POSIX: atomic renames still hold, concurrent merges may race
    fcntl = None


def db_path(directory: Path, slug: str) -> Path:
    return Path(directory) / f"{slug}.json"


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``<path>.lock`` (created if needed, never deleted: deleting
    a lock file lets a third process lock a different inode)."""
    if fcntl is None:
        warnings.warn(f"no fcntl on this platform: writing {path} without a lock; do not run "
                      f"two tuners on the same directory at once", tuning.RLScanTuningWarning)
        yield
        return
    with open(path.with_name(path.name + ".lock"), "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def read_existing(path: Path, slug: str) -> Optional[dict]:
    """The document at ``path`` (None if there is none); TuningDBError if it cannot be merged
    into. Also how the CLI fails early, before a sweep."""
    if not path.exists():
        return None
    try:
        return tuning.parse_db(path, expect_slug=slug).doc
    except tuning.TuningDBError as e:
        raise tuning.TuningDBError(f"{path}: {e}. rlscan-tune will not overwrite it; move it "
                                   f"away or pass --out DIR") from None


def atomic_write_json(path: Path, doc: dict) -> None:
    """Write ``doc`` to a temp file beside ``path``, fsync, then rename it over ``path``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, sort_keys=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def merge(doc: Optional[dict], device: dict, software: dict,
          new: Dict[str, List[dict]], source_hash: str) -> dict:
    """``doc`` (or a fresh document) with ``new`` kernel entries merged in.

    Per kernel: a section made for another source hash is replaced whole (stale entries are
    never trusted); otherwise new entries replace old ones of the same bucket key and the
    rest stay. Kernels not in ``new`` are left untouched."""
    out = dict(doc) if doc else {"schema": tuning.SCHEMA}
    out["schema"] = tuning.SCHEMA
    out["device"] = device
    out["software"] = software
    kernels = dict(out.get("kernels") or {})
    for kernel, entries in new.items():
        section = kernels.get(kernel)
        keep = []
        if isinstance(section, dict) and section.get("source_hash") == source_hash:
            new_keys = {tuning.entry_key(kernel, e) for e in entries}
            for e in section.get("entries") or []:
                try:
                    if tuning.entry_key(kernel, e) in new_keys:
                        continue
                except ValueError:
                    pass          # keep what we cannot read: never lose someone's data
                keep.append(e)
        kernels[kernel] = {"source_hash": source_hash, "entries": keep + list(entries)}
    out["kernels"] = dict(sorted(kernels.items()))
    return out


def write_entries(directory: Path, device: dict, software: dict,
                  new: Dict[str, List[dict]]) -> Path:
    """Merge ``new`` ({kernel: [entry, ...]}) into this GPU's DB file in ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    slug = tuning.gpu_slug(device["name"])
    path = db_path(directory, slug)
    with locked(path):
        doc = merge(read_existing(path, slug), device, software, new,
                    tuning.kernel_source_hash())
        atomic_write_json(path, doc)
    return path


def reselect(doc: dict) -> List[str]:
    """Re-pick, in place, every entry's winner and ``bounded_walk`` among the configs that are
    still candidates (``rlscan.kernels.configs.candidates`` for the entry's shape), from the
    timings the tuner stored, by the tuner's rule (``sweep.pick``): after a rule changes the
    candidates, no GPU is needed to apply it to a DB. An entry none of whose measured candidates
    can win is removed (its bucket falls back to the heuristic); one without stored timings
    (written by hand) or that cannot be read is left as it is. Returns one line per change."""
    from rlscan.kernels import configs

    from . import sweep
    changes = []
    for kernel, section in (doc.get("kernels") or {}).items():
        kept = []
        for e in section.get("entries") or []:
            if not (isinstance(e, dict) and e.get("timings") and len(e.get("shape") or ()) == 2
                    and e.get("layout") in configs.LAYOUTS and e.get("dtype") in configs.DTYPES):
                kept.append(e)           # nothing stored to choose from (or unreadable): as is
                continue
            N, T = e["shape"]
            allowed = {configs.label(c): c for c in
                       configs.candidates(kernel, N, T, e["layout"], e["dtype"])}
            timings = {k: v for k, v in (e.get("timings") or {}).items() if k in allowed}
            measured = {k: v for k, v in timings.items()
                        if isinstance(v, (int, float)) and not isinstance(v, bool)}
            where = f"{kernel} {e['dtype']} {e['layout']} {N}x{T}"
            if not measured:
                changes.append(f"{where}: no measured candidate left; entry removed")
                continue
            winner, bounded = sweep.pick([sweep.Measured(allowed[k], k, v, "ok")
                                          for k, v in measured.items()], T)
            if winner is None:
                changes.append(f"{where}: only look-back beyond the span limit measured; "
                               f"entry removed")
                continue
            old = configs.label(e["config"])
            # a bounded_walk config's measured reach holds while the winner it was measured
            # against stays (sweep.walk_reach); else it falls back to the first window
            reach = {} if winner.label != old else {
                configs.label(w["config"]): {k: w[k] for k in sweep.REACH_FIELDS if k in w}
                for w in e.get("bounded_walk", []) if isinstance(w, dict)
                and isinstance(w.get("config"), dict)}
            if winner.label != old:
                changes.append(f"{where}: {old} {e['median_us']} us -> {winner.label} "
                               f"{winner.us} us")
                e["config"], e["median_us"] = dict(winner.config), winner.us
            walk = [{"config": dict(m.config), "median_us": m.us, **reach.get(m.label, {})}
                    for m in bounded]
            if walk != e.get("bounded_walk", []):
                changes.append(f"{where}: bounded_walk " + (", ".join(
                    f"{m.label} {m.us} us" for m in bounded) or "none"))
            e.pop("bounded_walk", None)
            if walk:
                e["bounded_walk"] = walk
            if len(timings) != len(e.get("timings") or {}):
                e["timings"], e["candidates"] = timings, len(timings)
            kept.append(e)
        section["entries"] = kept
    return changes


def reselect_file(path: Path) -> List[str]:
    """:func:`reselect` on the DB file at ``path``, written back atomically under its lock.
    Entries stay under their source hash: the timings were measured on that kernel."""
    path = Path(path)
    with locked(path):
        try:
            doc = tuning.parse_db(path).doc
        except tuning.TuningDBError as e:
            raise tuning.TuningDBError(f"{path}: {e}") from None
        changes = reselect(doc)
        atomic_write_json(path, doc)
    return changes
