"""The identities of ALGORITHMS.md §7 as properties: two computations equal in real
arithmetic agree within the sum of their bounds (plus the references' own float64 gap).
The partner of an external implementation is the float64 reference (verify/targets.py)."""
import numpy as np

from . import checks as C
from . import strategies as S
from . import tolerance
from .cases import Case


def _pair_bound(target, case_a, case_b, name_a, name_b):
    ref_a, bnd_a = C.reference_and_bound(target, case_a)
    ref_b, bnd_b = C.reference_and_bound(target, case_b)
    # exact in real arithmetic; the references' own float64 rounding is the only gap
    with np.errstate(invalid="ignore"):
        gap = np.abs(ref_a[name_a] - ref_b[name_b])
    return (ref_a[name_a], bnd_a.bounds[name_a] + bnd_b.bounds[name_b] + gap,
            bnd_a.exempt | bnd_b.exempt)


def _identity(what, target, case_a, name_a, case_b, name_b) -> float:
    out_a = target.call(case_a)[name_a]
    out_b = target.call(case_b)[name_b]
    ref_a, bnd, skip = _pair_bound(target, case_a, case_b, name_a, name_b)
    skip = skip | ~np.isfinite(ref_a)
    cmp = tolerance.compare(out_a, np.where(skip, np.nan, out_b), bnd, skip)
    if not cmp.ratio <= 1.0:
        C.fail(what, f"{case_a.estimator}.{name_a} vs {case_b.estimator}.{name_b}", cmp,
               "sum of bounds")
    return cmp.ratio


SUCCESSOR_KEYS = ("values", "bootstrap_values", "last_value", "next_values")


def gae_lambda_strategy(est, budget, target):
    def build(case):
        x = dict(case.inputs)
        if "next_values" in x:   # the identity needs E2: vnext[t] = V[t+1] at non-cut t
            del x["next_values"]
        return Case("gae", x, case.dtype, case.flag_dtype, case.layout), {"lambda_inputs": x}
    return S.cases("gae", budget).map(build)


def check_lambda_returns_equal_gae_plus_values(target, case, lambda_inputs) -> float:
    """λ-returns = GAE advantages + V under the values+bootstrap encoding (ALGORITHMS.md §3.3)."""
    lam = Case("lambda_returns", lambda_inputs, case.dtype, case.flag_dtype, case.layout)
    return _identity("λ-returns differ from GAE + V", target, lam, "out", case, "returns")


def lambda_one_strategy(est, budget, target):
    def build(case):
        disc = {k: v for k, v in case.inputs.items() if k != "lmbda"}
        return case.replace(inputs={"lmbda": 1.0}), {"disc_inputs": disc}
    return S.cases("lambda_returns", budget).map(build)


def check_lambda_one_gives_discounted_returns(target, case, disc_inputs) -> float:
    """λ = 1 λ-returns are the discounted returns with the same successor values."""
    disc = Case("discounted_returns", disc_inputs, case.dtype, case.flag_dtype, case.layout)
    return _identity("λ=1 λ-returns differ from discounted returns", target, case, "out",
                     disc, "out")


def unit_ratio_strategy(est, budget, target):
    def build(case):
        x = {k: v for k, v in case.inputs.items()
             if k not in ("log_ratio", "target_logp", "behaviour_logp")}
        x["log_ratio"] = np.zeros(case.shape)
        x["rho_bar"] = max(x["rho_bar"], 1.0)
        x["c_bar"] = max(x["c_bar"], 1.0)
        gae = {k: v for k, v in x.items() if k in ("rewards", "values", "terminated", "truncated",
                                                     "gamma", "lmbda") + SUCCESSOR_KEYS}
        return Case("vtrace", x, case.dtype, case.flag_dtype, case.layout), {"gae_inputs": gae}
    return S.cases("vtrace", budget).map(build)


def check_vtrace_unit_ratio_gives_gae_targets(target, case, gae_inputs) -> float:
    """V-trace with ratio ≡ 1 and ρ̄, c̄ ≥ 1 gives vs = GAE(γ, λ) value targets."""
    gae = Case("gae", gae_inputs, case.dtype, case.flag_dtype, case.layout)
    return _identity("V-trace with unit ratios differs from GAE targets", target, case, "vs",
                     gae, "returns")


def ones_strategy(est, budget, target):
    def build(case):
        x = {k: v for k, v in case.inputs.items() if k != "seed"}
        x["inputs"] = np.ones(case.shape)
        return Case("episodic_cumsum", x, case.dtype, case.flag_dtype, case.layout), {}
    return S.cases("episodic_cumsum", budget).map(build)


def steps_in_episode(dones, boundary="ends_at", done_prev=None) -> np.ndarray:
    """1, 2, 3, … counted from each episode's first step (the expected prefix sum of ones)."""
    dones = np.asarray(dones) != 0
    start = dones.copy() if boundary == "starts_at" else np.zeros_like(dones)
    if boundary != "starts_at":
        start[..., 1:] = dones[..., :-1]
        if done_prev is not None:
            start[..., 0] = np.asarray(done_prev) != 0
    count = np.zeros(dones.shape)
    run = np.zeros(dones.shape[:-1])
    for t in range(dones.shape[-1]):
        run = np.where(start[..., t], 1.0, run + 1.0)
        count[..., t] = run
    return count


def check_cumsum_of_ones_counts_steps(target, case) -> float:
    """The episodic prefix sum of ones is the step count within the episode, exactly."""
    x = case.inputs
    expected = steps_in_episode(x["dones"], x.get("boundary", "ends_at"), x.get("done_prev"))
    return C.bitwise("the prefix sum of ones is not the step count", target.call(case),
                     {"out": expected})


def unit_trace_strategy(est, budget, target):
    def build(case):
        x = dict(case.inputs, gamma=1.0, lmbda=1.0)
        cum = {k: v for k, v in x.items() if k not in ("gamma", "lmbda")}
        return Case("eligibility_traces", x, case.dtype, case.flag_dtype, case.layout), \
            {"cumsum_inputs": cum}
    return S.cases("eligibility_traces", budget).map(build)


def check_unit_decay_trace_equals_cumsum(target, case, cumsum_inputs) -> float:
    """An eligibility trace with γλ = 1 is the episodic prefix sum (ends_at)."""
    cum = Case("episodic_cumsum", cumsum_inputs, case.dtype, case.flag_dtype, case.layout)
    return _identity("the γλ=1 trace differs from the prefix sum", target, case, "out",
                     cum, "out")
