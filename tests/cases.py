"""Random but realistic inputs for every estimator, and the comparison against the float64
reference used throughout the API tests."""
import math

import numpy as np
import torch

from rlscan.verify import reference as ref

ESTIMATORS = ["gae", "lambda_returns", "discounted_returns", "vtrace", "retrace",
              "eligibility_traces", "episodic_cumsum"]
BACKWARD = ESTIMATORS[:5]


def flags(gen: torch.Generator, shape, p_term=0.08, p_trunc=0.06, both=True):
    term = torch.rand(shape, generator=gen) < p_term
    trunc = torch.rand(shape, generator=gen) < p_trunc
    if both and term.numel():   # terminated wins where both are set
        trunc.view(-1)[0] = term.view(-1)[0] = True
    return term, trunc


def make(est: str, shape=(4, 37), seed=0, encoding="bootstrap", gamma=0.97, lmbda=0.9):
    """(public-API kwargs, reference kwargs) for one call; CPU float32 tensors."""
    gen = torch.Generator().manual_seed(seed)
    rnd = lambda: torch.randn(shape, generator=gen)   # noqa: E731
    batch = shape[:-1]
    term, trunc = flags(gen, shape)
    if est in ("eligibility_traces", "episodic_cumsum"):
        kw = dict(inputs=rnd(), dones=term | trunc, seed=torch.randn(batch, generator=gen),
                  done_prev=torch.rand(batch, generator=gen) < 0.5)
        if est == "eligibility_traces":
            kw.update(gamma=gamma, lmbda=lmbda)
        return kw, dict(kw)
    kw = dict(rewards=rnd(), terminated=term, truncated=trunc, gamma=gamma)
    if est == "retrace":
        kw.update(q_taken=rnd(), expected_next_q=rnd(), lmbda=lmbda, c_bar=1.0,
                  log_ratio=0.5 * torch.randn(shape, generator=gen))
        return kw, dict(kw)
    values = rnd()
    if encoding == "next_values":
        kw["next_values"] = rnd()
    elif encoding == "bootstrap":
        kw["bootstrap_values"] = rnd()
    elif encoding == "last_value":
        kw["truncated"] = None
        kw["last_value"] = torch.randn(batch, generator=gen)
    if est in ("gae", "vtrace", "lambda_returns") or encoding != "next_values":
        kw["values"] = values
    if est != "discounted_returns":
        kw["lmbda"] = lmbda
    if est == "vtrace":
        kw.update(log_ratio=0.5 * torch.randn(shape, generator=gen), rho_bar=1.0, c_bar=0.9)
    return kw, dict(kw)


def call(est: str, kw: dict, device=None, **extra):
    import rlscan
    kw = {k: (v.to(device) if isinstance(v, torch.Tensor) and device is not None else v)
          for k, v in kw.items()}
    kw.update(extra)
    return getattr(rlscan, est)(**kw)


def reference(est: str, kw: dict):
    return getattr(ref, est)(**{k: _np(v) for k, v in kw.items()})


def _np(v):
    if isinstance(v, torch.Tensor):
        return v.detach().cpu().double().numpy() if v.dtype != torch.bool else v.cpu().numpy()
    return v


def per_step_in(dtype, kw: dict):
    """``kw`` with its per-step float inputs (2-D float tensors) cast to ``dtype``, and the
    same casts back in float32: ``(half, rounded)``. A call on ``half`` must give the float32
    results of ``rounded`` (the kernels compute in float32 whatever their inputs' dtype)."""
    def per_step(v):
        return isinstance(v, torch.Tensor) and v.is_floating_point() and v.dim() == 2
    half = {k: (v.to(dtype) if per_step(v) else v) for k, v in kw.items()}
    return half, {k: (v.float() if per_step(v) else v) for k, v in half.items()}


def as_tuple(x):
    return tuple(x) if isinstance(x, tuple) else (x,)


def assert_matches(out, expected, *, T: int, scale=None, rtol_factor=1.0):
    """|out − ref| ≤ u·(log2 T + T/64 + 8)·(1 + |ref| + scale), u = 2^-24 ×16 headroom.

    The depth term covers the tree scan inside a chunk (log2 T) and the sequential carry
    between chunks (T/64 with the interpreter's 64-step chunks)."""
    for o, e in zip(as_tuple(out), as_tuple(expected)):
        o = o.detach().cpu().double().numpy()
        e = np.asarray(e, dtype=np.float64)
        assert o.shape == e.shape, (o.shape, e.shape)
        depth = math.log2(max(T, 2)) + T / 64 + 8
        s = 1.0 + np.abs(e) + (0.0 if scale is None else scale)
        tol = rtol_factor * 16 * 2.0 ** -24 * depth * s
        bad = ~(np.abs(o - e) <= tol)
        assert not bad.any(), (
            f"{bad.sum()} of {bad.size} elements off; worst |err|/tol = "
            f"{np.nanmax(np.abs(o - e) / tol):.3g} at {np.argwhere(bad)[:3].tolist()}")


def scale_of(est: str, kw: dict) -> np.ndarray:
    """Σ|Π a|·|b| of the reference recurrence, widened by one step either side (V-trace's pg
    advantage reads vs[t+1]); the error scale of a scan's float32 result."""
    a, b, reverse = ref.coefficients(est, **{k: _np(v) for k, v in kw.items()})
    init = _np(kw.get("seed")) if not reverse else None
    m = ref.magnitude(a, b, reverse=reverse, init=init)
    m = np.nan_to_num(m, nan=0.0, posinf=0.0)
    wide = m.copy()
    wide[..., :-1] += m[..., 1:]
    wide[..., 1:] += m[..., :-1]
    return wide
