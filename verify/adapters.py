"""Give float64 NumPy code rlscan's calling convention, and the reference as a target.

:func:`with_rlscan_signature` wraps ``body(**kwargs)`` written against verify/reference.py's
arguments (float64 arrays, time last, ``log_ratio`` or ``ratio``) into a function that takes
rlscan's keyword arguments (torch tensors, any ``time_dim``, log-probability or probability
pairs) and returns what rlscan returns, in the caller's layout. The planted-bug mutants are
built with it, and :func:`reference_impl` is the reference itself behind rlscan's signature:
the partner an external implementation is paired with in the identities.
"""
import functools

import numpy as np
import torch

from . import reference as ref
from .cases import OUTPUTS

_FLAGS = ("terminated", "truncated", "dones", "done_prev")


def _numpy_kwargs(kwargs):
    """rlscan keyword arguments to the reference's: float64 NumPy arrays, time last."""
    kwargs = dict(kwargs)
    td = kwargs.pop("time_dim", -1)
    kwargs.pop("out_dtype", None)
    primary = next(v for k, v in kwargs.items() if k in ("rewards", "inputs", "a"))
    like = primary.movedim(td, -1)
    out = {}
    for k, v in kwargs.items():
        if isinstance(v, torch.Tensor):
            if v.dim() == primary.dim():
                v = v.movedim(td, -1)
                if k in ("gamma", "lmbda"):
                    v = v.broadcast_to(like.shape)
            v = v.detach().cpu()
            v = (v != 0).numpy() if k in _FLAGS else v.double().numpy()
        out[k] = v
    return out, td, primary.device


def _ratio_kwargs(kw):
    """rlscan's ratio sources to the reference's (log_ratio or ratio)."""
    if "target_logp" in kw:
        kw["log_ratio"] = kw.pop("target_logp") - kw.pop("behaviour_logp")
    if "target_probs" in kw:
        kw["ratio"] = kw.pop("target_probs") / kw.pop("behaviour_probs")
    return kw


def with_rlscan_signature(estimator: str, dtype: torch.dtype = torch.float32):
    """Decorator: ``body(**reference_kwargs)`` -> a function with rlscan's signature for
    ``estimator`` (keyword arguments only) returning ``dtype`` tensors."""
    def wrap(body):
        @functools.wraps(body)
        def fn(*args, **kwargs):
            if args:
                raise TypeError(f"{body.__name__} takes keyword arguments only")
            kw, td, device = _numpy_kwargs(kwargs)
            with np.errstate(all="ignore"):
                result = body(**_ratio_kwargs(kw))
            result = result if isinstance(result, tuple) else (result,)
            out = tuple(torch.as_tensor(np.asarray(x), dtype=dtype).movedim(-1, td).to(device)
                        for x in result)
            if estimator in OUTPUTS:
                import rlscan
                return getattr(rlscan, {"gae": "GAE", "vtrace": "VTrace"}[estimator])(*out)
            return out[0]
        fn.rlscan_estimator = estimator
        return fn
    return wrap


@functools.lru_cache(maxsize=None)
def reference_impl(estimator: str):
    """verify/reference.py's ``estimator`` behind rlscan's signature, float64 outputs."""
    return with_rlscan_signature(estimator, torch.float64)(getattr(ref, estimator))
