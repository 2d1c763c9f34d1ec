"""Vectorised torch implementation of the same math, for CPU tensors.

Builds (a, b) over whole [N, T] tensors in float32 with selection masking, then solves the
recurrence with a log-depth doubling scan (Hillis-Steele) using the combine of ALGORITHMS.md
§2.1. Mirrors rlscan/kernels/scan.py line for line in intent, not in code.
"""
from typing import Optional

import torch

from . import _problem as P

f32 = torch.float32


def _f(x: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    return None if x is None else x.to(f32)


def _flag(x: Optional[torch.Tensor], like: torch.Tensor) -> torch.Tensor:
    if x is None:
        return torch.zeros(like.shape, dtype=torch.bool, device=like.device)
    return x != 0


def _shift_next(x: torch.Tensor, fill: float = 0.0) -> torch.Tensor:
    """y[:, t] = x[:, t+1], with ``fill`` at t = T-1."""
    return torch.cat([x[:, 1:], torch.full_like(x[:, :1], fill)], dim=1)


def _shift_prev(x: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
    """y[:, t] = x[:, t-1], with ``first`` ([N]) at t = 0."""
    return torch.cat([first[:, None].to(x.dtype), x[:, :-1]], dim=1)


def _apply(a: torch.Tensor, b: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    # b + a·x, where a = 0 is a reset that discards x even if it is inf or NaN (§2.1)
    return torch.where(a == 0, b, b + a * x)


def scan(a: torch.Tensor, b: torch.Tensor, init: Optional[torch.Tensor], reverse: bool) -> torch.Tensor:
    """x[t] = b[t] + a[t]·x[t∓1] for [N, T] float32 a, b; init [N] is x[-1] or x[T] (default 0)."""
    if reverse:
        a, b = a.flip(1), b.flip(1)
    A, B = a.clone(), b.clone()
    T = A.shape[1]
    d = 1
    while d < T:
        # position t absorbs the composition ending at t-d, which was applied before it
        A_prev, B_prev = A[:, :-d], B[:, :-d]
        B = torch.cat([B[:, :d], _apply(A[:, d:], B[:, d:], B_prev)], dim=1)
        A_cur = A[:, d:]   # a reset stays a reset even against inf/NaN: 0·NaN would be NaN
        A = torch.cat([A[:, :d], torch.where(A_cur == 0, 0.0, A_cur * A_prev)], dim=1)
        d *= 2
    # x[-1] (or x[T]) is 0 by default and still multiplied in, so a NaN coefficient at the
    # first step propagates exactly as in the kernels and the reference
    x0 = torch.zeros_like(B[:, :1]) if init is None else init.to(f32)[:, None]
    x = _apply(A, B, x0)
    return x.flip(1) if reverse else x


def _ratio(pb: P.Problem) -> torch.Tensor:
    if pb.ratio == P.RATIO_LOG:
        return torch.exp(_f(pb.x1))
    if pb.ratio == P.RATIO_LOGP_PAIR:
        return torch.exp(_f(pb.x1) - _f(pb.x2))
    return _f(pb.x1) / _f(pb.x2)


def _clip(ratio: torch.Tensor, thr: float) -> torch.Tensor:
    # min(thr, ratio) that lets NaN through
    return torch.where(ratio > thr, torch.full_like(ratio, thr), ratio)


def _vnext(pb: P.Problem, trunc, last) -> torch.Tensor:
    r = pb.p0
    zeros = torch.zeros(r.shape, dtype=f32, device=r.device)
    if pb.vnext == P.VN_NONE:
        return zeros
    if pb.vnext == P.VN_DENSE:
        return _f(pb.nv)
    v_succ = _shift_next(_f(pb.p1)) if pb.p1 is not None else zeros
    if pb.vnext == P.VN_BOOT_STEPS:
        boot_v = _f(pb.nv)
    elif pb.vnext == P.VN_BOOT_LAST:
        boot_v = torch.where(last, _f(pb.row0)[:, None], zeros)
    else:
        boot_v = zeros
    return torch.where(trunc | last, boot_v, v_succ)


def sequential_scan(a: torch.Tensor, b: torch.Tensor, init: Optional[torch.Tensor],
                    reverse: bool) -> torch.Tensor:
    """The same recurrence as ``scan``, one Python step per time step (the training-script
    pattern; used as a benchmark baseline)."""
    x = torch.empty_like(b)
    carry = torch.zeros_like(b[:, 0]) if init is None else init.to(f32)
    for t in (range(b.shape[1] - 1, -1, -1) if reverse else range(b.shape[1])):
        carry = _apply(a[:, t], b[:, t], carry)
        x[:, t] = carry
    return x


def run(pb: P.Problem, out0: torch.Tensor, out1: Optional[torch.Tensor], scan_fn=None) -> None:
    """Solve ``pb`` and write into the [N, T] views ``out0`` (and ``out1``); ``scan_fn``
    replaces the doubling scan (benchmark baselines)."""
    N, T = pb.N, pb.T
    dev = pb.p0.device
    g = _f(pb.g) if pb.g is not None else torch.full((N, T), pb.gamma, dtype=f32, device=dev)
    lam = _f(pb.lam) if pb.lam is not None else torch.full((N, T), pb.lmbda, dtype=f32, device=dev)
    zero = torch.zeros((), dtype=f32, device=dev)
    init = None
    y1 = None
    if pb.est == P.LINEAR:
        a, b = _f(pb.p0), _f(pb.p1)
        init = pb.row0
    elif pb.reverse:
        r = _f(pb.p0)
        term, trunc = _flag(pb.term, r), _flag(pb.trunc, r)
        last = torch.zeros_like(term)
        last[:, -1] = True
        cut = term | trunc | last
        boot = cut & ~term
        vn = _vnext(pb, trunc, last)
        if pb.est == P.DISC:
            a = torch.where(cut, zero, g)
            b = r + torch.where(boot, g * vn, zero)
        elif pb.est == P.GAE:
            v = _f(pb.p1)
            a = torch.where(cut, zero, g * lam)
            b = r + torch.where(term, zero, g * vn) - v
        elif pb.est == P.LAMBDA:
            a = torch.where(cut, zero, g * lam)
            b = torch.where(term, r, torch.where(boot, r + g * vn, r + g * (1.0 - lam) * vn))
        elif pb.est == P.VTRACE:
            v = _f(pb.p1)
            ratio = _ratio(pb)
            a = torch.where(cut, zero, g * lam * _clip(ratio, pb.c_bar))
            b = _clip(ratio, pb.rho_bar) * (r + torch.where(term, zero, g * vn) - v)
        else:  # RETRACE: c of the next step
            q = _f(pb.p1)
            # a per-step λ[t] belongs to the transition t -> t+1, like γ[t]
            a = torch.where(cut, zero, g * lam * _shift_next(_clip(_ratio(pb), pb.c_bar)))
            b = r + torch.where(term, zero, g * vn) - q
    else:
        b = _f(pb.p0)
        flag = _flag(pb.term, b)
        if pb.starts_at:
            reset = flag
        else:
            first = pb.row1 != 0 if pb.row1 is not None else torch.zeros(N, dtype=torch.bool, device=dev)
            reset = _shift_prev(flag, first)
        step = g * lam if pb.est == P.TRACE else torch.ones_like(b)
        a = torch.where(reset, zero, step)
        init = pb.row0

    x = (scan_fn or scan)(a, b, init, pb.reverse)
    if pb.est == P.GAE:
        y0, y1 = x, x + v
    elif pb.est == P.VTRACE:
        vs = v + x
        vs_next = _shift_next(vs)   # read only where not cut, so the fill never matters
        w = lam * vs_next + (1.0 - lam) * vn if pb.pg_mix else vs_next
        w = torch.where(term, zero, torch.where(boot, vn, w))
        y0, y1 = vs, _clip(ratio, pb.pg_rho_bar) * (r + g * w - v)
    elif pb.est == P.RETRACE:
        y0 = q + x
    else:
        y0 = x
    out0.copy_(y0)
    if out1 is not None:
        out1.copy_(y1)
