import sys, torch
sys.path.insert(0, "benchmarks")
import compare_configs as cc
from rlscan.tune import grid
from rlscan.kernels import launch
est, N, T = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
call = grid.place(grid.draw(grid.Cell(est, N, T, "float32", "time_last"), 0, "cuda"), "time_last", "cuda")
p = cc.padded_rows(call, 1)
for k, a in list(enumerate(p.args)) + list(p.kwargs.items()):
    if isinstance(a, torch.Tensor):
        print(k, tuple(a.shape), a.stride(), a.dtype, a.data_ptr() % 16)
    else:
        print(k, a)
for tweak in sys.argv[4:]:
    if tweak == "tspec":
        launch._UNSPEC_T_FOR_ODD_STRIDES = False
try:
    out = grid.run(est, p)
    torch.cuda.synchronize()
    ref = grid.run(est, call)
    print("OK", (out[0] - ref[0]).abs().max().item())
except Exception as e:
    print("ERR", type(e).__name__, str(e)[:80])
