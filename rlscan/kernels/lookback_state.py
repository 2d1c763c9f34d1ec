"""Persistent look-back workspaces: span summaries that need no fill launch per call.

The look-back strategy publishes each span's summary to an int64 workspace that must read "not
yet" (all ones) wherever nothing has been published. Filling it before the scan cost 1.4-2.3 us
a call on the H200 whatever filled it (rlscan's fill kernel, torch's ``fill_`` or a memset: the
graph node before the scan is what costs; nineteenth session, ``compare_configs.py --fill-ab``).
The scan's PHASE 4 keeps a workspace clean itself: two halves of N*K words, one holding the last
launch's summaries and the other all "not yet". Each program reads its own slot of half 0 (only
it ever writes that slot), publishes to whichever half is clean and resets its slot of the
other. Every launch of the size writes every slot once, so all programs of the next one agree.
A workspace is so right for any sequence of look-back launches of its size that do not overlap,
and wrong for two at once. Which launches share one:

- eager calls: one workspace per (device, stream, N*K). A stream runs its launches in order.
- calls captured in a CUDA graph: one per (device, the call's first output's address, N*K).
  That memory belongs to the graph's pool, and graphs that share a pool must replay in the order
  they were captured, never at once (PyTorch's rule for shared pools), so their look-back
  launches never overlap either. A captured workspace must be ready before the graph first
  replays, so it is a spare made beside an eager call's workspace of the same size once that
  size is called a second time (a capture's warm-up calls), never during the capture; without
  one, the call fills a workspace of its own inside the graph, as every call did before (PHASE
  3). Captured workspaces are kept for the life of the process (a graph may replay at any
  time) unless the process says its graphs are gone (``release_captured``).
"""
from collections import OrderedDict
from typing import Optional

import torch

_MAX_EAGER = 64        # (device, stream, size) workspaces kept; the least recently used goes
_MAX_CAPTURED = 256    # captured calls given a persistent workspace; later ones fill their own
_eager: "OrderedDict[tuple, torch.Tensor]" = OrderedDict()
_spares: dict = {}     # (device, N*K) -> a ready workspace for the next captured call
_captured: dict = {}   # (device, output address, N*K) -> workspace


def words(nk: int) -> int:
    """Length of the int64 workspace for ``nk`` span slots (two halves)."""
    return 2 * nk


def _new(device: torch.device, nk: int) -> torch.Tensor:
    w = torch.full((words(nk),), -1, dtype=torch.int64, device=device)
    w[nk:] = 0                           # as if a launch had published there: half 0 is clean
    return w


def _stream_of(device: torch.device) -> int:
    return torch._C._cuda_getCurrentRawStream(device.index) if device.type == "cuda" else 0


def capturing(device: torch.device) -> bool:
    return device.type == "cuda" and torch.cuda.is_current_stream_capturing()


def eager(device: torch.device, nk: int, stream: int) -> torch.Tensor:
    """The workspace of (``device``, ``stream``, ``nk``), made on first use; from the second,
    with a spare for a captured call of that size."""
    key = (device, stream, nk)
    w = _eager.get(key)
    if w is None:
        w = _eager[key] = _new(device, nk)
        while len(_eager) > _MAX_EAGER:
            _eager.popitem(last=False)   # stream-ordered free: later work on its stream only
        return w
    _eager.move_to_end(key)
    if (device, nk) not in _spares:
        # a size called again (a capture's warm-up calls, a training loop): ready one for a
        # captured call. Not on a size's first call: rows of a new length every call would pay
        # the synchronisation below every time
        _spares[(device, nk)] = _new(device, nk)
        while len(_spares) > _MAX_EAGER:
            del _spares[next(iter(_spares))]
        if device.type == "cuda":
            # a graph may replay it on any stream: its initial values must have landed
            torch.cuda.current_stream(device).synchronize()
    return w


def acquire(device: torch.device, nk: int, out: torch.Tensor) -> Optional[torch.Tensor]:
    """The persistent workspace a look-back launch of ``nk`` span slots writing ``out`` uses,
    or None: fill a workspace of its own (a capture with no spare ready)."""
    if not capturing(device):
        return eager(device, nk, _stream_of(device))
    key = (device, out.data_ptr(), nk)
    w = _captured.get(key)
    if w is None:
        spare = _spares.get((device, nk))
        if spare is None or len(_captured) >= _MAX_CAPTURED:
            return None
        w = _captured[key] = _spares.pop((device, nk))
    return w


def eager_address(device: torch.device, nk: int, stream: int) -> int:
    """``eager(...)``'s address: what a replayed call passes (rlscan/_replay.py; replays of such
    calls are not made while a stream captures)."""
    return eager(device, nk, stream).data_ptr()


def release_captured() -> None:
    """Forget the captured calls' workspaces: for a process that knows none of its graphs will
    replay again (the tuner, after timing a candidate's graph), so that later captures find
    room under the bound and spares are made again."""
    _captured.clear()


def clear() -> None:
    """Forget the eager workspaces and spares (tests); captured ones stay with their graphs."""
    _eager.clear()
    _spares.clear()
