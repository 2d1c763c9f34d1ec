"""The CPU path's scans (rlscan/_torch_path.py) against a float64 loop over time, chunk edges,
padding and non-finite values included."""
import math

import numpy as np
import pytest
import torch

import rlscan
from rlscan import _torch_path
from rlscan._torch_path import doubling_scan, scan, sequential_scan
from rlscan.tune import grid

inf, nan = math.inf, math.nan


def step_by_step(a, b, init, reverse, dtype=torch.float64):
    """x[t] = b[t] + a[t]·x[t∓1] step by step in ``dtype``, a reset (a = 0) discarding the
    carry outright."""
    a, b = a.to(dtype), b.to(dtype)
    N, T = b.shape
    x = torch.empty_like(b)
    for n in range(N):
        carry = torch.zeros((), dtype=dtype) if init is None else init[n].to(dtype)
        for t in (range(T - 1, -1, -1) if reverse else range(T)):
            carry = b[n, t] if a[n, t] == 0 else b[n, t] + a[n, t] * carry
            x[n, t] = carry
    return x


def coefficients(N, T, seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(N, T, generator=g) * 1.05                       # some |a| > 1
    a[torch.rand(N, T, generator=g) < 0.1] = 0.0                   # resets
    return a, torch.randn(N, T, generator=g)


def time_major(x):
    """The same [N, T] values held time-major in memory (a [T, N] buffer seen as [N, T])."""
    return x.t().contiguous().t()


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "backward"])
@pytest.mark.parametrize("chunk", [None, 1, 2, 3, 7, 16, 1000])
@pytest.mark.parametrize("N,T", [(1, 1), (3, 2), (2, 17), (4, 64), (2, 300)])
def test_chunked_scan_equals_the_float64_loop_at_every_chunk_length(N, T, chunk, reverse):
    a, b = coefficients(N, T, seed=N * 1000 + T)
    for init in (None, torch.randn(N, generator=torch.Generator().manual_seed(1))):
        got = scan(a, b, init, reverse, chunk)
        assert got.shape == (N, T) and got.dtype == torch.float32
        torch.testing.assert_close(got.double(), step_by_step(a, b, init, reverse),
                                   rtol=1e-5, atol=1e-5)
        # time-major memory takes chunks laid out [L, K, N]: the same bits, into any output
        out = time_major(torch.full((N, T), nan))
        tm = scan(time_major(a), time_major(b), init, reverse, chunk, out=out)
        assert tm is out and torch.equal(tm, got)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "backward"])
def test_doubling_and_sequential_scans_equal_the_float64_loop_too(reverse):
    a, b = coefficients(3, 100, seed=7)
    init = torch.randn(3, generator=torch.Generator().manual_seed(2))
    want = step_by_step(a, b, init, reverse)
    for fn in (doubling_scan, sequential_scan):
        torch.testing.assert_close(fn(a, b, init, reverse).double(), want, rtol=1e-5, atol=1e-5)


def same_non_finite_pattern_and_values(got, want):
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    assert torch.equal(torch.isinf(got), torch.isinf(want))
    assert torch.equal(torch.signbit(got[torch.isinf(got)]), torch.signbit(want[torch.isinf(want)]))
    fin = torch.isfinite(want)
    torch.testing.assert_close(got.double()[fin], want[fin], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "backward"])
@pytest.mark.parametrize("chunk", [None, 2, 4, 5])
def test_reset_discards_inf_and_nan_carried_into_it_within_and_across_chunks(chunk, reverse):
    N, T = 4, 20
    a, b = coefficients(N, T, seed=3)
    a[a == 0] = 0.5                       # resets only where planted below
    # (row, scan position of the bad value, its value, scan position of the reset after it)
    planted = [(0, 4, inf, 6), (1, 9, nan, 11), (2, 10, -inf, 12), (3, 15, nan, 16)]
    at = (lambda k: T - 1 - k) if reverse else (lambda k: k)      # scan position -> t
    for n, bad, value, reset in planted:
        b[n, at(bad)], a[n, at(reset)] = value, 0.0
    got = scan(a, b, None, reverse, chunk)
    same_non_finite_pattern_and_values(got, step_by_step(a, b, None, reverse))
    torch.testing.assert_close(scan(time_major(a), time_major(b), None, reverse, chunk), got,
                               rtol=0, atol=0, equal_nan=True)
    for n, bad, _, reset in planted:
        assert not torch.isfinite(got[n, at(bad)])
        assert got[n, at(reset)] == b[n, at(reset)]  # the reset step is b itself, exactly
        assert torch.isfinite(got[n, at(reset):] if not reverse else got[n, :at(reset) + 1]).all()


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "backward"])
def test_products_that_overflow_before_a_reset_do_not_poison_the_next_episode(reverse):
    # finite inputs whose carry overflows: unmasked, 0·inf would be NaN past the reset. Before
    # the reset the outputs are inf or NaN (a chunk's product of a overflows too, and ALGORITHMS.md
    # §2.5 leaves overflowing products to the sequential reference); from the reset on they
    # are the loop's, finite
    T, reset = 64, 40
    a = torch.full((1, T), 1e30)
    b = torch.ones(1, T)
    after = slice(reset, None) if not reverse else slice(None, T - reset)
    a[0, after] = 0.5
    a[0, reset if not reverse else T - reset - 1] = 0.0
    got = scan(a, b, None, reverse, 8)
    want = step_by_step(a, b, None, reverse, dtype=torch.float32)
    assert torch.isfinite(got[0, after]).all() and torch.isfinite(want[0, after]).all()
    assert torch.equal(got[0, after], want[0, after])


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "backward"])
def test_nan_coefficient_at_the_first_step_multiplies_the_zero_boundary_value(reverse):
    # x[-1] (x[T]) = 0 still enters as a·0, so NaN there is NaN out, as in the kernels
    a, b = torch.full((1, 9), 0.5), torch.ones(1, 9)
    a[0, -1 if reverse else 0] = nan
    got = scan(a, b, None, reverse, 4)
    assert torch.isnan(got).all()


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "backward"])
def test_a_non_finite_row_leaves_the_other_rows_bit_for_bit_unchanged(reverse):
    # one row's inf sends the whole call through the masked passes; the others must not notice
    a, b = coefficients(5, 300, seed=11)
    alone = scan(a[1:], b[1:], None, reverse)
    b[0, 150] = inf
    together = scan(a, b, None, reverse)
    assert not torch.isfinite(together[0]).all()
    assert torch.equal(together[1:], alone)


def estimator_calls(N, T):
    """Calls that take every kind of tensor a Problem holds: per-step inputs, bool and float
    flags, a per-step γ, per-row tensors."""
    g = torch.Generator().manual_seed(5)

    def normal(*shape):
        return torch.randn(*shape, generator=g)

    def flags(p):
        return torch.rand(N, T, generator=g) < p

    per_step_gamma = 0.9 + 0.1 * torch.rand(N, T, generator=g)
    return [
        ("gae", (normal(N, T), normal(N, T), flags(0.05), flags(0.03)),
         dict(bootstrap_values=normal(N, T), gamma=per_step_gamma, lmbda=0.9)),
        ("vtrace", (normal(N, T), normal(N, T), flags(0.05).float()),
         dict(log_ratio=normal(N, T) * 0.3, last_value=normal(N), gamma=0.95)),
        ("eligibility_traces", (normal(N, T), flags(0.05)),
         dict(gamma=0.9, lmbda=0.8, seed=normal(N), done_prev=flags(0.5)[:, 0])),
        ("linear_scan", (torch.rand(N, T, generator=g), normal(N, T)),
         dict(init=normal(N), reverse=True)),
    ]


def test_rows_solved_in_blocks_give_the_whole_tensors_results_bit_for_bit(monkeypatch):
    monkeypatch.setenv("RLSCAN_INTERPRET", "0")           # CPU tensors: the torch path
    N, T = 37, 24
    for name, args, kwargs in estimator_calls(N, T):
        whole = getattr(rlscan, name)(*args, **kwargs)
        with monkeypatch.context() as m:
            m.setattr(_torch_path, "_BLOCK_ELEMENTS", 5 * T)   # 8 blocks, the last of 2 rows
            blocked = getattr(rlscan, name)(*args, **kwargs)
        for w, b in zip(whole if isinstance(whole, tuple) else (whole,),
                        blocked if isinstance(blocked, tuple) else (blocked,)):
            assert torch.equal(w, b), name


@pytest.mark.parametrize("layout", ["time_last", "time_major"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_every_estimator_in_row_blocks_matches_its_whole_tensor_call_and_the_reference(
        monkeypatch, layout, dtype):
    # rlscan-bench's inputs (bf16 with bool flags, time-major [T, N] buffers read in place)
    monkeypatch.setenv("RLSCAN_INTERPRET", "0")
    N, T = 23, 40
    for est in grid.ESTIMATORS:
        call = grid.place(grid.draw(grid.Cell(est, N, T, dtype, layout)), layout, "cpu")
        whole = grid.time_last(grid.run(est, call), layout)
        with monkeypatch.context() as m:
            m.setattr(_torch_path, "_BLOCK_ELEMENTS", 3 * T)
            blocked = grid.time_last(grid.run(est, call), layout)
        for w, b, ref in zip(whole, blocked, grid.reference((est, N, T, dtype))):
            assert torch.equal(w, b), est
            np.testing.assert_allclose(w.numpy(), ref, rtol=2e-4, atol=2e-4, err_msg=est)


def test_torch_compile_traces_the_doubling_scan_not_the_chunked_one(monkeypatch):
    # dynamo would unroll the chunked scan's ~2√T Python steps (GAE 4×4096: minutes to
    # compile); traced, a call takes the log-depth scan, which inductor fuses
    monkeypatch.setenv("RLSCAN_INTERPRET", "0")

    def step(r, v, d):
        adv, _ = rlscan.gae(r, v, d, last_value=v[:, -1], gamma=0.99, lmbda=0.95)
        return adv * 2

    g = torch.Generator().manual_seed(4)
    r, v = torch.randn(3, 1000, generator=g), torch.randn(3, 1000, generator=g)
    d = torch.rand(3, 1000, generator=g) < 0.1
    eager = step(r, v, d)

    def chunked_scan_is_not_for_tracing(*args, **kwargs):
        raise AssertionError("the chunked scan was traced")

    monkeypatch.setattr(_torch_path, "scan", chunked_scan_is_not_for_tracing)
    torch._dynamo.reset()
    traced = torch.compile(step, backend="eager", fullgraph=False)(r, v, d)
    torch.testing.assert_close(traced, eager, rtol=1e-5, atol=1e-5)
