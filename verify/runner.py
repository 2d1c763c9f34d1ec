"""Run one property for one estimator against a target with Hypothesis, and keep score:
examples run, the worst error/bound ratio, and — on failure — the shrunk example with a
copy-paste reproducer. Used by ``rlscan-verify`` and by the test suite.
"""
import dataclasses
import time
from typing import Callable, Optional

import numpy as np
from hypothesis import example, given, seed as hyp_seed

from . import examples as explicit
from . import profiles
from .cases import Case, _literal
from .properties import Property


@dataclasses.dataclass
class Failure:
    case: Optional[Case]
    extra: dict
    error: str
    reproducer: str


@dataclasses.dataclass
class Outcome:
    estimator: str
    prop: str
    examples: int = 0
    worst: float = 0.0
    failure: Optional[Failure] = None
    seconds: float = 0.0
    known_bug: Optional[str] = None   # why this property is expected to fail (rlscan only)

    @property
    def status(self) -> str:
        if self.known_bug:
            return "known bug" if self.failure else "XPASS"
        return "FAIL" if self.failure else "pass"

    @property
    def failed(self) -> bool:
        """Counts against the exit status: a new failure, or a known bug that now passes."""
        return self.status in ("FAIL", "XPASS")


def run_property(target, estimator: str, prop: Property, *, profile: str = "ci",
                 max_examples: Optional[int] = None, seed: Optional[int] = None,
                 on_example: Optional[Callable[[int], None]] = None) -> Outcome:
    """Run ``prop`` for ``estimator`` on ``target``: explicit examples first (every failure ever
    found, verify/examples.py), then Hypothesis' search, then shrinking of any failure."""
    budget = profiles.budget(profile, target.backend)
    n = max_examples if max_examples is not None else profiles.examples(profile, prop.weight)
    outcome = Outcome(estimator, prop.name,
                      known_bug=explicit.known_bug(target, estimator, prop.name))
    last_failure = {}

    def body(ex):
        case, extra = ex
        outcome.examples += 1
        if on_example:
            on_example(outcome.examples)
        try:
            ratio = prop.check(target, case, **extra)
        except Exception as e:
            last_failure.update(case=case, extra=extra, error=f"{type(e).__name__}: {e}")
            raise
        if ratio > outcome.worst:
            outcome.worst = ratio

    start = time.perf_counter()
    fixed = prop.fixed(estimator) if prop.fixed else None
    try:
        if fixed is not None:   # a fixed list: every entry once, no search
            for ex in fixed:
                body(ex)
        else:
            test = given(ex=prop.strategy(estimator, budget, target))(body)
            for ex in explicit.found(estimator, prop.name):
                test = example(ex=ex)(test)
            test = profiles.run_settings(profile, n, seed)(test)
            if seed is not None:
                test = hyp_seed(seed)(test)
            test()
    except Exception as e:  # the last recorded failure is the shrunk one Hypothesis replays
        case, extra = last_failure.get("case"), last_failure.get("extra", {})
        error = last_failure.get("error", f"{type(e).__name__}: {e}")
        outcome.failure = Failure(case, extra, error,
                                  reproducer(target, estimator, prop.name, case, extra, error))
    outcome.seconds = time.perf_counter() - start
    return outcome


# ----------------------------------------------------------------------------- reproducers
def source(value, indent: str = "") -> str:
    """Python source for the values a property's extra holds."""
    if isinstance(value, Case):
        return value.to_source()
    if isinstance(value, np.ndarray):
        lit = _literal(value.tolist())
        return f"array({lit}, dtype=bool)" if value.dtype == bool else f"array({lit})"
    if isinstance(value, dict):
        inner = ", ".join(f"{k!r}: {source(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, (list, tuple)):
        items = ", ".join(source(v) for v in value)
        if isinstance(value, list):
            return f"[{items}]"
        return f"({items}{',' if len(value) == 1 else ''})"
    return _literal(value)


def reproducer(target, estimator: str, prop: str, case, extra: dict, error: str) -> str:
    """Copy-paste Python that replays one failing example and raises the same failure."""
    spec = "rlscan" if target.is_rlscan else target.name
    call = "" if case is None else (
        f"# the call under test:\n"
        f"#   out = target.fn({estimator!r})(**case.api_kwargs(target.device))\n"
        f"#   expected = case.reference()\n")
    return (
        f"# rlscan-verify: {estimator} / {prop} fails on {target.name} ({target.backend})\n"
        f"# {error.splitlines()[0] if error else ''}\n"
        f"from math import inf, nan\n"
        f"from numpy import array\n"
        f"from rlscan.verify.cases import Case\n"
        f"from rlscan.verify.properties import PROPERTIES\n"
        f"from rlscan.verify.targets import load_target\n\n"
        f"target = load_target({spec!r}, backend={target.backend!r}, estimator={estimator!r})\n"
        f"case = {source(case)}\n"
        f"extra = {source(extra)}\n"
        f"{call}"
        f"PROPERTIES[{prop!r}].check(target, case, **extra)\n")
