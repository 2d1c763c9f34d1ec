"""Where rlscan's functions run: ``cuda`` (compiled Triton kernels), ``interpret`` (the same
kernels in Triton's interpreter, CPU tensors) or ``torch`` (rlscan's vectorised CPU path).

rlscan routes CPU tensors by ``RLSCAN_INTERPRET`` at every call, so switching between
``interpret`` and ``torch`` is just the environment variable. The interpreter itself must be on
before rlscan's kernels are first defined; :func:`activate` switches it on and refuses if the
kernels were already compiled for a GPU.
"""
import contextlib
import os
import sys

import torch

BACKENDS = ("cuda", "interpret", "torch")


def default() -> str:
    """CUDA if present, else the real Triton kernels in the interpreter."""
    return "cuda" if torch.cuda.is_available() else "interpret"


def activate(backend: str) -> torch.device:
    """Route rlscan's calls to ``backend``; returns the device its tensors must live on."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {BACKENDS}")
    if backend == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("backend 'cuda' needs a CUDA device")
        os.environ.pop("RLSCAN_INTERPRET", None)
        return torch.device("cuda")
    if backend == "interpret":
        if "rlscan.kernels.scan" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
            raise RuntimeError("rlscan's kernels were compiled before the interpreter was switched "
                               "on; set RLSCAN_INTERPRET=1 before the first kernel call")
        os.environ["TRITON_INTERPRET"] = "1"
        from . import interpreter
        interpreter.install()      # the same interpreted kernels, ~3.5x faster
    os.environ["RLSCAN_INTERPRET"] = "1" if backend == "interpret" else "0"
    return torch.device("cpu")


@contextlib.contextmanager
def preserved_environment(keys=("RLSCAN_INTERPRET", "TRITON_INTERPRET")):
    """Restore these environment variables afterwards (by default the backend switches,
    which tests change)."""
    saved = {k: os.environ.get(k) for k in keys}
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
