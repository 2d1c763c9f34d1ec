"""pytest-benchmark timings of a few representative cells (``pytest -m benchmark`` on a CUDA
machine; needs the ``bench`` extra). Each round synchronises, so a round is one eager call as a
training loop pays it. The full grid, with device time against the bandwidth floor and the
baselines, is ``rlscan-bench``."""
import pytest
import torch

from rlscan.tune import grid

CELLS = [("gae", 4096, 128), ("gae", 8, 65536), ("vtrace", 16384, 512),
         ("episodic_cumsum", 1, 1048576)]


@pytest.mark.benchmark
@pytest.mark.parametrize("layout", ["time_last", "time_major"])
@pytest.mark.parametrize("est, N, T", CELLS, ids=[f"{e}-{n}x{t}" for e, n, t in CELLS])
def test_eager_call_time(benchmark, est, N, T, layout):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    call = grid.place(grid.draw(grid.Cell(est, N, T, "float32", layout), 0, "cuda"), layout, "cuda")

    def once():
        out = grid.run(est, call)
        torch.cuda.synchronize()
        return out

    out = benchmark(once)
    assert all(torch.isfinite(o).all() for o in out)
