"""Tests of the float64 sequential reference (verify/reference.py) against ALGORITHMS.md.

Worked examples are §4 (T = 5, termination at t=1, truncation at t=3, window end at t=4);
identities are §7.  Everything is compared to 1e-12 absolute.
"""
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.signal import lfilter

try:
    from rlscan.verify import reference as ref
except ImportError:  # not installed: running from a checkout
    from verify import reference as ref

ATOL = 1e-12
NAN = float("nan")


def close(actual, expected):
    assert_allclose(actual, expected, rtol=0, atol=ATOL)


# ---------------------------------------------------------------------------- §4 example row
R = np.array([1.0, -0.5, 2.0, 0.5, 1.0])
V = np.array([0.5, 1.0, 0.8, 1.2, -0.4])
TERM = np.array([0, 1, 0, 0, 0])
TRUNC = np.array([0, 0, 0, 1, 0])
BV = np.array([0.0, 0.0, 0.0, 2.0, 0.6])          # E2
NV = np.array([1.0, 5.0, 1.2, 2.0, 0.6])          # E1, 5.0 at the ignored terminated slot
RATIO = np.array([0.5, 2.0, 1.5, 0.8, 1.1])
G, LAM = 0.9, 0.8

# Successor-value encodings: for estimators taking `values` positionally (GAE, V-trace) ...
ENC_V = {"E1": dict(next_values=NV), "E2": dict(bootstrap_values=BV)}
# ... and for those taking it as a keyword (discounted returns, λ-returns).
ENC = {"E1": dict(next_values=NV), "E2": dict(values=V, bootstrap_values=BV)}
enc_ids = pytest.mark.parametrize("enc", ["E1", "E2"])


def both_flags_at_1():
    """truncated[1] = 1 on the terminated step, with bootstrap_values[1] = 3.0 (§4.1)."""
    tr = TRUNC.copy()
    tr[1] = 1
    bv = BV.copy()
    bv[1] = 3.0
    return tr, bv


# ---------------------------------------------------------------------------- GAE §4.1
@enc_ids
def test_gae_worked_example_advantages_targets_and_coefficients(enc):
    adv, ret = ref.gae(R, V, TERM, TRUNC, gamma=G, lmbda=LAM, **ENC_V[enc])
    close(adv, [0.32, -1.5, 3.072, 1.1, 1.94])
    close(ret, [0.82, -0.5, 3.872, 2.3, 1.54])
    a, b, reverse = ref.coefficients("gae", rewards=R, values=V, terminated=TERM,
                                     truncated=TRUNC, gamma=G, lmbda=LAM, **ENC_V[enc])
    assert reverse is True
    close(a, [0.72, 0, 0.72, 0, 0])
    close(b, [1.4, -1.5, 2.28, 1.1, 1.94])


@enc_ids
def test_gae_truncated_flag_on_terminated_step_leaves_outputs_unchanged(enc):
    tr, bv = both_flags_at_1()
    src = dict(next_values=NV) if enc == "E1" else dict(bootstrap_values=bv)
    adv, ret = ref.gae(R, V, TERM, tr, gamma=G, lmbda=LAM, **src)
    close(adv, [0.32, -1.5, 3.072, 1.1, 1.94])
    close(ret, [0.82, -0.5, 3.872, 2.3, 1.54])


# ---------------------------------------------------------------------------- λ-returns §4.1
@enc_ids
def test_lambda_returns_worked_example_equals_gae_targets(enc):
    out = ref.lambda_returns(R, TERM, TRUNC, gamma=G, lmbda=LAM, **ENC[enc])
    close(out, [0.82, -0.5, 3.872, 2.3, 1.54])
    a, b, _ = ref.coefficients("lambda_returns", rewards=R, terminated=TERM, truncated=TRUNC,
                               gamma=G, lmbda=LAM, **ENC[enc])
    close(a, [0.72, 0, 0.72, 0, 0])
    close(b, [1.18, -0.5, 2.216, 2.3, 1.54])


# ---------------------------------------------------------------------------- V-trace §4.2
@enc_ids
def test_vtrace_worked_example_lambda_1(enc):
    kw = dict(gamma=G, rho_bar=1.2, c_bar=0.95, log_ratio=np.log(RATIO), **ENC_V[enc])
    vs, pg = ref.vtrace(R, V, TERM, TRUNC, **kw)
    close(vs, [0.39, -0.8, 4.2884, 2.08, 1.734])
    close(pg, [-0.11, -1.8, 3.6864, 0.88, 2.134])
    a, b, reverse = ref.coefficients("vtrace", rewards=R, values=V, terminated=TERM,
                                     truncated=TRUNC, **kw)
    assert reverse is True
    close(a, [0.45, 0, 0.855, 0, 0])
    close(b, [0.7, -1.8, 2.736, 0.88, 2.134])
    # λ = 1: both pg bootstraps coincide.
    _, pg_mix = ref.vtrace(R, V, TERM, TRUNC, pg_bootstrap="lambda_mix", **kw)
    close(pg_mix, pg)


@enc_ids
@pytest.mark.parametrize("mode, pg_expected", [
    ("vs", [-0.11, -1.8, 3.6864, 0.88, 2.134]),
    ("lambda_mix", [-0.029, -1.8, 3.59136, 0.88, 2.134]),
])
def test_vtrace_worked_example_lambda_09_both_pg_bootstraps(enc, mode, pg_expected):
    kw = dict(gamma=G, lmbda=0.9, rho_bar=1.2, c_bar=0.95, ratio=RATIO, **ENC_V[enc])
    vs, pg = ref.vtrace(R, V, TERM, TRUNC, pg_bootstrap=mode, **kw)
    close(vs, [0.471, -0.8, 4.21316, 2.08, 1.734])
    close(pg, pg_expected)
    a, _, _ = ref.coefficients("vtrace", rewards=R, values=V, terminated=TERM,
                               truncated=TRUNC, **kw)
    close(a, [0.405, 0, 0.7695, 0, 0])


# ---------------------------------------------------------------------------- §4.3
@enc_ids
def test_discounted_returns_worked_example_with_vnext(enc):
    close(ref.discounted_returns(R, TERM, TRUNC, gamma=G, **ENC[enc]),
          [0.55, -0.5, 4.07, 2.3, 1.54])
    a, b, _ = ref.coefficients("discounted_returns", rewards=R, terminated=TERM,
                               truncated=TRUNC, gamma=G, **ENC[enc])
    close(a, [0.9, 0, 0.9, 0, 0])
    close(b, [1.0, -0.5, 2.0, 2.3, 1.54])


def test_discounted_returns_without_source_is_reward_to_go():
    close(ref.discounted_returns(R, TERM, TRUNC, gamma=G), [0.55, -0.5, 2.45, 0.5, 1.0])


def test_discounted_returns_both_flags_terminated_wins():
    tr, bv = both_flags_at_1()
    out = ref.discounted_returns(R, TERM, tr, values=V, bootstrap_values=bv, gamma=G)
    close(out, [0.55, -0.5, 4.07, 2.3, 1.54])  # not rl-triton's [2.98, 2.2, ...]


@pytest.mark.parametrize("name", ["discounted_returns", "lambda_returns", "vtrace", "retrace"])
def test_both_flags_on_one_step_behave_as_terminated(name):
    tr, bv = both_flags_at_1()
    call = {
        "discounted_returns": lambda tr, bv: ref.discounted_returns(
            R, TERM, tr, values=V, bootstrap_values=bv, gamma=G),
        "lambda_returns": lambda tr, bv: ref.lambda_returns(
            R, TERM, tr, values=V, bootstrap_values=bv, gamma=G, lmbda=LAM),
        "vtrace": lambda tr, bv: np.stack(ref.vtrace(
            R, V, TERM, tr, bootstrap_values=bv, ratio=RATIO, gamma=G, lmbda=0.9)),
        "retrace": lambda tr, bv: ref.retrace(
            R, V, [1.1, 7.0, 1.0, 2.0, 0.6], TERM, tr, ratio=RATIO, gamma=G, lmbda=0.9),
    }[name]
    close(call(tr, bv), call(TRUNC, BV))


QT = V  # q_taken = [0.5, 1.0, 0.8, 1.2, -0.4]
EQ = np.array([1.1, 7.0, 1.0, 2.0, 0.6])  # 7.0 at the terminated step is ignored


def test_retrace_worked_example():
    kw = dict(ratio=RATIO, gamma=G, lmbda=0.9, c_bar=1.0)
    close(ref.retrace(R, QT, EQ, TERM, TRUNC, **kw), [0.775, -0.5, 3.6128, 2.3, 1.54])
    close(ref.retrace(R, QT, EQ, TERM, TRUNC, log_ratio=np.log(RATIO), gamma=G, lmbda=0.9),
          [0.775, -0.5, 3.6128, 2.3, 1.54])
    a, b, reverse = ref.coefficients("retrace", rewards=R, q_taken=QT, expected_next_q=EQ,
                                     terminated=TERM, truncated=TRUNC, **kw)
    assert reverse is True
    close(a, [0.81, 0, 0.648, 0, 0])
    close(b, [1.49, -1.5, 2.1, 1.1, 1.94])


def test_retrace_uses_next_step_trace_so_unread_ratios_are_ignored():
    # a[t] = γ·c[t+1] at non-cut t ∈ {0, 2}: only ratio[1] and ratio[3] are ever read.
    rat = RATIO.copy()
    rat[[0, 2, 4]] = NAN
    out = ref.retrace(R, QT, EQ, TERM, TRUNC, ratio=rat, gamma=G, lmbda=0.9)
    close(out, [0.775, -0.5, 3.6128, 2.3, 1.54])
    rat = RATIO.copy()
    rat[1] = NAN  # a used ratio: NaN propagates, but only within its episode
    out = ref.retrace(R, QT, EQ, TERM, TRUNC, ratio=rat, gamma=G, lmbda=0.9)
    assert np.isnan(out[0])
    close(out[1:], [-0.5, 3.6128, 2.3, 1.54])


Z = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
DONE = np.array([0, 1, 0, 1, 0])


@pytest.mark.parametrize("seed, done_prev, expected", [
    (None, None, [1, 2.72, 3, 6.16, 5]),
    (10.0, None, [8.2, 7.904, 3, 6.16, 5]),
    (10.0, 1, [1, 2.72, 3, 6.16, 5]),
    (10.0, 0, [8.2, 7.904, 3, 6.16, 5]),
])
def test_eligibility_traces_worked_example_seed_and_done_prev(seed, done_prev, expected):
    kw = dict(gamma=G, lmbda=LAM, seed=seed, done_prev=done_prev)
    close(ref.eligibility_traces(Z, DONE, **kw), expected)
    a, b, reverse = ref.coefficients("eligibility_traces", inputs=Z, dones=DONE, **kw)
    assert reverse is False
    close(a, [0 if done_prev else 0.72, 0.72, 0, 0.72, 0])
    close(b, Z)


def test_prefix_sum_ends_at_worked_example():
    close(ref.episodic_cumsum(R, DONE), [1, 0.5, 2, 2.5, 1])
    close(ref.episodic_cumsum(np.ones(5), DONE), [1, 2, 1, 2, 1])
    a, _, reverse = ref.coefficients("episodic_cumsum", inputs=R, dones=DONE)
    assert reverse is False
    close(a, [1, 1, 0, 1, 0])


def test_prefix_sum_starts_at_worked_example_ignores_done_prev_and_seed_at_start():
    start = np.array([1, 0, 1, 0, 1])
    close(ref.episodic_cumsum(np.ones(5), start, boundary="starts_at"), [1, 2, 1, 2, 1])
    out = ref.episodic_cumsum(np.ones(5), start, boundary="starts_at", seed=7.0, done_prev=0)
    close(out, [1, 2, 1, 2, 1])  # start[0] discards the seed
    a, _, _ = ref.coefficients("episodic_cumsum", inputs=np.ones(5), dones=start,
                               boundary="starts_at")
    close(a, [0, 1, 0, 1, 0])
    out = ref.episodic_cumsum(np.ones(5), 1 - start, boundary="starts_at", seed=7.0)
    close(out, [8, 1, 2, 1, 2])


def test_prefix_sum_seed_flows_in_unless_done_prev():
    close(ref.episodic_cumsum(np.ones(5), DONE, seed=3.0), [4, 5, 1, 2, 1])
    close(ref.episodic_cumsum(np.ones(5), DONE, seed=3.0, done_prev=True), [1, 2, 1, 2, 1])


# ---------------------------------------------------------------------------- NaN in ignored slots
def test_nan_next_values_at_terminated_step_never_reaches_outputs():
    nv = NV.copy()
    nv[1] = NAN
    kw = dict(next_values=nv, gamma=G)
    close(ref.gae(R, V, TERM, TRUNC, lmbda=LAM, **kw)[1], [0.82, -0.5, 3.872, 2.3, 1.54])
    close(ref.lambda_returns(R, TERM, TRUNC, lmbda=LAM, **kw), [0.82, -0.5, 3.872, 2.3, 1.54])
    close(ref.discounted_returns(R, TERM, TRUNC, **kw), [0.55, -0.5, 4.07, 2.3, 1.54])
    vs, pg = ref.vtrace(R, V, TERM, TRUNC, ratio=RATIO, rho_bar=1.2, c_bar=0.95, **kw)
    close(vs, [0.39, -0.8, 4.2884, 2.08, 1.734])
    close(pg, [-0.11, -1.8, 3.6864, 0.88, 2.134])


def test_nan_bootstrap_values_at_non_boot_steps_never_reach_outputs():
    bv = BV.copy()
    bv[:3] = NAN  # t = 0, 1, 2 are not truncated and not the window end
    kw = dict(bootstrap_values=bv, gamma=G)
    close(ref.gae(R, V, TERM, TRUNC, lmbda=LAM, **kw)[0], [0.32, -1.5, 3.072, 1.1, 1.94])
    close(ref.lambda_returns(R, TERM, TRUNC, values=V, lmbda=LAM, **kw),
          [0.82, -0.5, 3.872, 2.3, 1.54])
    close(ref.discounted_returns(R, TERM, TRUNC, values=V, **kw), [0.55, -0.5, 4.07, 2.3, 1.54])
    vs, pg = ref.vtrace(R, V, TERM, TRUNC, ratio=RATIO, rho_bar=1.2, c_bar=0.95, **kw)
    close(vs, [0.39, -0.8, 4.2884, 2.08, 1.734])
    close(pg, [-0.11, -1.8, 3.6864, 0.88, 2.134])


def test_nan_values_across_a_termination_never_reach_returns():
    # Under E2, values[2] is vnext[1] (terminated: ignored); values[0] is never read by returns.
    v = V.copy()
    v[[0, 2]] = NAN
    kw = dict(values=v, bootstrap_values=BV, gamma=G)
    close(ref.lambda_returns(R, TERM, TRUNC, lmbda=LAM, **kw), [0.82, -0.5, 3.872, 2.3, 1.54])
    close(ref.discounted_returns(R, TERM, TRUNC, **kw), [0.55, -0.5, 4.07, 2.3, 1.54])
    # Discounted returns read values nowhere: bootstrap slots only.
    close(ref.discounted_returns(R, TERM, TRUNC, values=np.full(5, NAN), bootstrap_values=BV,
                                 gamma=G), [0.55, -0.5, 4.07, 2.3, 1.54])


def test_reset_discards_non_finite_carry_from_the_next_episode():
    r = R.copy()
    r[2] = np.inf  # used in episode 2 only; 0·inf must not leak into episode 1 across the cut
    out = ref.discounted_returns(r, TERM, TRUNC, gamma=G)
    close(out[:2], [0.55, -0.5])
    assert np.isinf(out[2])
    e = ref.eligibility_traces(Z, DONE, gamma=G, lmbda=LAM, seed=NAN, done_prev=1)
    close(e, [1, 2.72, 3, 6.16, 5])
    x = ref.linear_scan([0.5, 0.0, 2.0], [1.0, 2.0, np.inf], reverse=True)
    assert x[0] == 2.0 and x[1] == 2.0 and np.isinf(x[2])


def test_infinite_ratio_is_harmless_with_finite_thresholds():
    rat = RATIO.copy()
    rat[2] = np.inf
    vs, pg = ref.vtrace(R, V, TERM, TRUNC, log_ratio=np.log(rat), next_values=NV, gamma=G,
                        rho_bar=1.2, c_bar=0.95)
    close(vs, [0.39, -0.8, 4.2884, 2.08, 1.734])  # ratio[2] = 1.5 was already clipped
    close(pg, [-0.11, -1.8, 3.6864, 0.88, 2.134])


# ---------------------------------------------------------------------------- §7 identities
def random_row(rng, shape, p=0.2):
    r, v, bv = rng.normal(size=shape), rng.normal(size=shape), rng.normal(size=shape)
    term, trunc = rng.random(shape) < p, rng.random(shape) < p
    return r, v, term, trunc, bv


def test_identity_lambda_returns_equal_gae_plus_values_under_e2():
    rng = np.random.default_rng(0)
    r, v, term, trunc, bv = random_row(rng, (4, 37))
    for lam in (0.0, 0.5, 0.95, 1.0):
        _, target = ref.gae(r, v, term, trunc, bootstrap_values=bv, gamma=0.97, lmbda=lam)
        close(ref.lambda_returns(r, term, trunc, values=v, bootstrap_values=bv, gamma=0.97,
                                 lmbda=lam), target)


def test_identity_lambda_1_lambda_returns_equal_discounted_returns():
    rng = np.random.default_rng(1)
    r, v, term, trunc, bv = random_row(rng, (4, 37))
    nv = rng.normal(size=r.shape)
    close(ref.lambda_returns(r, term, trunc, next_values=nv, gamma=0.97, lmbda=1.0),
          ref.discounted_returns(r, term, trunc, next_values=nv, gamma=0.97))


@pytest.mark.parametrize("mode", ["vs", "lambda_mix"])
def test_identity_on_policy_vtrace_equals_gae_targets(mode):
    rng = np.random.default_rng(2)
    r, v, term, trunc, bv = random_row(rng, (4, 37))
    _, target = ref.gae(r, v, term, trunc, bootstrap_values=bv, gamma=0.97, lmbda=0.8)
    vs, _ = ref.vtrace(r, v, term, trunc, ratio=np.ones_like(r), bootstrap_values=bv,
                       gamma=0.97, lmbda=0.8, rho_bar=1.0, c_bar=np.inf, pg_bootstrap=mode)
    close(vs, target)
    vs, _ = ref.vtrace(r, v, term, trunc, log_ratio=np.zeros_like(r), bootstrap_values=bv,
                       gamma=0.97, lmbda=0.8, rho_bar=2.0, c_bar=1.0, pg_bootstrap=mode)
    close(vs, target)


def test_identity_prefix_sum_of_ones_counts_steps_within_episode():
    rng = np.random.default_rng(3)
    done = rng.random((3, 50)) < 0.15
    count = np.zeros(done.shape)
    for i in range(3):
        n = 0
        for t in range(50):
            n = n + 1
            count[i, t] = n
            n = 0 if done[i, t] else n
    close(ref.episodic_cumsum(np.ones(done.shape), done), count)
    starts = np.zeros_like(done)
    starts[:, 1:] = done[:, :-1]
    close(ref.episodic_cumsum(np.ones(done.shape), starts, boundary="starts_at"), count)


def test_identity_undecayed_trace_without_dones_equals_prefix_sum():
    rng = np.random.default_rng(4)
    z = rng.normal(size=(3, 41))
    e = ref.eligibility_traces(z, None, gamma=1.0, lmbda=1.0, seed=[1.0, 2.0, 3.0])
    close(e, ref.episodic_cumsum(z, None, seed=[1.0, 2.0, 3.0]))
    close(e, np.cumsum(z, axis=-1) + np.array([[1.0], [2.0], [3.0]]))


# ---------------------------------------------------------------------------- the scan itself
def closed_form(a, b, init, reverse):
    """§1.6, written with explicit products (an empty product is 1)."""
    T = len(b)
    x = np.zeros(T)
    for t in range(T):
        if reverse:
            x[t] = sum(np.prod(a[t:k]) * b[k] for k in range(t, T)) + np.prod(a[t:]) * init
        else:
            x[t] = sum(np.prod(a[k + 1:t + 1]) * b[k] for k in range(t + 1)) \
                + np.prod(a[:t + 1]) * init
    return x


@pytest.mark.parametrize("reverse", [False, True])
def test_linear_scan_matches_closed_form_with_non_constant_a_and_init(reverse):
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-1.1, 1.1, size=(3, 23)), rng.normal(size=(3, 23))
    init = rng.normal(size=3)
    x = ref.linear_scan(a, b, reverse=reverse, init=init)
    for i in range(3):
        close(x[i], closed_form(a[i], b[i], init[i], reverse))
    zero = ref.linear_scan(a, b, reverse=reverse)
    for i in range(3):
        close(zero[i], closed_form(a[i], b[i], 0.0, reverse))


@pytest.mark.parametrize("reverse", [False, True])
def test_magnitude_is_the_closed_form_on_absolute_values_and_bounds_x(reverse):
    rng = np.random.default_rng(6)
    a, b, init = rng.uniform(-1, 1, size=17), rng.normal(size=17), -1.5
    m = ref.magnitude(a, b, reverse=reverse, init=init)
    close(m, closed_form(np.abs(a), np.abs(b), 1.5, reverse))
    assert np.all(m >= np.abs(ref.linear_scan(a, b, reverse=reverse, init=init)) - ATOL)


def test_discounted_returns_without_dones_match_lfilter_on_reversed_sequence():
    rng = np.random.default_rng(7)
    r = rng.normal(size=(2, 200))
    expected = lfilter([1.0], [1.0, -0.99], r[:, ::-1], axis=-1)[:, ::-1]
    close(ref.discounted_returns(r, gamma=0.99), expected)


# ---------------------------------------------------------------------------- shapes and edges
def all_estimators(rng, shape):
    """(name, call) pairs over random inputs of `shape`; calls return a tuple of outputs."""
    r, v, term, trunc, bv = random_row(rng, shape)
    nv, lr = rng.normal(size=shape), rng.normal(scale=0.5, size=shape)
    batch = shape[:-1]
    g = rng.uniform(0.8, 1.0, size=batch + (1,))  # per-row gamma
    return [
        ("discounted_returns", dict(rewards=r, terminated=term, truncated=trunc,
                                    next_values=nv, gamma=g)),
        ("gae", dict(rewards=r, values=v, terminated=term, truncated=trunc,
                     bootstrap_values=bv, gamma=0.97, lmbda=0.9)),
        ("lambda_returns", dict(rewards=r, terminated=term, truncated=trunc, values=v,
                                bootstrap_values=bv, gamma=g, lmbda=0.9)),
        ("vtrace", dict(rewards=r, values=v, terminated=term, truncated=trunc, log_ratio=lr,
                        next_values=nv, gamma=0.97, lmbda=0.9, pg_bootstrap="lambda_mix")),
        ("retrace", dict(rewards=r, q_taken=v, expected_next_q=nv, terminated=term,
                         truncated=trunc, log_ratio=lr, gamma=g, lmbda=0.9)),
        ("eligibility_traces", dict(inputs=r, dones=term, gamma=g, lmbda=0.9,
                                    seed=rng.normal(size=batch),
                                    done_prev=rng.random(batch) < 0.5)),
        ("episodic_cumsum", dict(inputs=r, dones=term, seed=rng.normal(size=batch),
                                 done_prev=rng.random(batch) < 0.5)),
    ]


def call(name, kw):
    out = getattr(ref, name)(**kw)
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("i", range(7))
def test_batch_axes_equal_row_by_row(i):
    name, kw = all_estimators(np.random.default_rng(8 + i), (2, 3, 13))[i]
    full = call(name, kw)
    for j in range(2):
        for k in range(3):
            row_kw = {key: val[j, k] if isinstance(val, np.ndarray) else val
                      for key, val in kw.items()}
            for f, rw in zip(full, call(name, row_kw)):
                assert f.shape == (2, 3, 13)
                close(f[j, k], rw)


@pytest.mark.parametrize("i", range(7))
def test_empty_time_axis_gives_empty_outputs(i):
    name, kw = all_estimators(np.random.default_rng(0), (2, 3, 0))[i]
    for out in call(name, kw):
        assert out.shape == (2, 3, 0) and out.dtype == np.float64


@pytest.mark.parametrize("term, trunc", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_single_step_uses_only_last_column_rules(term, trunc):
    r, v, nv = np.array([1.0]), np.array([0.5]), np.array([2.0])
    kw = dict(next_values=nv, gamma=G)
    succ = 0.0 if term else G * 2.0
    close(ref.discounted_returns(r, [term], [trunc], **kw), r + succ)
    close(ref.lambda_returns(r, [term], [trunc], lmbda=LAM, **kw), r + succ)
    adv, ret = ref.gae(r, v, [term], [trunc], lmbda=LAM, **kw)
    close(adv, r + succ - v)
    close(ret, r + succ)
    vs, pg = ref.vtrace(r, v, [term], [trunc], ratio=[3.0], rho_bar=1.5, **kw)
    close(vs, v + 1.5 * (r + succ - v))
    close(pg, 1.5 * (r + succ - v))
    close(ref.retrace(r, v, nv, [term], [trunc], ratio=[0.2], gamma=G), r + succ)
    close(ref.discounted_returns(r, [term], [trunc], last_value=2.0, gamma=G) if not trunc
          else ref.discounted_returns(r, [term], [trunc], bootstrap_values=nv, gamma=G),
          r + succ)
    close(ref.eligibility_traces(r, [1], gamma=G, lmbda=LAM, seed=2.0), [1.0 + 0.72 * 2.0])


def test_per_step_gamma_and_lambda_enter_at_their_own_index():
    gam = np.array([0.5, 0.9, 0.8, 0.7, 0.6])
    # Discounted returns: G[t] = r[t] + γ[t]·G[t+1] inside an episode, G[T-1] = r + γ[T-1]·vnext.
    out = ref.discounted_returns(R, TERM, TRUNC, next_values=NV, gamma=gam)
    g4 = 1.0 + 0.6 * 0.6
    g3 = 0.5 + 0.7 * 2.0
    g2 = 2.0 + 0.8 * g3
    g1 = -0.5
    g0 = 1.0 + 0.5 * g1
    close(out, [g0, g1, g2, g3, g4])
    # GAE with per-step λ: a[t] = γ[t]·λ[t].
    lam = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    a, _, _ = ref.coefficients("gae", rewards=R, values=V, terminated=TERM, truncated=TRUNC,
                               next_values=NV, gamma=gam, lmbda=lam)
    close(a, [0.05, 0, 0.24, 0, 0])
    close(ref.discounted_returns(R, gamma=gam), ref.discounted_returns(R[None], gamma=gam[None])[0])


def test_scalar_gamma_equals_broadcast_gamma_array():
    rng = np.random.default_rng(9)
    r, v, term, trunc, bv = random_row(rng, (3, 11))
    kw = dict(bootstrap_values=bv, lmbda=0.9)
    close(ref.gae(r, v, term, trunc, gamma=0.97, **kw)[0],
          ref.gae(r, v, term, trunc, gamma=np.full((3, 1), 0.97), **kw)[0])
    close(ref.gae(r, v, term, trunc, gamma=0.97, **kw)[0],
          ref.gae(r, v, term, trunc, gamma=np.full((3, 11), 0.97), **kw)[0])


# ---------------------------------------------------------------------------- successor values
def test_resolve_vnext_e1_e2_and_no_source():
    assert ref.resolve_vnext(R.shape, TERM, TRUNC) is None
    close(ref.resolve_vnext(R.shape, TERM, TRUNC, next_values=NV), NV)
    vnext = ref.resolve_vnext(R.shape, TERM, TRUNC, values=V, bootstrap_values=BV)
    close(vnext[[0, 2, 3, 4]], [1.0, 1.2, 2.0, 0.6])  # vnext[1] = V[2] = 0.8, ignored
    close(ref.resolve_vnext(R.shape, TERM, None, values=V), [1.0, 0.8, 1.2, -0.4, 0.0])


def test_last_value_is_shorthand_for_bootstrap_at_window_end():
    v = np.array([[0.5, 1.0, 0.8], [0.1, 0.2, 0.3]])
    term, trunc = [[0, 1, 0], [0, 0, 0]], [[0, 1, 0], [0, 0, 1]]  # interior trunc is terminated
    got = ref.resolve_vnext(v.shape, term, trunc, values=v, last_value=[7.0, 8.0])
    close(got, [[1.0, 0.0, 7.0], [0.2, 0.3, 8.0]])  # [0, 1]: bootstrap slot (ignored: terminated)
    adv, _ = ref.gae(v, v, term, trunc, last_value=[7.0, 8.0], gamma=G)
    adv2, _ = ref.gae(v, v, term, trunc, bootstrap_values=[[0, 0, 7.0], [0, 0, 8.0]], gamma=G)
    close(adv, adv2)
    close(ref.discounted_returns([1.0, 2.0], last_value=3.0, gamma=0.5), [2.75, 3.5])


def test_last_value_with_interior_truncation_raises():
    with pytest.raises(ValueError, match="last_value"):
        ref.gae(R, V, TERM, TRUNC, last_value=0.6)
    with pytest.raises(ValueError, match="last_value"):
        ref.discounted_returns(R, TERM, TRUNC, last_value=0.6)


@pytest.mark.parametrize("src", [dict(next_values=NV, bootstrap_values=BV),
                                 dict(next_values=NV, last_value=0.6),
                                 dict(bootstrap_values=BV, last_value=0.6)])
def test_contradictory_successor_sources_raise(src):
    with pytest.raises(ValueError):
        ref.gae(R, V, TERM, None, **src)
    with pytest.raises(ValueError):
        ref.resolve_vnext(R.shape, TERM, None, values=V, **src)


def test_invalid_arguments_raise_value_error_naming_them():
    with pytest.raises(ValueError, match="values"):
        ref.gae(R, V[:4], TERM)
    with pytest.raises(ValueError, match="terminated"):
        ref.discounted_returns(R, TERM[:4])
    with pytest.raises(ValueError, match="bootstrap_values"):
        ref.gae(R, V, bootstrap_values=BV[None])
    with pytest.raises(ValueError, match="gamma"):
        ref.discounted_returns(R, gamma=[0.9, 0.9])
    with pytest.raises(ValueError, match="next_values or values"):
        ref.lambda_returns(R, TERM, TRUNC, bootstrap_values=BV)
    with pytest.raises(ValueError, match="log_ratio"):
        ref.vtrace(R, V, ratio=RATIO, log_ratio=np.log(RATIO))
    with pytest.raises(ValueError, match="ratio"):
        ref.retrace(R, V, EQ)
    with pytest.raises(ValueError, match="pg_bootstrap"):
        ref.vtrace(R, V, ratio=RATIO, pg_bootstrap="v")
    with pytest.raises(ValueError, match="boundary"):
        ref.episodic_cumsum(R, DONE, boundary="middle")
    with pytest.raises(ValueError, match="seed"):
        ref.eligibility_traces(np.zeros((2, 3)), None, gamma=1, lmbda=1, seed=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="estimator"):
        ref.coefficients("td0", rewards=R)


def test_nonzero_flags_of_any_dtype_are_true_and_torch_inputs_are_accepted():
    out = ref.gae(R, V, TERM * 3.5, TRUNC.astype(bool), next_values=NV, gamma=G, lmbda=LAM)[0]
    close(out, [0.32, -1.5, 3.072, 1.1, 1.94])
    torch = pytest.importorskip("torch")
    t = lambda x, dt=torch.float64: torch.tensor(x, dtype=dt)  # noqa: E731
    adv, _ = ref.gae(t(R), t(V), t(TERM, torch.bool), t(TRUNC, torch.int64),
                     next_values=t(NV), gamma=G, lmbda=LAM)
    close(adv, [0.32, -1.5, 3.072, 1.1, 1.94])
    g = ref.discounted_returns(t([1.0, 2.0], torch.bfloat16), gamma=0.5)
    assert g.dtype == np.float64
    close(g, [2.0, 2.0])
    assert math.isclose(float(ref.discounted_returns(t([1.0]), gamma=0.5)[0]), 1.0)
