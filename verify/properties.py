"""The properties every implementation must have, each a Hypothesis strategy plus a check.

A property's strategy draws ``(case, extra)``; ``check(target, case, **extra)`` runs the target
and returns the worst error/bound ratio it saw (0 for bitwise properties), or raises
:class:`PropertyFailure` saying what differed where. :data:`PROPERTIES` lists them in run order;
``Property.estimators`` says which estimators each applies to.
"""
import dataclasses
import math
from fractions import Fraction
from typing import Callable, FrozenSet, Optional

import numpy as np
from hypothesis import strategies as st

from . import strategies as S
from . import tolerance
from .cases import BACKWARD, ESTIMATORS, FORWARD, Case, round_to
from .worked_examples import WORKED_EXAMPLES

ALL = frozenset(ESTIMATORS)


class PropertyFailure(AssertionError):
    """An implementation broke a property; the message says what differed and where."""


@dataclasses.dataclass(frozen=True)
class Property:
    name: str
    doc: str
    estimators: FrozenSet[str]
    weight: float          # share of the profile's example budget
    strategy: Callable     # (estimator, budget, target) -> SearchStrategy[(case, extra)]
    check: Callable        # (target, case, **extra) -> worst error/bound ratio
    fixed: Optional[Callable] = None   # estimator -> [(case, extra)]: run these, no search


# ----------------------------------------------------------------------------- helpers
def _fail(what: str, name: str, cmp: tolerance.Comparison, bound_label="bound") -> None:
    raise PropertyFailure(
        f"{what}: output {name!r} at index {cmp.where} is {cmp.out!r}, expected {cmp.ref!r} "
        f"(|diff| = {abs(cmp.out - cmp.ref):.3g}, {bound_label} {cmp.bound:.3g}, "
        f"error/bound = {cmp.ratio:.3g})")


def _within(what, outs, expected, bounds, skip=None) -> float:
    """Every output within its bound of ``expected``; returns the worst ratio."""
    worst = 0.0
    for name, exp in expected.items():
        cmp = tolerance.compare(outs[name], exp, bounds[name], skip)
        if not cmp.ratio <= 1.0:
            _fail(what, name, cmp)
        worst = max(worst, cmp.ratio)
    return worst


def _same_bits(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise: identical value (NaN equals NaN, and the sign of zero counts)."""
    return ((x == y) & (np.signbit(x) == np.signbit(y))) | (np.isnan(x) & np.isnan(y))


def _bitwise(what, outs, expected, select=None) -> float:
    for name, exp in expected.items():
        got = outs[name] if select is None else outs[name][select]
        exp = exp if select is None else exp[select]
        same = _same_bits(got, exp)
        if not same.all():
            i = tuple(int(k) for k in np.argwhere(~same)[0])
            raise PropertyFailure(f"{what}: output {name!r} differs at {i} "
                                  f"({got[i]!r} vs {exp[i]!r})")
    return 0.0


def _reference_and_bound(target, case):
    ref = case.reference()
    bnd = tolerance.bound(case, target.depth(case))
    return ref, bnd


def _rows2d(x, rows):
    return np.asarray(x).reshape(rows, -1)


def _row_view(case: Case, name: str):
    """[N, T] (per-step), [N, 1] (per-row γ/λ) or [N] (per-row) view of an input, or None."""
    v = case.inputs[name]
    if not isinstance(v, np.ndarray):
        return None
    return v.reshape(case.rows, -1) if v.ndim == len(case.shape) else v.reshape(case.rows)


def _fresh(rng, name, like, dtype, case):
    """Finite replacement values for ``name`` (what a perturbation writes)."""
    from .cases import COEF, ROW_FLAG, STEP_FLAG
    if name in STEP_FLAG or name in ROW_FLAG:
        return rng.random(like.shape) < 0.3
    if name in COEF:
        return np.clip(round_to(rng.random(like.shape), dtype), 0.0, 1.0)
    if name in ("log_ratio",):
        return round_to(np.clip(rng.normal(0, 0.5, like.shape), -4, 0.4), dtype)
    if name in ("target_logp", "behaviour_logp"):
        return round_to(np.clip(rng.normal(-1, 0.5, like.shape), -5, 0), dtype)
    if name in ("target_probs", "behaviour_probs"):
        return round_to(rng.uniform(0.6, 1.0, like.shape), dtype)
    if name == "a":
        return round_to(rng.uniform(-1, 1, like.shape), dtype)
    return round_to(rng.normal(0, 1, like.shape), dtype)


def _respect_last_value(case: Case) -> None:
    """With ``last_value`` no interior step may be truncated without being terminated."""
    if "last_value" in case.inputs and "truncated" in case.inputs:
        keep = np.asarray(case.inputs.get("terminated", np.zeros(case.shape, bool))) != 0
        keep = keep.copy()
        keep[..., -1] = True
        case.inputs["truncated"] = (np.asarray(case.inputs["truncated"]) != 0) & keep


# ----------------------------------------------------------------------------- 1. the reference
def _matches_reference_strategy(est, budget, target):
    configs = S.SMALL_CONFIGS if target.can_force_config else ()
    return S.cases(est, budget, configs=configs).map(lambda c: (c, {}))


def check_matches_reference(target, case) -> float:
    """Every output within the tolerance model's bound of the float64 sequential reference;
    NaN/inf planted in slots the math ignores must not reach any output."""
    outs = target.call(case)
    ref, bnd = _reference_and_bound(target, case)
    for name, r in ref.items():
        bad = ~np.isfinite(r) & ~bnd.exempt
        if bad.any():   # the strategy only plants non-finite values where they are ignored
            raise RuntimeError(f"verifier bug: reference output {name!r} is not finite at "
                               f"{tuple(int(k) for k in np.argwhere(bad)[0])}")
    return _within("differs from the float64 reference", outs, ref, bnd.bounds, bnd.exempt)


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
        _row_view(case, kind)[row, s] = True
    elif est in FORWARD:
        x["dones"] = np.asarray(x["dones"]) != 0
        t = s + 1 if x.get("boundary") == "starts_at" else s
        _row_view(case, "dones")[row, t] = True
    else:
        x["a"] = np.array(x["a"])
        _row_view(case, "a")[row, s if x.get("reverse") else s + 1] = 0.0


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
_DECAY_OPERAND = {"linear_scan": "a"}


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
    ref, bnd = _reference_and_bound(target, case)
    worst = _within("differs from the float64 reference where it is finite (NaN/inf planted "
                    "in one episode)", outs, ref, bnd.bounds, bnd.exempt)
    if row is not None:
        name = next(iter(ref))
        must = ~np.isfinite(ref[name]) & (_reach(case, row, step) >= REACH_MIN) & ~bnd.exempt
        lost = must & np.isfinite(outs[name])
        if lost.any():
            i = tuple(int(k) for k in np.argwhere(lost)[0])
            raise PropertyFailure(f"a NaN/inf planted at step {step} of row {row} did not "
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
        view = _row_view(new, name) if isinstance(v, np.ndarray) else None
        if view is None:
            continue
        if view.ndim == 2 and view.shape[1] == T:        # per-step
            if name in ("terminated", "truncated") and est_backward(case):
                mask = side & (np.arange(T) != split)    # the boundary flags at s stay
            else:
                mask = side & ~((name == keep_name) & (np.arange(T) == keep_t))
            fresh = _fresh(rng, name, view[row], case.dtype, case)
            new_v = np.array(new.inputs[name], dtype=np.asarray(v).dtype)
            new_v.reshape(case.rows, -1)[row] = np.where(mask, fresh, view[row])
            new.inputs[name] = new_v
        elif view.ndim == 1:                             # per-row: seed, init, last_value, …
            belongs_later = (name == "last_value" or
                             (name == "init" and case.inputs.get("reverse")))
            if belongs_later == later:
                new_v = np.array(v, dtype=np.asarray(v).dtype)
                new_v.reshape(case.rows)[row] = _fresh(rng, name, view[row:row + 1],
                                                       case.dtype, case)[0]
                new.inputs[name] = new_v
    _respect_last_value(new)
    return new


def est_backward(case):
    return case.estimator in BACKWARD


def check_done_severs_dependence(target, case, row, split, perturb_later, seed) -> float:
    """An episode boundary severs all dependence: changing every input on one side of it
    leaves every output on the other side bitwise unchanged."""
    before = target.call(case)
    after = target.call(perturb_side(case, row, split, perturb_later, seed))
    keep = np.zeros(case.shape, bool)
    keep.reshape(case.rows, -1)[row] = (np.arange(case.T) <= split) if perturb_later \
        else (np.arange(case.T) > split)
    side = "after" if perturb_later else "up to"
    return _bitwise(f"inputs {side} the boundary after step {split} of row {row} changed "
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
    from .cases import COEF, ROW_FLAG, STEP_FLAG
    for name, v in case.inputs.items():
        view = _row_view(case, name)
        if view is None:
            continue
        if name in STEP_FLAG or name in ROW_FLAG or name in COEF:
            fresh = _fresh(rng, name, view, case.dtype, case)
        else:
            fresh = np.full(view.shape, np.nan)
        sel = others.reshape((-1,) + (1,) * (view.ndim - 1))
        other.inputs[name] = np.where(sel, fresh, view).reshape(np.shape(v))
    _respect_last_value(other)
    before, after = target.call(case), target.call(other)
    keep = np.zeros(case.shape, bool)
    keep.reshape(case.rows, -1)[row] = True
    return _bitwise(f"changing other rows changed row {row}", after, before, keep)


def _relayout_strategy(est, budget, target):
    return S.cases(est, budget, layouts=("time_last",)).map(lambda c: (c, {}))


def _pair_within(what, target, case, outs_a, outs_b) -> float:
    """Two runs of the same math: each is within the bound of the reference, so they are within
    twice the bound of each other."""
    ref, bnd = _reference_and_bound(target, case)
    skip = bnd.exempt
    worst = 0.0
    for name, r in ref.items():
        cmp = tolerance.compare(outs_a[name], np.where(np.isfinite(r), outs_b[name], np.nan),
                                2 * bnd.bounds[name], skip)
        if not cmp.ratio <= 1.0:
            _fail(what, name, cmp, "2x bound")
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
        _bitwise("a second run gave different bits", target.call(case), first)
    return 0.0


# ----------------------------------------------------------------------------- 4. identities
def _pair_bound(target, case_a, case_b, name_a, name_b):
    ref_a, bnd_a = _reference_and_bound(target, case_a)
    ref_b, bnd_b = _reference_and_bound(target, case_b)
    # exact in real arithmetic; the references' own float64 rounding is the only gap
    with np.errstate(invalid="ignore"):
        gap = np.abs(ref_a[name_a] - ref_b[name_b])
    return (ref_a[name_a], bnd_a.bounds[name_a] + bnd_b.bounds[name_b] + gap,
            bnd_a.exempt | bnd_b.exempt)


def _identity(what, target, case_a, name_a, case_b, name_b) -> float:
    out_a = target.call(case_a)[name_a]
    out_b = target.call(case_b)[name_b]
    ref_a, bnd, skip = _pair_bound(target, case_a, case_b, name_a, name_b)
    skip = skip | ~np.isfinite(ref_a)
    cmp = tolerance.compare(out_a, np.where(skip, np.nan, out_b), bnd, skip)
    if not cmp.ratio <= 1.0:
        _fail(what, f"{case_a.estimator}.{name_a} vs {case_b.estimator}.{name_b}", cmp,
              "sum of bounds")
    return cmp.ratio


_SUCCESSOR_KEYS = ("values", "bootstrap_values", "last_value", "next_values")


def _gae_lambda_strategy(est, budget, target):
    def build(case):
        x = dict(case.inputs)
        if "next_values" in x:   # the identity needs E2: vnext[t] = V[t+1] at non-cut t
            del x["next_values"]
        return Case("gae", x, case.dtype, case.flag_dtype, case.layout), {"lambda_inputs": x}
    return S.cases("gae", budget).map(build)


def check_lambda_returns_equal_gae_plus_values(target, case, lambda_inputs) -> float:
    """λ-returns = GAE advantages + V under the values+bootstrap encoding (ALGORITHMS.md §3.3)."""
    lam = Case("lambda_returns", lambda_inputs, case.dtype, case.flag_dtype, case.layout)
    return _identity("λ-returns differ from GAE + V", target, lam, "out", case, "returns")


def _lambda_one_strategy(est, budget, target):
    def build(case):
        disc = {k: v for k, v in case.inputs.items() if k != "lmbda"}
        return case.replace(inputs={"lmbda": 1.0}), {"disc_inputs": disc}
    return S.cases("lambda_returns", budget).map(build)


def check_lambda_one_gives_discounted_returns(target, case, disc_inputs) -> float:
    """λ = 1 λ-returns are the discounted returns with the same successor values."""
    disc = Case("discounted_returns", disc_inputs, case.dtype, case.flag_dtype, case.layout)
    return _identity("λ=1 λ-returns differ from discounted returns", target, case, "out",
                     disc, "out")


def _unit_ratio_strategy(est, budget, target):
    def build(case):
        x = {k: v for k, v in case.inputs.items()
             if k not in ("log_ratio", "target_logp", "behaviour_logp")}
        x["log_ratio"] = np.zeros(case.shape)
        x["rho_bar"] = max(x["rho_bar"], 1.0)
        x["c_bar"] = max(x["c_bar"], 1.0)
        gae = {k: v for k, v in x.items() if k in ("rewards", "values", "terminated", "truncated",
                                                     "gamma", "lmbda") + _SUCCESSOR_KEYS}
        return Case("vtrace", x, case.dtype, case.flag_dtype, case.layout), {"gae_inputs": gae}
    return S.cases("vtrace", budget).map(build)


def check_vtrace_unit_ratio_gives_gae_targets(target, case, gae_inputs) -> float:
    """V-trace with ratio ≡ 1 and ρ̄, c̄ ≥ 1 gives vs = GAE(γ, λ) value targets."""
    gae = Case("gae", gae_inputs, case.dtype, case.flag_dtype, case.layout)
    return _identity("V-trace with unit ratios differs from GAE targets", target, case, "vs",
                     gae, "returns")


def _ones_strategy(est, budget, target):
    def build(case):
        x = {k: v for k, v in case.inputs.items() if k != "seed"}
        x["inputs"] = np.ones(case.shape)
        return Case("episodic_cumsum", x, case.dtype, case.flag_dtype, case.layout), {}
    return S.cases("episodic_cumsum", budget).map(build)


def steps_in_episode(dones, boundary="ends_at", done_prev=None) -> np.ndarray:
    """1, 2, 3, … counted from each episode's first step (the expected prefix sum of ones)."""
    dones = np.asarray(dones) != 0
    start = dones.copy() if boundary == "starts_at" else np.zeros_like(dones)
    if boundary != "starts_at":
        start[..., 1:] = dones[..., :-1]
        if done_prev is not None:
            start[..., 0] = np.asarray(done_prev) != 0
    count = np.zeros(dones.shape)
    run = np.zeros(dones.shape[:-1])
    for t in range(dones.shape[-1]):
        run = np.where(start[..., t], 1.0, run + 1.0)
        count[..., t] = run
    return count


def check_cumsum_of_ones_counts_steps(target, case) -> float:
    """The episodic prefix sum of ones is the step count within the episode, exactly."""
    x = case.inputs
    expected = steps_in_episode(x["dones"], x.get("boundary", "ends_at"), x.get("done_prev"))
    return _bitwise("the prefix sum of ones is not the step count", target.call(case),
                    {"out": expected})


def _unit_trace_strategy(est, budget, target):
    def build(case):
        x = dict(case.inputs, gamma=1.0, lmbda=1.0)
        cum = {k: v for k, v in x.items() if k not in ("gamma", "lmbda")}
        return Case("eligibility_traces", x, case.dtype, case.flag_dtype, case.layout), \
            {"cumsum_inputs": cum}
    return S.cases("eligibility_traces", budget).map(build)


def check_unit_decay_trace_equals_cumsum(target, case, cumsum_inputs) -> float:
    """An eligibility trace with γλ = 1 is the episodic prefix sum (ends_at)."""
    cum = Case("episodic_cumsum", cumsum_inputs, case.dtype, case.flag_dtype, case.layout)
    return _identity("the γλ=1 trace differs from the prefix sum", target, case, "out",
                     cum, "out")


# ----------------------------------------------------------------------------- 5. exact arithmetic
def combine(left, right):
    """The spec's combine (ALGORITHMS.md §2.1): op(L, R) = R ∘ L, L applied first."""
    (a_l, b_l), (a_r, b_r) = left, right
    return a_r * a_l, b_r + a_r * b_l


IDENTITY = (Fraction(1), Fraction(0))


def closed_form(elements):
    """E[n-1] ∘ … ∘ E[0] from ALGORITHMS.md §1.6: (Π a, Σ_k (Π_{j>k} a[j])·b[k])."""
    A, B = Fraction(1), Fraction(0)
    for k, (_, b) in enumerate(elements):
        w = Fraction(1)
        for a, _ in elements[k + 1:]:
            w *= a
        B += w * b
    for a, _ in elements:
        A *= a
    return A, B


_SMALL_RATIONALS = st.builds(Fraction, st.integers(-6, 6), st.sampled_from([1, 2, 3, 4, 7]))


def _combine_strategy(est, budget, target):
    elems = st.lists(st.tuples(_SMALL_RATIONALS, _SMALL_RATIONALS), min_size=3, max_size=7)
    return elems.map(lambda e: (None, {"elements": [(str(a), str(b)) for a, b in e]}))


def check_combine_exact(target, case, elements) -> float:
    """In exact rationals the combine is associative, (1, 0) is its identity on both sides, and
    folding it left to right gives the closed form of §1.6. Checked for the spec's combine and
    for the target's own, if it exposes one as ``rlscan_combine``."""
    els = [(Fraction(a), Fraction(b)) for a, b in elements]
    ops = [("spec", combine)]
    own = getattr(target.fn("linear_scan"), "rlscan_combine", None)
    if own is not None:
        ops.append((target.name, own))
    for label, op in ops:
        x, y, z = els[:3]
        if op(op(x, y), z) != op(x, op(y, z)):
            raise PropertyFailure(f"{label} combine is not associative on {x}, {y}, {z}")
        if op(IDENTITY, x) != x or op(x, IDENTITY) != x:
            raise PropertyFailure(f"{label} combine: (1, 0) is not an identity for {x}")
        acc = IDENTITY
        for e in els:
            acc = op(acc, e)
        if acc != closed_form(els):
            raise PropertyFailure(f"{label} combine folded over {els} gives {acc}, the closed "
                                  f"form {closed_form(els)}: its operands are in the wrong roles")
    return 0.0


def _exponent_window(T: int) -> int:
    """Largest w such that every partial sum of T+1 terms (|b| ≤ 8, Π a = ±2^e with
    |e| ≤ 2w) is an integer multiple of 2^-2w below 2^24: exact in float32, any order."""
    return max(0, int((24 - math.log2(16 * (T + 1))) // 4))


@st.composite
def _dyadic_strategy(draw, est, budget, target):
    """Inputs whose every partial result is exact in float32 (and bf16/fp16 inputs)."""
    case = draw(S.cases(est, budget, configs=S.SMALL_CONFIGS if target.can_force_config else (),
                        plant=False))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ints = lambda shape: rng.integers(-8, 9, shape).astype(np.float64)  # noqa: E731
    x = dict(case.inputs)
    if est == "linear_scan":
        w = _exponent_window(case.T)
        a = rng.choice([0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0], case.shape)
        flat = a.reshape(case.rows, -1)
        for row in flat:   # keep every prefix exponent in [-w, w]
            e = 0
            for t in range(case.T):
                step = int(np.log2(abs(row[t]))) if row[t] != 0 else 0
                if abs(e + step) > w:
                    row[t] = math.copysign(1.0, row[t])
                    step = 0
                e += step
        x["a"], x["b"] = a, ints(case.shape)
        if "init" in x:
            x["init"] = ints(case.shape[:-1])
    else:
        for k in list(x):
            if k in ("rewards", "inputs") or k in _SUCCESSOR_KEYS:
                x[k] = ints(np.shape(x[k]))
            elif k == "seed":
                x[k] = ints(case.shape[:-1])
        if "gamma" in x:
            x["gamma"] = 1.0
    new = case.replace(inputs=x)
    return draw(S.plant_in_ignored(new)), {}


def exact_reference(case: Case) -> np.ndarray:
    """The recurrence in exact rationals (sequential, with reset-by-selection), as floats."""
    from . import reference as ref
    kw = case.reference_kwargs()
    if case.estimator == "linear_scan":
        a, b, rev = np.asarray(kw["a"]), np.asarray(kw["b"]), bool(kw.get("reverse"))
        init = kw.get("init")
    else:
        a, b, rev = ref.coefficients(case.estimator, **kw)
        init = kw.get("seed")
    rows_a, rows_b = a.reshape(case.rows, -1), b.reshape(case.rows, -1)
    init = np.zeros(case.rows) if init is None else np.broadcast_to(init, case.shape[:-1]) \
        .reshape(case.rows)
    out = np.empty(rows_a.shape)
    order = range(case.T - 1, -1, -1) if rev else range(case.T)
    for i in range(case.rows):
        carry = Fraction(float(init[i])) if math.isfinite(init[i]) else None
        for t in order:
            if not math.isfinite(rows_b[i, t]):
                carry = None
            elif rows_a[i, t] == 0:
                carry = Fraction(float(rows_b[i, t]))
            elif carry is not None:
                carry = Fraction(float(rows_b[i, t])) + Fraction(float(rows_a[i, t])) * carry
            out[i, t] = float(carry) if carry is not None else math.nan
    return out.reshape(case.shape)


def check_exact_on_dyadic_inputs(target, case) -> float:
    """When every partial result is exactly representable in float32, the output equals the
    exact rational result bit for bit, whatever the association and chunking."""
    expected = exact_reference(case)
    out = target.call(case)["out"]
    fin = np.isfinite(expected)
    return _bitwise("not exact on exactly representable inputs", {"out": out},
                    {"out": np.where(fin, expected, out)})


# ----------------------------------------------------------------------------- 6. worked examples
def check_worked_example(target, case, expected) -> float:
    """The worked examples of ALGORITHMS.md §4: the reference on the float32-rounded inputs
    matches the published decimals, and the target matches the reference within the bound."""
    ref, bnd = _reference_and_bound(target, case)
    for name, exp in expected.items():
        gap = np.max(np.abs(ref[name] - exp))
        if gap > 1e-6:
            raise RuntimeError(f"verifier bug: reference {name} {ref[name]} vs §4 {exp}")
    return _within("differs on the worked example", target.call(case), ref, bnd.bounds)


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
       frozenset({"gae", "lambda_returns"}), 0.3, _gae_lambda_strategy,
       check_lambda_returns_equal_gae_plus_values),
    _P("lambda_one_gives_discounted_returns", check_lambda_one_gives_discounted_returns.__doc__,
       frozenset({"lambda_returns", "discounted_returns"}), 0.3, _lambda_one_strategy,
       check_lambda_one_gives_discounted_returns),
    _P("vtrace_unit_ratio_gives_gae_targets", check_vtrace_unit_ratio_gives_gae_targets.__doc__,
       frozenset({"vtrace", "gae"}), 0.3, _unit_ratio_strategy,
       check_vtrace_unit_ratio_gives_gae_targets),
    _P("cumsum_of_ones_counts_steps", check_cumsum_of_ones_counts_steps.__doc__,
       frozenset({"episodic_cumsum"}), 0.3, _ones_strategy, check_cumsum_of_ones_counts_steps),
    _P("unit_decay_trace_equals_cumsum", check_unit_decay_trace_equals_cumsum.__doc__,
       frozenset({"eligibility_traces", "episodic_cumsum"}), 0.3, _unit_trace_strategy,
       check_unit_decay_trace_equals_cumsum),
    _P("exact_on_dyadic_inputs", check_exact_on_dyadic_inputs.__doc__,
       frozenset({"linear_scan", "episodic_cumsum", "discounted_returns"}), 0.4,
       _dyadic_strategy, check_exact_on_dyadic_inputs),
    _P("combine_exact", check_combine_exact.__doc__, frozenset({"linear_scan"}), 1.0,
       _combine_strategy, check_combine_exact),
]}


def for_estimator(estimator: str):
    """The properties that apply to ``estimator``, in run order."""
    return [p for p in PROPERTIES.values() if estimator in p.estimators]
