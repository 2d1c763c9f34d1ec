"""The implementation under test: rlscan itself, or any function with rlscan's signature.

A target maps estimator names to callables that take rlscan's keyword arguments (torch tensors on
the target's device, ``time_dim``) and return a tensor or a tuple of tensors in the primary
input's layout, as rlscan does. An external implementation (``--impl module:function``) covers
one estimator; properties that pair two estimators (the identities of ALGORITHMS.md §7) take the
partner from the float64 reference.
"""
import contextlib
import importlib
from typing import Callable, Dict, Optional

import numpy as np

from . import backends, tolerance
from .cases import ESTIMATORS, Case, output_names, to_numpy


class Target:
    def __init__(self, name: str, functions: Dict[str, Callable], backend: str,
                 depth_model: Optional[str] = None, is_rlscan: bool = False):
        self.name = name
        self.functions = functions
        self.backend = backend
        self.device = backends.activate(backend)
        self.is_rlscan = is_rlscan
        # rlscan's own paths have known scan strategies (chunked scans, in the kernels and the
        # CPU path alike); anything else gets the worst case
        self.depth_model = depth_model or ("chunked" if is_rlscan else "sequential")

    @property
    def estimators(self):
        return tuple(e for e in ESTIMATORS if e in self.functions)

    @property
    def can_force_config(self) -> bool:
        """Whether cases may carry an rlscan kernel config (chunk and row-block edges)."""
        return self.is_rlscan and self.backend != "torch"

    def fn(self, estimator: str) -> Callable:
        """The function under test for ``estimator``. Another estimator (the partner in an
        identity) is rlscan's own for the rlscan target, else the float64 reference, so a
        failure is always the implementation's."""
        if estimator in self.functions:
            return self.functions[estimator]
        from .adapters import reference_impl
        return reference_impl(estimator)

    def call(self, case: Case, estimator: Optional[str] = None) -> Dict[str, np.ndarray]:
        """Run the case; outputs by name as float64 time-last arrays."""
        est = estimator or case.estimator
        kwargs = case.api_kwargs(self.device)
        with self._config(case), np.errstate(all="ignore"):   # the interpreter computes in NumPy
            out = self.fn(est)(**kwargs)
        out = tuple(out) if isinstance(out, tuple) else (out,)
        names = output_names(est)
        if len(out) != len(names):
            raise TypeError(f"{est} returned {len(out)} outputs; expected {len(names)} {names}")
        return {n: to_numpy(o, case.time_dim) for n, o in zip(names, out)}

    def _config(self, case: Case):
        if case.config is None or not self.can_force_config:
            return contextlib.nullcontext()
        from rlscan.kernels.launch import force_config
        return force_config(**case.config)

    def depth(self, case: Case) -> int:
        """Scan depth of this target on ``case`` for the tolerance model."""
        if self.depth_model != "chunked":
            return tolerance.depth(self.depth_model, case.T)
        return tolerance.depth("chunked", case.T, self._chunk(case))

    def _chunk(self, case: Case) -> int:
        """BLOCK_T of the launch config the call uses (forced, tuned or heuristic), or the CPU
        path's chunk length."""
        if self.is_rlscan and self.backend == "torch":
            from rlscan._torch_path import chunk_length
            return chunk_length(case.T)
        if case.config is not None and self.can_force_config:
            return case.config["BLOCK_T"]
        if self.is_rlscan:
            from rlscan.tuning import which_config
            kwargs = case.api_kwargs(self.device)
            primary = kwargs[case.primary]                          # same strides and device
            coefficients = {k: kwargs[k] for k in ("gamma", "lmbda", "c_bar") if k in kwargs}
            config = which_config(case.estimator, primary, time_dim=case.time_dim,
                                  **coefficients).config
            if config is not None:
                return config["BLOCK_T"]
        return case.T


def infer_estimator(fn: Callable) -> Optional[str]:
    """``fn.rlscan_estimator``, else the longest estimator name that starts the function's name."""
    est = getattr(fn, "rlscan_estimator", None)
    if est:
        return est
    name = getattr(fn, "__name__", "")
    hits = [e for e in ESTIMATORS if name == e or name.startswith(e + "_")]
    return max(hits, key=len) if hits else None


def load_function(spec: str) -> Callable:
    """``module:function`` (dots allowed in both parts) to the callable."""
    if ":" not in spec:
        raise ValueError(f"--impl {spec!r}: expected module:function")
    mod_name, attr = spec.split(":", 1)
    obj = importlib.import_module(mod_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"--impl {spec!r} is not callable")
    return obj


def load_target(spec: Optional[str] = None, backend: Optional[str] = None,
                estimator: Optional[str] = None, depth_model: Optional[str] = None) -> Target:
    """rlscan itself (``spec`` None or "rlscan") or an external ``module:function``."""
    backend = backend or backends.default()
    if spec in (None, "rlscan"):
        backends.activate(backend)   # before rlscan's kernels are first defined
        import rlscan
        return Target("rlscan", {e: getattr(rlscan, e) for e in ESTIMATORS}, backend,
                      depth_model, is_rlscan=True)
    backends.activate(backend)
    fn = load_function(spec)
    est = estimator or infer_estimator(fn)
    if est not in ESTIMATORS:
        raise ValueError(f"cannot tell which estimator {spec} implements; pass --estimator "
                         f"(one of {', '.join(ESTIMATORS)})")
    return Target(spec, {est: fn}, backend, depth_model)

