"""Shared pieces of the property checks: the failure type, comparisons (within the
tolerance model's bound, or bit for bit), and the row views and fresh values that
perturbations use."""
import numpy as np

from . import tolerance
from .cases import COEF, ROW_FLAG, STEP_FLAG, Case, round_to


class PropertyFailure(AssertionError):
    """An implementation broke a property; the message says what differed and where."""


def fail(what: str, name: str, cmp: tolerance.Comparison, bound_label="bound") -> None:
    raise PropertyFailure(
        f"{what}: output {name!r} at index {cmp.where} is {cmp.out!r}, expected {cmp.ref!r} "
        f"(|diff| = {abs(cmp.out - cmp.ref):.3g}, {bound_label} {cmp.bound:.3g}, "
        f"error/bound = {cmp.ratio:.3g})")


def within(what, outs, expected, bounds, skip=None) -> float:
    """Every output within its bound of ``expected``; returns the worst ratio."""
    worst = 0.0
    for name, exp in expected.items():
        cmp = tolerance.compare(outs[name], exp, bounds[name], skip)
        if not cmp.ratio <= 1.0:
            fail(what, name, cmp)
        worst = max(worst, cmp.ratio)
    return worst


def same_bits(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise: identical value (NaN equals NaN, and the sign of zero counts)."""
    return ((x == y) & (np.signbit(x) == np.signbit(y))) | (np.isnan(x) & np.isnan(y))


def bitwise(what, outs, expected, select=None) -> float:
    for name, exp in expected.items():
        got = outs[name] if select is None else outs[name][select]
        exp = exp if select is None else exp[select]
        same = same_bits(got, exp)
        if not same.all():
            i = tuple(int(k) for k in np.argwhere(~same)[0])
            raise PropertyFailure(f"{what}: output {name!r} differs at {i} "
                                  f"({got[i]!r} vs {exp[i]!r})")
    return 0.0


def reference_and_bound(target, case):
    ref = case.reference()
    bnd = tolerance.bound(case, target.depth(case), ref)
    return ref, bnd


def row_view(case: Case, name: str):
    """[N, T] (per-step), [N, 1] (per-row γ/λ) or [N] (per-row) view of an input, or None."""
    v = case.inputs[name]
    if not isinstance(v, np.ndarray):
        return None
    return v.reshape(case.rows, -1) if v.ndim == len(case.shape) else v.reshape(case.rows)


def fresh(rng, name, like, dtype):
    """Finite replacement values for ``name`` (what a perturbation writes)."""
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


def respect_last_value(case: Case) -> None:
    """With ``last_value`` no interior step may be truncated without being terminated."""
    if "last_value" in case.inputs and "truncated" in case.inputs:
        keep = np.asarray(case.inputs.get("terminated", np.zeros(case.shape, bool))) != 0
        keep = keep.copy()
        keep[..., -1] = True
        case.inputs["truncated"] = (np.asarray(case.inputs["truncated"]) != 0) & keep
