"""Argument validation for the public API. Every failure names the argument and what was
expected; nothing here is an ``assert`` (those vanish under ``python -O``)."""
import math
import numbers
from typing import Optional, Sequence

import torch

REAL_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
FLAG_DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
               torch.float16, torch.bfloat16, torch.float32, torch.float64)
OUT_DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16)
_ALLOWED = {"real": frozenset(REAL_DTYPES), "flag": frozenset(FLAG_DTYPES)}   # O(1) membership


def _names(dtypes) -> str:
    return ", ".join(str(d).replace("torch.", "") for d in dtypes)


def tensor(name: str, x, *, kind: str, shape: Optional[Sequence[int]] = None,
           device: Optional[torch.device] = None, what: str = "the per-step shape") -> torch.Tensor:
    """A real-valued (``kind="real"``) or flag (``kind="flag"``) tensor of a given shape and
    device."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dtype not in _ALLOWED[kind]:
        allowed = REAL_DTYPES if kind == "real" else FLAG_DTYPES
        hint = " (rlscan computes in float32; cast float64 inputs with .float())" \
            if x.dtype == torch.float64 else ""
        raise TypeError(f"{name} has dtype {x.dtype}; expected one of {_names(allowed)}{hint}")
    if shape is not None and x.shape != shape:
        raise ValueError(f"{name} has shape {tuple(x.shape)}; expected {what} {tuple(shape)}")
    if device is not None and x.device != device:
        raise ValueError(f"{name} is on {x.device}; expected {device} like the other inputs")
    if x.requires_grad:
        no_autograd(name)
    return x


def no_autograd(name: str) -> None:
    """An input that requires grad, while grad mode is on: the estimators build no autograd
    graph (the kernels write plain outputs), so a gradient the caller expects would be silently
    missing; say so instead. Under ``torch.no_grad()`` such inputs are read as data."""
    if torch.is_grad_enabled():
        raise ValueError(f"{name} requires grad: rlscan's estimators are not differentiable (their "
                         f"outputs carry no autograd graph); call them under torch.no_grad() or "
                         f"pass {name}.detach()")


def time_axis(time_dim, ndim: int) -> int:
    if type(time_dim) is int and -ndim <= time_dim < ndim:   # the hot path, no ABC checks
        return time_dim % ndim
    if isinstance(time_dim, bool) or not isinstance(time_dim, numbers.Integral):
        raise TypeError(f"time_dim must be an int, got {type(time_dim).__name__}")
    if ndim == 0:
        raise ValueError("inputs must have at least one axis (time); got a 0-d tensor")
    if not -ndim <= time_dim < ndim:
        raise ValueError(f"time_dim={time_dim} is out of range for {ndim}-d inputs "
                         f"(expected {-ndim} <= time_dim < {ndim})")
    return time_dim % ndim


def _number(name: str, v, what: str = "a float or a tensor") -> float:
    if type(v) is float:     # the hot path, no ABC check
        return v
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be {what}, got {type(v).__name__}")
    return float(v)


def unit_interval(name: str, v, shape, device) -> "float | torch.Tensor":
    """γ or λ: a float in [0, 1], or a real tensor broadcastable to the per-step shape (whose
    values :func:`values_in_unit_interval` checks where the call runs: rlscan/_layout.py)."""
    if isinstance(v, torch.Tensor):
        if not v.dtype.is_floating_point:
            raise TypeError(f"{name} has dtype {v.dtype}; expected a floating-point tensor")
        if v.device != device:
            raise ValueError(f"{name} is on {v.device}; expected {device} like the other inputs")
        if v.requires_grad:
            no_autograd(name)
        try:
            v = v.broadcast_to(shape)
        except RuntimeError:
            raise ValueError(f"{name} has shape {tuple(v.shape)}, which does not broadcast to the "
                             f"per-step shape {tuple(shape)}") from None
        return v
    f = _number(name, v)
    if not 0.0 <= f <= 1.0:
        raise ValueError(f"{name}={v} is outside [0, 1]")
    return f


def values_in_unit_interval(name: str, v: torch.Tensor) -> None:
    if v.numel() and not bool(((v >= 0) & (v <= 1)).all()):
        raise ValueError(f"{name} must lie in [0, 1] everywhere")


def threshold(name: str, v) -> float:
    """A clipping threshold: a float in (0, +inf] (no per-step tensor)."""
    f = _number(name, v, "a float")
    if not f > 0.0:   # also rejects NaN
        raise ValueError(f"{name}={v} must be > 0 (float('inf') disables clipping)")
    return f


def boolean(name: str, v) -> bool:
    """A Python or NumPy bool; anything else is an error (``bool("False")`` is True)."""
    if type(v) is bool:
        return v
    if type(v).__module__ == "numpy" and getattr(getattr(v, "dtype", None), "kind", "") == "b":
        return bool(v)
    raise TypeError(f"{name} must be a bool, got {type(v).__name__}")


def out_dtype(v) -> torch.dtype:
    if v is None:
        return torch.float32
    if v not in OUT_DTYPES:
        raise TypeError(f"out_dtype={v} is not supported; expected one of {_names(OUT_DTYPES)}")
    return v


def exactly_one(names_values) -> None:
    given = [n for n, v in names_values if v is not None]
    if len(given) > 1:
        raise ValueError(f"{' and '.join(given)} both given; they are alternative encodings, "
                         f"pass one")


def finite_float(name: str, v) -> float:
    f = _number(name, v)
    if math.isnan(f):
        raise ValueError(f"{name} is NaN")
    return f
