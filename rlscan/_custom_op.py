"""A call traced by ``torch.compile`` on the kernel path becomes one opaque op, ``rlscan::scan``.

Dynamo cannot trace a Triton launch made through rlscan's own launcher, nor Triton's
interpreter: without this op a compiled function that calls an estimator on CUDA tensors breaks
its graph there (and ``fullgraph=True`` fails). The public functions' argument checks are plain
Python over shapes, dtypes and floats, which dynamo traces; the rest of the call,
``_layout.execute`` (the checks that read values, rows, outputs, launches), is this op. Its
fake implementation allocates the outputs as ``execute`` does (``Layout.empty``, from the
primary input's shape and strides), so a compiled call's outputs have the eager call's layout,
and the same config runs on the same memory layout: bit for bit the eager results. Inductor
calls the op like any aten op, and a CUDA graph (``mode="reduce-overhead"``) captures its
launches as it captures an eager call's. Its calls replay like the public functions'
(rlscan/_replay.py).

Defined with ``torch.library.Library`` rather than ``torch.library.custom_op``: on the dev box
a call of a no-op with this schema cost 11-12 us more than the Python function, through
``custom_op`` 33 us more (its Python wrapper; 2026-12-05).
"""
from typing import NamedTuple

import torch

from . import _problem as P
from ._replay import replayable

# the op's arguments: the Problem's tensors in the caller's layout (per-step ones in the
# primary's shape, per-row ones in its batch shape), then its scalars (rlscan/_problem.py)
_TENSORS = ("p0", "p1", "term", "trunc", "nv", "x1", "x2", "g", "lam", "row0", "row1")
_SCALARS = ("est", "reverse", "vnext", "ratio", "gamma", "lmbda", "rho_bar", "c_bar",
            "pg_rho_bar", "pg_mix", "starts_at")
_DEFAULTS = P.Problem._field_defaults

_lib = torch.library.Library("rlscan", "DEF")
_lib.define("scan(Tensor?[] tensors, int time_dim, int est, bool reverse, int vnext, int ratio, "
            "float gamma, float lmbda, float rho_bar, float c_bar, float pg_rho_bar, "
            "bool pg_mix, bool starts_at, int n_out, ScalarType dtype) -> Tensor[]")


class _Pair(NamedTuple):
    first: torch.Tensor
    second: torch.Tensor


@replayable
def _solve(p0, p1, term, trunc, nv, x1, x2, g, lam, row0, row1, time_dim, est, reverse, vnext,
           ratio, gamma, lmbda, rho_bar, c_bar, pg_rho_bar, pg_mix, starts_at, n_out, dtype):
    """The op's work, replayable (its primary is ``p0``): ``execute`` of the call these fields
    describe; one output, or a _Pair."""
    from . import _layout   # (a cycle at import: _layout imports this module)
    fields = dict(zip(_TENSORS, (p0, p1, term, trunc, nv, x1, x2, g, lam, row0, row1)))
    fields.update(zip(_SCALARS, (est, reverse, vnext, ratio, gamma, lmbda, rho_bar, c_bar,
                                 pg_rho_bar, pg_mix, starts_at)))
    outs = _layout.execute(_layout.Layout.checked_already(p0, time_dim), fields, n_out, dtype)
    return _Pair(*outs) if n_out > 1 else outs[0]


def _scan(tensors, *scalars):
    out = _solve(*tensors, *scalars)
    return list(out) if isinstance(out, tuple) else [out]


def _scan_fake(tensors, time_dim, *scalars):
    from . import _layout
    lay = _layout.Layout.checked_already(tensors[0], time_dim)
    n_out, dtype = scalars[-2:]
    return [lay.empty(dtype)[0] for _ in range(n_out)]


_lib.impl("scan", _scan, "CompositeExplicitAutograd")
torch.library.register_fake("rlscan::scan", _scan_fake, lib=_lib)


def run(lay, fields: dict, n_out: int, dtype: torch.dtype) -> list:
    """The call ``_layout.execute`` would make, through the op: ``n_out`` new outputs."""
    return torch.ops.rlscan.scan.default(
        [fields.get(k) for k in _TENSORS], lay.td,
        *[fields.get(k, _DEFAULTS.get(k)) for k in _SCALARS], n_out, dtype)
