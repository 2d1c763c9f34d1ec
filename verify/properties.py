"""The properties every implementation must have, each a Hypothesis strategy plus a check.

A property's strategy draws ``(case, extra)``; ``check(target, case, **extra)`` runs the target
and returns the worst error/bound ratio it saw (0 for bitwise properties), or raises
:class:`PropertyFailure` saying what differed where. :data:`PROPERTIES` lists them in run order;
``Property.estimators`` says which estimators each applies to.
"""
import dataclasses
from typing import Callable, FrozenSet, Optional

import numpy as np
from hypothesis import strategies as st

from . import checks as C
from . import strategies as S
from . import tolerance
from .cases import BACKWARD, COEF, ESTIMATORS, FORWARD, ROW_FLAG, STEP_FLAG, Case
from .checks import PropertyFailure  # noqa: F401  (re-exported for callers)
from .exact import (check_combine_exact, check_exact_on_dyadic_inputs, combine_strategy,
                    dyadic_strategy)
from .identities import (check_cumsum_of_ones_counts_steps,
                         check_lambda_one_gives_discounted_returns,
                         check_lambda_returns_equal_gae_plus_values,
                         check_unit_decay_trace_equals_cumsum,
                         check_vtrace_unit_ratio_gives_gae_targets, gae_lambda_strategy,
                         lambda_one_strategy, ones_strategy, unit_ratio_strategy,
                         unit_trace_strategy)
from .worked_examples import WORKED_EXAMPLES

ALL = frozenset(ESTIMATORS)


@dataclasses.dataclass(frozen=True)
class Property:
    name: str
    doc: str
    estimators: FrozenSet[str]
    weight: float          # share of the profile's example budget
    strategy: Callable     # (estimator, budget, target) -> SearchStrategy[(case, extra)]
    check: Callable        # (target, case, **extra) -> worst error/bound ratio
    fixed: Optional[Callable] = None   # estimator -> [(case, extra)]: run these, no search


# ----------------------------------------------------------------------------- 1. the reference
def _matches_reference_strategy(est, budget, target):
    configs = S.SMALL_CONFIGS if target.can_force_config else ()
    return S.cases(est, budget, configs=configs).map(lambda c: (c, {}))


def check_matches_reference(target, case) -> float:
    """Every output within the tolerance model's bound of the float64 sequential reference;
    NaN/inf planted in slots the math ignores must not reach any output."""
    outs = target.call(case)
    ref, bnd = C.reference_and_bound(target, case)
    for name, r in ref.items():
        bad = ~np.isfinite(r) & ~bnd.exempt
        if bad.any():   # the strategy only plants non-finite values where they are ignored
            raise RuntimeError(f"verifier bug: reference output {name!r} is not finite at "
                               f"{tuple(int(k) for k in np.argwhere(bad)[0])}")
    return C.within("differs from the float64 reference", outs, ref, bnd.bounds, bnd.exempt)


# ----------------------------------------------------------------------------- 2. episodes
def _force_boundary(case: Case, row: int, s: int, kind: str) -> None:
    """Make an episode boundary between steps s and s+1 of ``row`` (in place)."""
    est, x = case.estimator, case.inputs
    if est in BACKWARD:
        if kind == "truncated" and "last_value" in x:
            kind = "terminated"   # last_value cannot express an interior truncation
        if kind not in x:
            x[kind] = np.zeros(case.shape, bool)
        x[kind] = np.asarray(x[kind]) != 0
        C.row_view(case, kind)[row, s] = True
    elif est in FORWARD:
        x["dones"] = np.asarray(x["dones"]) != 0
        t = s + 1 if x.get("boundary") == "starts_at" else s
        C.row_view(case, "dones")[row, t] = True
    else:
        x["a"] = np.array(x["a"])
        C.row_view(case, "a")[row, s if x.get("reverse") else s + 1] = 0.0


def _boundary_slot(case: Case, s: int):
    """(input name, step) of the flag or zero coefficient that makes the boundary after s."""
    est, x = case.estimator, case.inputs
    if est in BACKWARD:
        return None, s   # the flag arrays at s stay as they are
    if est in FORWARD:
        return "dones", (s + 1 if x.get("boundary") == "starts_at" else s)
    return "a", (s if x.get("reverse") else s + 1)


@st.composite
def _split_cases(draw, est, budget, target, min_T=2, plant=True):
    """A case with an episode boundary forced between steps s and s+1 of one row."""
    case = draw(S.cases(est, budget, plant=False).filter(lambda c: c.T >= min_T))
    row = draw(st.integers(0, case.rows - 1))
    s = draw(st.integers(0, case.T - 2))
    _force_boundary(case, row, s, draw(st.sampled_from(["terminated", "truncated"])))
    if plant:
        case = draw(S.plant_in_ignored(case))
    return case, row, s


_B_OPERAND = {"eligibility_traces": "inputs", "episodic_cumsum": "inputs", "linear_scan": "b"}


def _decay_operand(case):
    for name in ("log_ratio", "target_logp", "target_probs", "a"):
        if name in case.inputs:
            return name
    raise ValueError(f"{case.estimator} has no decay operand")


def _nonfinite_strategy(decay: bool):
    @st.composite
    def strategy(draw, est, budget, target):
        case, row, s = draw(_split_cases(est, budget, target))
        name = _decay_operand(case) if decay else _B_OPERAND.get(est, "rewards")
        later = draw(st.booleans())
        lo, hi = (s + 1, case.T - 1) if later else (0, s)
        p = draw(st.integers(lo, hi))
        arr = np.array(case.inputs[name], np.float64)
        arr.reshape(case.rows, -1)[row, p] = draw(st.sampled_from(S.POISONS))
        return case.replace(inputs={name: arr}), ({} if decay else {"row": row, "step": p})
    return strategy


REACH_MIN = 2.0 ** -60   # a path weight float32 products cannot flush to zero


def _reach(case: Case, row: int, step: int) -> np.ndarray:
    """|Π a| from every step to ``step`` of ``row`` along the scan (float64): how strongly
    b[step] enters each x[t]."""
    from . import reference as ref
    kw = case.reference_kwargs()
    with np.errstate(all="ignore"):
        if case.estimator == "linear_scan":
            a, rev = np.asarray(kw["a"], np.float64), bool(kw.get("reverse"))
        else:
            a, _, rev = ref.coefficients(case.estimator, **kw)
        hit = np.zeros(case.shape)
        hit.reshape(case.rows, -1)[row, step] = 1.0
        return ref.linear_scan(np.abs(np.nan_to_num(a, nan=1.0)), hit, reverse=rev)


def check_nonfinite_stays_in_its_episode(target, case, row=None, step=None) -> float:
    """A NaN or inf in an operand the math does use propagates within its own episode and no
    further: every output the reference computes as finite must be finite and within the bound,
    and (for a poisoned reward or input) every scan output the reference makes non-finite
    through a path weight float32 can hold must be non-finite too."""
    outs = target.call(case)
    ref, bnd = C.reference_and_bound(target, case)
    worst = C.within("differs from the float64 reference where it is finite (NaN/inf planted "
                     "in one episode)", outs, ref, bnd.bounds, bnd.exempt)
    if row is not None:
        name = next(iter(ref))
        must = ~np.isfinite(ref[name]) & (_reach(case, row, step) >= REACH_MIN) & ~bnd.exempt
        lost = must & np.isfinite(outs[name])
        if lost.any():
            i = tuple(int(k) for k in np.argwhere(lost)[0])
            raise C.PropertyFailure(f"a NaN/inf planted at step {step} of row {row} did not "
                                  f"propagate: output {name!r} at {i} is {outs[name][i]!r}, "
                                  f"the reference gives {ref[name][i]!r}")
    return worst


@st.composite
def _severs_strategy(draw, est, budget, target):
    case, row, s = draw(_split_cases(est, budget, target))
    return case, {"row": row, "split": s, "perturb_later": draw(st.booleans()),
                  "seed": draw(st.integers(0, 2**32 - 1))}


def perturb_side(case: Case, row: int, split: int, later: bool, seed: int) -> Case:
    """``case`` with every input of ``row`` on one side of the boundary after ``split``
    replaced by fresh finite values — except the flag or zero coefficient making the boundary."""
    rng = np.random.default_rng(seed)
    new = case.replace()
    keep_name, keep_t = _boundary_slot(case, split)
    T = case.T
    side = np.arange(T) > split if later else np.arange(T) <= split
    for name, v in case.inputs.items():
        view = C.row_view(new, name) if isinstance(v, np.ndarray) else None
        if view is None:
            continue
        if view.ndim == 2 and view.shape[1] == T:        # per-step
            if name in ("terminated", "truncated") and case.estimator in BACKWARD:
                mask = side & (np.arange(T) != split)    # the boundary flags at s stay
            else:
                mask = side & ~((name == keep_name) & (np.arange(T) == keep_t))
            fresh = C.fresh(rng, name, view[row], case.dtype)
            new_v = np.array(new.inputs[name], dtype=np.asarray(v).dtype)
            new_v.reshape(case.rows, -1)[row] = np.where(mask, fresh, view[row])
            new.inputs[name] = new_v
        elif view.ndim == 1:                             # per-row: seed, init, last_value, …
            belongs_later = (name == "last_value" or
                             (name == "init" and case.inputs.get("reverse")))
            if belongs_later == later:
                new_v = np.array(v, dtype=np.asarray(v).dtype)
                new_v.reshape(case.rows)[row] = C.fresh(rng, name, view[row:row + 1],
                                                        case.dtype)[0]
                new.inputs[name] = new_v
    C.respect_last_value(new)
    return new


def check_done_severs_dependence(target, case, row, split, perturb_later, seed) -> float:
    """An episode boundary severs all dependence: changing every input on one side of it
    leaves every output on the other side bitwise unchanged."""
    before = target.call(case)
    after = target.call(perturb_side(case, row, split, perturb_later, seed))
    keep = np.zeros(case.shape, bool)
    keep.reshape(case.rows, -1)[row] = (np.arange(case.T) <= split) if perturb_later \
        else (np.arange(case.T) > split)
    side = "after" if perturb_later else "up to"
    return C.bitwise(f"inputs {side} the boundary after step {split} of row {row} changed "
                     f"outputs on the other side", after, before, keep)


# ----------------------------------------------------------------------------- 3. rows, layouts
@st.composite
def _rows_strategy(draw, est, budget, target):
    case = draw(S.cases(est, budget, min_rows=2))
    return case, {"row": draw(st.integers(0, case.rows - 1)),
                  "seed": draw(st.integers(0, 2**32 - 1))}


def check_rows_are_independent(target, case, row, seed) -> float:
    """Rows are independent: NaN and fresh flags in every other row leave this row's outputs
    bitwise unchanged."""
    rng = np.random.default_rng(seed)
    other = case.replace()
    others = np.arange(case.rows) != row
    for name, v in case.inputs.items():
        view = C.row_view(case, name)
        if view is None:
            continue
        if name in STEP_FLAG or name in ROW_FLAG or name in COEF:
            fresh = C.fresh(rng, name, view, case.dtype)
        else:
            fresh = np.full(view.shape, np.nan)
        sel = others.reshape((-1,) + (1,) * (view.ndim - 1))
        other.inputs[name] = np.where(sel, fresh, view).reshape(np.shape(v))
    C.respect_last_value(other)
    before, after = target.call(case), target.call(other)
    keep = np.zeros(case.shape, bool)
    keep.reshape(case.rows, -1)[row] = True
    return C.bitwise(f"changing other rows changed row {row}", after, before, keep)


def _relayout_strategy(est, budget, target):
    return S.cases(est, budget, layouts=("time_last",)).map(lambda c: (c, {}))


def _pair_within(what, target, case, outs_a, outs_b) -> float:
    """Two runs of the same math: each is within the bound of the reference, so they are within
    twice the bound of each other."""
    ref, bnd = C.reference_and_bound(target, case)
    skip = bnd.exempt
    worst = 0.0
    for name, r in ref.items():
        cmp = tolerance.compare(outs_a[name], np.where(np.isfinite(r), outs_b[name], np.nan),
                                2 * bnd.bounds[name], skip)
        if not cmp.ratio <= 1.0:
            C.fail(what, name, cmp, "2x bound")
        worst = max(worst, cmp.ratio)
    return worst


def check_time_major_equals_time_last(target, case) -> float:
    """Time-major ``[T, ...]`` inputs (time_dim=0) give the time-last results."""
    return _pair_within("time-major differs from time-last", target, case,
                        target.call(case.replace(layout="time_major")), target.call(case))


def _half_strategy(est, budget, target):
    return S.cases(est, budget, dtypes=("bfloat16", "float16")).map(lambda c: (c, {}))


def check_half_inputs_equal_fp32_math(target, case) -> float:
    """bf16/fp16 inputs give the float32 math on the rounded inputs (upcast exactly)."""
    return _pair_within(f"{case.dtype} inputs differ from float32 inputs holding the same values",
                        target, case, target.call(case), target.call(case.replace(dtype="float32")))


def check_deterministic(target, case) -> float:
    """Same inputs and config: bitwise-identical outputs, run after run."""
    first = target.call(case)
    for _ in range(2):
        C.bitwise("a second run gave different bits", target.call(case), first)
    return 0.0


# ----------------------------------------------------------------------------- 6. worked examples
def check_worked_example(target, case, expected) -> float:
    """The worked examples of ALGORITHMS.md §4: the reference on the float32-rounded inputs
    matches the published decimals, and the target matches the reference within the bound."""
    ref, bnd = C.reference_and_bound(target, case)
    for name, exp in expected.items():
        gap = np.max(np.abs(ref[name] - exp))
        if gap > 1e-6:
            raise RuntimeError(f"verifier bug: reference {name} {ref[name]} vs §4 {exp}")
    return C.within("differs on the worked example", target.call(case), ref, bnd.bounds)


# ----------------------------------------------------------------------------- registry
_P = Property
PROPERTIES = {p.name: p for p in [
    _P("matches_reference", check_matches_reference.__doc__, ALL, 1.0,
       _matches_reference_strategy, check_matches_reference),
    _P("worked_examples", check_worked_example.__doc__, ALL - {"linear_scan"}, 0.0,
       None, check_worked_example,
       fixed=lambda est: [(c, {"expected": e}) for c, e in WORKED_EXAMPLES[est]]),
    _P("nonfinite_stays_in_its_episode", check_nonfinite_stays_in_its_episode.__doc__, ALL,
       0.5, _nonfinite_strategy(decay=False), check_nonfinite_stays_in_its_episode),
    _P("nonfinite_decay_stays_in_its_episode", check_nonfinite_stays_in_its_episode.__doc__,
       frozenset({"vtrace", "retrace", "linear_scan"}), 0.5, _nonfinite_strategy(decay=True),
       check_nonfinite_stays_in_its_episode),
    _P("done_severs_dependence", check_done_severs_dependence.__doc__, ALL, 0.4,
       _severs_strategy, check_done_severs_dependence),
    _P("rows_are_independent", check_rows_are_independent.__doc__, ALL, 0.3, _rows_strategy,
       check_rows_are_independent),
    _P("time_major_equals_time_last", check_time_major_equals_time_last.__doc__, ALL, 0.3,
       _relayout_strategy, check_time_major_equals_time_last),
    _P("half_inputs_equal_fp32_math", check_half_inputs_equal_fp32_math.__doc__, ALL, 0.3,
       _half_strategy, check_half_inputs_equal_fp32_math),
    _P("deterministic", check_deterministic.__doc__, ALL, 0.2,
       lambda e, b, t: S.cases(e, b).map(lambda c: (c, {})), check_deterministic),
    _P("lambda_returns_equal_gae_plus_values", check_lambda_returns_equal_gae_plus_values.__doc__,
       frozenset({"gae", "lambda_returns"}), 0.3, gae_lambda_strategy,
       check_lambda_returns_equal_gae_plus_values),
    _P("lambda_one_gives_discounted_returns", check_lambda_one_gives_discounted_returns.__doc__,
       frozenset({"lambda_returns", "discounted_returns"}), 0.3, lambda_one_strategy,
       check_lambda_one_gives_discounted_returns),
    _P("vtrace_unit_ratio_gives_gae_targets", check_vtrace_unit_ratio_gives_gae_targets.__doc__,
       frozenset({"vtrace", "gae"}), 0.3, unit_ratio_strategy,
       check_vtrace_unit_ratio_gives_gae_targets),
    _P("cumsum_of_ones_counts_steps", check_cumsum_of_ones_counts_steps.__doc__,
       frozenset({"episodic_cumsum"}), 0.3, ones_strategy, check_cumsum_of_ones_counts_steps),
    _P("unit_decay_trace_equals_cumsum", check_unit_decay_trace_equals_cumsum.__doc__,
       frozenset({"eligibility_traces", "episodic_cumsum"}), 0.3, unit_trace_strategy,
       check_unit_decay_trace_equals_cumsum),
    _P("exact_on_dyadic_inputs", check_exact_on_dyadic_inputs.__doc__,
       frozenset({"linear_scan", "episodic_cumsum", "discounted_returns"}), 0.4,
       dyadic_strategy, check_exact_on_dyadic_inputs),
    _P("combine_exact", check_combine_exact.__doc__, frozenset({"linear_scan"}), 1.0,
       combine_strategy, check_combine_exact),
]}


def for_estimator(estimator: str):
    """The properties that apply to ``estimator``, in run order."""
    return [p for p in PROPERTIES.values() if estimator in p.estimators]
