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

_TINY_GAMMA = ("found 2026-12-01 on rlscan's torch path, chasing a thorough H200 run's V-trace "
               "failure: γ = 6.3e-23 makes the pg advantage's γ·vs[t+1] subnormal (~1e-44); "
               "the float32 rounding there (7.6e-46 on a CPU, a flush to 0 on a GPU) exceeded "
               "the bound's relative terms (4e-50): the bound lacked an absolute subnormal term "
               "in the post-processing (tolerance.py)")
_LOGP = {"behaviour_logp": array([[-0.2514604330062866, -0.26420971751213074, -1.280845284461975,
                                   -0.20980022847652435, -1.0713387727737427, -0.7231901288032532,
                                   -2.6080000400543213, -1.8941619396209717, -1.407470464706421,
                                   -2.5308430194854736, -1.2465488910675049, -0.08265195786952972,
                                   -4.65006160736084, -0.437583327293396, -2.4918220043182373,
                                   -1.4645347595214844, -1.0885180234909058, -0.6326003074645996,
                                   -0.8232610821723938, -2.085026741027832]]),
         "target_logp": array([[-0.24517391622066498, -0.2708149552345276, -1.248824119567871,
                                -0.2045552283525467, -1.098122239112854, -0.7051103711128235,
                                -2.542799949645996, -1.846807837486267, -1.442657232284546,
                                -2.594114065170288, -1.2777125835418701, -0.08058565855026245,
                                -4.766313076019287, -0.4485229253768921, -2.554117441177368,
                                -1.5011481046676636, -1.1157310009002686, -0.6484153270721436,
                                -0.8026795387268066, -2.0329010486602783]])}
_STEPS = array([[2.0, 1.0, 0.0, -2.0, -1.0, -3.0, -3.0, -3.0, -2.0, 2.0, 1.0, 3.0, 0.0, 1.0, 3.0,
                 2.0, 1.0, 0.0, 0.0, 3.0]])
FOUND.append(Found("vtrace", "matches_reference", Case("vtrace", {
    "rewards": _STEPS, "values": _STEPS, "bootstrap_values": _STEPS,
    "gamma": 6.334980947079717e-23, "lmbda": 0.8999999761581421, "rho_bar": 1.0, "c_bar": 1.0,
    "pg_bootstrap": "vs", **_LOGP}, dtype="float32", flag_dtype="bool", layout="time_last"), {},
    _TINY_GAMMA))

# (estimator, property) -> reason, for the rlscan target only. Empty: the NaN leak above was
# fixed in rlscan (42af661, "A zero coefficient stays a reset when composed with a NaN/inf
# coefficient").
KNOWN_BUGS = {}


def found(estimator: str, prop: str):
    """(case, extra) of every recorded failure of ``prop`` for ``estimator``."""
    return [(f.case, f.extra) for f in FOUND if f.estimator == estimator and f.prop == prop]


def known_bug(target, estimator: str, prop: str) -> Optional[str]:
    return KNOWN_BUGS.get((estimator, prop)) if target.is_rlscan else None
