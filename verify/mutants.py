"""Implementations with one planted bug each, for showing that the verifier catches them:

    rlscan-verify --impl rlscan.verify.mutants:retrace_c_at_t --profile ci     # exits 1

Each takes rlscan's signature (torch tensors, ``time_dim``) and returns what rlscan returns. Each
is the float64 reference with one thing changed, so any failure is the planted bug's:

* ``eligibility_traces_lambda_dropped``, ``vtrace_lambda_dropped``: λ dropped from the trace
  (a = γ, resp. c = min(c̄, ratio));
* ``retrace_c_at_t``: Retrace's trace uses c[t] instead of c[t+1] (ALGORITHMS.md §6.15);
* ``linear_scan_swapped_combine``, ``discounted_returns_swapped_combine``: a tree scan whose
  combine has its operands swapped, L∘R instead of R∘L (§2.1);
* ``gae_truncation_as_termination``, ``discounted_returns_truncation_as_termination``: no
  bootstrap at truncations;
* ``gae_bootstrap_added``, ``vtrace_bootstrap_added``: V(s'_t) = values[t+1]·(1−truncated) +
  bootstrap_values[t], an addition where the spec selects (rl-triton, §6.3).
"""
import numpy as np

from . import reference as ref
from .adapters import with_rlscan_signature as mutant


def _masks(kw):
    shape = np.shape(kw["rewards"])
    term = kw.get("terminated")
    term = np.zeros(shape, bool) if term is None else term
    trunc = kw.get("truncated")
    trunc = np.zeros(shape, bool) if trunc is None else trunc
    cut = term | trunc
    cut[..., -1] = True
    return term, cut, cut & ~term


def _ratio(kw, shape):
    if kw.get("ratio") is not None:
        return np.broadcast_to(kw["ratio"], shape)
    return np.exp(np.broadcast_to(kw["log_ratio"], shape))


def _next(x):
    y = np.zeros_like(x)
    y[..., :-1] = x[..., 1:]
    return y


# ----------------------------------------------------------------------------- λ dropped
@mutant("eligibility_traces")
def eligibility_traces_lambda_dropped(inputs, dones, *, gamma, lmbda, seed=None, done_prev=None):
    return ref.eligibility_traces(inputs, dones, gamma=gamma, lmbda=1.0, seed=seed,
                                  done_prev=done_prev)


def _pg_advantages(kw, vs):
    """§3.4's policy-gradient advantage from (possibly wrong) targets vs."""
    term, cut, boot = _masks(kw)
    shape = vs.shape
    g = np.broadcast_to(kw.get("gamma", 0.99), shape)
    lam = np.broadcast_to(kw.get("lmbda", 1.0), shape)
    vnext = ref.resolve_vnext(shape, kw.get("terminated"), kw.get("truncated"),
                              next_values=kw.get("next_values"), values=kw["values"],
                              bootstrap_values=kw.get("bootstrap_values"),
                              last_value=kw.get("last_value"))
    ratio = _ratio(kw, shape)
    rho_pg = np.minimum(kw.get("pg_rho_bar") or kw.get("rho_bar", 1.0), ratio)
    mix = kw.get("pg_bootstrap", "vs") == "lambda_mix"
    w_mid = lam * _next(vs) + (1 - lam) * vnext if mix else _next(vs)
    w = np.where(term, 0.0, np.where(boot, vnext, w_mid))
    return rho_pg * (kw["rewards"] + g * w - kw["values"])


@mutant("vtrace")
def vtrace_lambda_dropped(**kw):
    _, cut, _ = _masks(kw)
    _, b, _ = ref.coefficients("vtrace", **kw)
    shape = b.shape
    ratio = _ratio(kw, shape)
    c = np.minimum(kw.get("c_bar", 1.0), ratio)                        # λ·min(c̄, ratio)
    a = np.where(cut, 0.0, np.broadcast_to(kw.get("gamma", 0.99), shape) * c)
    vs = kw["values"] + ref.linear_scan(a, b, reverse=True)
    return vs, _pg_advantages(kw, vs)


# ----------------------------------------------------------------------------- c[t] for c[t+1]
@mutant("retrace")
def retrace_c_at_t(**kw):
    _, cut, _ = _masks(kw)
    _, b, _ = ref.coefficients("retrace", **kw)
    shape = b.shape
    ratio = _ratio(kw, shape)
    g = np.broadcast_to(kw.get("gamma", 0.99), shape)
    lam = np.broadcast_to(kw.get("lmbda", 1.0), shape)
    a = np.where(cut, 0.0, g * lam * np.minimum(kw.get("c_bar", 1.0), ratio))  # c[t+1]
    return kw["q_taken"] + ref.linear_scan(a, b, reverse=True)


# ----------------------------------------------------------------------------- swapped combine
def swapped_combine(left, right):
    """L∘R — the classic bug; the right one is R∘L = (R.a·L.a, R.b + R.a·L.b)."""
    (a_l, b_l), (a_r, b_r) = left, right
    return a_l * a_r, b_l + a_l * b_r


def _tree_scan(a, b, init, reverse, combine):
    """Hillis–Steele inclusive scan of (a, b) elements with ``combine`` (float64)."""
    if reverse:
        a, b = a[..., ::-1], b[..., ::-1]
    A, B = a.copy(), b.copy()
    d = 1
    while d < A.shape[-1]:
        nA, nB = combine((A[..., :-d], B[..., :-d]), (A[..., d:], B[..., d:]))
        A = np.concatenate([A[..., :d], nA], axis=-1)
        B = np.concatenate([B[..., :d], nB], axis=-1)
        d *= 2
    x = B if init is None else B + A * np.asarray(init)[..., None]
    return np.ascontiguousarray(x[..., ::-1]) if reverse else x


@mutant("linear_scan")
def linear_scan_swapped_combine(a, b, *, reverse=False, init=None):
    return _tree_scan(a, b, init, reverse, swapped_combine)


linear_scan_swapped_combine.rlscan_combine = swapped_combine


@mutant("discounted_returns")
def discounted_returns_swapped_combine(**kw):
    a, b, _ = ref.coefficients("discounted_returns", **kw)
    return _tree_scan(a, b, None, True, swapped_combine)


# ----------------------------------------------------------------------------- truncation
def _as_termination(kw):
    if kw.get("truncated") is not None:
        term = kw.get("terminated")
        kw["terminated"] = kw["truncated"] if term is None else term | kw["truncated"]
    return kw


@mutant("gae")
def gae_truncation_as_termination(**kw):
    return ref.gae(**_as_termination(kw))


@mutant("discounted_returns")
def discounted_returns_truncation_as_termination(**kw):
    return ref.discounted_returns(**_as_termination(kw))


# ----------------------------------------------------------------------------- bootstrap added
def _bootstrap_added(kw):
    """E2 resolved by addition: values[t+1]·(1 − truncated[t]) + bootstrap_values[t]."""
    if kw.get("bootstrap_values") is not None:
        trunc = kw.get("truncated")
        keep = 1.0 if trunc is None else 1.0 - trunc
        kw["next_values"] = _next(kw["values"]) * keep + kw.pop("bootstrap_values")
    return kw


@mutant("gae")
def gae_bootstrap_added(**kw):
    return ref.gae(**_bootstrap_added(kw))


@mutant("vtrace")
def vtrace_bootstrap_added(**kw):
    return ref.vtrace(**_bootstrap_added(kw))


MUTANTS = ("eligibility_traces_lambda_dropped", "vtrace_lambda_dropped", "retrace_c_at_t",
           "linear_scan_swapped_combine", "discounted_returns_swapped_combine",
           "gae_truncation_as_termination", "discounted_returns_truncation_as_termination",
           "gae_bootstrap_added", "vtrace_bootstrap_added")
