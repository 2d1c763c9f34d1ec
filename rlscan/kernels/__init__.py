"""Triton kernels. Imported lazily on the first kernel launch, so ``import rlscan`` stays cheap
and never touches CUDA. ``RLSCAN_INTERPRET=1`` runs the same kernels in Triton's interpreter
on CPU tensors; the interpreter must be switched on before the kernels are defined."""
import os

if os.environ.get("RLSCAN_INTERPRET") == "1":
    os.environ["TRITON_INTERPRET"] = "1"
