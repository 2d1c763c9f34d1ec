"""What the tuner sweeps: the shape grid of BENCHMARKS.md, and each estimator's inputs.

Inputs follow BENCHMARKS.md's method: random data (never zeros), γ = 0.99, λ = 0.95, ~5%
terminations. Two dtype variants: ``float32`` (every input float32, flags too, like the
anchor library) and ``bfloat16`` (real inputs bfloat16, flags bool). Two layouts: ``time_last``
(``[N, T]``) and ``time_major`` (``[T, N]`` buffers, passed with ``time_dim=0``).

Data is drawn from a generator seeded per input set, on the device that uses it: every process
drawing on the same kind of device gets the same numbers, so a worker that computes set 0's
float64 reference (``reference``) sees exactly the inputs the tuner checks.
"""
import argparse
from typing import Callable, List, NamedTuple, Sequence, Tuple

import torch

import rlscan
from rlscan import tuning

try:
    from rlscan.verify import reference as _reference
except ImportError:  # running from a checkout without installing
    from verify import reference as _reference

STANDARD_SHAPES: Tuple[Tuple[int, int], ...] = (
    (64, 512), (4096, 128), (16384, 128), (65536, 128), (4096, 512), (16384, 512),
    (512, 4096), (4096, 2048), (131072, 256), (256, 8192), (1024, 8192), (8, 65536),
    (8, 262144), (1, 1048576), (32, 32768), (128, 16384))
QUICK_SHAPES: Tuple[Tuple[int, int], ...] = ((64, 512), (4096, 128), (8, 16384))
# Buckets off the standard grid that training runs commonly hit, each of 2**20-2**22 elements
# (smaller calls are dominated by the launch: a tuned config saves little there): buffers of
# simulated environments (both layouts) and batches of long sequences (time-last). Untuned,
# such a call runs the heuristic, which took 1.15-1.34x the tuned winners' time on the grid
# (geomean per dtype and layout, benchmarks/results/cross_gpu_h{100,200}.md); on these buckets
# 1.10-1.20x (H100, tune_h100_off_grid.md). Named for --shapes.
NAMED_SHAPES = {
    "off-grid-envs": ((4096, 256), (8192, 256), (2048, 512), (8192, 128), (32768, 128),
                      (32768, 64), (16384, 256), (65536, 64), (1024, 1024), (4096, 1024),
                      (2048, 2048)),
    "off-grid-sequences": ((256, 4096), (128, 8192), (64, 16384), (16, 65536), (512, 2048),
                           (1024, 2048), (64, 32768), (256, 16384), (16, 131072), (4, 262144),
                           (2, 524288)),
    # lengths divisible by 4 or 8 but not by 16, rows and steps alike (either layout): what the
    # launcher's ALIGN_T / ALIGN_N hints are for (forty-ninth session); for rlscan-bench
    "unaligned": ((1000, 3000), (1500, 600), (72, 3000), (100, 1000), (9000, 200), (24, 40008)),
    # time-last row lengths not a multiple of 4 (odd, or 2 mod 4): no load takes 4 steps,
    # and the split two-level tiles take 1.3-2.7x their registers there (fifty-sixth session,
    # benchmarks/results/probes/2026-12-07_fiftysixth_session_odd_steps_registers.txt)
    "odd-lengths": ((300, 2051), (500, 1030), (256, 4097), (1500, 4097), (1024, 8191),
                    (128, 16383)),
    "standard": STANDARD_SHAPES,
}

ESTIMATORS = tuning.ESTIMATORS
DTYPES = ("float32", "bfloat16")
LAYOUTS = ("time_last", "time_major")
GAMMA, LMBDA, DONE_P = 0.99, 0.95, 0.05
SEED = 20261130

# estimators whose public function returns two outputs (a NamedTuple)
TWO_OUTPUTS = ("gae", "vtrace")


class Cell(NamedTuple):
    """One tuned bucket: the shape measured stands for its whole [2^k, 2^(k+1)-1] bucket."""
    estimator: str
    N: int
    T: int
    dtype: str
    layout: str

    @property
    def reference_key(self) -> Tuple[str, int, int, str]:
        # the layout does not change the numbers, only where they sit
        return self.estimator, self.N, self.T, self.dtype

    def __str__(self) -> str:
        return f"{self.estimator} {self.N}x{self.T} {self.dtype} {self.layout}"


def itemsize(dtype: str) -> int:
    """Bytes an element of ``dtype`` (one of ``DTYPES``): the heuristic's ``itemsize``."""
    return getattr(torch, dtype).itemsize


def parse_shapes(text: str) -> List[Tuple[int, int]]:
    """``"4096x128,8x65536"`` -> [(4096, 128), (8, 65536)]; a name of ``NAMED_SHAPES`` stands
    for its shapes."""
    shapes = []
    for part in text.split(","):
        name = part.strip().lower()
        if name in NAMED_SHAPES:
            shapes += NAMED_SHAPES[name]
            continue
        try:
            n, t = (int(v) for v in name.split("x"))
        except ValueError:
            raise ValueError(f"shape {part!r}: expected ROWSxSTEPS, e.g. 4096x128, or one of "
                             f"{', '.join(NAMED_SHAPES)}") from None
        if n < 1 or t < 1:
            raise ValueError(f"shape {part!r}: rows and steps must be >= 1")
        shapes.append((n, t))
    return shapes


def comma_list(choices: Sequence[str], allow_empty: bool = False) -> Callable[[str], List[str]]:
    """An argparse type: a comma list of ``choices`` (rejected at parse time, before any GPU
    work, naming what was expected); ``allow_empty``: "" is the empty list."""
    def parse(text: str) -> List[str]:
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in choices]
        if bad or not (items or allow_empty):
            raise argparse.ArgumentTypeError(f"{','.join(bad) or text!r}: expected a comma list "
                                             f"of {', '.join(choices)}")
        return items
    return parse


def shapes_arg(text: str) -> List[Tuple[int, int]]:
    """An argparse type: ``parse_shapes`` with its error as argparse's."""
    try:
        return parse_shapes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def cells(shapes: Sequence[Tuple[int, int]], estimators: Sequence[str],
          dtypes: Sequence[str] = DTYPES, layouts: Sequence[str] = LAYOUTS) -> List[Cell]:
    """Every (shape, estimator, dtype, layout), one per bucket (the first shape of a bucket
    wins), ordered so cells sharing a float64 reference are adjacent. A time-major shape of
    one row is a time-last cell: a [T, 1] buffer has time stride 1, so its calls read the
    time-last entries (``tuning.layout_key``), and a time-major one would never be read."""
    for e in estimators:
        if e not in ESTIMATORS:
            raise ValueError(f"unknown estimator {e!r}; expected some of {', '.join(ESTIMATORS)}")
    out, seen = [], set()
    for n, t in shapes:
        for est in estimators:
            for dt in dtypes:
                for lay in layouts:
                    lay = "time_last" if n == 1 else lay
                    key = (est, dt, lay, tuning.bucket(n), tuning.bucket(t))
                    if key not in seen:
                        seen.add(key)
                        out.append(Cell(est, n, t, dt, lay))
    return out


# --------------------------------------------------------------------------- inputs
class Call(NamedTuple):
    """Arguments of one public-API call in the time-last layout (per-step tensors [N, T],
    per-row tensors [N])."""
    args: tuple
    kwargs: dict


def _draw(cell_or_key, generator: torch.Generator) -> Call:
    est, N, T, dt = cell_or_key[:4]
    real = torch.float32 if dt == "float32" else torch.bfloat16
    flag = torch.float32 if dt == "float32" else torch.bool
    dev = generator.device

    def normal(*shape, scale=1.0):
        return (torch.randn(*shape, generator=generator, device=dev) * scale).to(real)

    def done():
        return (torch.rand(N, T, generator=generator, device=dev) < DONE_P).to(flag)

    def uniform(lo, hi):
        return (lo + (hi - lo) * torch.rand(N, T, generator=generator, device=dev)).to(real)

    r = normal(N, T)
    if est == "gae":
        return Call((r, normal(N, T), done()), dict(last_value=normal(N), gamma=GAMMA, lmbda=LMBDA))
    if est == "vtrace":
        return Call((r, normal(N, T), done()),
                    dict(log_ratio=normal(N, T, scale=0.3), last_value=normal(N), gamma=GAMMA))
    if est == "retrace":
        return Call((r, normal(N, T), normal(N, T), done()),
                    dict(log_ratio=normal(N, T, scale=0.3), gamma=GAMMA, lmbda=LMBDA))
    if est == "lambda_returns":
        return Call((r, done()), dict(values=normal(N, T), last_value=normal(N), gamma=GAMMA,
                                      lmbda=LMBDA))
    if est == "discounted_returns":
        return Call((r, done()), dict(last_value=normal(N), gamma=GAMMA))
    if est == "eligibility_traces":
        return Call((r, done()), dict(gamma=GAMMA, lmbda=LMBDA, seed=normal(N)))
    if est == "episodic_cumsum":
        return Call((r, done()), dict(seed=normal(N)))
    if est == "linear_scan":
        # a < 1 keeps the recurrence's memory (and its fp32 error) bounded without resets
        return Call((uniform(0.8, 0.99), r), dict(init=normal(N)))
    raise ValueError(f"unknown estimator {est!r}")


def draw(cell: Cell, index: int = 0, device="cpu") -> Call:
    """Input set ``index`` of ``cell``, time-last, drawn on ``device`` from a seeded generator:
    the same numbers in every process that draws on the same kind of device (set 0 is the
    one checked against the reference, which a worker process computes)."""
    device = torch.device(device)
    return _draw(cell, torch.Generator(device).manual_seed(SEED + 7919 * index))


def map_tensors(call: Call, fn) -> Call:
    return Call(tuple(fn(a) if isinstance(a, torch.Tensor) else a for a in call.args),
                {k: fn(v) if isinstance(v, torch.Tensor) else v for k, v in call.kwargs.items()})


def place(call: Call, layout: str, device) -> Call:
    """The call as the tuner makes it: tensors on ``device``, per-step tensors transposed to
    ``[T, N]`` (and ``time_dim=0``) for the time-major layout."""
    def move(x):
        x = x.to(device)
        return x.t().contiguous() if layout == "time_major" and x.dim() == 2 else x
    out = map_tensors(call, move)
    if layout == "time_major":
        out.kwargs["time_dim"] = 0
    return out


def without_episode_ends(call: Call, decay: float) -> Call:
    """``call`` (any layout, any device) with no episode end and every per-step factor a equal
    to ``decay``: the done flags (its last positional argument) cleared, γ = ``decay``, λ = 1,
    importance ratios 1 (``log_ratio`` 0). The longest look-back walks that a call whose
    scalar coefficients bound a to ``decay`` can make (the tuner's worst case for a
    ``bounded_walk`` config, tune.sweep). Not for linear_scan, whose a is a tensor."""
    if "init" in call.kwargs:
        raise ValueError("without_episode_ends: linear_scan's a is a per-step input")
    args = call.args[:-1] + (torch.zeros_like(call.args[-1]),)
    kwargs = dict(call.kwargs)
    for k, v in (("gamma", decay), ("lmbda", 1.0)):
        if k in kwargs:
            kwargs[k] = v
    if "log_ratio" in kwargs:
        kwargs["log_ratio"] = torch.zeros_like(kwargs["log_ratio"])
    return Call(args, kwargs)


def run(estimator: str, call: Call) -> Tuple[torch.Tensor, ...]:
    """Call the public function; always a tuple of outputs."""
    out = getattr(rlscan, estimator)(*call.args, **call.kwargs)
    return tuple(out) if estimator in TWO_OUTPUTS else (out,)


def time_last(outputs: Tuple[torch.Tensor, ...], layout: str) -> Tuple[torch.Tensor, ...]:
    """Outputs viewed as [N, T] whatever the layout they were written in."""
    return tuple(o.t() for o in outputs) if layout == "time_major" else outputs


def reference(cell_or_key, device="cpu") -> Tuple:
    """float64 outputs of the sequential reference on input set 0 (drawn on ``device``, then
    brought to the CPU), as [N, T] numpy arrays."""
    est = cell_or_key[0]
    call = map_tensors(draw(Cell(*cell_or_key[:4], "time_last"), 0, device), lambda x: x.cpu())
    out = getattr(_reference, est)(*call.args, **call.kwargs)
    return tuple(out) if est in TWO_OUTPUTS else (out,)


def traffic_bytes(call: Call, n_outputs: int) -> int:
    """The fewest bytes a call must move: every input read once, every float32 output written
    once (BENCHMARKS.md's floor)."""
    tensors = [a for a in call.args if isinstance(a, torch.Tensor)]
    tensors += [v for v in call.kwargs.values() if isinstance(v, torch.Tensor)]
    first = tensors[0]
    return (sum(t.numel() * t.element_size() for t in tensors)
            + n_outputs * first.numel() * 4)


def n_outputs(estimator: str) -> int:
    return 2 if estimator in TWO_OUTPUTS else 1
