"""From the caller's tensors to [N, T] row views and back, without copies where strides allow.

The time axis may sit anywhere (``time_dim``); all other axes are batch axes and are flattened,
in order, into N rows. Per-step inputs must all have the same shape (no broadcasting along time,
ALGORITHMS.md §1.1); γ and λ tensors are broadcast (stride-0 views, no copy).
"""
import math
import os
from typing import Optional, Tuple

import torch

from . import _checks as C
from . import _custom_op
from . import _problem as P
from ._replay import forbid


POISON_OUTPUTS = False   # tests set this: outputs start as NaN so unwritten lanes show up
PATH_OVERRIDE = None     # benchmarks set this: a callable(problem, out0, out1) replacing the path


class Layout:
    """Shape bookkeeping for one call, keyed on its primary input (rewards / inputs / a)."""

    def __init__(self, name: str, primary, time_dim, kind: str = "real"):
        if not isinstance(primary, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(primary).__name__}")
        self.td = C.time_axis(time_dim, primary.dim())
        C.tensor(name, primary, kind=kind)
        self._describe(primary)

    @classmethod
    def checked_already(cls, primary: torch.Tensor, td: int) -> "Layout":
        """The Layout of a call whose arguments were checked (``td`` non-negative)."""
        lay = cls.__new__(cls)
        lay.td = td
        lay._describe(primary)
        return lay

    def _describe(self, primary: torch.Tensor) -> None:
        self.primary = primary
        self.shape = tuple(primary.shape)
        self.device = primary.device
        self.T = self.shape[self.td]
        self.batch_shape = self.shape[:self.td] + self.shape[self.td + 1:]
        self.N = math.prod(self.batch_shape)

    def rows(self, x: torch.Tensor) -> torch.Tensor:
        """[N, T] view (a copy only when the batch axes cannot be collapsed by strides)."""
        if x.dim() == 2:          # the common layouts, without movedim/reshape (host cost)
            return x if self.td == 1 else x.t()
        return x.movedim(self.td, -1).reshape(self.N, self.T)

    def step(self, name: str, x, kind: str = "real") -> Optional[torch.Tensor]:
        if x is None:
            return None
        try:
            C.tensor(name, x, kind=kind, shape=self.shape, device=self.device)
        except ValueError as e:
            if name == "values" and self._one_step_longer(x):   # V(s_0..s_T), a common layout
                raise ValueError(f"{e}. It has one step more: pass its first T steps, "
                                 f"V(s_0)..V(s_T-1), as values and its last, V(s_T), as "
                                 f"last_value (or per step as bootstrap_values)") from None
            raise
        return x

    def _one_step_longer(self, x: torch.Tensor) -> bool:
        want = list(self.shape)
        want[self.td] += 1
        return list(x.shape) == want

    def row(self, name: str, x, kind: str = "real") -> Optional[torch.Tensor]:
        """A per-row tensor of the batch shape, checked; None passes through."""
        if x is None:
            return None
        C.tensor(name, x, kind=kind, shape=self.batch_shape, device=self.device,
                 what="the batch shape (the per-step shape without the time axis)")
        return x

    def coef(self, name: str, v):
        """γ or λ: (float, None) or (0.0, broadcast per-step tensor; its values are checked by
        ``execute``)."""
        v = C.unit_interval(name, v, self.shape, self.device)
        return (0.0, v) if isinstance(v, torch.Tensor) else (v, None)

    def empty(self, dtype: torch.dtype) -> Tuple[torch.Tensor, torch.Tensor]:
        """An output in the primary input's layout, and its [N, T] view."""
        out = torch.empty_like(self.primary, dtype=dtype)
        if POISON_OUTPUTS:
            out.fill_(float("nan"))
        if out.dim() == 2 and out.is_contiguous():
            return out, (out if self.td == 1 else out.t())
        moved = out.movedim(self.td, -1)
        try:
            return out, moved.view(self.N, self.T)
        except (RuntimeError, ValueError):   # not collapsible (fake tensors: ValueError):
            # time-last rows instead
            moved = torch.full(moved.shape, float("nan"), dtype=dtype, device=self.device)
            return moved.movedim(-1, self.td), moved.view(self.N, self.T)


def use_kernels(device: torch.device) -> bool:
    """CUDA tensors always take the Triton kernels; CPU tensors take them, interpreted, only
    under RLSCAN_INTERPRET=1 (how CI tests the kernels), else the torch implementation."""
    return device.type == "cuda" or os.environ.get("RLSCAN_INTERPRET") == "1"


_launch = None


def _kernel_launch():
    """The kernel launcher, imported on first use (importing it loads Triton)."""
    global _launch
    if _launch is None:
        from .kernels.launch import launch
        _launch = launch
    return _launch


_PER_ROW = ("row0", "row1")


def check_values(lay: Layout, f: dict) -> None:
    """The checks that read tensor values (a host sync on CUDA), on every call: ``last_value``
    cannot bootstrap interior truncations, and a CPU per-step γ or λ lies in [0, 1] (on CUDA
    that would be a sync per call, so it is not checked)."""
    if f.get("vnext") == P.VN_BOOT_LAST and f.get("trunc") is not None:
        forbid()    # no replay may skip it
        term = f.get("term")
        P.check_no_interior_truncations(None if term is None else term.movedim(lay.td, -1),
                                        f["trunc"].movedim(lay.td, -1))
    for name, key in (("gamma", "g"), ("lmbda", "lam")):
        v = f.get(key)
        if v is not None and v.device.type == "cpu":
            C.values_in_unit_interval(name, v)


def traced(device: torch.device) -> bool:
    """A torch.compile trace of the kernel path: the call becomes the op of
    rlscan/_custom_op.py."""
    return torch.compiler.is_compiling() and PATH_OVERRIDE is None and use_kernels(device)


def execute(lay: Layout, pb_fields: dict, n_out: int, dtype: torch.dtype):
    """Check what only the data can tell, flatten inputs to rows, build the Problem, allocate
    outputs, run the chosen path; traced by torch.compile on the kernel path, all of that is
    one op (rlscan/_custom_op.py), whose implementation calls this."""
    if traced(lay.device):
        return _custom_op.run(lay, pb_fields, n_out, dtype)
    check_values(lay, pb_fields)
    outs = [lay.empty(dtype) for _ in range(n_out)]
    if lay.N == 0 or lay.T == 0:
        return [o for o, _ in outs]
    fields = dict(pb_fields)
    if lay.td != 1 or len(lay.shape) != 2:     # 2-D time-last tensors already are the rows
        for k, v in pb_fields.items():
            if isinstance(v, torch.Tensor) and k not in _PER_ROW:
                fields[k] = lay.rows(v)
    for k in _PER_ROW:
        v = fields.get(k)
        if v is not None:
            fields[k] = v.reshape(lay.N).contiguous()
    pb = P.Problem(N=lay.N, T=lay.T, **fields)
    v0 = outs[0][1]
    v1 = outs[1][1] if n_out > 1 else None
    if PATH_OVERRIDE is not None:
        PATH_OVERRIDE(pb, v0, v1)
    elif use_kernels(lay.device):
        _kernel_launch()(pb, v0, v1)
    else:
        from ._torch_path import run
        run(pb, v0, v1)
    return [o for o, _ in outs]
