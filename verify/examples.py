"""Explicit examples: every failure the verifier ever found, replayed before any search
(Hypothesis ``@example``), and the rlscan bugs known to be open.

Add a failure here as ``Found(estimator, property, case, extra, note)`` once it is understood
(the reproducer printed by ``rlscan-verify`` has the case). A known rlscan bug makes its
property report "known bug" instead of failing for the rlscan target; once fixed, the property
reports XPASS and fails until the entry is removed (pytest's ``xfail(strict=True)``).
"""
from math import nan
from typing import NamedTuple, Optional

from numpy import array

from .cases import Case


class Found(NamedTuple):
    estimator: str
    prop: str
    case: Optional[Case]
    extra: dict
    note: str


_LEAK = "nonfinite_decay_stays_in_its_episode"
_LEAK_NOTE = ("found 2026-11-30 in rlscan: a NaN decay coefficient after a reset; the combine "
              "multiplied 0·NaN = NaN into the composed a, so the reset no longer discarded the "
              "carry and NaN crossed the episode boundary")

FOUND = [
    Found("linear_scan", _LEAK, Case("linear_scan", {
        "a": array([1.0, nan, 0.0]), "b": array([1.0, 1.0, 1.0]), "reverse": False}), {},
        _LEAK_NOTE + " (forward: x[2] must be b[2] = 1)"),
    Found("linear_scan", _LEAK, Case("linear_scan", {
        "a": array([0.0, nan, 1.0]), "b": array([1.0, 1.0, 1.0]), "reverse": True}), {},
        _LEAK_NOTE + " (backward: x[0] must be b[0] = 1)"),
    Found("vtrace", _LEAK, Case("vtrace", {
        "rewards": array([1.0, 1.0, 1.0]), "values": array([0.0, 0.0, 0.0]),
        "terminated": array([True, False, False]), "log_ratio": array([0.0, nan, 0.0]),
        "gamma": 0.5}), {}, _LEAK_NOTE + " (NaN ratio at t=1 makes vs[0] NaN; must be 1)"),
    Found("retrace", _LEAK, Case("retrace", {
        "rewards": array([1.0, 1.0, 1.0]), "q_taken": array([0.0, 0.0, 0.0]),
        "expected_next_q": array([0.0, 0.0, 0.0]), "terminated": array([True, False, False]),
        "log_ratio": array([0.0, 0.0, nan]), "gamma": 0.5}), {},
        _LEAK_NOTE + " (NaN ratio at t=2 makes Qret[0] NaN; must be r[0] = 1)"),
]

# (estimator, property) -> reason, for the rlscan target only. Empty: the NaN leak above was
# fixed in rlscan (42af661, "A zero coefficient stays a reset when composed with a NaN/inf
# coefficient").
KNOWN_BUGS = {}


def found(estimator: str, prop: str):
    """(case, extra) of every recorded failure of ``prop`` for ``estimator``."""
    return [(f.case, f.extra) for f in FOUND if f.estimator == estimator and f.prop == prop]


def known_bug(target, estimator: str, prop: str) -> Optional[str]:
    return KNOWN_BUGS.get((estimator, prop)) if target.is_rlscan else None
