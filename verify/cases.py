"""One verification example: the inputs of one estimator call, held exactly.

A :class:`Case` stores every array time-last (``[..., T]``) in float64, holding values that are
exactly representable in the case's input dtype, so the float64 reference sees bit for bit what
the implementation sees. :meth:`Case.api_kwargs` turns it into the keyword arguments of rlscan's
public function (tensors in the case's dtype, flag dtype and memory layout, plus ``time_dim``);
:meth:`Case.reference_kwargs` into those of ``verify/reference.py``; :meth:`Case.to_source`
into Python source that rebuilds it, for reproducers.
"""
import copy
import dataclasses
from typing import Any, Dict, Optional

import numpy as np
import torch

from . import reference as ref

ESTIMATORS = ("discounted_returns", "gae", "lambda_returns", "vtrace", "retrace",
              "eligibility_traces", "episodic_cumsum", "linear_scan")
BACKWARD = frozenset({"discounted_returns", "gae", "lambda_returns", "vtrace", "retrace"})
FORWARD = frozenset({"eligibility_traces", "episodic_cumsum"})
OUTPUTS = {"gae": ("advantages", "returns"), "vtrace": ("vs", "pg_advantages")}
PRIMARY = {"eligibility_traces": "inputs", "episodic_cumsum": "inputs", "linear_scan": "a"}

STEP_REAL = frozenset({"rewards", "values", "next_values", "bootstrap_values", "log_ratio",
                       "target_logp", "behaviour_logp", "q_taken", "expected_next_q",
                       "target_probs", "behaviour_probs", "inputs", "a", "b"})
STEP_FLAG = frozenset({"terminated", "truncated", "dones"})
ROW_REAL = frozenset({"last_value", "seed", "init"})
ROW_FLAG = frozenset({"done_prev"})
COEF = frozenset({"gamma", "lmbda"})   # a float, or an array [..., 1] (per row) or [..., T]

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
FLAG_DTYPES = {"bool": torch.bool, "uint8": torch.uint8, "float32": torch.float32}
# time_last: [..., T] contiguous. time_major: [T, ...], time_dim=0. time_middle: [B, T, ...]
# (time_dim=1; needs two batch axes). strided: a time-last view with time stride 2 into a buffer
# whose other half is NaN (or true), so reading outside the view shows up. sliced: a time-last
# view x[..., :T] of rows one step longer whose last step is NaN (or true): unit time stride, a
# row stride of T + 1 (odd at even T: the launcher's alignment hints and two-level groups must
# follow the strides, not T alone). transposed: time-last shape, time-major memory.
LAYOUTS = ("time_last", "time_major", "time_middle", "strided", "sliced", "transposed")


def output_names(estimator: str):
    return OUTPUTS.get(estimator, ("out",))


def round_to(x, dtype: str) -> np.ndarray:
    """float64 values rounded to ``dtype`` (round to nearest even), subnormals flushed to 0 —
    GPU kernels flush them, so they would read as a kernel error otherwise."""
    t = torch.as_tensor(np.asarray(x, np.float64)).to(DTYPES[dtype])
    y = t.double().numpy().copy()
    with np.errstate(invalid="ignore"):
        y[np.abs(y) < torch.finfo(DTYPES[dtype]).tiny] = 0.0
    return y


def _layout_step(x: torch.Tensor, layout: str, fill) -> torch.Tensor:
    """Place a time-last tensor in ``layout`` (same values, same device; see LAYOUTS)."""
    if layout == "time_major":
        return x.movedim(-1, 0).contiguous()
    if layout == "time_middle" and x.dim() >= 3:
        return x.movedim(-1, 1).contiguous()
    if layout == "strided":
        buf = torch.full(x.shape[:-1] + (2 * x.shape[-1],), fill, dtype=x.dtype, device=x.device)
        buf[..., ::2] = x
        return buf[..., ::2]
    if layout == "sliced":
        buf = torch.full(x.shape[:-1] + (x.shape[-1] + 1,), fill, dtype=x.dtype, device=x.device)
        buf[..., :-1] = x
        return buf[..., :-1]
    if layout == "transposed":
        return x.movedim(-1, 0).contiguous().movedim(0, -1)
    return x.contiguous()


def time_dim_of(layout: str, ndim: int) -> int:
    if layout == "time_major":
        return 0
    if layout == "time_middle" and ndim >= 3:
        return 1
    return -1


@dataclasses.dataclass
class Case:
    """``inputs`` maps argument names to float64 arrays (time-last), bools, floats or strings."""
    estimator: str
    inputs: Dict[str, Any]
    dtype: str = "float32"
    flag_dtype: str = "bool"
    layout: str = "time_last"
    config: Optional[Dict[str, int]] = None   # rlscan kernel config to force (BLOCK_N, BLOCK_T)

    # ------------------------------------------------------------------ shape
    @property
    def primary(self) -> str:
        return PRIMARY.get(self.estimator, "rewards")

    @property
    def shape(self):
        return tuple(np.shape(self.inputs[self.primary]))

    @property
    def T(self) -> int:
        return self.shape[-1]

    @property
    def rows(self) -> int:
        return int(np.prod(self.shape[:-1], dtype=np.int64))

    @property
    def time_dim(self) -> int:
        return time_dim_of(self.layout, len(self.shape))

    def replace(self, **changes) -> "Case":
        """A deep copy with some fields replaced; ``inputs=`` entries are merged, None deletes."""
        new = copy.deepcopy(self)
        for k, v in changes.pop("inputs", {}).items():
            if v is None:
                new.inputs.pop(k, None)
            else:
                new.inputs[k] = v
        return dataclasses.replace(new, **changes)

    # ------------------------------------------------------------------ materialisation
    def api_kwargs(self, device="cpu") -> dict:
        """Keyword arguments for rlscan's public function (and any implementation with its
        signature): tensors on ``device`` in the case's dtypes and layout, and ``time_dim``."""
        dt, fdt = DTYPES[self.dtype], FLAG_DTYPES[self.flag_dtype]
        kw = {}
        for name, v in self.inputs.items():
            # move first, then lay out: .to() would make a non-dense view contiguous
            if name in STEP_REAL:
                x = _layout_step(torch.as_tensor(v).to(device, dt), self.layout, float("nan"))
            elif name in STEP_FLAG:
                x = _layout_step(torch.as_tensor(np.asarray(v) != 0).to(device, fdt),
                                 self.layout, 1)
            elif name in ROW_REAL:
                x = torch.as_tensor(np.asarray(v, np.float64)).to(device, dt)
            elif name in ROW_FLAG:
                x = torch.as_tensor(np.asarray(v) != 0).to(device, fdt)
            elif name in COEF and isinstance(v, np.ndarray):
                x = torch.as_tensor(v).to(device, dt)
                x = x.movedim(-1, self.time_dim).contiguous() if self.time_dim != -1 else x
            else:
                kw[name] = v
                continue
            kw[name] = x
        kw["time_dim"] = self.time_dim
        return kw

    def reference_kwargs(self) -> dict:
        """Keyword arguments for verify/reference.py: float64 arrays, ratios resolved."""
        kw = {k: (np.asarray(v) != 0 if k in STEP_FLAG | ROW_FLAG else v)
              for k, v in self.inputs.items()}
        if "target_logp" in kw:        # V-trace's log-probability pair
            kw["log_ratio"] = kw.pop("target_logp") - kw.pop("behaviour_logp")
        if "target_probs" in kw:       # Retrace's probability pair
            with np.errstate(divide="ignore", invalid="ignore"):
                kw["ratio"] = kw.pop("target_probs") / kw.pop("behaviour_probs")
        return kw

    def reference(self) -> Dict[str, np.ndarray]:
        """The float64 sequential reference's outputs, by output name."""
        fn = getattr(ref, self.estimator)
        with np.errstate(all="ignore"):
            out = fn(**self.reference_kwargs())
        out = out if isinstance(out, tuple) else (out,)
        return dict(zip(output_names(self.estimator), out))

    # ------------------------------------------------------------------ reproducers
    def to_source(self) -> str:
        """Python source that rebuilds this case (``nan``, ``inf`` and ``array`` in scope)."""
        items = []
        for k, v in self.inputs.items():
            if isinstance(v, np.ndarray):
                tail = ", dtype=bool)" if v.dtype == bool else ")"
                lit = f"array({_literal(v.tolist())}{tail}"
            else:
                lit = _literal(v)
            items.append(f"        {k!r}: {lit},")
        body = "\n".join(items)
        extra = "" if self.config is None else f", config={self.config!r}"
        return (f"Case({self.estimator!r}, {{\n{body}\n    }}, dtype={self.dtype!r}, "
                f"flag_dtype={self.flag_dtype!r}, layout={self.layout!r}{extra})")


def _literal(v) -> str:
    """repr that round-trips floats exactly and spells nan/inf as names."""
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_literal(x) for x in v) + "]"
    if isinstance(v, (np.floating, np.integer, np.bool_)):
        return _literal(v.item())
    return repr(v)


def to_numpy(out, time_dim: int) -> np.ndarray:
    """An implementation's output tensor as a float64 time-last array."""
    if not isinstance(out, torch.Tensor):
        out = torch.as_tensor(np.asarray(out))
    return out.detach().movedim(time_dim, -1).to("cpu", torch.float64).numpy()
