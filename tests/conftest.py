"""Test backends: every test that takes the ``backend`` fixture runs on

* ``torch``     — CPU tensors through the vectorised torch implementation,
* ``interpret`` — CPU tensors through the real Triton kernels in Triton's interpreter,
* ``cuda``      — CUDA tensors through the compiled kernels (marked ``gpu``: ``pytest -m gpu``).

Without a GPU the interpreter must be on before rlscan's kernels are defined, so it is switched
on here, at collection, before any test imports them.
"""
import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"

BACKENDS = [
    pytest.param("torch", id="torch"),
    pytest.param("interpret", id="interpret"),
    pytest.param("cuda", id="cuda", marks=pytest.mark.gpu),
]


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", BACKENDS)


@pytest.fixture
def device(backend, monkeypatch):
    """The device for the backend under test, with RLSCAN_INTERPRET set to route CPU tensors."""
    if backend == "cuda":
        if not torch.cuda.is_available():
            pytest.skip("no CUDA device")
        monkeypatch.delenv("RLSCAN_INTERPRET", raising=False)
        return torch.device("cuda")
    if backend == "interpret" and torch.cuda.is_available():
        pytest.skip("the interpreter backend is tested on CPU-only machines")
    monkeypatch.setenv("RLSCAN_INTERPRET", "1" if backend == "interpret" else "0")
    return torch.device("cpu")


@pytest.fixture(autouse=True)
def nan_poisoned_outputs(monkeypatch):
    """Fresh output buffers start as NaN, so an unwritten lane fails every comparison."""
    import rlscan._layout
    monkeypatch.setattr(rlscan._layout, "POISON_OUTPUTS", True)
