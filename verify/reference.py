"""Normative float64 sequential reference for the estimators of ALGORITHMS.md.

Every estimator is written the same way, straight from ALGORITHMS.md §3: build the per-step
coefficients ``(a, b)`` of the first-order recurrence (§0), run it with a plain sequential
Python loop over time in float64 (:func:`linear_scan`, vectorised over rows only), then
post-process.  Kernels are compared against these functions; they match up to rounding.

Conventions (§1):

* Layout ``[..., T]``: time is the last axis, any number of batch axes.  Per-row arguments
  (``last_value``, ``seed``, ``done_prev``, ``init``) have the batch shape ``[...]``.
* Flags use the end-of-episode convention (flag = 1 at t: t is the last transition of its
  episode); any nonzero value is true and ``None`` means all false.  ``terminated``: no
  bootstrap and the carry is cut.  ``truncated``: bootstrap from ``vnext[t]`` (value of the true
  final observation) and cut.  Both set: terminated wins.  Column T-1 is always a cut
  (window-end rule), bootstrapping from ``vnext[T-1]`` unless terminated.
* ``gamma``/``lmbda`` are floats or arrays broadcastable to ``[..., T]``; the value at index t
  is used in the step-t coefficients a[t], b[t].
* Masking is by selection (``np.where``), never by multiplying with a 0/1 float, so NaN/inf in
  ignored slots never reach an output (§1.5).  Likewise a coefficient a[t] == 0 is a reset that
  discards the carry even when the carry is non-finite (§2.1: "(0, b) discards everything").
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "resolve_vnext", "discounted_returns", "gae", "lambda_returns", "vtrace", "retrace",
    "eligibility_traces", "episodic_cumsum", "linear_scan", "magnitude", "coefficients",
]


# ----------------------------------------------------------------------------- input helpers
def _f64(x):
    if hasattr(x, "detach"):  # torch tensor (any device, any dtype incl. bfloat16)
        x = x.detach().cpu().double().numpy()
    return np.asarray(x, dtype=np.float64)


def _steps(x, name, shape):
    """A per-step float array that must have exactly ``shape``."""
    x = _f64(x)
    if x.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {x.shape}")
    return x


def _flags(x, name, shape):
    return np.zeros(shape, bool) if x is None else _steps(x, name, shape) != 0


def _bcast(x, name, shape):
    try:
        return np.broadcast_to(_f64(x), shape)
    except ValueError:
        raise ValueError(f"{name} must broadcast to {tuple(shape)}, got {np.shape(x)}") from None


def _row(x, name, batch, default=0.0):
    """A per-row array of the batch shape ``[...]`` (scalars broadcast)."""
    return np.full(batch, default, np.float64) if x is None else _bcast(x, name, batch)


def _masks(terminated, truncated, shape):
    """term, cut, boot of §1.2 (cut includes the window end T-1)."""
    term = _flags(terminated, "terminated", shape)
    done = term | _flags(truncated, "truncated", shape)
    cut = done.copy()
    cut[..., -1:] = True
    return term, cut, cut & ~term


def _next(x):
    """x[..., t+1] at t; NaN at T-1, which is never read (cut[T-1] is always true)."""
    out = np.full_like(x, np.nan)
    out[..., :-1] = x[..., 1:]
    return out


def _ratio(log_ratio, ratio, shape):
    if (log_ratio is None) == (ratio is None):
        raise ValueError("give exactly one of log_ratio or ratio")
    if ratio is not None:
        return _steps(ratio, "ratio", shape)
    with np.errstate(over="ignore"):
        return np.exp(_steps(log_ratio, "log_ratio", shape))


# ----------------------------------------------------------------------------- the recurrence
def linear_scan(a, b, *, reverse=False, init=None):
    """x[t] = b[t] + a[t]*x[t-1] with x[-1] = init (forward), or
    x[t] = b[t] + a[t]*x[t+1] with x[T] = init (``reverse=True``); init defaults to 0.
    a, b: [..., T]; init: [...].  a[t] == 0 discards the carry by selection (a reset)."""
    b = _f64(b)
    a = _steps(a, "a", b.shape)
    carry = _row(init, "init", b.shape[:-1]).copy()
    x = np.empty_like(b)
    order = range(b.shape[-1] - 1, -1, -1) if reverse else range(b.shape[-1])
    with np.errstate(invalid="ignore", over="ignore"):
        for t in order:
            carry = np.where(a[..., t] == 0, b[..., t], b[..., t] + a[..., t] * carry)
            x[..., t] = carry
    return x


def magnitude(a, b, *, reverse=False, init=None):
    """The same recurrence on |a|, |b|, |init|: M[t] = sum_k |prod a|*|b[k]|, the scale of the
    partial sums behind x[t] (used for error bounds, §7)."""
    init = None if init is None else np.abs(_f64(init))
    return linear_scan(np.abs(_f64(a)), np.abs(_f64(b)), reverse=reverse, init=init)


# ----------------------------------------------------------------------------- successor values
def resolve_vnext(rewards_shape, terminated, truncated, *, next_values=None, values=None,
                  bootstrap_values=None, last_value=None):
    """vnext[..., T] = V(s'_t) from one encoding of §1.3, or None if no source is given.

    E1: ``next_values`` (dense).  E2: ``values`` plus ``bootstrap_values`` (selection:
    bootstrap_values[t] where truncated[t] or t == T-1, else values[t+1]; absent => 0) or
    ``last_value`` [...] (= bootstrap_values[..., T-1], zeros elsewhere; rejected if an interior
    step is truncated and not terminated).  Without ``values``, the values[t+1] slots are NaN:
    only the bootstrap slots are meaningful, which suffices for discounted returns."""
    shape = tuple(rewards_shape)
    if next_values is not None and (bootstrap_values is not None or last_value is not None):
        raise ValueError("next_values (E1) cannot be combined with bootstrap_values/last_value")
    if bootstrap_values is not None and last_value is not None:
        raise ValueError("give bootstrap_values or last_value, not both")
    if next_values is not None:
        return _steps(next_values, "next_values", shape)
    if values is None and bootstrap_values is None and last_value is None:
        return None
    term = _flags(terminated, "terminated", shape)
    trunc = _flags(truncated, "truncated", shape)
    boot_src = np.zeros(shape)
    if bootstrap_values is not None:
        boot_src = _steps(bootstrap_values, "bootstrap_values", shape)
    elif last_value is not None:
        if np.any(trunc[..., :-1] & ~term[..., :-1]):
            raise ValueError("last_value cannot express an interior truncation; "
                             "pass bootstrap_values instead")
        boot_src[..., -1:] = _row(last_value, "last_value", shape[:-1])[..., None]
    succ = np.full(shape, np.nan) if values is None else _next(_steps(values, "values", shape))
    at_boot = trunc.copy()
    at_boot[..., -1:] = True
    return np.where(at_boot, boot_src, succ)


# ----------------------------------------------------------------------------- coefficients §0, §3
def _disc(rewards, terminated=None, truncated=None, *, next_values=None, values=None,
          bootstrap_values=None, last_value=None, gamma=0.99):
    r = _f64(rewards)
    term, cut, boot = _masks(terminated, truncated, r.shape)
    vnext = resolve_vnext(r.shape, terminated, truncated, next_values=next_values, values=values,
                          bootstrap_values=bootstrap_values, last_value=last_value)
    g = _bcast(gamma, "gamma", r.shape)
    b = r if vnext is None else r + np.where(boot, g * vnext, 0.0)
    return dict(a=np.where(cut, 0.0, g), b=b, reverse=True)


def _gae(rewards, values, terminated=None, truncated=None, *, next_values=None,
         bootstrap_values=None, last_value=None, gamma=0.99, lmbda=0.95):
    r = _f64(rewards)
    v = _steps(values, "values", r.shape)
    term, cut, _ = _masks(terminated, truncated, r.shape)
    vnext = resolve_vnext(r.shape, terminated, truncated, next_values=next_values, values=v,
                          bootstrap_values=bootstrap_values, last_value=last_value)
    g, lam = _bcast(gamma, "gamma", r.shape), _bcast(lmbda, "lmbda", r.shape)
    delta = r + np.where(term, 0.0, g * vnext) - v
    return dict(a=np.where(cut, 0.0, g * lam), b=delta, reverse=True, values=v)


def _lret(rewards, terminated=None, truncated=None, *, next_values=None, values=None,
          bootstrap_values=None, last_value=None, gamma=0.99, lmbda=0.95):
    r = _f64(rewards)
    if next_values is None and values is None:
        raise ValueError("lambda_returns needs next_values or values (vnext at every step)")
    term, cut, boot = _masks(terminated, truncated, r.shape)
    vnext = resolve_vnext(r.shape, terminated, truncated, next_values=next_values, values=values,
                          bootstrap_values=bootstrap_values, last_value=last_value)
    g, lam = _bcast(gamma, "gamma", r.shape), _bcast(lmbda, "lmbda", r.shape)
    b = np.where(term, r, np.where(boot, r + g * vnext, r + g * (1 - lam) * vnext))
    return dict(a=np.where(cut, 0.0, g * lam), b=b, reverse=True)


def _vtrace(rewards, values, terminated=None, truncated=None, *, log_ratio=None, ratio=None,
            next_values=None, bootstrap_values=None, last_value=None, gamma=0.99, lmbda=1.0,
            rho_bar=1.0, c_bar=1.0, pg_rho_bar=None, pg_bootstrap="vs"):
    r = _f64(rewards)
    v = _steps(values, "values", r.shape)
    if pg_bootstrap not in ("vs", "lambda_mix"):
        raise ValueError(f"pg_bootstrap must be 'vs' or 'lambda_mix', got {pg_bootstrap!r}")
    term, cut, boot = _masks(terminated, truncated, r.shape)
    vnext = resolve_vnext(r.shape, terminated, truncated, next_values=next_values, values=v,
                          bootstrap_values=bootstrap_values, last_value=last_value)
    g, lam = _bcast(gamma, "gamma", r.shape), _bcast(lmbda, "lmbda", r.shape)
    rat = _ratio(log_ratio, ratio, r.shape)
    rho, c = np.minimum(rho_bar, rat), lam * np.minimum(c_bar, rat)
    rho_pg = np.minimum(rho_bar if pg_rho_bar is None else pg_rho_bar, rat)
    b = rho * (r + np.where(term, 0.0, g * vnext) - v)
    return dict(a=np.where(cut, 0.0, g * c), b=b, reverse=True, values=v, vnext=vnext, term=term,
                boot=boot, g=g, lam=lam, rho_pg=rho_pg, rewards=r)


def _retrace(rewards, q_taken, expected_next_q, terminated=None, truncated=None, *,
             log_ratio=None, ratio=None, gamma=0.99, lmbda=1.0, c_bar=1.0):
    r = _f64(rewards)
    q = _steps(q_taken, "q_taken", r.shape)
    eq = _steps(expected_next_q, "expected_next_q", r.shape)
    term, cut, _ = _masks(terminated, truncated, r.shape)
    g, lam = _bcast(gamma, "gamma", r.shape), _bcast(lmbda, "lmbda", r.shape)
    c_next = lam * _next(np.minimum(c_bar, _ratio(log_ratio, ratio, r.shape)))  # c[t+1]
    delta = r + np.where(term, 0.0, g * eq) - q
    return dict(a=np.where(cut, 0.0, g * c_next), b=delta, reverse=True, q=q)


def _forward_reset(flags, done_prev, shape):
    """reset[t] = flag[t-1] for t >= 1 and done_prev at t = 0 (end-of-episode convention)."""
    reset = np.empty(shape, bool)
    reset[..., 1:] = flags[..., :-1]
    reset[..., :1] = (_row(done_prev, "done_prev", shape[:-1]) != 0)[..., None]
    return reset


def _elig(inputs, dones, *, gamma, lmbda, seed=None, done_prev=None):
    z = _f64(inputs)
    reset = _forward_reset(_flags(dones, "dones", z.shape), done_prev, z.shape)
    decay = _bcast(gamma, "gamma", z.shape) * _bcast(lmbda, "lmbda", z.shape)
    return dict(a=np.where(reset, 0.0, decay), b=z, reverse=False,
                init=_row(seed, "seed", z.shape[:-1]))


def _cumsum(inputs, dones, *, seed=None, done_prev=None, boundary="ends_at"):
    z = _f64(inputs)
    flags = _flags(dones, "dones", z.shape)
    if boundary == "ends_at":
        reset = _forward_reset(flags, done_prev, z.shape)
    elif boundary == "starts_at":
        reset = flags
    else:
        raise ValueError(f"boundary must be 'ends_at' or 'starts_at', got {boundary!r}")
    return dict(a=np.where(reset, 0.0, 1.0), b=z, reverse=False,
                init=_row(seed, "seed", z.shape[:-1]))


_BUILDERS = {"discounted_returns": _disc, "gae": _gae, "lambda_returns": _lret,
             "vtrace": _vtrace, "retrace": _retrace, "eligibility_traces": _elig,
             "episodic_cumsum": _cumsum}


def coefficients(estimator: str, **kwargs):
    """(a, b, reverse) of ``estimator`` for the same keyword arguments as the estimator."""
    if estimator not in _BUILDERS:
        raise ValueError(f"estimator must be one of {sorted(_BUILDERS)}, got {estimator!r}")
    c = _BUILDERS[estimator](**kwargs)
    return c["a"], c["b"], c["reverse"]


def _run(c):
    return linear_scan(c["a"], c["b"], reverse=c["reverse"], init=c.get("init"))


# ----------------------------------------------------------------------------- estimators (§3)
def discounted_returns(rewards, terminated=None, truncated=None, *, next_values=None, values=None,
                       bootstrap_values=None, last_value=None, gamma=0.99):
    """§3.1 G[t] = r[t] + [¬cut]·γ·G[t+1] + [boot]·γ·vnext[t]; no vnext source => vnext = 0."""
    return _run(_disc(rewards, terminated, truncated, next_values=next_values, values=values,
                      bootstrap_values=bootstrap_values, last_value=last_value, gamma=gamma))


def gae(rewards, values, terminated=None, truncated=None, *, next_values=None,
        bootstrap_values=None, last_value=None, gamma=0.99, lmbda=0.95):
    """§3.2 -> (advantages, returns = advantages + values).  ``values`` is V[t] and, unless
    next_values is given, also the E2 successor source."""
    c = _gae(rewards, values, terminated, truncated, next_values=next_values,
             bootstrap_values=bootstrap_values, last_value=last_value, gamma=gamma, lmbda=lmbda)
    adv = _run(c)
    return adv, adv + c["values"]


def lambda_returns(rewards, terminated=None, truncated=None, *, next_values=None, values=None,
                   bootstrap_values=None, last_value=None, gamma=0.99, lmbda=0.95):
    """§3.3 TD(λ) returns; a successor source (next_values or values) is required."""
    return _run(_lret(rewards, terminated, truncated, next_values=next_values, values=values,
                      bootstrap_values=bootstrap_values, last_value=last_value, gamma=gamma,
                      lmbda=lmbda))


def vtrace(rewards, values, terminated=None, truncated=None, *, log_ratio=None, ratio=None,
           next_values=None, bootstrap_values=None, last_value=None, gamma=0.99, lmbda=1.0,
           rho_bar=1.0, c_bar=1.0, pg_rho_bar=None, pg_bootstrap="vs"):
    """§3.4 -> (vs, pg_advantages), c[t] = λ·min(c̄, ratio[t]) at the element's own index.
    Exactly one of log_ratio / ratio; pg_rho_bar None => rho_bar."""
    c = _vtrace(rewards, values, terminated, truncated, log_ratio=log_ratio, ratio=ratio,
                next_values=next_values, bootstrap_values=bootstrap_values,
                last_value=last_value, gamma=gamma, lmbda=lmbda, rho_bar=rho_bar, c_bar=c_bar,
                pg_rho_bar=pg_rho_bar, pg_bootstrap=pg_bootstrap)
    vs = c["values"] + _run(c)
    vs_next, lam, vnext = _next(vs), c["lam"], c["vnext"]
    w_mid = vs_next if pg_bootstrap == "vs" else lam * vs_next + (1 - lam) * vnext
    w = np.where(c["term"], 0.0, np.where(c["boot"], vnext, w_mid))  # W[t] of §3.4
    return vs, c["rho_pg"] * (c["rewards"] + c["g"] * w - c["values"])


def retrace(rewards, q_taken, expected_next_q, terminated=None, truncated=None, *,
            log_ratio=None, ratio=None, gamma=0.99, lmbda=1.0, c_bar=1.0):
    """§3.5 Δ-form: Qret[t] = q_taken[t] + x[t], a[t] = [¬cut]·γ[t]·λ[t]·min(c̄, ratio[t+1]).
    ``expected_next_q[t]`` = E_π Q(s'_t, ·); exactly one of log_ratio / ratio."""
    c = _retrace(rewards, q_taken, expected_next_q, terminated, truncated, log_ratio=log_ratio,
                 ratio=ratio, gamma=gamma, lmbda=lmbda, c_bar=c_bar)
    return c["q"] + _run(c)


def eligibility_traces(inputs, dones, *, gamma, lmbda, seed=None, done_prev=None):
    """§3.6 e[t] = z[t] + [¬done[t-1]]·γλ·e[t-1]; e[-1] = seed [...], done[-1] = done_prev [...]."""
    return _run(_elig(inputs, dones, gamma=gamma, lmbda=lmbda, seed=seed, done_prev=done_prev))


def episodic_cumsum(inputs, dones, *, seed=None, done_prev=None, boundary="ends_at"):
    """§3.7 segmented cumsum.  'ends_at': dones are end flags, reset at t after done[t-1]
    (done_prev at t=0).  'starts_at': dones are start flags, reset at t (incl. t=0; done_prev
    is ignored)."""
    return _run(_cumsum(inputs, dones, seed=seed, done_prev=done_prev, boundary=boundary))
