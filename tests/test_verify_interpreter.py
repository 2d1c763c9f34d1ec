"""verify/interpreter.py: Triton's interpreter without the re-patching of ``triton.language`` at
each device-function call (tests/conftest.py installs it on CPU-only machines)."""
import pytest
import torch

from rlscan.kernels.launch import force_config
from rlscan.verify import interpreter

from cases import call, make

if torch.cuda.is_available():
    pytest.skip("the interpreter is tested on CPU-only machines", allow_module_level=True)

from triton.runtime import interpreter as ti  # noqa: E402  (the interpreter is on by now)

# (estimator, config, time_dim): a row-block walk, a two-level chunked tile with a carry pass, a
# look-back over spans, and time-major buffers
_CALLS = [
    ("gae", dict(strategy="row_block", BLOCK_N=2, BLOCK_T=8, num_warps=1), 1),
    ("vtrace", dict(strategy="chunked", BLOCK_N=1, BLOCK_T=16, num_warps=1, CHUNKS_PER_SPAN=2,
                    TWO_LEVEL=True), 1),
    ("discounted_returns", dict(strategy="lookback", BLOCK_N=1, BLOCK_T=8, num_warps=1,
                                CHUNKS_PER_SPAN=1), 1),
    ("eligibility_traces", dict(strategy="row_block", BLOCK_N=8, BLOCK_T=4, num_warps=1), 0),
]


def _outputs(est, config, time_dim):
    kw, _ = make(est, (3, 37), seed=7)
    if time_dim == 0:
        kw = {k: (v.t().contiguous() if isinstance(v, torch.Tensor) and v.dim() == 2 else v)
              for k, v in kw.items()}
    with force_config(**config):
        out = call(est, kw, torch.device("cpu"), time_dim=time_dim)
    return out if isinstance(out, tuple) else (out,)


@pytest.fixture
def interpreted(monkeypatch):
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")
    if not interpreter.install():
        pytest.skip("this Triton's interpreter lacks the hooks verify/interpreter.py wraps")
    yield
    interpreter.install()


@pytest.mark.parametrize("est, config, time_dim", _CALLS, ids=[c[0] for c in _CALLS])
def test_kernels_give_the_same_bits_with_and_without_the_repatching(interpreted, est, config,
                                                                    time_dim):
    fast = _outputs(est, config, time_dim)
    interpreter.uninstall()
    shipped = _outputs(est, config, time_dim)
    assert len(fast) == len(shipped)
    for a, b in zip(fast, shipped):
        assert torch.equal(a, b)


def test_a_kernel_patches_the_language_once_and_its_own_device_calls_not_again(interpreted,
                                                                              monkeypatch):
    """The kernel module's jit functions (the scan's combine, once a step) see the kernel's
    patch; triton's own (``tl.zeros``: its module sees ``triton.language.core``, which the
    kernel's patch leaves alone) are still patched as shipped."""
    patched, patch = [], ti._patch_lang

    def counting(fn):
        patched.append(fn.__globals__["__name__"])
        return patch(fn)

    monkeypatch.setattr(ti, "_patch_lang", counting)
    est, config, time_dim = _CALLS[0]
    _outputs(est, config, time_dim)
    assert patched.count("rlscan.kernels.scan") == 1
    assert all(m.startswith("triton.language") for m in patched if m != "rlscan.kernels.scan")
    interpreter.uninstall()
    patched.clear()
    _outputs(est, config, time_dim)
    assert patched.count("rlscan.kernels.scan") > 100


def test_install_leaves_an_interpreter_without_its_hooks_alone(interpreted, monkeypatch):
    interpreter.uninstall()
    shipped = ti.GridExecutor.__call__, ti.InterpretedFunction.__call__
    monkeypatch.delattr(ti, "_patch_lang")
    assert interpreter.install() is False
    assert (ti.GridExecutor.__call__, ti.InterpretedFunction.__call__) == shipped
    monkeypatch.undo()
    assert interpreter.install() is True
    assert interpreter.install() is True               # idempotent
    assert ti.GridExecutor.__call__ is not shipped[0]
