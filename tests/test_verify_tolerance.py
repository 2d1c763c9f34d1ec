"""The tolerance model (verify/tolerance.py): it bounds real float32 computations of the
recurrence, it is not vacuous, and each of its terms covers the error it is derived for."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from rlscan.verify import profiles, reference as ref, strategies as S, tolerance
from rlscan.verify.cases import Case, round_to

profiles.load()
BUDGET = profiles.Budget(max_rows=4, max_T=130, chunk_edges=(16, 64, 128))
f32 = np.float32


def scan_f32_sequential(a, b, reverse):
    """x[t] = b[t] + a[t]·x[t∓1] in float32, one step at a time, resets by selection."""
    a, b = a.astype(f32), b.astype(f32)
    x = np.zeros(a.shape[:-1], f32)
    out = np.empty(a.shape, f32)
    for t in (range(a.shape[-1] - 1, -1, -1) if reverse else range(a.shape[-1])):
        x = np.where(a[..., t] == 0, b[..., t], b[..., t] + a[..., t] * x)
        out[..., t] = x
    return out


def scan_f32_tree(a, b, reverse):
    """Hillis–Steele in float32 with the spec's combine."""
    a, b = a.astype(f32), b.astype(f32)
    if reverse:
        a, b = a[..., ::-1], b[..., ::-1]
    A, B = a.copy(), b.copy()
    d = 1
    while d < A.shape[-1]:
        nB = np.where(A[..., d:] == 0, B[..., d:], B[..., d:] + A[..., d:] * B[..., :-d])
        A = np.concatenate([A[..., :d], A[..., d:] * A[..., :-d]], axis=-1)
        B = np.concatenate([B[..., :d], nB], axis=-1)
        d *= 2
    return B[..., ::-1] if reverse else B


def _linear(case):
    x = case.inputs
    return np.asarray(x["a"]), np.asarray(x["b"]), bool(x["reverse"])


@given(S.cases("linear_scan", BUDGET, dtypes=("float32",), plant=False).map(
    lambda c: c.replace(inputs={"init": None})))
def test_bound_covers_a_float32_loop_and_a_float32_tree(case):
    a, b, rev = _linear(case)
    exact = ref.linear_scan(a, b, reverse=rev)
    for scan, model in ((scan_f32_sequential, "sequential"), (scan_f32_tree, "tree")):
        bnd = tolerance.bound(case, tolerance.depth(model, case.T))
        cmp = tolerance.compare(scan(a, b, rev), exact, bnd.bounds["out"], bnd.exempt)
        assert cmp.ratio <= 1.0, (model, cmp)


def test_bound_is_not_vacuous():
    """On long undiscounted sums the float32 loop uses a visible share of its bound, and the
    bound stays a few hundred ulps of the magnitude, not an arbitrary loose constant."""
    rng = np.random.default_rng(0)
    a = np.ones((4, 128))
    b = round_to(rng.uniform(0.1, 1.0, (4, 128)), "float32")
    case = Case("linear_scan", {"a": a, "b": b, "reverse": False})
    bnd = tolerance.bound(case, tolerance.depth("sequential", 128))
    cmp = tolerance.compare(scan_f32_sequential(a, b, False), ref.linear_scan(a, b),
                            bnd.bounds["out"])
    assert 0.01 < cmp.ratio <= 1.0
    assert np.all(bnd.bounds["out"] <= 600 * tolerance.U_FP32 * bnd.magnitude)


def test_depth_models():
    assert tolerance.depth("tree", 1) == 1
    assert tolerance.depth("tree", 64) == 7
    assert tolerance.depth("tree", 65) == 8
    assert tolerance.depth("sequential", 70) == 71
    assert tolerance.depth("chunked", 70, chunk=64) == 64 + 2 * 2 + 2
    assert tolerance.depth("chunked", 10, chunk=64) == 10 + 2 + 2
    with pytest.raises(ValueError):
        tolerance.depth("magic", 10)


def test_a_certainly_clipped_ratio_is_exact():
    ratio = np.array([0.5, 1.0, 3.0, np.inf])
    err = np.full(4, 1e-3)
    clipped, e = tolerance.clip_with_error(ratio, err, 2.0)
    assert list(clipped) == [0.5, 1.0, 2.0, 2.0]
    assert list(e) == [1e-3, 1e-3, 0.0, 0.0]
    _, e = tolerance.clip_with_error(ratio, err, math.inf)   # no clipping: the error stays
    assert e[0] == 1e-3


def test_exp_error_grows_with_the_log_ratio():
    lr = np.array([0.0, 5.0, 40.0])
    case = Case("vtrace", {"rewards": np.zeros(3), "values": np.zeros(3), "log_ratio": lr})
    ratio, err = tolerance.ratio_with_error(case)
    rel = err / ratio
    assert rel[0] < rel[1] < rel[2]
    assert rel[2] >= 40 * tolerance.U_FP32


def test_nan_in_ignored_slots_leaves_the_bound_finite():
    case = Case("gae", {
        "rewards": np.array([1.0, 2.0, 3.0, 4.0]), "values": np.array([0.5, 0.5, 0.5, 0.5]),
        "terminated": np.array([False, True, False, False]),
        "next_values": np.array([1.0, np.nan, 2.0, 3.0]), "gamma": f32(0.9).item(),
        "lmbda": f32(0.8).item()})
    bnd = tolerance.bound(case, 8)
    assert all(np.isfinite(v).all() for v in bnd.bounds.values())


def test_returns_bound_covers_the_rounding_of_v_plus_advantage():
    v = np.full(3, 1e6)
    case = Case("gae", {"rewards": np.zeros(3), "values": v, "next_values": v,
                        "gamma": 1.0, "lmbda": 1.0})
    bnd = tolerance.bound(case, 4)
    assert np.all(bnd.bounds["returns"] >= tolerance.U_FP32 * 1e6)


def test_post_processed_outputs_allow_a_flushed_subnormal():
    """An output's final formula may round to the subnormal range (a CPU) or flush it to zero (a
    GPU): every post-processed output allows at least one flush, whatever the magnitudes
    (V-trace's pg advantage at γ = 6e-23, verify/examples.py)."""
    tiny = tolerance.FLUSH
    steps = np.array([[2.0, 1.0, 0.0, 0.0, 3.0]])
    cases = [Case("vtrace", {"rewards": steps, "values": steps, "bootstrap_values": steps,
                             "log_ratio": np.zeros_like(steps), "gamma": 6.3e-23}),
             Case("gae", {"rewards": steps, "values": steps, "next_values": steps,
                          "gamma": 6.3e-23, "lmbda": 0.9}),
             Case("retrace", {"rewards": steps, "q_taken": steps, "expected_next_q": steps,
                              "log_ratio": np.zeros_like(steps), "gamma": 6.3e-23})]
    for case in cases:
        bnd = tolerance.bound(case, 4)
        for name, b in bnd.bounds.items():
            if (case.estimator, name) != ("gae", "advantages"):     # the raw scan state
                assert np.all(b >= tiny), (case.estimator, name)
    pg = tolerance.bound(cases[0], 4).bounds["pg_advantages"]
    assert np.all(pg >= 4 * tiny)


def test_rows_whose_products_overflow_float32_are_exempt():
    a = np.stack([np.full(200, 2.0), np.full(200, 0.5)])
    case = Case("linear_scan", {"a": a, "b": np.ones((2, 200)), "reverse": False})
    exempt = tolerance.bound(case, 201).exempt
    assert exempt[0].all() and not exempt[1].any()


def test_compare_counts_a_non_finite_output_as_infinitely_wrong():
    cmp = tolerance.compare(np.array([1.0, np.nan]), np.array([1.0, 2.0]), np.full(2, 1e-6))
    assert cmp.ratio == math.inf and cmp.where == (1,)
    cmp = tolerance.compare(np.array([1.0, 5.0]), np.array([1.0, np.nan]), np.full(2, 1e-6))
    assert cmp.ratio == 0.0   # where the reference is not finite there is nothing to compare


@given(st.sampled_from(["float32", "bfloat16", "float16"]),
       st.floats(-1e4, 1e4, allow_nan=False, allow_subnormal=False))
def test_rounded_inputs_are_exact_and_never_subnormal(dtype, x):
    y = round_to(np.array([x]), dtype)
    assert round_to(y, dtype)[0] == y[0]
    import torch
    tiny = torch.finfo({"float32": torch.float32, "bfloat16": torch.bfloat16,
                        "float16": torch.float16}[dtype]).tiny
    assert y[0] == 0 or abs(y[0]) >= tiny
