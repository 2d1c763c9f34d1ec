"""Long horizons in one pass, probed on the bare backward recurrence x[t] = b[t] + a[t]·x[t+1]
(fp32 [N, T], rlscan's ``linear_scan``): one program per (row, chunk) scans its chunk, publishes
the chunk's summary, waits until every earlier chunk of its row has published, folds them all in
one scan (no look-back chain: the window is the whole row) and writes its outputs. Inputs are
read once, in one launch (plus the fill that marks the summaries "not yet").

Why (benchmarks/NOTES.md, "What limits us now" 4): the thirteenth session's phase probe put the
chunked strategy's two launches at 5.1 + 7.9 µs (discounted returns 1x1M, floor 3.0) where one
stream of the same bytes takes 2.6; the shipped look-back (windows of 256 chunks) lost to
chunked at 1x1M (19.7 vs 14.2 µs), and nothing had measured the fold of the whole row at once.

Modes (``--modes``, default all), each timed as a CUDA graph of 20 calls or more over input sets
spanning three L2 caches (rlscan-bench's device column; a fixed 3 sets before the twenty-sixth
session, so its 8x65536 and 32x32768 figures were read from L2):
    bound    scan and write each chunk with carry 0 (wrong results: a lower bound, no fill)
    pub      bound + the fill and the summary's store (still carry 0)
    full     publish, spin on all earlier summaries, fold, write
    pred     as full, but spin on the predecessor's word first, then read all once
    dbound, dfull   bound and full with lanes in descending time and a forward scan
and, per cell, the shipped ``linear_scan(reverse=True)`` call (tuned DB) and the fill alone.
Thirteenth session (``results/probes/2026-12-01_thirteenth_session_long_horizons.txt``): full
2048/w8 9.8 / 6.6 / 8.2 µs at 1x1M / 8x65536 / 32x32768 against the shipped 11.9 / 9.0 /
10.7, bound 5.7 / 3.8 / 5.8, the fill 1.3-1.4 alone; descending lanes lose (scalar loads).

    python benchmarks/onepass_probe.py                  # GPU
    python benchmarks/onepass_probe.py --check          # CPU with TRITON_INTERPRET=1: results
"""
import argparse

import torch
import triton
import triton.language as tl

from rlscan.kernels.scan import _apply, _combine, _pack, _unpack

CELLS = "1x1048576,8x262144,8x65536,32x32768,128x16384"
TILES = "1024:4,2048:8"
MODES = {"bound": (0, 0), "pub": (1, 0), "full": (2, 0), "pred": (3, 0), "dbound": (0, 1),
         "dfull": (2, 1)}
NOT_YET = -1


@triton.jit
def _onepass(A, B, X, W, T, K, MODE: tl.constexpr, BT: tl.constexpr, FOLD: tl.constexpr,
             DESC: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    s = tl.program_id(1)                        # chunk s from the boundary (t = T-1 side)
    o = tl.arange(0, BT)
    if DESC:    # lanes in descending time, a forward scan (no lane reversals)
        t = T - 1 - s * BT - o
        P_END: tl.constexpr = BT - 1
    else:
        t = T - (s + 1) * BT + o
        P_END: tl.constexpr = 0
    m = t >= 0
    a = tl.load(A + row * T + t, mask=m, other=1.0)
    b = tl.load(B + row * T + t, mask=m, other=0.0)
    s_a, s_b = tl.associative_scan((a, b), 0, _combine, reverse=not DESC)
    carry = tl.zeros([], tl.float32)
    if MODE >= 1:
        h_a = tl.sum(tl.where(o == P_END, s_a, 0.0), 0)
        h_b = tl.sum(tl.where(o == P_END, s_b, 0.0), 0)
        tl.store(W + row * K + s, _pack(h_a, h_b))
        if s > 0 and MODE >= 2:
            if MODE == 3:
                p = tl.load(W + row * K + s - 1, volatile=True)
                while p == -1:   # all ones: not yet published
                    p = tl.load(W + row * K + s - 1, volatile=True)
            k = tl.arange(0, FOLD)
            need = k < s
            w = tl.load(W + row * K + k, mask=need, other=0, volatile=True)
            while tl.max(tl.where(need & (w == -1), 1, 0), 0) > 0:
                w = tl.load(W + row * K + k, mask=need, other=0, volatile=True)
            f_a, f_b = _unpack(w)
            f_a = tl.where(need, f_a, 1.0)
            f_b = tl.where(need, f_b, 0.0)
            g_a, g_b = tl.associative_scan((f_a, f_b), 0, _combine)
            carry = tl.sum(tl.where(k == FOLD - 1, g_b, 0.0), 0)   # applied to x[T] = 0
    x = _apply(s_a, s_b, carry)
    tl.store(X + row * T + t, x, mask=m)


def onepass(a, b, mode, bt, warps):
    (code, desc), (N, T) = mode, a.shape
    K = triton.cdiv(T, bt)
    x = torch.empty_like(a)
    w = torch.full((N, K), NOT_YET, dtype=torch.int64, device=a.device) if code else x
    _onepass[(N, K)](a, b, x, w, T, K, MODE=code, BT=bt,
                     FOLD=max(triton.next_power_of_2(K), 2), DESC=desc, num_warps=warps)
    return x


def reference(a, b):
    x = torch.zeros_like(a, dtype=torch.float64)
    nxt = torch.zeros(a.shape[0], dtype=torch.float64, device=a.device)
    for t in range(a.shape[1] - 1, -1, -1):
        nxt = b[:, t].double() + a[:, t].double() * nxt
        x[:, t] = nxt
    return x


def inputs(N, T, device, seed=0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = (torch.rand(N, T, generator=g) * 0.99).where(torch.rand(N, T, generator=g) > 0.01,
                                                     torch.zeros(()))
    b = torch.randn(N, T, generator=g)
    return a.to(device), b.to(device)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cells", default=CELLS)
    p.add_argument("--tiles", default=TILES, help="BLOCK_T:warps,...")
    p.add_argument("--modes", default=",".join(MODES), help="of " + ", ".join(MODES))
    p.add_argument("--check", action="store_true")
    p.add_argument("--ncu", choices=MODES, help="only launch this mode, 4 times, on the first "
                   "cell and tile (for Nsight Compute; nothing timed)")
    args = p.parse_args(argv)
    tiles = [tuple(int(v) for v in x.split(":")) for x in args.tiles.split(",")]
    unknown = [m for m in args.modes.split(",") if m not in MODES]
    if unknown:
        p.error(f"--modes: {', '.join(unknown)}; expected some of {', '.join(MODES)}")
    modes = {m: MODES[m] for m in args.modes.split(",")}
    if args.ncu:
        N, T = (int(v) for v in args.cells.split(",")[0].split("x"))
        a, b = inputs(N, T, "cuda")
        for _ in range(4):
            onepass(a, b, MODES[args.ncu], *tiles[0])
        torch.cuda.synchronize()
        return 0
    if args.check:
        for N, T, bt in ((2, 40, 8), (1, 70, 16), (3, 16, 16)):
            a, b = inputs(N, T, "cpu")
            ref = reference(a, b)
            for mode in ("full", "pred", "dfull"):
                err = (onepass(a, b, MODES[mode], bt, 1).double() - ref).abs().max().item()
                print(f"{N}x{T} BT {bt} {mode}: max |err| {err:.2e}")
                if err > 1e-4:
                    return 1
        return 0
    from rlscan import linear_scan
    from rlscan.tune.bench import copy_bandwidth, device_us, input_set_count
    from rlscan.tune.timing import l2_bytes
    bw, l2 = copy_bandwidth(), l2_bytes(torch.device("cuda"))
    print("| cell | floor | rlscan | fill | " + " | ".join(
        f"{m} {bt}/w{w}" for bt, w in tiles for m in modes) + " |")
    for cell in args.cells.split(","):
        N, T = (int(v) for v in cell.split("x"))
        sets = [inputs(N, T, "cuda", seed=i) for i in range(input_set_count(3 * N * T * 4, l2))]
        floor = 3 * N * T * 4 / bw * 1e6
        ship = device_us([lambda a=a, b=b: linear_scan(a, b, reverse=True) for a, b in sets])
        want = linear_scan(*sets[0], reverse=True)
        fill = device_us([lambda: torch.full((N, T // 1024), -1, dtype=torch.int64,
                                             device="cuda")])
        row = [f"{N}x{T}", f"{floor:.1f}", f"{ship:.1f}", f"{fill:.1f}"]
        for bt, warps in tiles:
            for mode, code in modes.items():
                got = onepass(*sets[0], code, bt, warps)
                bad = code[0] >= 2 and not torch.allclose(got, want, rtol=1e-3, atol=1e-3)
                us = device_us([lambda a=a, b=b: onepass(a, b, code, bt, warps)
                                for a, b in sets])
                row.append(f"{us:.1f}" + ("!" if bad else ""))
        print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
