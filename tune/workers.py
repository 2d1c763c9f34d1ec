"""CPU work done beside the timing loop, in worker processes: float64 references and Triton
compiles.

Why: a default sweep compiles thousands of kernel variants (every candidate for every
estimator, dtype and layout) and runs hundreds of sequential float64 references, both
CPU-bound; done one after another in the timing process they alone would blow the 10-minute
budget. Workers compile into Triton's on-disk cache, where the timing process then finds them.

A compile job builds the very call the timing process will make (same shapes, strides and
dtypes, so Triton specialises it identically) and compiles it with ``JITFunction.warmup``:
workers launch no kernel on the GPU the timer is measuring.
"""
import concurrent.futures as cf
from concurrent.futures.process import BrokenProcessPool
import contextlib
import multiprocessing
from typing import Dict, List, Optional, Sequence

from . import grid


def proxy(n: int) -> int:
    """A small size that Triton specialises like ``n`` (it agrees on "== 1" and "divisible by
    16", what Triton specialises integer arguments on)."""
    if n <= 64:
        return n
    return 64 if n % 16 == 0 else 48 + n % 16


def variant(cell: grid.Cell, config: dict) -> tuple:
    """Calls with the same variant run the same compiled kernels, so one compile serves them:
    integer arguments matter only through Triton's specialisation (``proxy``), plus, for the
    spanned strategies, the span count K and the carry kernel's block, and whether a program
    walks several chunks (launch.py: then it prefetches)."""
    key = (cell.estimator, cell.dtype, cell.layout, proxy(cell.N), proxy(cell.T))
    n_chunks = -(-cell.T // config["BLOCK_T"])       # ceil divisions, as launch.py does
    per_span = n_chunks
    if config.get("strategy") in ("chunked", "lookback"):
        per_span = cps = config["CHUNKS_PER_SPAN"]
        k = -(-n_chunks // cps)
        key += (proxy(cps), proxy(k), min(1 << (k - 1).bit_length(), 1024))
    return key + (min(per_span, n_chunks) > 1,)


class _WarmupOnly:
    """Stands in for the kernel object in a worker: ``kernel[grid](...)`` compiles, no launch."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, launch_grid):
        return lambda *args, **kwargs: self.kernel.warmup(*args, grid=launch_grid, **kwargs)


def compile_job(cell: grid.Cell, configs: List[dict], device: str) -> List[Optional[str]]:
    """Compile ``configs`` for ``cell``'s variant; per config None or the error's text, and
    the seconds it took."""
    import time
    import torch
    from triton.runtime.jit import JITFunction
    from rlscan.kernels import launch
    torch.cuda.set_device(torch.device(device))
    for name, obj in list(vars(launch).items()):      # every kernel the launcher may call
        if isinstance(obj, JITFunction):
            setattr(launch, name, _WarmupOnly(obj))
    call = grid.place(_empty_like_draw(cell, device), cell.layout, device)
    out = []
    for cfg in configs:
        start = time.perf_counter()
        try:
            with launch.force_config(**cfg):
                grid.run(cell.estimator, call)
            err = None
        except Exception as e:  # noqa: BLE001 - the timing process retries and records it
            err = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        out.append((err, time.perf_counter() - start))
    return out


def _empty_like_draw(cell: grid.Cell, device: str) -> grid.Call:
    """Uninitialised tensors shaped like ``grid.draw(cell)`` on ``device``: compiling needs
    shapes, strides, dtypes and alignment, not values."""
    import torch
    small = grid.draw(grid.Cell(cell.estimator, 1, 1, cell.dtype, cell.layout), 0)

    def grow(x):
        shape = (cell.N, cell.T) if x.dim() == 2 else (cell.N,)
        return torch.empty(shape, dtype=x.dtype, device=device)
    return grid.map_tensors(small, grow)


def reference_job(key: tuple, device: str):
    if device.startswith("cuda"):
        import torch
        torch.cuda.set_device(torch.device(device))
    return grid.reference(key, device)


class Workers:
    """A process pool (spawned: CUDA and fork do not mix), or inline work with ``n=0``."""

    def __init__(self, n: int, device: str):
        self.device = device
        self.pool = (cf.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"))
                     if n > 0 else None)
        self._refs: Dict[tuple, cf.Future] = {}
        self._compiles: Dict[tuple, cf.Future] = {}
        self.compile_seconds: List[float] = []     # per compile job config, for the summary

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # references ---------------------------------------------------------------------------
    def submit_reference(self, key: tuple) -> None:
        if self.pool is not None and key not in self._refs:
            self._refs[key] = self.pool.submit(reference_job, key, self.device)

    def reference(self, key: tuple):
        """The float64 reference outputs for ``key`` (waits for, or computes, them)."""
        fut = self._refs.pop(key, None)
        if fut is not None:
            try:
                return fut.result()
            except BrokenProcessPool:
                pass              # a worker died (out of memory?): compute it here instead
        return grid.reference(key, self.device)

    # compiles ------------------------------------------------------------------------------
    def submit_compiles(self, cell: grid.Cell, configs: Sequence[dict], chunk: int = 4) -> None:
        """Queue compiles of ``configs`` not yet queued for ``cell``'s variant."""
        if self.pool is None or not self.device.startswith("cuda"):
            return
        from rlscan.kernels.configs import label
        todo = [c for c in configs if (variant(cell, c), label(c)) not in self._compiles]
        for i in range(0, len(todo), chunk):
            part = todo[i:i + chunk]
            fut = self.pool.submit(compile_job, cell, part, self.device)
            for c in part:
                self._compiles[(variant(cell, c), label(c))] = fut

    def wait_compiles(self, cell: grid.Cell, configs: Sequence[dict]) -> None:
        """Wait until the queued compiles of ``configs`` are done (failures are not raised:
        the timing process meets them again and records them)."""
        from rlscan.kernels.configs import label
        for c in configs:
            fut = self._compiles.get((variant(cell, c), label(c)))
            if fut is not None:
                with contextlib.suppress(Exception):
                    if not getattr(fut, "counted", False):
                        self.compile_seconds += [s for _, s in fut.result()]
                        fut.counted = True
