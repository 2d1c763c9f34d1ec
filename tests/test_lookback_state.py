"""Which look-back launches share a persistent workspace (rlscan/kernels/lookback_state.py):
never two that could run at once. Bookkeeping only, on CPU tensors; the kernel's side (a
workspace stays clean call after call) is pinned in test_estimators.py."""
import pytest
import torch

from rlscan.kernels import lookback_state as S

CPU = torch.device("cpu")


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(S, "_eager", type(S._eager)())
    monkeypatch.setattr(S, "_spares", {})
    monkeypatch.setattr(S, "_captured", {})


def test_a_new_workspace_has_half_0_not_yet_and_half_1_as_if_published():
    w = S.eager(CPU, 5, stream=0)
    assert w.dtype == torch.int64 and w.shape == (S.words(5),) == (10,)
    assert w[:5].eq(-1).all() and w[5:].eq(0).all()


def test_eager_calls_share_one_workspace_per_stream_and_size():
    a = S.eager(CPU, 8, stream=1)
    assert S.eager(CPU, 8, stream=1) is a
    assert S.eager(CPU, 8, stream=2) is not a          # another stream may run at once
    assert S.eager(CPU, 9, stream=1) is not a          # another size: its own slots
    assert S.eager_address(CPU, 8, 1) == a.data_ptr()


def test_a_spare_for_captures_is_made_when_a_size_is_called_again_not_before():
    S.eager(CPU, 8, stream=1)
    assert S._spares == {}                               # a size seen once: nothing more
    S.eager(CPU, 8, stream=1)
    assert list(S._spares) == [(CPU, 8)]


def test_eager_workspaces_and_spares_are_bounded(monkeypatch):
    monkeypatch.setattr(S, "_MAX_EAGER", 3)
    for nk in range(1, 7):
        S.eager(CPU, nk, stream=0)
        S.eager(CPU, nk, stream=0)
    assert [k[2] for k in S._eager] == [4, 5, 6]         # the least recently used went
    assert [k[1] for k in S._spares] == [4, 5, 6]


def test_a_captured_call_takes_a_ready_spare_by_its_output_or_fills_its_own(monkeypatch):
    monkeypatch.setattr(S, "capturing", lambda device: True)
    out, other = torch.empty(4), torch.empty(4)
    assert S.acquire(CPU, 8, out) is None                # nothing ready: fill in the graph
    monkeypatch.setattr(S, "capturing", lambda device: False)
    S.eager(CPU, 8, stream=0)
    S.eager(CPU, 8, stream=0)
    spare = S._spares[(CPU, 8)]
    monkeypatch.setattr(S, "capturing", lambda device: True)
    assert S.acquire(CPU, 8, out) is spare               # the graph keeps it
    assert S.acquire(CPU, 8, out) is spare               # the same output memory: in order
    assert S.acquire(CPU, 8, other) is None              # the spare is gone
    assert S._spares == {}


@pytest.fixture
def one_captured_slot_two_spares(monkeypatch):
    """Room for one captured workspace, spares ready for sizes 8 and 9, a capture under way."""
    monkeypatch.setattr(S, "_MAX_CAPTURED", 1)
    monkeypatch.setattr(S, "capturing", lambda device: True)
    S._spares[(CPU, 8)] = S._new(CPU, 8)
    S._spares[(CPU, 9)] = S._new(CPU, 9)


def test_captured_workspaces_are_bounded(one_captured_slot_two_spares):
    assert S.acquire(CPU, 8, torch.empty(1)) is not None
    assert S.acquire(CPU, 9, torch.empty(1)) is None


def test_releasing_captured_workspaces_makes_room_for_later_captures(
        one_captured_slot_two_spares):
    assert S.acquire(CPU, 8, torch.empty(1)) is not None
    S.release_captured()                                 # the tuner deleted that graph
    assert S.acquire(CPU, 9, torch.empty(1)) is not None


class _Workspace:
    """Stands in for a CUDA workspace: remembers the thread that made it and its streams."""

    def __init__(self):
        import threading
        self.thread = threading.current_thread()
        self.streams = []

    def record_stream(self, stream):
        self.streams.append(stream)

    def data_ptr(self):
        return id(self)


@pytest.mark.parametrize("trees_loaded", [False, True])
def test_workspaces_are_made_outside_the_calling_thread_once_cuda_graph_trees_are_loaded(
        monkeypatch, trees_loaded):
    """Inside a CUDA graph tree's warm-up the calling thread's allocations go to the tree's
    private pool (rlscan/_graph_pools.py): with trees loaded, a call that makes a workspace has
    the stream's one and a spare made by another thread, and marks the stream's one as used by
    the calling stream; without them, nothing changes (made where called, no spare yet)."""
    import contextlib
    import sys
    import threading

    from rlscan import _graph_pools
    cuda = torch.device("cuda", 0)                 # (no GPU needed: CUDA calls stood in for)
    monkeypatch.setattr(S, "_new", lambda device, nk: _Workspace())
    monkeypatch.setattr(torch.cuda, "device", lambda d: contextlib.nullcontext())
    stream = type("Stream", (), {"synchronize": lambda self: None})()
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: stream)
    if trees_loaded:
        monkeypatch.setitem(sys.modules, "torch._inductor.cudagraph_trees", sys)
    else:
        monkeypatch.delitem(sys.modules, "torch._inductor.cudagraph_trees", raising=False)
    w = _graph_pools.eager(cuda, 8, stream=3)
    assert w is S._eager[(cuda, 3, 8)]
    if trees_loaded:
        assert w.thread is not threading.current_thread() and w.streams == [stream]
        assert S._spares[(cuda, 8)].thread is not threading.current_thread()
        made = dict(S._eager), dict(S._spares)
        assert _graph_pools.eager(cuda, 8, stream=3) is w            # nothing more made
        assert (dict(S._eager), dict(S._spares)) == made
    else:
        assert w.thread is threading.current_thread() and w.streams == [] and S._spares == {}
    assert _graph_pools.eager_address(cuda, 8, 3) == w.data_ptr()
