"""Exact arithmetic: the combine in rationals (``fractions``), and inputs whose every partial
result is exactly representable in float32, on which any association must be bit-exact."""
import math
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

from . import checks as C
from . import strategies as S
from .cases import Case
from .identities import SUCCESSOR_KEYS


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


def combine_strategy(est, budget, target):
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
            raise C.PropertyFailure(f"{label} combine is not associative on {x}, {y}, {z}")
        if op(IDENTITY, x) != x or op(x, IDENTITY) != x:
            raise C.PropertyFailure(f"{label} combine: (1, 0) is not an identity for {x}")
        acc = IDENTITY
        for e in els:
            acc = op(acc, e)
        if acc != closed_form(els):
            raise C.PropertyFailure(f"{label} combine folded over {els} gives {acc}, the closed "
                                  f"form {closed_form(els)}: its operands are in the wrong roles")
    return 0.0


def _exponent_window(T: int) -> int:
    """Largest w such that every partial sum of T+1 terms (|b| ≤ 8, Π a = ±2^e with
    |e| ≤ 2w) is an integer multiple of 2^-2w below 2^24: exact in float32, any order."""
    return max(0, int((24 - math.log2(16 * (T + 1))) // 4))


@st.composite
def dyadic_strategy(draw, est, budget, target):
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
            if k in ("rewards", "inputs") or k in SUCCESSOR_KEYS:
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
    return C.bitwise("not exact on exactly representable inputs", {"out": out},
                     {"out": np.where(fin, expected, out)})
