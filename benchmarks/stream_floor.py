"""The practical floor: what a kernel that only streams the same bytes takes (GPU).

For each access mix of the estimators (fp32 streams read and written per step) and each
shape, a Triton kernel that reads the input streams and writes their sum to the outputs,
timed like rlscan-bench's device column (CUDA-graph replays over input and output sets spanning
three L2 caches; three sets before the twenty-sixth session, one output), next
to the bandwidth floor (bytes / copy bandwidth). A scan kernel cannot beat the streaming
kernel with its access mix; the gap between the two is what the scan itself costs.

    python benchmarks/stream_floor.py          # prints a Markdown table
    python benchmarks/stream_floor.py --bf16   # the bf16-input mixes: bf16 reads, a bool flag,
                                               # float32 writes (the grid's bfloat16 variant)
"""
import sys

import torch
import triton
import triton.language as tl

from rlscan.tune.bench import copy_bandwidth, device_us, input_set_count
from rlscan.tune.timing import l2_bytes


@triton.jit
def _stream(X0, X1, X2, F, Y0, Y1, n, READS: tl.constexpr, WRITES: tl.constexpr,
            FLAG: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    s = tl.load(X0 + o, mask=m, other=0.0).to(tl.float32)
    if READS >= 2:
        s += tl.load(X1 + o, mask=m, other=0.0).to(tl.float32)
    if READS >= 3:
        s += tl.load(X2 + o, mask=m, other=0.0).to(tl.float32)
    if FLAG:
        s = tl.where(tl.load(F + o, mask=m, other=0) != 0, 0.0, s)
    tl.store(Y0 + o, s, mask=m)
    if WRITES >= 2:
        tl.store(Y1 + o, s + 1.0, mask=m)


# (name, streams read, written, a bool flag read too): discounted returns, lambda-returns, GAE
# with every input float32 (the flags too); then the bfloat16 variant: real inputs bf16, the
# flags bool, the outputs float32 (discounted returns, GAE, V-trace)
MIXES = (("read 2, write 1 (12 B/step)", 2, 1, False),
         ("read 3, write 1 (16 B/step)", 3, 1, False),
         ("read 3, write 2 (20 B/step)", 3, 2, False))
MIXES_BF16 = (("bf16 1 + bool, write fp32 1 (7 B/step)", 1, 1, True),
              ("bf16 2 + bool, write fp32 2 (13 B/step)", 2, 2, True),
              ("bf16 3 + bool, write fp32 2 (15 B/step)", 3, 2, True))
SHAPES = ((64, 512), (4096, 128), (1, 1048576), (16384, 128), (4096, 512), (65536, 128),
          (16384, 512), (1024, 8192), (131072, 256))


def step_bytes(reads: int, writes: int, flag: bool) -> int:
    """Bytes a step moves: fp32 reads, or bf16 ones beside a bool flag; fp32 writes."""
    return (2 * reads + 1 if flag else 4 * reads) + 4 * writes


def stream_us(n: int, reads: int, writes: int, flag: bool = False, block: int = 1024,
              warps: int = 4) -> float:
    count = input_set_count(n * step_bytes(reads, writes, flag), l2_bytes(torch.device("cuda")))
    real = torch.bfloat16 if flag else torch.float32
    # each set its own inputs and outputs (unused streams stay unread)
    sets = [[torch.randn(n, device="cuda").to(real) for _ in range(reads)] +
            [torch.rand(n, device="cuda") < 0.05] +
            [torch.empty(n, device="cuda") for _ in range(writes)] for _ in range(count)]
    grid = (triton.cdiv(n, block),)

    def call(xs):
        x, f, y = xs[:reads], xs[reads], xs[reads + 1:]
        x, y = x + [x[0]] * (3 - reads), y + [y[0]] * (2 - writes)
        _stream[grid](*x, f, *y, n, READS=reads, WRITES=writes, FLAG=flag, BLOCK=block,
                      num_warps=warps)
    return device_us([(lambda xs=xs: call(xs)) for xs in sets])


def main() -> int:
    if not torch.cuda.is_available():
        print("stream_floor needs a CUDA GPU", file=sys.stderr)
        return 2
    bw = copy_bandwidth()
    print(f"copy bandwidth {bw / 1e12:.2f} TB/s; times in µs\n")
    print("| access | N | T | floor | stream kernel | stream / floor |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, reads, writes, flag in (MIXES_BF16 if "--bf16" in sys.argv else MIXES):
        for N, T in SHAPES:
            n = N * T
            floor = n * step_bytes(reads, writes, flag) / bw * 1e6
            us = stream_us(n, reads, writes, flag)
            print(f"| {name} | {N} | {T} | {floor:.1f} | {us:.1f} | {us / floor:.2f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
