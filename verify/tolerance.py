"""Error bounds from a first-order rounding-error analysis, not a guessed constant.

Model (ALGORITHMS.md §7, DESIGN.md §6). An implementation builds the coefficients ``a[t], b[t]``
in float32 from the inputs (each with a small error), then solves ``x[t] = b[t] + a[t]·x[t∓1]``
by some association of the combine, then post-processes (``vs = V + x``, …). Inputs are exact:
half-precision inputs are compared against the reference on the rounded inputs, and γ, λ and
thresholds are drawn as float32 values. With u the unit roundoff of the float32 accumulation,
to first order in u:

* **scan**: every combine on a term's path rounds one multiply and one add, so the term's relative
  error grows by at most ``C_COMBINE·u`` per combine. A term passes through at most ``depth``
  combines, which depends on the scan strategy (:func:`depth`). Bounding every term by its
  magnitude gives ``C_COMBINE·u·depth·M[t]`` with ``M[t] = Σ_k |Π a|·B[k]``, the recurrence
  run on ``|a|`` and ``B`` (``B[k]`` the sum of the absolute values of the terms that make
  ``b[k]``).
* **products of a**: whatever the association, the coefficient ``Π_{j=t}^{k-1} a[j]`` of b[k] is
  made by k−t rounded multiplies, one per factor, and each factor a[j] already carries an error
  ``δa[j]`` from its construction. Since ``∂x[t]/∂a[j] = (Π_{i=t}^{j-1} a[i])·x[j+1]``, their
  effect is ``D[t] = Σ_j |Π_{i<j} a|·(δa[j] + u·|a[j]|)·M[j+1]``: again the recurrence, on
  ``|a|`` and ``(δa + u|a|)·M_next``. This term grows with the distance k−t, not with log T.
* **building b**: ``δb[k]`` per element (a few roundings of its terms, plus the error of the
  importance weight ρ), carried like b: ``E[t] = Σ_k |Π a|·δb[k]``.
* **ratios**: ``exp(x)`` in float32 costs ``(|x| + 4)·u`` relative (rounding x·log2 e, then an
  approximate exp2 of ≤ 4u); a log-probability pair adds the rounding of the difference,
  ``|x|·u``; a probability pair, a division of ≤ 4u. A clipped ratio is exactly the threshold.
* **post-processing**: one rounding of each output, e.g. ``vs = V + x`` adds ``u·(|V| + |x|)``;
  the pg advantage carries vs[t+1]'s bound times γ, plus its own roundings.
* **subnormals**: a GPU flushes subnormal results; each flushed value errs by < 2^-126. That
  holds for the post-processing roundings too (``FLUSH`` per rounded operation of an output's
  final formula): with γ ~ 1e-23 the pg advantage's γ·vs[t+1] is ~1e-44, rounded to the
  subnormal grid on a CPU (7.6e-46 off) and flushed to 0 on a GPU, where the relative terms
  alone allowed 4e-50 (vtrace, found 2026-12-01, verify/examples.py).

So ``bound[t] = (u·C_COMBINE·depth·M[t] + D[t] + E[t] + post + floor)·(1 + (depth + T)·u)``,
the last factor covering the neglected second-order terms. The reference's own float64
rounding (~2^-53 relative) is far below it. Where the float32 range cannot hold the partial
products (ALGORITHMS.md §2.5: only the sequential reference is normative there), the row is
exempt rather than compared.
"""
import math
from typing import Dict, NamedTuple

import numpy as np

from . import reference as ref
from .cases import Case, output_names

U_FP32 = 2.0 ** -24          # unit roundoff of the float32 accumulation
C_COMBINE = 2                # rounded operations per combine on a term's path (multiply, add)
EXP_ULPS = 4                 # exp2 approximation error, in u, besides the argument rounding
DIV_ULPS = 4                 # float32 division (approximate on GPUs), in u
FLUSH = 2.0 ** -126          # error of one flushed subnormal result
OVERFLOW_EXEMPT = 2.0 ** 100  # partial products beyond this may overflow float32 in some order


# ----------------------------------------------------------------------------- scan depth
def depth(model: str, T: int, chunk: int = 64) -> int:
    """Most combines any term of a length-T scan passes through, for a scan strategy:

    * ``tree``: a Hillis–Steele scan (rlscan's CPU path traced by torch.compile):
      ceil(log2 T) levels, then the boundary value is applied once;
    * ``chunked``: rlscan's kernel and its CPU path (chunks of ~√T steps there, a sequential
      local pass and carry pass): a scan inside each chunk of ``chunk`` steps, any association
      (the interpreter scans a chunk sequentially; a GPU mixes per-thread sequential runs with
      shuffle trees), then one carry per chunk crossed — and, for the multi-program strategy,
      at most one more per span summary in the carry pass, plus the span's own carry;
    * ``sequential``: a loop, and the worst case for any association.
    """
    T = max(int(T), 1)
    if model == "tree":
        return math.ceil(math.log2(T)) + 1 if T > 1 else 1
    if model == "chunked":
        return min(T, chunk) + 2 * math.ceil(T / chunk) + 2
    if model == "sequential":
        return T + 1
    raise ValueError(f"unknown depth model {model!r}; expected tree, chunked or sequential")


# ----------------------------------------------------------------------------- helpers
def _mul0(x, y):
    """x·y with 0·(anything) = 0: ignored slots may hold NaN or inf."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(x == 0, 0.0, x * y)


def _sel(mask, x):
    """x where mask, exactly 0 elsewhere (even if x is NaN there)."""
    return np.where(mask, x, 0.0)


def _next(x, fill=0.0):
    y = np.full_like(x, fill)
    y[..., :-1] = x[..., 1:]
    return y


def _prev(x, first):
    y = np.empty_like(x)
    y[..., 1:] = x[..., :-1]
    y[..., :1] = np.asarray(first)[..., None]
    return y


def _bcast(v, shape):
    return np.broadcast_to(np.asarray(v, np.float64), shape)


def _masks(kw, shape):
    term = np.asarray(kw.get("terminated", np.zeros(shape))) != 0
    trunc = np.asarray(kw.get("truncated", np.zeros(shape))) != 0
    cut = term | trunc
    cut[..., -1] = True
    return term, cut, cut & ~term


def ratio_with_error(case: Case):
    """(ratio, absolute float32 error bound of computing it) from the case's ratio source."""
    x = case.inputs
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if "log_ratio" in x:
            lr = np.asarray(x["log_ratio"], np.float64)
            ratio = np.exp(lr)
            rel = (np.abs(lr) + EXP_ULPS) * U_FP32
        elif "target_logp" in x:
            lr = np.asarray(x["target_logp"], np.float64) - x["behaviour_logp"]
            ratio = np.exp(lr)
            rel = (2 * np.abs(lr) + EXP_ULPS) * U_FP32
        else:
            ratio = np.asarray(x["target_probs"], np.float64) / x["behaviour_probs"]
            rel = DIV_ULPS * U_FP32
        err = _mul0(ratio, rel) + 2 * FLUSH
    return ratio, err


def clip_with_error(ratio, err, thr):
    """min(thr, ratio) and its error: a ratio certainly above thr clips to thr exactly."""
    with np.errstate(invalid="ignore"):
        certain = np.where(np.isposinf(ratio), math.isfinite(thr), ratio - err > thr)
    return np.minimum(thr, ratio), np.where(certain, 0.0, err)


class Terms(NamedTuple):
    """Everything the bound needs about one case, float64, time-last."""
    a: np.ndarray        # the coefficients
    a_err: np.ndarray    # absolute error of building a[t] in float32
    b_abs: np.ndarray    # Σ |terms of b[t]|
    b_err: np.ndarray    # absolute error of building b[t] in float32
    reverse: bool
    init: np.ndarray     # |boundary value| per row
    post: dict           # estimator-specific data for the post-processing bounds


# ----------------------------------------------------------------------------- per estimator
def _terms(case: Case) -> Terms:
    with np.errstate(all="ignore"):   # ignored slots may hold NaN or inf
        return _terms_unchecked(case)


def _terms_unchecked(case: Case) -> Terms:
    est, kw, shape = case.estimator, case.reference_kwargs(), case.shape
    U = U_FP32
    zeros_row = np.zeros(shape[:-1])
    a, _, reverse = ref.coefficients(est, **kw) if est != "linear_scan" else (
        np.asarray(kw["a"], np.float64), None, bool(kw.get("reverse", False)))
    a = np.asarray(a, np.float64)
    absa = np.abs(a)
    g = _bcast(kw.get("gamma", 1.0), shape)
    lam = _bcast(kw.get("lmbda", 1.0), shape)
    post = {}
    with np.errstate(invalid="ignore", over="ignore"):
        if est in ("discounted_returns", "gae", "lambda_returns", "vtrace"):
            term, cut, boot = _masks(kw, shape)
            vn = ref.resolve_vnext(shape, kw.get("terminated"), kw.get("truncated"),
                                   next_values=kw.get("next_values"), values=kw.get("values"),
                                   bootstrap_values=kw.get("bootstrap_values"),
                                   last_value=kw.get("last_value"))
            vn = np.zeros(shape) if vn is None else vn
            r = np.abs(kw["rewards"])
        # a_err: roundings building a (the product's own roundings are added in bound());
        # b_err: roundings building b, each at most u times the sum of |terms|
        if est == "discounted_returns":      # a = γ exactly; b = r + γ·vn: 2 roundings
            a_err = np.zeros(shape)
            b_abs = r + _sel(boot, np.abs(g * vn))
            b_err = 2 * U * b_abs
        elif est == "gae":                   # a = γ·λ: 1; δ = r + γ·vn − V: 3
            v = np.asarray(kw["values"], np.float64)
            a_err = U * absa
            b_abs = r + _sel(~term, np.abs(g * vn)) + np.abs(v)
            b_err = 3 * U * b_abs
            post = dict(v=v)
        elif est == "lambda_returns":        # a = γ·λ: 1; b = r + (γ·(1−λ))·vn: 4
            a_err = U * absa
            b_abs = r + np.where(term, 0.0, np.where(boot, np.abs(g * vn),
                                                      np.abs(g * (1 - lam) * vn)))
            b_err = 4 * U * b_abs
        elif est == "vtrace":   # a = (γ·λ)·c: 2 + c's; b = ρ·(r + γ·vn − V): 4 + ρ's
            v = np.asarray(kw["values"], np.float64)
            ratio, r_err = ratio_with_error(case)
            rho, rho_err = clip_with_error(ratio, r_err, kw.get("rho_bar", 1.0))
            c, c_err = clip_with_error(ratio, r_err, kw.get("c_bar", 1.0))
            a_err = _sel(~cut, 2 * U * absa + g * lam * c_err)
            inner = r + _sel(~term, np.abs(g * vn)) + np.abs(v)
            b_abs = rho * inner
            b_err = 4 * U * b_abs + _mul0(rho_err, inner)
            pg_thr = kw.get("pg_rho_bar") or kw.get("rho_bar", 1.0)
            post = dict(v=v, vn=vn, term=term, boot=boot, g=g, lam=lam, r=r,
                        mix=kw.get("pg_bootstrap") == "lambda_mix",
                        pg=clip_with_error(ratio, r_err, pg_thr))
        elif est == "retrace":  # a = (γ·λ)·c[t+1]: 2 + c's; δ = r + γ·E[Q] − Q: 3
            term, cut, _ = _masks(kw, shape)
            q = np.asarray(kw["q_taken"], np.float64)
            ratio, r_err = ratio_with_error(case)
            _, c_err = clip_with_error(ratio, r_err, kw.get("c_bar", 1.0))
            a_err = _sel(~cut, 2 * U * absa + g * lam * _next(c_err))
            b_abs = np.abs(kw["rewards"]) + _sel(~term, np.abs(g * kw["expected_next_q"])) \
                + np.abs(q)
            b_err = 3 * U * b_abs
            post = dict(v=q)
        elif est == "eligibility_traces":    # a = γ·λ: 1; b = z exactly
            a_err = U * absa
            b_abs, b_err = np.abs(kw["inputs"]), np.zeros(shape)
        elif est == "episodic_cumsum":       # a ∈ {0, 1}, b = z: exact
            a_err = np.zeros(shape)
            b_abs, b_err = np.abs(kw["inputs"]), np.zeros(shape)
        else:                                # linear_scan: a, b given, exact
            a_err = np.zeros(shape)
            b_abs, b_err = np.abs(np.asarray(kw["b"], np.float64)), np.zeros(shape)
    init = np.abs(_bcast(kw.get("seed", kw.get("init", zeros_row)), shape[:-1]))
    return Terms(a, a_err, b_abs, b_err, reverse, init, post)


# ----------------------------------------------------------------------------- the bound
class Bound(NamedTuple):
    bounds: Dict[str, np.ndarray]   # per output name, the admissible |out − ref|
    exempt: np.ndarray              # rows beyond float32 range (not compared), [..., T] bool
    magnitude: np.ndarray           # M[t]


def bound(case: Case, depth_: int, reference: Dict[str, np.ndarray] = None) -> Bound:
    """The admissible error of every output of ``case`` for a scan of depth ``depth_``.

    ``reference``: the case's reference outputs, if the caller has them (saves a scan)."""
    tm = _terms(case)
    U, absa, rev = U_FP32, np.abs(tm.a), tm.reverse
    zero = np.zeros_like(tm.init)
    with np.errstate(invalid="ignore", over="ignore"):
        # three recurrences on |a| in one pass: magnitude, b's construction errors, reach
        M, E, reach = _scan_many(absa, [tm.b_abs, tm.b_err, np.ones_like(absa)],
                                 [tm.init, zero, zero], rev)
        M_next = _next(M, 0.0) if rev else _prev(M, tm.init)
        if rev and tm.init.any():   # linear_scan backward: x[T] = init
            M_next[..., -1] = tm.init
        # an exact zero (a reset by selection, γ = 0, a ratio of exactly 0) is built exactly
        a_err = np.where(tm.a == 0, 0.0, tm.a_err + U * absa)
        D = ref.linear_scan(absa, _mul0(a_err, M_next), reverse=rev)
        bx = U * C_COMBINE * depth_ * M + D + E + FLUSH * (4 * depth_ + 16) * reach
        x = _scan_state(case, tm, case.reference() if reference is None else reference)
    big = (M > OVERFLOW_EXEMPT) | (reach > OVERFLOW_EXEMPT)
    exempt = np.broadcast_to(big.any(axis=-1, keepdims=True), big.shape)
    # first order in u: the neglected terms are products of two first-order ones, each at most
    # (depth + T)·u relative, so this factor covers them
    second_order = 1.0 + (depth_ + case.T) * U
    bounds = {k: v * second_order for k, v in _post(case, tm, bx, x).items()}
    return Bound(bounds, exempt, M)


def _scan_many(a, bs, inits, reverse):
    """Several recurrences sharing one a, as one stacked sequential loop."""
    k = len(bs)
    out = ref.linear_scan(np.broadcast_to(a, (k,) + a.shape), np.stack(bs),
                          reverse=reverse, init=np.stack(inits))
    return list(out)


def _scan_state(case: Case, tm: Terms, reference) -> np.ndarray:
    """The raw scan state x behind the reference outputs (its magnitude enters the bounds)."""
    first = reference[output_names(case.estimator)[0]]
    if case.estimator in ("vtrace", "retrace"):
        return first - tm.post["v"]
    return first


def _post(case: Case, tm: Terms, bx, x) -> Dict[str, np.ndarray]:
    """Bounds of the outputs from the bound ``bx`` of the scan state x."""
    U, est, p = U_FP32, case.estimator, tm.post
    names = output_names(est)
    with np.errstate(invalid="ignore", over="ignore"):
        if est == "gae":     # returns = x + V: one rounding
            return dict(zip(names, (bx, bx + U * (np.abs(x) + np.abs(p["v"])) + FLUSH)))
        if est == "retrace":
            return {"out": bx + U * (np.abs(x) + np.abs(p["v"])) + FLUSH}
        if est != "vtrace":
            return {"out": bx}
        v, vn, g, lam = p["v"], p["vn"], p["g"], p["lam"]
        vs = v + x
        b_vs = bx + U * (np.abs(x) + np.abs(v)) + FLUSH
        vs_next, b_vs_next = _next(vs), _next(b_vs)
        if p["mix"]:
            w_mid = lam * np.abs(vs_next) + np.abs((1 - lam) * vn)
            e_mid = lam * b_vs_next + 3 * U * w_mid
        else:
            w_mid, e_mid = np.abs(vs_next), b_vs_next
        w_abs = np.where(p["term"], 0.0, np.where(p["boot"], np.abs(vn), w_mid))
        e_w = np.where(p["term"] | p["boot"], 0.0, e_mid)
        inner = p["r"] + g * w_abs + np.abs(v)
        rho_pg, rho_pg_err = p["pg"]
        # ρ·(r + γ·w − V): four roundings, each may land on (or flush from) the subnormal range
        b_pg = rho_pg * (g * e_w + 3 * U * inner) + _mul0(rho_pg_err, inner) \
            + U * _mul0(rho_pg, inner) + 4 * FLUSH
        return dict(zip(names, (b_vs, b_pg)))


# ----------------------------------------------------------------------------- comparing
class Comparison(NamedTuple):
    ratio: float          # worst |out − ref| / bound over compared positions (inf: non-finite)
    where: tuple          # index of the worst position (time-last), or () if none compared
    out: float
    ref: float
    bound: float


def compare(out: np.ndarray, expected: np.ndarray, bnd: np.ndarray, skip=None) -> Comparison:
    """Worst error/bound ratio. Positions where the reference is finite must be finite and
    within the bound; positions where it is not finite, and ``skip`` positions, are ignored."""
    out = np.asarray(out, np.float64)
    if out.shape != expected.shape:
        raise ValueError(f"output shape {out.shape} != expected {expected.shape}")
    mask = np.isfinite(expected)
    if skip is not None:
        mask &= ~skip
    if not mask.any():
        return Comparison(0.0, (), math.nan, math.nan, math.nan)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        err = np.abs(out - expected)
        ratio = np.where(np.isfinite(err), err / np.maximum(bnd, 1e-300), np.inf)
        ratio = np.where(mask, ratio, -1.0)
    i = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    return Comparison(float(ratio[i]), tuple(int(k) for k in i), float(out[i]),
                      float(expected[i]), float(bnd[i]))
