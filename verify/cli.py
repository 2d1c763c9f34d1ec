"""``rlscan-verify``: fuzz every estimator against the float64 sequential references.

    rlscan-verify                                   # rlscan itself, every estimator and property
    rlscan-verify --estimator gae --profile dev     # one estimator, more examples
    rlscan-verify --impl mylib.ops:gae              # any function with rlscan's gae signature
    rlscan-verify --profile thorough --jobs 16      # property runs spread over 16 processes
    rlscan-verify --profile thorough --jobs 16 --split-examples 200   # long runs in parts

Runs on CUDA if present, else rlscan's Triton kernels in the interpreter on CPU (``--backend``
overrides). Prints one progress line per property, a failing property's copy-paste reproducer of
its shrunk example right under its line (so a run cut short keeps the reports of the runs that
ended), and a table (estimator, examples, worst error/bound, result). Exits 1 on any failure, 2
on a usage error, 130 when interrupted (SIGINT) with no failure among the runs that ended.
"""
import argparse
import math
import sys
import time
from typing import List, Optional

from hypothesis import settings

from . import backends, profiles
from .cases import ESTIMATORS


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="rlscan-verify", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Error bounds: verify/tolerance.py (u·C·depth·M[t] plus coefficient and "
               "post-processing terms). Known rlscan bugs are reported as 'known bug'.")
    p.add_argument("--estimator", action="append", choices=ESTIMATORS,
                   help="verify only this estimator (repeatable); with --impl, which estimator "
                        "the function implements if its name does not say")
    p.add_argument("--property", action="append", dest="properties", metavar="NAME",
                   help="run only this property (repeatable; see --list)")
    p.add_argument("--examples", type=int, metavar="N",
                   help="examples per property at weight 1 (default: the profile's)")
    p.add_argument("--seed", type=int, help="random seed (turns off the ci profile's "
                                            "derandomization)")
    p.add_argument("--profile", choices=profiles.PROFILES, default=None,
                   help="Hypothesis profile (default: $HYPOTHESIS_PROFILE if set, else ci under "
                        "CI=true, else dev)")
    p.add_argument("--impl", metavar="MODULE:FUNCTION",
                   help="verify this implementation instead of rlscan's")
    p.add_argument("--backend", choices=("auto",) + backends.BACKENDS, default="auto",
                   help="where rlscan runs: cuda, interpret (Triton interpreter on CPU) or torch "
                        "(rlscan's CPU path); default: cuda if present, else interpret")
    p.add_argument("--depth-model", choices=("tree", "chunked", "sequential"),
                   help="scan strategy of the implementation, for the error bound (default: "
                        "rlscan's own for rlscan, sequential — the worst case — for --impl)")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failure")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="run the property runs in N worker processes (default 1). The float64 "
                        "references and bounds run on the CPU, sequentially over time: on a GPU "
                        "host the thorough profile is CPU-bound, ~600 s an estimator")
    p.add_argument("--split-examples", type=int, default=0, metavar="K",
                   help="with --jobs: cut each property run of more than K examples into parts "
                        "of at most K, each its own search with its own seed, so that no single "
                        "run bounds the wall time (default 0: no parts)")
    p.add_argument("--list", action="store_true", help="list the properties and exit")
    return p.parse_args(argv)


def _fmt_ratio(r: Optional[float]) -> str:
    if r is None:
        return "-"
    return "inf" if math.isinf(r) else f"{r:.3g}"


class Progress:
    """One line per property; a live example counter on a terminal."""

    def __init__(self, stream, total: int):
        self.stream, self.total, self.done = stream, total, 0
        self.live = stream.isatty()
        self.outcomes = []          # in the order the runs ended (an interrupted run's summary)
        self.finished = set()       # their names (run_name)

    def start(self, est, prop, n):
        self.name = f"{est} / {prop}"
        self.label = f"[{self.done + 1:>3}/{self.total}] {est:<18} {prop:<40}"
        self.n = n
        if self.live:
            self.stream.write(self.label)
            self.stream.flush()

    def example(self, k):
        if self.live and (k % 5 == 0 or k == 1):
            self.stream.write(f"\r{self.label} {k:>4}/{self.n}")
            self.stream.flush()

    def finish(self, outcome):
        self.done += 1
        self.outcomes.append(outcome)
        self.finished.add(self.name)
        worst = _fmt_ratio(outcome.worst) if outcome.worst else "-"
        line = (f"{self.label} {outcome.examples:>5} ex  worst {worst:>7}  "
                f"{outcome.status:<9} {outcome.seconds:6.1f}s")
        self.stream.write(("\r" if self.live else "") + line + "\n" + report(outcome))
        self.stream.flush()


def report(outcome) -> str:
    """A failing run's error and reproducer (or an XPASS notice); "" for a plain pass. Printed
    as the run ends: a thorough run cut by a timeout once lost its only failure's report, which
    had been kept for the end (H200, 2026-12-01)."""
    o = outcome
    if o.failure is not None:
        tag = "known rlscan bug" if o.status == "known bug" else "FAILURE"
        return (f"\n==== {tag}: {o.estimator} / {o.prop}\n{o.failure.error}\n"
                f"---- reproducer (shrunk example)\n{o.failure.reproducer}"
                f"---- end of reproducer\n")
    if o.status == "XPASS":
        return (f"\n==== XPASS: {o.estimator} / {o.prop} is listed as a known bug "
                f"({o.known_bug}) but passed: remove it from verify/examples.py\n")
    return ""


def table(outcomes) -> str:
    """estimator | examples | worst error/bound | result, one row per estimator."""
    rows = []
    for est in dict.fromkeys(o.estimator for o in outcomes):
        mine = [o for o in outcomes if o.estimator == est]
        worst = max(o.worst for o in mine)
        bad = [o.prop for o in mine if o.failed]
        known = [o.prop for o in mine if o.status == "known bug"]
        result = ("FAIL: " + ", ".join(bad)) if bad else (
            "pass (known bug: " + ", ".join(known) + ")" if known else "pass")
        rows.append((est, str(sum(o.examples for o in mine)), _fmt_ratio(worst), result))
    head = ("estimator", "examples", "worst err/bound", "result")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(3)]
    fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[3]  # noqa: E731
    rule = "-" * (sum(widths) + 6 + max(len(r[3]) for r in rows + [head]))
    return "\n".join([fmt(head), rule] + [fmt(r) for r in rows])


def interrupted(out, runs, progress, seconds: float) -> int:
    """The summary of a run stopped by SIGINT (Ctrl-C, or ``timeout -s INT`` on a time-capped
    machine): which property runs finished, their table, which did not. Exit 1 if a finished
    run failed, else 130 (interrupted): a cut run is never a pass."""
    done = progress.outcomes
    missing = [f"{est} / {name}" for est, name, *_ in map(run_name, runs)
               if f"{est} / {name}" not in progress.finished]
    failed = [o for o in done if o.failed]
    out.write(f"\nInterrupted after {seconds:.0f}s: {len(done)} of {len(runs)} property runs "
              f"finished, {len(done) - len(failed)} passed, {len(failed)} failed; not finished: "
              f"{', '.join(missing) or 'none'}\n")
    if done:
        out.write(f"\n{table(done)}\n")
    return 1 if failed else 130


def split(runs, most: int, seed: Optional[int], derandomized: bool):
    """``runs`` ((estimator, property, examples), ...) as (estimator, property, examples, part,
    parts, seed): a run of more than ``most`` examples (``most`` > 0) cut into near-equal parts,
    each its own Hypothesis search. Part k > 0 searches from seed ``seed + k``, from ``k`` under
    a derandomized profile (else every part would draw the same examples), else from a random
    one; part 0 from ``seed`` as an unsplit run would."""
    out = []
    for est, prop, n in runs:
        parts = -(-n // most) if most > 0 else 1
        for k in range(parts):
            size = n // parts + (k < n % parts)
            s = seed if k == 0 else (seed + k if seed is not None else (k if derandomized
                                                                        else None))
            out.append((est, prop, size, k, parts, s))
    return out


def run_name(run):
    """(estimator, property name as the progress line shows it: "name k/parts" for a part)."""
    est, prop, _, k, parts, _ = run
    return est, prop.name if parts == 1 else f"{prop.name} {k + 1}/{parts}"


def top_up(runs, minimum: int):
    """``runs`` ((estimator, property, examples), ...) with each estimator's reference-match run
    raised until the estimator's examples reach ``minimum``."""
    total = {}
    for est, _, n in runs:
        total[est] = total.get(est, 0) + n
    out = []
    for est, prop, n in runs:
        if prop.name == "matches_reference" and total[est] < minimum:
            n += minimum - total[est]
        out.append((est, prop, n))
    return out


def _run_one(args, backend, profile, est, prop_name, n, seed):
    """One property run in a worker process (spawned: the backend is chosen before rlscan's
    kernels are defined there)."""
    backends.activate(backend)
    profiles.load(profile)
    from . import runner
    from .properties import PROPERTIES
    from .targets import load_target
    est_hint = args.estimator[0] if args.impl and args.estimator else None
    target = load_target(args.impl, backend, est_hint, args.depth_model)
    return runner.run_property(target, est, PROPERTIES[prop_name], profile=profile,
                               max_examples=n, seed=seed)


def _run_parallel(args, runs, profile, backend, progress):
    """The property runs over ``args.jobs`` processes; a progress line as each one ends, the
    outcomes in plan order. Each worker gets an equal share of the CPU threads."""
    import concurrent.futures as cf
    import multiprocessing
    import os
    threads = max(1, (os.cpu_count() or 1) // args.jobs)
    outcomes = [None] * len(runs)
    with backends.preserved_environment(("OMP_NUM_THREADS", "MKL_NUM_THREADS")):
        os.environ.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
        with cf.ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) \
                as pool:
            # longest first (examples as the proxy), so no long run starts last
            order = sorted(range(len(runs)), key=lambda i: -runs[i][2])
            futures = {}
            for i in order:
                est, prop, n, *_, seed = runs[i]
                futures[pool.submit(_run_one, args, backend, profile, est, prop.name, n,
                                    seed)] = i
            try:
                for fut in cf.as_completed(futures):
                    i = futures[fut]
                    o = outcomes[i] = fut.result()
                    progress.start(*run_name(runs[i]), runs[i][2])
                    progress.finish(o)
                    if args.fail_fast and o.failed:
                        for f in futures:
                            f.cancel()
                        break
            except KeyboardInterrupt:
                # a run in progress is lost either way: stop the workers (a SIGINT sent to this
                # process alone leaves them running) and leave without waiting for the pool (a
                # worker killed mid-run may leave its queue stuck; on the H200 the summary never
                # came before `timeout -k 20` killed the process), so the summary prints at once
                for proc in list((getattr(pool, "_processes", None) or {}).values()):
                    proc.terminate()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    return [o for o in outcomes if o is not None]


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    out = sys.stdout
    profile = profiles.select(args.profile)
    backend = backends.default() if args.backend == "auto" else args.backend
    # the interpreter must be on before rlscan's kernels are first defined
    backends.activate(backend)
    from . import runner
    from .properties import PROPERTIES, for_estimator
    from .targets import load_target

    if args.list:
        for p in PROPERTIES.values():
            doc = " ".join((p.doc or "").split())
            out.write(f"{p.name:<40} {', '.join(sorted(p.estimators))}\n    {doc}\n")
        return 0
    if args.jobs < 1:
        out.write("rlscan-verify: --jobs must be >= 1\n")
        return 2
    if args.split_examples < 0:
        out.write("rlscan-verify: --split-examples must be >= 0 (0: no parts)\n")
        return 2
    unknown = set(args.properties or ()) - set(PROPERTIES)
    if unknown:
        out.write(f"rlscan-verify: unknown property {', '.join(sorted(unknown))} (see --list)\n")
        return 2
    try:
        est_hint = args.estimator[0] if args.impl and args.estimator else None
        target = load_target(args.impl, backend, est_hint, args.depth_model)
    except (ValueError, TypeError, ImportError, AttributeError, RuntimeError) as e:
        out.write(f"rlscan-verify: {e}\n")
        return 2
    estimators = [e for e in target.estimators if not args.estimator or e in args.estimator]
    plan = [(e, p) for e in estimators for p in for_estimator(e)
            if not args.properties or p.name in args.properties]
    runs = [(est, prop, profiles.examples(profile, prop.weight, args.examples))
            for est, prop in plan]
    if args.examples is None:
        runs = top_up(runs, profiles.MIN_PER_ESTIMATOR.get(profile, 0))
    runs = split(runs, args.split_examples if args.jobs > 1 else 0, args.seed,
                 bool(settings.get_profile(profile).derandomize))
    parts = f" ({len(runs)} with parts)" if len(runs) != len(plan) else ""
    out.write(f"rlscan-verify: {target.name} on {backend} ({target.device}), profile {profile}, "
              f"depth model {target.depth_model}, {len(plan)} property runs{parts}\n")
    progress = Progress(out, len(runs))
    start = time.perf_counter()
    try:
        if args.jobs > 1 and len(runs) > 1:
            outcomes = _run_parallel(args, runs, profile, backend, progress)
        else:
            outcomes = []
            for run in runs:
                est, prop, n, *_, seed = run
                progress.start(*run_name(run), n)
                o = runner.run_property(target, est, prop, profile=profile, max_examples=n,
                                        seed=seed, on_example=progress.example)
                progress.finish(o)
                outcomes.append(o)
                if args.fail_fast and o.failed:
                    break
    except KeyboardInterrupt:
        return interrupted(out, runs, progress, time.perf_counter() - start)
    reported = [f"{o.estimator} / {o.prop}" for o in outcomes if report(o)]
    if reported:
        out.write(f"\nReported above, under their progress lines: {', '.join(reported)}\n")
    out.write(f"\n{table(outcomes)}\n")
    failed = [o for o in outcomes if o.failed]
    out.write(f"\n{len(outcomes) - len(failed)}/{len(outcomes)} property runs passed in "
              f"{time.perf_counter() - start:.0f}s\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
