"""The public estimators. Each validates its arguments, describes the call as one scan problem
(rlscan/_problem.py) and runs it: a fused Triton launch on CUDA, the torch implementation on CPU.

Conventions shared by every function (ALGORITHMS.md is normative):

* Shapes: every per-step tensor has the same shape ``[..., T, ...]`` with time at ``time_dim``
  (default last; ``time_dim=0`` for ``[T, N]`` buffers); the other axes are independent rows.
  Outputs have that shape and the primary input's layout. Per-row tensors (``last_value``,
  ``seed``, ``done_prev``) have the shape without the time axis.
* Dtypes: real inputs float32, bfloat16 or float16; flags bool, integer or float (nonzero =
  true). Math is float32; outputs are float32 unless ``out_dtype`` (float32, float64, bfloat16
  or float16) says otherwise.
* Flags use the end-of-episode convention: ``terminated[t]`` / ``truncated[t]`` mark t as the
  last transition of its episode. **terminated**: the successor is terminal, no bootstrap, the
  carry is cut. **truncated**: bootstrap from V(true final observation), the carry is cut. Both
  set: terminated wins. Column T-1 always behaves like a truncation unless terminated (the
  window-end rule), so its successor value V(s_T) must be supplied for a bootstrap.
* Successor values V(s'_t), one of: ``next_values`` (dense, TorchRL style; ignored where
  terminated), or ``values`` plus ``bootstrap_values`` (read only at truncated steps and at
  T-1; V(s_{t+1}) = values[t+1] elsewhere) or plus ``last_value`` (V(s_T) only; rejected with
  interior truncations). With neither bootstrap tensor the bootstrap is 0.
* γ, λ: floats in [0, 1], or tensors broadcastable to the per-step shape (per-row, per-step).
* Repeated calls: on CUDA, a call with the signature of an earlier one (every tensor's shape,
  strides, dtype, device and alignment, every other argument's value) replays the launches that
  call recorded, skipping validation and setup (rlscan/_replay.py); results are identical.
* torch.compile: on the kernel path a traced call is one opaque op, ``rlscan::scan``
  (rlscan/_custom_op.py), with the eager call's results, layout and errors.
"""
from typing import NamedTuple

import torch

from . import _checks as C
from . import _problem as P
from ._layout import Layout, execute
from ._replay import replayable


class GAE(NamedTuple):
    advantages: torch.Tensor
    returns: torch.Tensor


class VTrace(NamedTuple):
    vs: torch.Tensor
    pg_advantages: torch.Tensor


def _required(name: str, x) -> None:
    if x is None:
        raise ValueError(f"{name} is required")


def _flags(lay: Layout, terminated, truncated):
    return lay.step("terminated", terminated, "flag"), lay.step("truncated", truncated, "flag")


def _successor(lay: Layout, est: str, values, next_values, bootstrap_values, last_value,
               terminated, truncated, *, required: bool) -> dict:
    """Resolve the successor-value encoding (ALGORITHMS.md §1.3) into Problem fields."""
    C.exactly_one([("next_values", next_values), ("bootstrap_values", bootstrap_values),
                   ("last_value", last_value)])
    if next_values is not None:
        return {"vnext": P.VN_DENSE, "nv": lay.step("next_values", next_values)}
    bv = lay.step("bootstrap_values", bootstrap_values)
    lv = lay.row("last_value", last_value)
    if values is None:
        if required:
            raise ValueError(f"{est} needs successor values: pass next_values, or values "
                             f"(with bootstrap_values or last_value for the bootstrap)")
        if bv is None and lv is None:
            return {"vnext": P.VN_NONE}
    if lv is not None and truncated is not None and truncated.device.type == "meta":
        # (the flags are checked for interior truncations where the call runs, one host sync:
        # _layout.check_values; pass bootstrap_values to avoid it)
        raise ValueError("last_value with truncated reads the flags (interior truncations "
                         "need bootstrap_values), which meta tensors do not hold; pass "
                         "bootstrap_values")
    if bv is not None:
        return {"vnext": P.VN_BOOT_STEPS, "nv": bv}
    if lv is not None:
        return {"vnext": P.VN_BOOT_LAST, "row0": lv}
    return {"vnext": P.VN_BOOT_ZERO}


def _ratio(lay: Layout, log_ratio, num, den, num_name, den_name, pair_code) -> dict:
    C.exactly_one([("log_ratio", log_ratio), (num_name, num)])
    if log_ratio is not None:
        if den is not None:
            raise ValueError(f"log_ratio and {den_name} both given; pass log_ratio alone or "
                             f"{num_name} with {den_name}")
        return {"ratio": P.RATIO_LOG, "x1": lay.step("log_ratio", log_ratio)}
    if num is None or den is None:
        raise ValueError(f"an importance ratio is required: pass log_ratio, or both "
                         f"{num_name} and {den_name}")
    return {"ratio": pair_code, "x1": lay.step(num_name, num), "x2": lay.step(den_name, den)}


def _gamma_lambda(lay: Layout, gamma, lmbda) -> dict:
    g, gt = lay.coef("gamma", gamma)
    lam, lt = lay.coef("lmbda", lmbda)
    return {"gamma": g, "g": gt, "lmbda": lam, "lam": lt}


@replayable
def gae(rewards, values, terminated=None, truncated=None, *, next_values=None,
        bootstrap_values=None, last_value=None, gamma=0.99, lmbda=0.95, time_dim=-1,
        out_dtype=None) -> GAE:
    """Generalised advantage estimation (ALGORITHMS.md §3.2), advantages and returns in one pass.

    ``δ[t] = r[t] + [¬terminated]·γ·V(s'_t) − V[t]``; ``A[t] = δ[t] + γλ·A[t+1]`` within an
    episode, the chain cut at every terminated or truncated step and at T-1 (carry 0).
    terminated: δ = r − V. truncated: δ = r + γ·V(true final obs) − V.
    Returns ``GAE(advantages, returns)`` with ``returns = advantages + values``.
    """
    lay = Layout("rewards", rewards, time_dim)
    _required("values", values)
    term, trunc = _flags(lay, terminated, truncated)
    f = dict(est=P.GAE, reverse=True, p0=rewards, p1=lay.step("values", values), term=term,
             trunc=trunc, **_gamma_lambda(lay, gamma, lmbda))
    f.update(_successor(lay, "gae", values, next_values, bootstrap_values, last_value,
                        term, trunc, required=True))
    return GAE(*execute(lay, f, 2, C.out_dtype(out_dtype)))


@replayable
def lambda_returns(rewards, terminated=None, truncated=None, *, next_values=None, values=None,
                   bootstrap_values=None, last_value=None, gamma=0.99, lmbda=0.95, time_dim=-1,
                   out_dtype=None) -> torch.Tensor:
    """TD(λ) returns (ALGORITHMS.md §3.3): ``G[t] = r + γ·((1−λ)·V(s'_t) + λ·G[t+1])``.

    terminated: G = r. truncated and the last column (unless terminated): G = r + γ·V(s'_t)
    (the truncated λ-return). λ = 1 gives discounted returns, λ = 0 one-step TD targets.
    """
    lay = Layout("rewards", rewards, time_dim)
    term, trunc = _flags(lay, terminated, truncated)
    f = dict(est=P.LAMBDA, reverse=True, p0=rewards, p1=lay.step("values", values), term=term,
             trunc=trunc, **_gamma_lambda(lay, gamma, lmbda))
    f.update(_successor(lay, "lambda_returns", values, next_values, bootstrap_values,
                        last_value, term, trunc, required=True))
    return execute(lay, f, 1, C.out_dtype(out_dtype))[0]


@replayable
def discounted_returns(rewards, terminated=None, truncated=None, *, next_values=None,
                       values=None, bootstrap_values=None, last_value=None, gamma=0.99,
                       time_dim=-1, out_dtype=None) -> torch.Tensor:
    """Discounted reward-to-go (ALGORITHMS.md §3.1): ``G[t] = r[t] + γ·G[t+1]`` within an episode.

    terminated: G = r. truncated (and T-1 unless terminated): G = r + γ·V(s'_t). Without any
    successor-value source the bootstrap is 0 (pure Monte-Carlo reward-to-go). Only the values
    at boot steps are read, so ``bootstrap_values`` or ``last_value`` need no ``values``.
    """
    lay = Layout("rewards", rewards, time_dim)
    term, trunc = _flags(lay, terminated, truncated)
    g, gt = lay.coef("gamma", gamma)
    f = dict(est=P.DISC, reverse=True, p0=rewards, p1=lay.step("values", values), term=term,
             trunc=trunc, gamma=g, g=gt)
    f.update(_successor(lay, "discounted_returns", values, next_values, bootstrap_values,
                        last_value, term, trunc, required=False))
    return execute(lay, f, 1, C.out_dtype(out_dtype))[0]


@replayable
def vtrace(rewards, values, terminated=None, truncated=None, *, log_ratio=None,
           target_logp=None, behaviour_logp=None, next_values=None, bootstrap_values=None,
           last_value=None, gamma=0.99, lmbda=1.0, rho_bar=1.0, c_bar=1.0, pg_rho_bar=None,
           pg_bootstrap="vs", time_dim=-1, out_dtype=None) -> VTrace:
    """V-trace targets and policy-gradient advantages (IMPALA; ALGORITHMS.md §3.4), one pass.

    ``ratio = exp(log_ratio)`` or ``exp(target_logp − behaviour_logp)``; ρ = min(ρ̄, ratio),
    c[t] = λ·min(c̄, ratio[t]) at the element's own index. ``vs[t] = V[t] + x[t]`` with
    ``x[t] = ρ[t]·δ[t] + γ·c[t]·x[t+1]`` within an episode.
    ``pg_adv[t] = min(ρ̄_pg, ratio)·(r + γ·W[t] − V[t])`` with W = 0 if terminated, V(s'_t) at
    truncations and T-1, else vs[t+1] (``pg_bootstrap="vs"``) or λ·vs[t+1] + (1−λ)·V(s'_t)
    (``"lambda_mix"``, rlax). ``pg_rho_bar`` defaults to ``rho_bar``. The thresholds ``rho_bar``,
    ``c_bar``, ``pg_rho_bar`` are floats > 0 (``float("inf")``: no clipping).
    """
    lay = Layout("rewards", rewards, time_dim)
    _required("values", values)
    term, trunc = _flags(lay, terminated, truncated)
    rho = C.threshold("rho_bar", rho_bar)
    if pg_bootstrap not in ("vs", "lambda_mix"):
        raise ValueError(f"pg_bootstrap={pg_bootstrap!r}; expected 'vs' or 'lambda_mix'")
    f = dict(est=P.VTRACE, reverse=True, p0=rewards, p1=lay.step("values", values), term=term,
             trunc=trunc, rho_bar=rho, c_bar=C.threshold("c_bar", c_bar),
             pg_rho_bar=rho if pg_rho_bar is None else C.threshold("pg_rho_bar", pg_rho_bar),
             pg_mix=pg_bootstrap == "lambda_mix", **_gamma_lambda(lay, gamma, lmbda))
    f.update(_ratio(lay, log_ratio, target_logp, behaviour_logp, "target_logp",
                    "behaviour_logp", P.RATIO_LOGP_PAIR))
    f.update(_successor(lay, "vtrace", values, next_values, bootstrap_values, last_value,
                        term, trunc, required=True))
    return VTrace(*execute(lay, f, 2, C.out_dtype(out_dtype)))


@replayable
def retrace(rewards, q_taken, expected_next_q, terminated=None, truncated=None, *,
            log_ratio=None, target_probs=None, behaviour_probs=None, gamma=0.99, lmbda=1.0,
            c_bar=1.0, time_dim=-1, out_dtype=None) -> torch.Tensor:
    """Retrace(λ) Q-targets (Munos et al. 2016; ALGORITHMS.md §3.5).

    ``q_taken[t] = Q(s_t, a_t)``; ``expected_next_q[t] = Σ_a π(a|s'_t)·Q(s'_t, a)`` at the true
    successor (the final observation at a truncation), from the same Q-function as q_taken.
    ``ratio = exp(log_ratio)`` or ``target_probs / behaviour_probs`` (of the taken action);
    c[t] = λ·min(c̄, ratio[t]). ``Qret[t] = q_taken[t] + x[t]`` with
    ``x[t] = δ[t] + γ·c[t+1]·x[t+1]`` (note c of the NEXT step) and
    ``δ[t] = r + [¬terminated]·γ·expected_next_q[t] − q_taken[t]``.
    terminated: Qret = r. truncated and T-1 (unless terminated): Qret = r + γ·expected_next_q.
    ``c_bar``: a float > 0 (``float("inf")``: no clipping).
    """
    lay = Layout("rewards", rewards, time_dim)
    _required("q_taken", q_taken)
    _required("expected_next_q", expected_next_q)
    term, trunc = _flags(lay, terminated, truncated)
    f = dict(est=P.RETRACE, reverse=True, p0=rewards, p1=lay.step("q_taken", q_taken),
             term=term, trunc=trunc, vnext=P.VN_DENSE,
             nv=lay.step("expected_next_q", expected_next_q),
             c_bar=C.threshold("c_bar", c_bar), **_gamma_lambda(lay, gamma, lmbda))
    f.update(_ratio(lay, log_ratio, target_probs, behaviour_probs, "target_probs",
                    "behaviour_probs", P.RATIO_PROB_PAIR))
    return execute(lay, f, 1, C.out_dtype(out_dtype))[0]


@replayable
def eligibility_traces(inputs, dones, *, gamma, lmbda, seed=None, done_prev=None, time_dim=-1,
                       out_dtype=None) -> torch.Tensor:
    """Accumulating eligibility traces (ALGORITHMS.md §3.6), a forward scan:
    ``e[t] = z[t] + γλ·[¬dones[t−1]]·e[t−1]``, ``e[−1] = seed`` (default 0), z = ``inputs``.
    ``gamma`` and ``lmbda`` are required (no default: traces have no conventional one).

    ``dones[t]`` (terminated or truncated, which act alike here) marks t as the last step of its
    episode; the reset lands on t+1. ``done_prev`` (per row) is the done flag of the step just
    before t = 0: set it to stop ``seed`` flowing into a new episode. To stream, pass
    ``e[..., -1]`` as the next ``seed`` and ``dones[..., -1]`` as the next ``done_prev``.
    """
    lay = Layout("inputs", inputs, time_dim)
    _required("dones", dones)
    f = dict(est=P.TRACE, reverse=False, p0=inputs,
             term=lay.step("dones", dones, "flag"), row0=lay.row("seed", seed),
             row1=lay.row("done_prev", done_prev, "flag"), **_gamma_lambda(lay, gamma, lmbda))
    return execute(lay, f, 1, C.out_dtype(out_dtype))[0]


@replayable
def episodic_cumsum(inputs, dones, *, seed=None, done_prev=None, boundary="ends_at",
                    time_dim=-1, out_dtype=None) -> torch.Tensor:
    """Segmented cumulative sum (ALGORITHMS.md §3.7): ``C[t] = z[t] + [¬reset[t]]·C[t−1]``,
    ``C[−1] = seed``, z = ``inputs``.

    ``boundary="ends_at"``: ``dones[t]`` marks the last step of an episode; the sum restarts at
    t+1 (and at t = 0 when ``done_prev``). ``"starts_at"``: ``dones[t]`` marks the first step of a
    segment; the sum restarts at t itself (``dones[0]`` discards the seed; ``done_prev`` is not
    allowed). With z ≡ 1 this counts steps within the episode, from 1.
    """
    lay = Layout("inputs", inputs, time_dim)
    _required("dones", dones)
    if boundary not in ("ends_at", "starts_at"):
        raise ValueError(f"boundary={boundary!r}; expected 'ends_at' or 'starts_at'")
    if boundary == "starts_at" and done_prev is not None:
        raise ValueError("done_prev applies to boundary='ends_at' only; with 'starts_at' mark "
                         "the first step with dones[..., 0]")
    f = dict(est=P.CUMSUM, reverse=False, p0=inputs, term=lay.step("dones", dones, "flag"),
             row0=lay.row("seed", seed), row1=lay.row("done_prev", done_prev, "flag"),
             starts_at=boundary == "starts_at")
    return execute(lay, f, 1, C.out_dtype(out_dtype))[0]


@replayable
def linear_scan(a, b, *, reverse=False, init=None, time_dim=-1, out_dtype=None) -> torch.Tensor:
    """The generic first-order recurrence every estimator reduces to (ALGORITHMS.md §1.6):

    forward ``x[t] = b[t] + a[t]·x[t−1]`` with ``x[−1] = init``; ``reverse=True``:
    ``x[t] = b[t] + a[t]·x[t+1]`` with ``x[T] = init`` (default 0). ``a``, ``b``: same shape;
    ``init``: the batch shape.
    """
    lay = Layout("a", a, time_dim)
    _required("b", b)
    f = dict(est=P.LINEAR, reverse=C.boolean("reverse", reverse), p0=a, p1=lay.step("b", b),
             row0=lay.row("init", init))
    return execute(lay, f, 1, C.out_dtype(out_dtype))[0]
