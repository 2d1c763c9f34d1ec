"""Long rows without episode ends and without decay: the look-back's worst case.

The standard grid's data ends ~5% of steps, so a look-back span finds a reset among its nearest
predecessors; so do rows whose product of coefficients underflows (γλ < 1 over thousands of
steps). A language-model rollout scored with γ = λ = 1 and no episode end inside the row has
neither: every span folds all earlier summaries back to span 0, a window at a time. This times
such calls (GAE with γ = λ = 1, discounted returns with γ = 1, episodic sums, no flags set) with
the tuned config and forced spans, and checks each against the tuned call's outputs.

    python benchmarks/no_reset_probe.py --shapes 1x1048576,8x262144 \\
        --configs tuned,lookback:1x256:w1:c1:2l,chunked:1x512:w1:c1:2l
"""
import argparse
import os
import sys

import torch

from rlscan.kernels.launch import force_config
from rlscan.tune import grid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_configs import parse_config  # noqa: E402 - a sibling script, not a package

# the positional argument holding the done flags, per estimator (grid._draw's order)
_FLAGS = {"gae": 2, "discounted_returns": 1, "episodic_cumsum": 1}


def no_reset_call(est: str, N: int, T: int, index: int, device="cuda") -> grid.Call:
    """The grid's input set with every flag cleared and γ = λ = 1 (time-last)."""
    if est not in _FLAGS:
        raise ValueError(f"no_reset_call: estimator {est!r}; expected one of {', '.join(_FLAGS)}")
    call = grid.place(grid.draw(grid.Cell(est, N, T, "float32", "time_last"), index, device),
                      "time_last", device)
    args = list(call.args)
    args[_FLAGS[est]] = torch.zeros_like(args[_FLAGS[est]])
    kwargs = dict(call.kwargs)
    for k in ("gamma", "lmbda"):
        if k in kwargs:
            kwargs[k] = 1.0
    return grid.Call(tuple(args), kwargs)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--estimators", default="gae,discounted_returns,episodic_cumsum")
    p.add_argument("--shapes", type=grid.parse_shapes,
                   default=grid.parse_shapes("1x1048576,8x262144,32x32768"))
    p.add_argument("--configs", default="tuned,lookback:1x256:w1:c1:2l,chunked:1x512:w1:c1:2l")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("no_reset_probe: needs a CUDA GPU", file=sys.stderr)
        return 2
    from rlscan.tune.bench import device_us
    configs = [(name, parse_config(name)) for name in args.configs.split(",")]
    for est in args.estimators.split(","):
        for N, T in args.shapes:
            calls = [no_reset_call(est, N, T, i) for i in range(2)]
            ref = grid.run(est, calls[0])
            line = f"{est} {N}x{T} no resets, γ=λ=1:"
            for name, cfg in configs:
                if cfg == "tuned":
                    run = grid.run
                else:                    # (forward scans ignore TWO_LEVEL)
                    def run(e, c, cfg=cfg):
                        with force_config(**cfg):
                            return grid.run(e, c)
                try:
                    out = run(est, calls[0])
                    err = max(((o.double() - r.double()).abs().max() /
                               r.double().abs().max().clamp_min(1.0)).item()
                              for o, r in zip(out, ref))
                    us = device_us([(lambda c=c: run(est, c)) for c in calls])
                    line += f"  {name} {us:.1f} us (rel diff {err:.1e})"
                except Exception as e:   # a config that does not fit the call: say so, go on
                    line += f"  {name} failed: {type(e).__name__}: {str(e)[:60]}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
