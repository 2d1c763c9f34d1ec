"""Hypothesis strategies for rlscan's inputs, as small ``@composite`` functions.

Structure (shapes, dtypes, layouts, flag patterns, γ/λ kinds, thresholds, encodings, where to
plant NaN) is drawn by Hypothesis so it shrinks to a readable example; bulk values come from a
NumPy generator seeded by a drawn integer, so long horizons stay cheap to generate.

Every real value is rounded to the case's input dtype before it is stored, so the reference sees
exactly what the implementation sees, and subnormals are flushed (GPU kernels flush them).
Importing this module registers the Hypothesis profiles (verify/profiles.py).
"""
import math
from typing import Optional, Sequence

import numpy as np
from hypothesis import strategies as st

from . import profiles  # noqa: F401  (registers the profiles)
from .cases import BACKWARD, DTYPES, LAYOUTS, Case, round_to

INF = math.inf
FLAG_DTYPE_NAMES = ("bool", "uint8", "float32")
POISONS = (math.nan, INF, -INF)
# Decades of |value| per dtype: from tiny to large, without overflow or subnormals.
_DECADES = {"float32": (-20, 6), "bfloat16": (-20, 6), "float16": (-3, 4)}
# rlscan kernel configs that put chunk and row-block edges inside small shapes.
# The chunked (multi-program) strategy gets spans of 2-3 chunks, so the carry pass runs too.
# TWO_LEVEL ones (backward scans; forward ones ignore it) put group edges every 4 steps, and
# with 256 steps a chunk the edge between a thread's two register-held parts at step 128; each
# fills its warp with rows (BLOCK_N * BLOCK_T / 4 >= 32), else the launcher scans it plainly (an
# 8x8 chunked tile did until the fourteenth session).
# Look-back spans (one chunk each) fold the earlier spans' published summaries in one launch.
# LANE_ROWS ones (time-major calls; time-last ones ignore it) hold one row a lane, a row
# block of 32 and chunked spans of 2 chunks.
SMALL_CONFIGS = ({"BLOCK_N": 1, "BLOCK_T": 8}, {"BLOCK_N": 2, "BLOCK_T": 16},
                 {"BLOCK_N": 4, "BLOCK_T": 4}, {"BLOCK_N": 1, "BLOCK_T": 2},
                 {"BLOCK_N": 2, "BLOCK_T": 32},
                 {"strategy": "chunked", "BLOCK_N": 1, "BLOCK_T": 8, "CHUNKS_PER_SPAN": 2},
                 {"strategy": "chunked", "BLOCK_N": 2, "BLOCK_T": 4, "CHUNKS_PER_SPAN": 3},
                 {"BLOCK_N": 8, "BLOCK_T": 16, "num_warps": 1, "TWO_LEVEL": True},
                 {"BLOCK_N": 1, "BLOCK_T": 256, "num_warps": 1, "TWO_LEVEL": True},
                 {"strategy": "chunked", "BLOCK_N": 16, "BLOCK_T": 8, "num_warps": 1,
                  "CHUNKS_PER_SPAN": 2, "TWO_LEVEL": True},
                 {"strategy": "lookback", "BLOCK_N": 2, "BLOCK_T": 16, "CHUNKS_PER_SPAN": 1},
                 {"strategy": "lookback", "BLOCK_N": 8, "BLOCK_T": 16, "num_warps": 1,
                  "CHUNKS_PER_SPAN": 1, "TWO_LEVEL": True},
                 {"BLOCK_N": 32, "BLOCK_T": 4, "num_warps": 1, "LANE_ROWS": True},
                 {"strategy": "chunked", "BLOCK_N": 32, "BLOCK_T": 8, "num_warps": 1,
                  "CHUNKS_PER_SPAN": 2, "LANE_ROWS": True})


def fp32(x: float) -> float:
    """Round a Python float to the nearest float32 (how the kernels receive γ, λ, thresholds),
    so rounding a scalar parameter is not counted as kernel error."""
    return float(np.float32(x))


def _rng(draw) -> np.random.Generator:
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


# ----------------------------------------------------------------------------- shapes
@st.composite
def batch_shapes(draw, max_rows: int, min_rows: int = 1):
    """Batch axes holding ``min_rows``..``max_rows`` rows: none (a single 1-D row), one axis, or
    two (so a time axis can sit between them)."""
    rows = draw(st.integers(min_rows, max(min_rows, max_rows)))
    axes = draw(st.sampled_from([1, 2, 0]))
    if axes == 0 and rows == 1:
        return ()
    if axes == 2:
        d = draw(st.sampled_from([d for d in range(1, rows + 1) if rows % d == 0]))
        return (d, rows // d)
    return (rows,)


def horizons(max_T: int, chunk_edges: Sequence[int] = ()):
    """T from 1 to max_T, with block/chunk edges (L-1, L, L+1) and non-powers of two likely."""
    edges = sorted({t for L in chunk_edges for t in (L - 1, L, L + 1) if 1 <= t <= max_T}
                   | {t for t in (1, 2, 3, 5, 7) if t <= max_T})
    return st.one_of(st.integers(1, max_T), st.sampled_from(edges))


@st.composite
def shapes(draw, budget, min_rows: int = 1):
    """A per-step shape ``batch + (T,)`` within ``budget`` (verify/profiles.py)."""
    return draw(batch_shapes(budget.max_rows, min_rows)) + (draw(horizons(budget.max_T,
                                                                          budget.chunk_edges)),)


# ----------------------------------------------------------------------------- values
@st.composite
def reals(draw, shape, dtype: str = "float32", kind: Optional[str] = None):
    """Finite values representable in ``dtype``, no subnormals: small integers, normal at a drawn
    scale, log-uniform over many decades (mixed magnitudes), a constant, or zeros."""
    # zeros and constants hide bugs; keep them rare
    kind = kind or draw(st.sampled_from(["small_ints", "normal", "log_uniform", "normal",
                                         "small_ints", "log_uniform", "constant", "zeros"]))
    lo, hi = _DECADES[dtype]
    rng = _rng(draw)
    if kind == "small_ints":
        x = rng.integers(-3, 4, shape).astype(np.float64)
    elif kind == "normal":
        x = rng.standard_normal(shape) * 10.0 ** draw(st.sampled_from([0, -3, 3, lo, hi]))
    elif kind == "log_uniform":
        x = rng.choice([-1.0, 1.0], shape) * 10.0 ** rng.uniform(lo, hi, shape)
    elif kind == "constant":
        x = np.full(shape, rng.standard_normal() * 10.0 ** draw(st.sampled_from([0, lo, hi])))
    else:
        x = np.zeros(shape)
    limit = 0.9 * float(np.finfo(np.float16).max) if dtype == "float16" else 1e30
    return round_to(np.clip(x, -limit, limit), dtype)


FLAG_PATTERNS = ("random", "none", "first", "last", "burst", "all", "every")
DENSITIES = (0.1, 0.3, 0.02, 0.7, 0.95)


def _flag_row(kind, rng, T, density, start=0, step=2):
    f = np.zeros(T, bool)
    if kind == "random":
        f = rng.random(T) < density
    elif kind == "first":
        f[0] = True
    elif kind == "last":
        f[-1] = True
    elif kind == "all":
        f[:] = True
    elif kind == "every":
        f[start::step] = True
    elif kind == "burst":
        lo = rng.integers(0, T)
        f[lo:lo + rng.integers(2, T + 2)] = True
    return f


@st.composite
def flag_arrays(draw, shape):
    """Episode-end flags: none, all, first step, last step, a burst of consecutive ends, every
    k-th step, or random at a density from rare to dense — one pattern for all rows, or
    ("mixed") a pattern and density per row, so one example covers several."""
    kind = draw(st.sampled_from(("mixed",) + FLAG_PATTERNS))
    density = draw(st.sampled_from(DENSITIES))
    start, step = draw(st.integers(0, 3)), draw(st.integers(2, 6))
    rng = _rng(draw)
    T = shape[-1]
    rows = []
    for _ in range(int(np.prod(shape[:-1], dtype=np.int64))):
        k = FLAG_PATTERNS[rng.integers(len(FLAG_PATTERNS))] if kind == "mixed" else kind
        d = DENSITIES[rng.integers(len(DENSITIES))] if kind == "mixed" else density
        rows.append(_flag_row(k, rng, T, d, start, step))
    return np.array(rows, bool).reshape(shape)


@st.composite
def unit_coefs(draw, shape, dtype: str = "float32"):
    """γ or λ in [0, 1], exactly 0 and 1 included: a float, a per-row array ``[..., 1]`` or a
    per-step array ``[..., T]`` (rounded to ``dtype``; the API broadcasts them)."""
    kind = draw(st.sampled_from(["scalar", "per_step", "per_row"]))
    if kind == "scalar":
        return fp32(draw(st.one_of(st.sampled_from([0.9, 0.99, 0.0, 1.0, 0.5, 0.999]),
                                   st.floats(0.0, 1.0))))
    rng = _rng(draw)
    arr_shape = shape[:-1] + ((1,) if kind == "per_row" else (shape[-1],))
    pick = rng.random(arr_shape)
    x = np.where(pick < 0.15, 0.0, np.where(pick < 0.3, 1.0, rng.uniform(0.5, 1.0, arr_shape)))
    x = np.where(pick > 0.9, rng.random(arr_shape), x)
    return np.clip(round_to(x, dtype), 0.0, 1.0)


def thresholds(high: float = 2.0):
    """A clipping threshold in (0, +inf], +inf (no clipping) included."""
    return st.one_of(st.sampled_from([1.0, INF, 0.5, 2.0, 1.2, 0.95]),
                     st.floats(0.05, high)).map(fp32)


@st.composite
def log_ratios(draw, shape, dtype: str, extreme_ok: bool):
    """log(π/μ): exactly 0, near 0, moderate, or (only when every threshold is finite, so
    clipping keeps the math finite) extreme: ratios of exactly 0 (-inf), ~0, ~1 and huge (whose
    exp overflows float32)."""
    modes = ["near_one", "zero", "moderate"] + (["extreme"] if extreme_ok else [])
    mode = draw(st.sampled_from(modes))
    rng = _rng(draw)
    if mode == "zero":
        x = np.zeros(shape)
    elif mode == "near_one":
        x = rng.normal(0.0, 0.05, shape)
    elif mode == "moderate":
        # without a finite c̄ the decay γλ·ratio may exceed 1; keep its products in range
        x = np.clip(rng.normal(0.0, 0.7, shape), -6.0, 3.0 if extreme_ok else 0.4)
    else:
        x = rng.choice([-INF, -100.0, -20.0, -1.0, 0.0, 0.3, 2.0, 20.0, 100.0], shape)
    return round_to(x, dtype)


# ----------------------------------------------------------------------------- flags & slots
def _flags_of(inputs, shape):
    """term, done, cut, boot masks (ALGORITHMS.md §1.2) of a backward estimator's inputs."""
    term = np.asarray(inputs.get("terminated", np.zeros(shape))) != 0
    trunc = np.asarray(inputs.get("truncated", np.zeros(shape))) != 0
    done = term | trunc
    cut = done.copy()
    cut[..., -1] = True
    return term, done, cut, cut & ~term


def _after_cut(cut):
    """t == 0 or cut[t-1]: the steps whose values[t] / c[t] no earlier element reads."""
    m = np.ones(cut.shape, bool)
    m[..., 1:] = cut[..., :-1]
    return m


def ignored_slots(case: Case) -> dict:
    """Per input, the slots the math must ignore (ALGORITHMS.md §1.3, §1.5): planting NaN or inf
    there must not change any output.

    Careful with E2: values[t+1] is read as V(s'_t) at every non-cut t for GAE, V-trace and
    λ-returns, so the ignorable slots are next_values (E1) at terminated steps and
    bootstrap_values at non-boot steps."""
    est, x, shape = case.estimator, case.inputs, case.shape
    slots = {}
    if est in BACKWARD:
        term, _, cut, boot = _flags_of(x, shape)
        if "bootstrap_values" in x:
            slots["bootstrap_values"] = ~boot
        if "next_values" in x:
            slots["next_values"] = ~boot if est == "discounted_returns" else term
        if "last_value" in x:
            slots["last_value"] = term[..., -1]
        if "values" in x and est == "discounted_returns":
            slots["values"] = np.ones(shape, bool)   # only bootstrap slots are read
        if "values" in x and est == "lambda_returns" and "next_values" not in x:
            slots["values"] = _after_cut(cut)        # values[t] only as vnext[t-1]
        if est == "retrace":
            slots["expected_next_q"] = term
            unused_c = _after_cut(cut)               # c[t] only in a[t-1]; c[0] never
            slots["log_ratio" if "log_ratio" in x else "target_probs"] = unused_c
    elif est in ("eligibility_traces", "episodic_cumsum") and "seed" in x:
        if x.get("boundary") == "starts_at":
            slots["seed"] = np.asarray(x["dones"])[..., 0] != 0
        elif "done_prev" in x:
            slots["seed"] = np.asarray(x["done_prev"]) != 0
    elif est == "linear_scan" and "init" in x:
        first = -1 if x.get("reverse") else 0
        slots["init"] = np.asarray(x["a"])[..., first] == 0
    return slots


@st.composite
def plant_in_ignored(draw, case: Case) -> Case:
    """Put NaN or ±inf into some or all of the slots the math must ignore."""
    slots = ignored_slots(case)
    if not slots or not draw(st.booleans()):
        return case
    rng = _rng(draw)
    poison = draw(st.sampled_from(POISONS))
    everywhere = draw(st.booleans())
    new = {}
    for name, mask in slots.items():
        mask = mask & (rng.random(mask.shape) < 0.5) if not everywhere else mask
        new[name] = np.where(mask, poison, case.inputs[name])
    return case.replace(inputs=new)


# ----------------------------------------------------------------------------- estimators
@st.composite
def _episode_flags(draw, shape):
    x = {}
    which = draw(st.sampled_from(["both", "terminated", "neither", "truncated"]))
    if which in ("both", "terminated"):
        x["terminated"] = draw(flag_arrays(shape))
    if which in ("both", "truncated"):
        x["truncated"] = draw(flag_arrays(shape))
    if which == "both" and draw(st.booleans()):   # both flags on one step: terminated wins
        rng = _rng(draw)
        x["truncated"] = x["truncated"] | (x["terminated"] & (rng.random(shape) < 0.5))
    return x


_ENCODINGS = {
    "discounted_returns": ["bootstrap_values", "none", "next_values", "values+bootstrap_values",
                           "last_value", "values+last_value", "values"],
    "gae": ["bootstrap_values", "next_values", "last_value", "values"],
    "vtrace": ["bootstrap_values", "next_values", "last_value", "values"],
    "lambda_returns": ["values+bootstrap_values", "next_values", "values+last_value", "values"],
}


@st.composite
def _successor(draw, est, x, shape, dtype):
    """One successor-value encoding (ALGORITHMS.md §1.3), values drawn for every slot so that
    stray bootstrap entries at non-boot steps are nonzero."""
    enc = draw(st.sampled_from(_ENCODINGS[est]))
    parts = enc.split("+")
    if "values" in parts and "values" not in x:
        x["values"] = draw(reals(shape, dtype))
    if "next_values" in parts:
        x["next_values"] = draw(reals(shape, dtype))
    if "bootstrap_values" in parts:
        x["bootstrap_values"] = draw(reals(shape, dtype))
    if "last_value" in parts:
        # last_value cannot express an interior truncation (the API rejects it): keep
        # truncations only where terminated or at T-1
        if "truncated" in x:
            keep = np.asarray(x.get("terminated", np.zeros(shape, bool))).copy()
            keep[..., -1] = True
            x["truncated"] = x["truncated"] & keep
        x["last_value"] = draw(reals(shape[:-1], dtype))
    return x


@st.composite
def _backward_inputs(draw, est, shape, dtype):
    x = {"rewards": draw(reals(shape, dtype))}
    if est in ("gae", "vtrace"):
        x["values"] = draw(reals(shape, dtype))
    if est == "retrace":
        x["q_taken"] = draw(reals(shape, dtype))
        x["expected_next_q"] = draw(reals(shape, dtype))
    x.update(draw(_episode_flags(shape)))
    if est != "retrace":
        x = draw(_successor(est, x, shape, dtype))
    x["gamma"] = draw(unit_coefs(shape, dtype))
    if est != "discounted_returns":
        x["lmbda"] = draw(unit_coefs(shape, dtype))
    if est == "vtrace":
        x["rho_bar"] = draw(thresholds(high=10.0))
        x["c_bar"] = draw(thresholds())
        if draw(st.booleans()):
            x["pg_rho_bar"] = draw(thresholds(high=10.0))
        x["pg_bootstrap"] = draw(st.sampled_from(["vs", "lambda_mix"]))
        finite = all(math.isfinite(x.get(k, 1.0)) for k in ("rho_bar", "c_bar", "pg_rho_bar"))
        lr = draw(log_ratios(shape, dtype, finite))
        if draw(st.booleans()):
            x["log_ratio"] = lr
        else:   # a log-probability pair: behaviour ≤ 0, target = behaviour + log-ratio
            rng = _rng(draw)
            x["behaviour_logp"] = round_to(-np.abs(rng.normal(0.0, 2.0, shape)), dtype)
            x["target_logp"] = round_to(x["behaviour_logp"] + lr, dtype)
    if est == "retrace":
        x["c_bar"] = draw(thresholds())
        finite = math.isfinite(x["c_bar"])
        lr = draw(log_ratios(shape, dtype, finite))
        if draw(st.booleans()):
            x["log_ratio"] = lr
        else:   # probabilities of the taken action: μ in (0, 1], π = μ·ratio (0 allowed)
            rng = _rng(draw)
            mu = rng.uniform(0.05, 1.0, shape)
            tiny = 1e-4 if dtype == "float16" else 1e-20
            mu = np.where(lr >= 20, tiny, mu)   # huge ratios: a near-impossible behaviour action
            x["behaviour_probs"] = round_to(mu, dtype)
            with np.errstate(over="ignore"):
                pi = np.where(lr >= 20, 1.0, np.minimum(mu * np.exp(lr), 1.0))
            x["target_probs"] = round_to(pi, dtype)
    return x


@st.composite
def _forward_inputs(draw, est, shape, dtype):
    x = {"inputs": draw(reals(shape, dtype)), "dones": draw(flag_arrays(shape))}
    if est == "eligibility_traces":
        x["gamma"] = draw(unit_coefs(shape, dtype))
        x["lmbda"] = draw(unit_coefs(shape, dtype))
    else:
        x["boundary"] = draw(st.sampled_from(["ends_at", "starts_at"]))
    if draw(st.booleans()):
        x["seed"] = draw(reals(shape[:-1], dtype))
    if x.get("boundary") != "starts_at" and draw(st.booleans()):
        x["done_prev"] = draw(flag_arrays(shape[:-1] + (1,)))[..., 0]
    return x


@st.composite
def decays(draw, shape, dtype):
    """The generic recurrence's a: decays in [-1, 1], exact resets (0), identities (1), and
    mild growth (|a| up to 1.5; float32 products stay in range for the horizons drawn)."""
    rng = _rng(draw)
    mode = draw(st.sampled_from(["decay", "resets", "unit", "growth"]))
    if mode == "unit":
        a = np.ones(shape)
    elif mode == "growth":
        a = rng.uniform(-1.5, 1.5, shape)
    else:
        a = rng.uniform(-1.0, 1.0, shape)
    if mode == "resets":
        a = np.where(rng.random(shape) < 0.2, 0.0, a)
    return round_to(a, dtype)


@st.composite
def _linear_inputs(draw, shape, dtype):
    x = {"a": draw(decays(shape, dtype)), "b": draw(reals(shape, dtype)),
         "reverse": draw(st.booleans())}
    if draw(st.booleans()):
        x["init"] = draw(reals(shape[:-1], dtype))
    return x


def inputs_for(estimator: str, shape, dtype: str):
    """A strategy for the inputs dict of ``estimator`` at ``shape``."""
    if estimator in BACKWARD:
        return _backward_inputs(estimator, shape, dtype)
    if estimator == "linear_scan":
        return _linear_inputs(shape, dtype)
    return _forward_inputs(estimator, shape, dtype)


@st.composite
def cases(draw, estimator: str, budget, *, dtypes=tuple(DTYPES), layouts=LAYOUTS,
          min_rows: int = 1, plant: bool = True, configs: Sequence = ()):
    """A full example for ``estimator``: shape, input dtype, flag dtype, layout, inputs, and
    (with ``plant``) NaN/inf in slots the math must ignore. ``configs``: rlscan kernel configs
    to force besides the heuristic one (only for targets that can force them)."""
    shape = draw(shapes(budget, min_rows))
    dtype = draw(st.sampled_from(list(dtypes)))
    case = Case(estimator, draw(inputs_for(estimator, shape, dtype)), dtype=dtype,
                flag_dtype=draw(st.sampled_from(FLAG_DTYPE_NAMES)),
                layout=draw(st.sampled_from(list(layouts))))
    if configs:
        case.config = draw(st.sampled_from([None, *configs]))
    return draw(plant_in_ignored(case)) if plant else case
