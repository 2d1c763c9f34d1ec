import sys, torch, rlscan
from rlscan.kernels.launch import force_config
sys.path.insert(0, "benchmarks")
from compare_configs import parse_config
est, name, dt = sys.argv[1], sys.argv[2], sys.argv[3]
dtype = getattr(torch, dt)
g = torch.Generator(device="cuda").manual_seed(0)
for N, T, pad in ((300, 2048, 2), (300, 2050, 1), (300, 2048, 1), (1500, 4096, 1)):
    def wide(shape, d=dtype, flag=False):
        x = torch.rand(N, T + pad, device="cuda", generator=g)
        x = (x < 0.05) if flag else x.to(d)
        return x[:, :T]
    r, v = wide(0), wide(0)
    term = wide(0, flag=True)
    cfg = None if name == "auto" else parse_config(name)
    try:
        if est == "gae":
            f = lambda: rlscan.gae(r, v, term, gamma=0.99, lmbda=0.95)
        else:
            f = lambda: rlscan.discounted_returns(r, term, gamma=0.99)
        if cfg is None or cfg == "tuned":
            print("which:", rlscan.which_config(est, r).config)
            out = f()
        else:
            with force_config(**cfg):
                out = f()
        torch.cuda.synchronize()
        ref_in = {k: x.contiguous() for k, x in (("r", r), ("v", v), ("t", term))}
        out2 = rlscan.gae(ref_in["r"], ref_in["v"], ref_in["t"], gamma=0.99, lmbda=0.95) if est == "gae" else rlscan.discounted_returns(ref_in["r"], ref_in["t"], gamma=0.99)
        torch.cuda.synchronize()
        a = out[0] if isinstance(out, tuple) else out
        b = out2[0] if isinstance(out2, tuple) else out2
        print(f"OK {est} {N}x{T}+{pad} {dt} {name}: maxdiff vs contiguous {(a.float()-b.float()).abs().max().item():.3g}")
    except Exception as e:
        print(f"ERR {est} {N}x{T}+{pad} {dt} {name}: {type(e).__name__} {str(e)[:60]}"); break
