"""A call traced by ``torch.compile`` on the kernel path becomes one opaque op, ``rlscan::scan``.

Dynamo cannot trace a Triton launch made through rlscan's own launcher, nor Triton's
interpreter: without this op a compiled function that calls an estimator on CUDA tensors breaks
its graph there (and ``fullgraph=True`` fails). The public functions' checks and the layout
bookkeeping are plain Python over shapes and dtypes, which dynamo traces; what is left, the
launch, is this op, whose fake implementation gives the outputs' shapes, dtypes and strides
without running anything. Inductor then calls it like any aten op, and a CUDA graph (``mode=
"reduce-overhead"``) captures its launches as it captures an eager call's.

The op's outputs are fresh ``[N, T]`` buffers, time-last in memory, or time-major
(``time_major``: strides ``(1, N)``) for ``[T, ...]`` inputs, so that ``time_dim=0`` outputs
come back as contiguous ``[T, N]`` buffers as in eager calls. Its calls replay like the public
functions' (rlscan/_replay.py): a compiled training step pays the whole path once per signature.

Defined with ``torch.library.Library`` rather than ``torch.library.custom_op``: on the dev box
a call of a no-op with this schema cost 11-12 us more than the Python function, through
``custom_op`` 33 us more (its Python wrapper; 2026-12-05).
"""
from typing import NamedTuple

import torch

from . import _checks as C
from . import _problem as P
from ._replay import forbid, replayable

_TENSOR_FIELDS = ("p0", "p1", "term", "trunc", "nv", "x1", "x2", "g", "lam", "row0", "row1")
_SCALAR_FIELDS = ("vnext", "ratio", "gamma", "lmbda", "rho_bar", "c_bar", "pg_rho_bar", "pg_mix",
                  "starts_at")

_lib = torch.library.Library("rlscan", "DEF")
_lib.define("scan(Tensor?[] tensors, int est, bool reverse, SymInt N, SymInt T, int vnext, "
            "int ratio, float gamma, float lmbda, float rho_bar, float c_bar, float pg_rho_bar, "
            "bool pg_mix, bool starts_at, int n_out, ScalarType dtype, bool time_major) "
            "-> Tensor[]")


def _outputs(n_out: int, N: int, T: int, dtype: torch.dtype, time_major: bool, device):
    if time_major:
        return [torch.empty((T, N), dtype=dtype, device=device).t() for _ in range(n_out)]
    return [torch.empty((N, T), dtype=dtype, device=device) for _ in range(n_out)]


class _Pair(NamedTuple):
    first: torch.Tensor
    second: torch.Tensor


@replayable
def _solve(p0, p1, term, trunc, nv, x1, x2, g, lam, row0, row1, est, reverse, N, T, vnext, ratio,
           gamma, lmbda, rho_bar, c_bar, pg_rho_bar, pg_mix, starts_at, n_out, dtype, time_major):
    """The op's work, replayable: the outputs (one tensor or a _Pair) of the Problem the fields
    describe (rlscan/_problem.py)."""
    pb = P.Problem(est, reverse, N, T, p0, p1, term, trunc, nv, x1, x2, g, lam, row0, row1,
                   vnext, ratio, gamma, lmbda, rho_bar, c_bar, pg_rho_bar, pg_mix, starts_at)
    # the checks that read data, which dynamo cannot trace: a traced call makes them here
    if vnext == P.VN_BOOT_LAST and trunc is not None:
        forbid()
        P.check_no_interior_truncations(term, trunc)
    for name, v in (("gamma", g), ("lmbda", lam)):
        if v is not None and v.device.type == "cpu":    # (no host sync on CUDA, as eager)
            forbid()
            C.values_in_unit_interval(name, v)
    outs = _outputs(n_out, N, T, dtype, time_major, p0.device)
    from . import _layout   # (a cycle at import: _layout imports this module)
    if _layout.POISON_OUTPUTS:
        for o in outs:
            o.fill_(float("nan"))
    _layout._kernel_launch()(pb, outs[0], outs[1] if n_out > 1 else None)
    return _Pair(*outs) if n_out > 1 else outs[0]


def _scan(tensors, *fields):
    out = _solve(*tensors, *fields)
    return list(out) if isinstance(out, tuple) else [out]


def _scan_fake(tensors, est, reverse, N, T, vnext, ratio, gamma, lmbda, rho_bar, c_bar,
               pg_rho_bar, pg_mix, starts_at, n_out, dtype, time_major):
    return _outputs(n_out, N, T, dtype, time_major, tensors[0].device)


_lib.impl("scan", _scan, "CompositeExplicitAutograd")
torch.library.register_fake("rlscan::scan", _scan_fake, lib=_lib)


def run(pb: P.Problem, n_out: int, dtype: torch.dtype, time_major: bool):
    """``pb`` through the op: ``n_out`` new ``[N, T]`` outputs."""
    return torch.ops.rlscan.scan.default(
        [getattr(pb, f) for f in _TENSOR_FIELDS], pb.est, pb.reverse, pb.N, pb.T,
        *[getattr(pb, f) for f in _SCALAR_FIELDS], n_out, dtype, time_major)
