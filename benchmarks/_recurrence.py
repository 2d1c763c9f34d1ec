"""Shared by the standalone scan probes (reverse_scan_probe.py, persistent_lookback_probe.py,
tma_walk_probe.py, time_major_probe.py): the float64 backward recurrence
x[t] = b[t] + a[t]·x[t+1], the error line of ``--check``, the timing of a cell over
DRAM-resident input sets, and the command line (``--check`` anywhere, timing on a GPU)."""
import argparse
import sys

import torch

import rlscan
from rlscan.tune.bench import device_us


def reference(a: torch.Tensor, b: torch.Tensor, time_dim: int = 1) -> torch.Tensor:
    """x in float64, sequentially over time (dimension ``time_dim``) from the end (x[T] = 0)."""
    if time_dim == 0:
        return reference(a.t(), b.t()).t()
    x, c = torch.zeros_like(a, dtype=torch.float64), torch.zeros(a.shape[0], dtype=torch.float64)
    for t in range(a.shape[1] - 1, -1, -1):
        c = b[:, t].double() + a[:, t].double() * c
        x[:, t] = c
    return x


def within(label: str, x: torch.Tensor, ref: torch.Tensor) -> bool:
    """Print ``label``'s largest error against ``ref``; True if it is within 1e-4 of its scale."""
    err = (x.double().cpu() - ref).abs().max().item()
    ok = err <= 1e-4 * max(ref.abs().max().item(), 1.0)
    print(f"{label}: max error {err:.1e}" + ("" if ok else "  WRONG"))
    return ok


def rotated_cell(N: int, T: int, inputs, device, time_dim: int = -1):
    """An [N, T] cell (``time_dim=0``: [T, N] buffers) timed as rlscan-bench times one:
    ``inputs(N, T, device, seed=i)`` sets that
    together span three L2 caches (a single set of the long rows ran from L2 in the seventh
    session's probes). Returns (sets, cols, bench): ``bench(name, fn)`` times ``fn(i)`` over
    every set in one CUDA graph (``device_us``, each call its own outputs) and appends
    ``"name µs"`` to ``cols``, with ``!`` where set 0's result differs from the tuned
    ``rlscan.linear_scan``'s by more than 1e-3 of its scale."""
    l2 = torch.cuda.get_device_properties(device).L2_cache_size
    n_sets = max(1, -(-3 * l2 // (3 * N * T * 4)))
    sets = [inputs(N, T, device, seed=i) for i in range(n_sets)]
    ref = rlscan.linear_scan(*sets[0], reverse=True, time_dim=time_dim)
    cols = []

    def bench(name, fn):
        err = (fn(0) - ref).abs().max().item()
        us = device_us([(lambda i=i: fn(i)) for i in range(n_sets)])
        cols.append(f"{name} {us:.1f}" + ("!" if err > 1e-3 * ref.abs().max().item() else ""))
    return sets, cols, bench


def main(name: str, doc: str, check, timing, argv=None) -> int:
    """``--check``: ``check(device)`` (an exit code); else ``timing(device)`` on a GPU."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="results only (CPU: interpreter)")
    args = p.parse_args(argv)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.check:
        return check(device)
    if device == "cpu":
        print(f"{name}: timing needs a CUDA GPU (use --check on CPU)", file=sys.stderr)
        return 2
    timing(device)
    return 0
