"""rlscan: RL credit assignment on one associative scan, as fused Triton GPU kernels.

Seven estimators, one first-order linear recurrence ``x[t] = b[t] + a[t]·x[t±1]``:
:func:`gae`, :func:`vtrace`, :func:`retrace`, :func:`lambda_returns`,
:func:`discounted_returns` (backward) and :func:`eligibility_traces`,
:func:`episodic_cumsum` (forward), plus the generic :func:`linear_scan`.
CUDA tensors run one fused Triton launch; CPU tensors a vectorised torch implementation
(or the same Triton kernels in the interpreter with ``RLSCAN_INTERPRET=1``).
"""
from .estimators import (GAE, VTrace, discounted_returns, eligibility_traces, episodic_cumsum,
                         gae, lambda_returns, linear_scan, retrace, vtrace)
from .tuning import RLScanTuningWarning, which_config   # parses the tuning DB files (no CUDA)

__version__ = "0.1.0"
__all__ = ["GAE", "VTrace", "gae", "vtrace", "retrace", "lambda_returns", "discounted_returns",
           "eligibility_traces", "episodic_cumsum", "linear_scan", "which_config",
           "RLScanTuningWarning"]
