"""A validated scan problem: what every execution path (Triton kernel, Triton interpreter, torch
fallback) receives once the public API has checked its arguments.

All per-step tensors are 2-D ``[N, T]`` views (rows = the flattened batch axes, time last in
index order, any strides); per-row tensors are contiguous ``[N]``. ``None`` marks an absent input.
"""
from typing import NamedTuple, Optional

import torch

# Estimator codes; the kernel's EST constexpr uses the same numbers (rlscan/kernels/scan.py).
DISC, GAE, LAMBDA, VTRACE, RETRACE, TRACE, CUMSUM, LINEAR = range(8)
BACKWARD = frozenset({DISC, GAE, LAMBDA, VTRACE, RETRACE})
TWO_OUTPUTS = frozenset({GAE, VTRACE})

# How V(s'_t) is given (ALGORITHMS.md §1.3).
VN_NONE = 0        # no source: vnext = 0 (discounted returns only)
VN_DENSE = 1       # E1: next_values[t]
VN_BOOT_STEPS = 2  # E2: values[t+1], bootstrap_values[t] at truncations and t = T-1
VN_BOOT_LAST = 3   # E2 shorthand: values[t+1], last_value at t = T-1
VN_BOOT_ZERO = 4   # E2 with no bootstrap tensor: 0 at truncations and t = T-1

# How the importance ratio is given (ALGORITHMS.md §1.4).
RATIO_LOG = 0         # log_ratio
RATIO_LOGP_PAIR = 1   # exp(target_logp - behaviour_logp)
RATIO_PROB_PAIR = 2   # target_probs / behaviour_probs


class Problem(NamedTuple):
    est: int
    reverse: bool
    N: int
    T: int
    p0: torch.Tensor                      # rewards | inputs z | a
    p1: Optional[torch.Tensor] = None     # values | q_taken | b
    term: Optional[torch.Tensor] = None   # terminated | dones | starts
    trunc: Optional[torch.Tensor] = None
    nv: Optional[torch.Tensor] = None     # next_values | bootstrap_values | expected_next_q
    x1: Optional[torch.Tensor] = None     # ratio source 1
    x2: Optional[torch.Tensor] = None     # ratio source 2
    g: Optional[torch.Tensor] = None      # per-step gamma
    lam: Optional[torch.Tensor] = None    # per-step lambda
    row0: Optional[torch.Tensor] = None   # last_value | seed | init   [N]
    row1: Optional[torch.Tensor] = None   # done_prev                  [N]
    vnext: int = VN_NONE
    ratio: int = RATIO_LOG
    gamma: float = 1.0
    lmbda: float = 1.0
    rho_bar: float = 1.0
    c_bar: float = 1.0
    pg_rho_bar: float = 1.0
    pg_mix: bool = False
    starts_at: bool = False


def decay_bound(pb: Problem) -> Optional[float]:
    """The largest |a_t| ``pb``'s scalar coefficients allow at any step (ALGORITHMS.md §2: γ for
    discounted returns; γ·λ for GAE, λ-returns and eligibility traces; γ·λ·c̄ for V-trace and
    Retrace, whose c_t = λ·min(c̄, ratio_t); 1 for episodic sums), episode ends only lowering it;
    None where only the tensors would tell (per-step γ or λ, linear_scan's a). A look-back walk
    back needs no episode end to stop when it is below 1 (``configs.walk_fits_first_window``)."""
    return scalar_decay_bound(pb.est, None if pb.g is not None else pb.gamma,
                              None if pb.lam is not None else pb.lmbda, pb.c_bar)


def scalar_decay_bound(est: int, gamma: Optional[float], lmbda: Optional[float],
                       c_bar: float = 1.0) -> Optional[float]:
    """:func:`decay_bound` from the estimator code and its scalar coefficients (None: a
    per-step tensor)."""
    if est == CUMSUM:
        return 1.0
    if est == LINEAR or gamma is None:
        return None
    if est == DISC:
        return gamma
    if lmbda is None:
        return None
    return gamma * lmbda * c_bar if est in (VTRACE, RETRACE) else gamma * lmbda


def check_no_interior_truncations(terminated: Optional[torch.Tensor],
                                  truncated: torch.Tensor) -> None:
    """``last_value`` gives V(s_T) alone, so it cannot bootstrap a truncation at t < T-1 (one
    not also terminated). Flags are time-last views ``[..., T]``; reads them (a host sync, which
    a CUDA graph capture cannot make: then a ValueError instead of a broken capture)."""
    if truncated.is_cuda and torch.cuda.is_current_stream_capturing():
        raise ValueError("last_value with truncated makes rlscan read the flags on the host "
                         "(interior truncations need bootstrap_values), which cannot happen "
                         "inside a CUDA graph capture (torch.cuda.graph, or torch.compile's "
                         "mode='reduce-overhead'); pass bootstrap_values instead")
    interior = truncated[..., :-1] != 0
    if terminated is not None:
        interior = interior & (terminated[..., :-1] == 0)
    if bool(interior.any()):
        raise ValueError("last_value cannot express interior truncations (truncated[t] for "
                         "t < T-1 without terminated[t]); pass bootstrap_values instead")
