"""Look-back workspaces kept out of CUDA graph trees' private memory pools.

torch.compile's ``mode="reduce-overhead"`` warms a graph up by running it eagerly with every
allocation of the calling thread routed to the graph tree's private pool, which must then hold
nothing but the graph's own tensors. A persistent look-back workspace
(rlscan/kernels/lookback_state.py) first made there and kept for later calls failed the tree's
pool check on an H100 (fortieth session: "1 tensor(s) in the cudagraph pool not tracked as
outputs", a workspace made by ``lookback_state._new``), and the tree would in time hand that
memory to other tensors. So in a process where CUDA graph trees are loaded, a call that would
make a workspace has it made by a thread of its own, whose allocations go to the ordinary pool;
elsewhere nothing changes (no thread, no synchronisation: rows of a new length every call make
a workspace every call)."""
import sys
import threading

import torch

from .kernels import lookback_state


def eager(device: torch.device, nk: int, stream: int) -> torch.Tensor:
    """``lookback_state.eager(device, nk, stream)``, whatever it makes made outside any pool."""
    _outside_pools(device, nk, stream)
    return lookback_state.eager(device, nk, stream)


def eager_address(device: torch.device, nk: int, stream: int) -> int:
    """``eager(...)``'s address: what a replayed call passes (rlscan/_replay.py)."""
    return eager(device, nk, stream).data_ptr()


def acquire(device: torch.device, nk: int, out: torch.Tensor):
    """``lookback_state.acquire``, with the eager workspaces made as ``eager`` makes them."""
    # the stream and capture state read only where graph trees are loaded: elsewhere this is
    # every eager look-back call's path
    if _trees_loaded(device) and not lookback_state.capturing(device):
        _outside_pools(device, nk, lookback_state._stream_of(device))
    return lookback_state.acquire(device, nk, out)


def _trees_loaded(device: torch.device) -> bool:
    return device.type == "cuda" and "torch._inductor.cudagraph_trees" in sys.modules


def _outside_pools(device: torch.device, nk: int, stream: int) -> None:
    if _trees_loaded(device) and (
            (device, stream, nk) not in lookback_state._eager
            or (device, nk) not in lookback_state._spares):
        _made_in_a_thread(device, nk, stream)


def _made_in_a_thread(device: torch.device, nk: int, stream: int) -> None:
    """The stream's workspace and a spare, made (twice ``eager``: a first call makes the one, a
    second the other) and filled on a thread of its own, then synchronised; the stream's one is
    freed only after the calling stream's work on it (``record_stream``)."""
    failed = []

    def make():
        try:
            with torch.cuda.device(device):
                lookback_state.eager(device, nk, stream)
                lookback_state.eager(device, nk, stream)
                torch.cuda.current_stream(device).synchronize()
        except BaseException as e:       # (out of memory, say) raised in the calling thread
            failed.append(e)
    t = threading.Thread(target=make, name="rlscan-workspace")
    t.start()
    t.join()
    if failed:
        raise failed[0]
    lookback_state._eager[(device, stream, nk)].record_stream(torch.cuda.current_stream(device))
