"""What a call's first launch would save as a programmatic dependent one (sm_90+).

rlscan launches a call's later kernels (chunked's carry pass and fix-up) with ``launch_pdl`` so
they start while the launch before them finishes (0.3-1.3 us a cell, fifteenth session); a
call's first launch is plain, so between two calls the GPU pays a whole launch. A first launch
that waits (``gdc_wait``) before it touches memory is exactly as ordered as a plain one, and its
launch overlaps the previous kernel's end; one that also lets the next launch start
(``gdc_launch_dependents``, after its wait) lets back-to-back calls overlap their launches.

A streaming kernel shaped like rlscan's cells (3 fp32 inputs read, 2 outputs written, one
program a tile of BLOCK elements), 20 launches in a CUDA graph, median replay / 20
(rlscan-bench's device column):

    python benchmarks/pdl_first_probe.py
"""
import sys

import torch
import triton
import triton.language as tl

from rlscan.tune.bench import device_us


@triton.jit
def _stream(a, b, c, o0, o1, n, BLOCK: tl.constexpr, WAIT: tl.constexpr,
            TRIGGER: tl.constexpr):
    if WAIT:
        tl.extra.cuda.gdc_wait()
    if TRIGGER:
        tl.extra.cuda.gdc_launch_dependents()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(a + offs, mask=m)
    y = tl.load(b + offs, mask=m)
    z = tl.load(c + offs, mask=m)
    tl.store(o0 + offs, x * 0.99 + y, mask=m)
    tl.store(o1 + offs, x - z, mask=m)


def main() -> int:
    if not torch.cuda.is_available():
        print("pdl_first_probe.py needs a CUDA device", file=sys.stderr)
        return 2
    variants = (("plain", False, False, False), ("pdl+wait", True, True, False),
                ("pdl+wait+trigger", True, True, True))
    print(f"{'elements':>9s} {'BLOCK':>6s} {'programs':>8s} "
          + " ".join(f"{v[0]:>17s}" for v in variants) + "  (us a launch, graph of 20)")
    for n in (1 << 16, 1 << 19, 1 << 21, 1 << 23):
        t = [torch.randn(n, device="cuda") for _ in range(5)]
        for block in (256, 1024):
            row = []
            for _, pdl, wait, trig in variants:
                def fn(pdl=pdl, wait=wait, trig=trig):
                    kw = {"launch_pdl": True} if pdl else {}
                    _stream[(triton.cdiv(n, block),)](*t, n, BLOCK=block, WAIT=wait,
                                                      TRIGGER=trig, num_warps=4, **kw)
                fn()
                torch.testing.assert_close(t[3], t[0] * 0.99 + t[1])
                row.append(device_us([fn]))
            print(f"{n:9d} {block:6d} {triton.cdiv(n, block):8d} "
                  + " ".join(f"{x:17.2f}" for x in row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
