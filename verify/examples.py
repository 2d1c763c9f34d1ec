"""Explicit examples: every failure the verifier ever found, replayed before any search
(Hypothesis ``@example``), and the rlscan bugs known to be open.

Add a failure here as ``Found(estimator, property, case, extra, note)`` once it is understood
(the reproducer printed by ``rlscan-verify`` has the case). A known rlscan bug makes its
property report "known bug" instead of failing for the rlscan target; once fixed, the property
reports XPASS and fails until the entry is removed (pytest's ``xfail(strict=True)``).
"""
from typing import NamedTuple, Optional

from .cases import Case


class Found(NamedTuple):
    estimator: str
    prop: str
    case: Optional[Case]
    extra: dict
    note: str


FOUND = []

# (estimator, property) -> reason, for the rlscan target only
KNOWN_BUGS = {}


def found(estimator: str, prop: str):
    """(case, extra) of every recorded failure of ``prop`` for ``estimator``."""
    return [(f.case, f.extra) for f in FOUND if f.estimator == estimator and f.prop == prop]


def known_bug(target, estimator: str, prop: str) -> Optional[str]:
    return KNOWN_BUGS.get((estimator, prop)) if target.is_rlscan else None
