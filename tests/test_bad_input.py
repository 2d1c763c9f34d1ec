"""Bad input is rejected with a ValueError/TypeError that names the argument, before any
kernel runs, on every backend; and ``import rlscan`` stays cheap."""
import subprocess
import sys

import pytest
import torch

import rlscan

N, T = 3, 8


def t(*shape, dtype=torch.float32):
    return torch.zeros(shape or (N, T), dtype=dtype).uniform_() if dtype.is_floating_point \
        else torch.zeros(shape or (N, T), dtype=dtype)


R, V, F = t(), t(), t(dtype=torch.bool)
LR = t()

CASES = [
    # (call, exception, words the message must contain)
    (lambda: rlscan.gae([1.0, 2.0], V), TypeError, ["rewards", "torch.Tensor"]),
    (lambda: rlscan.gae(R, t(N, T + 1)), ValueError,
     ["values", "shape", "one step more", "first T steps", "last_value"]),
    (lambda: rlscan.vtrace(R.t(), t(T + 1, N), log_ratio=LR.t(), time_dim=0), ValueError,
     ["values", "one step more", "last_value"]),
    (lambda: rlscan.gae(R, t(N + 1, T)), ValueError, ["values", "shape"]),
    (lambda: rlscan.gae(R, V, t(N, T - 1, dtype=torch.bool)), ValueError, ["terminated", "shape"]),
    (lambda: rlscan.gae(R, V.double()), TypeError, ["values", "float64"]),
    (lambda: rlscan.gae(R.long(), V), TypeError, ["rewards", "dtype"]),
    (lambda: rlscan.gae(R, V, t(dtype=torch.complex64)), TypeError, ["terminated", "dtype"]),
    (lambda: rlscan.gae(R, V, gamma=1.5), ValueError, ["gamma", "[0, 1]"]),
    (lambda: rlscan.gae(R, V, lmbda=-0.1), ValueError, ["lmbda", "[0, 1]"]),
    (lambda: rlscan.gae(R, V, gamma=float("nan")), ValueError, ["gamma"]),
    (lambda: rlscan.gae(R, V, gamma="0.9"), TypeError, ["gamma"]),
    (lambda: rlscan.gae(R, V, gamma=torch.full((N, 1), 1.2)), ValueError, ["gamma", "[0, 1]"]),
    (lambda: rlscan.gae(R, V, gamma=torch.full((N + 1, 1), 0.9)), ValueError,
     ["gamma", "broadcast"]),
    (lambda: rlscan.gae(R, V, gamma=torch.ones(N, T, dtype=torch.int64)), TypeError, ["gamma"]),
    (lambda: rlscan.gae(R, V, time_dim=2), ValueError, ["time_dim", "range"]),
    (lambda: rlscan.gae(R, V, time_dim=1.0), TypeError, ["time_dim"]),
    (lambda: rlscan.gae(R, None), ValueError, ["values", "required"]),
    (lambda: rlscan.gae(R, V, next_values=V, bootstrap_values=V), ValueError,
     ["next_values", "bootstrap_values"]),
    (lambda: rlscan.gae(R, V, bootstrap_values=V, last_value=t(N)), ValueError,
     ["bootstrap_values", "last_value"]),
    (lambda: rlscan.gae(R, V, last_value=t(N, 1)), ValueError, ["last_value", "shape"]),
    (lambda: rlscan.gae(R, V, None, torch.eye(N, T, dtype=torch.bool), last_value=t(N)),
     ValueError, ["last_value", "interior truncations"]),
    (lambda: rlscan.gae(R, V, out_dtype=torch.int32), TypeError, ["out_dtype"]),
    (lambda: rlscan.lambda_returns(R), ValueError, ["lambda_returns", "next_values"]),
    (lambda: rlscan.vtrace(R, V), ValueError, ["log_ratio"]),
    (lambda: rlscan.vtrace(R, V, log_ratio=LR, target_logp=LR, behaviour_logp=LR), ValueError,
     ["log_ratio", "target_logp"]),
    (lambda: rlscan.vtrace(R, V, target_logp=LR), ValueError, ["behaviour_logp"]),
    (lambda: rlscan.vtrace(R, V, log_ratio=LR, rho_bar=0.0), ValueError, ["rho_bar", "> 0"]),
    (lambda: rlscan.vtrace(R, V, log_ratio=LR, c_bar=-1.0), ValueError, ["c_bar", "> 0"]),
    (lambda: rlscan.vtrace(R, V, log_ratio=LR, c_bar=torch.ones(N, T)), TypeError,
     ["c_bar", "must be a float", "Tensor"]),
    (lambda: rlscan.vtrace(R, V, log_ratio=LR, pg_rho_bar=float("nan")), ValueError,
     ["pg_rho_bar"]),
    (lambda: rlscan.vtrace(R, V, log_ratio=LR, pg_bootstrap="mix"), ValueError, ["pg_bootstrap"]),
    (lambda: rlscan.retrace(R, V, None, log_ratio=LR), ValueError, ["expected_next_q"]),
    (lambda: rlscan.retrace(R, None, V, log_ratio=LR), ValueError, ["q_taken"]),
    (lambda: rlscan.retrace(R, V, V, target_probs=LR), ValueError, ["behaviour_probs"]),
    (lambda: rlscan.retrace(R, V, V, log_ratio=LR, c_bar=0), ValueError, ["c_bar"]),
    (lambda: rlscan.eligibility_traces(R, None, gamma=0.9, lmbda=0.9), ValueError, ["dones"]),
    (lambda: rlscan.eligibility_traces(R, F, gamma=0.9, lmbda=0.9, seed=t(N, T)), ValueError,
     ["seed", "batch shape"]),
    (lambda: rlscan.eligibility_traces(R, F, gamma=0.9, lmbda=0.9, done_prev=t(N + 1)),
     ValueError, ["done_prev", "shape"]),
    (lambda: rlscan.episodic_cumsum(R, F, boundary="middle"), ValueError, ["boundary"]),
    (lambda: rlscan.episodic_cumsum(R, F, boundary="starts_at", done_prev=t(N)), ValueError,
     ["done_prev", "ends_at"]),
    (lambda: rlscan.linear_scan(R, None), ValueError, ["b"]),
    (lambda: rlscan.linear_scan(R, t(N, T - 2)), ValueError, ["b", "shape"]),
    (lambda: rlscan.linear_scan(torch.tensor(1.0), torch.tensor(1.0)), ValueError, ["0-d"]),
    (lambda: rlscan.linear_scan(R, R, reverse="False"), TypeError, ["reverse", "bool", "str"]),
    (lambda: rlscan.linear_scan(R, R, reverse=None), TypeError, ["reverse", "bool"]),
    (lambda: rlscan.linear_scan(R, R, reverse=1), TypeError, ["reverse", "bool", "int"]),
    (lambda: rlscan.gae(R.to("meta"), V.to("meta"), F.to("meta"), F.to("meta"),
                        last_value=t(N).to("meta")), ValueError, ["last_value", "meta"]),
    (lambda: rlscan.gae(R, V.clone().requires_grad_()), ValueError,
     ["values", "requires grad", "torch.no_grad()", "values.detach()"]),
    (lambda: rlscan.gae(R.clone().requires_grad_(), V), ValueError, ["rewards", "requires grad"]),
    (lambda: rlscan.gae(R, V, gamma=torch.full((N, 1), 0.9, requires_grad=True)), ValueError,
     ["gamma", "requires grad"]),
    (lambda: rlscan.vtrace(R, V, log_ratio=LR.clone().requires_grad_()), ValueError,
     ["log_ratio", "requires grad"]),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_bad_input_raises_clear_error_naming_the_argument(i):
    fn, exc, words = CASES[i]
    with pytest.raises(exc) as info:
        fn()
    for w in words:
        assert w in str(info.value), (str(info.value), w)


def test_inputs_that_require_grad_are_read_as_data_under_no_grad(backend, device):
    """The estimators are not differentiable on any backend: with grad mode on, an input that
    requires grad is an error (above); under torch.no_grad() it is read as data, and the
    outputs, the same as for the detached inputs, carry no autograd graph."""
    v = V.to(device).clone().requires_grad_()
    with torch.no_grad():
        adv, ret = rlscan.gae(R.to(device), v, F.to(device), gamma=0.9, lmbda=0.8)
    want = rlscan.gae(R.to(device), v.detach(), F.to(device), gamma=0.9, lmbda=0.8)
    assert not adv.requires_grad and not ret.requires_grad
    assert torch.equal(adv, want.advantages) and torch.equal(ret, want.returns)


@pytest.mark.gpu
def test_mixed_devices_rejected(backend, device):
    if backend != "cuda":
        pytest.skip("needs two devices")
    with pytest.raises(ValueError, match="values"):
        rlscan.gae(R.cuda(), V)


def test_import_is_fast_and_does_not_touch_cuda_or_triton():
    code = ("import time, sys, torch; t = time.perf_counter(); import rlscan; "
            "dt = time.perf_counter() - t; "
            "print(dt, torch.cuda.is_initialized(), 'triton' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    dt, cuda_init, triton_loaded = out.stdout.split()
    assert float(dt) < 0.5
    assert cuda_init == "False"
    assert triton_loaded == "False"


def test_cpu_tensors_meet_kernels_compiled_for_the_gpu_with_a_clear_error(monkeypatch):
    """RLSCAN_INTERPRET=1 set only after the kernels were defined: CPU tensors would reach
    kernels compiled for the GPU; the call says what to do instead of crashing inside Triton."""
    from rlscan.kernels import launch
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")
    monkeypatch.setattr(launch, "_INTERPRETED", False)
    with pytest.raises(RuntimeError, match="RLSCAN_INTERPRET=1 must be in the environment before"):
        rlscan.gae(R, V)
