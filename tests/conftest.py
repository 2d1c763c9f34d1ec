"""Test backends: every test that takes the ``backend`` fixture runs on

* ``torch``     — CPU tensors through the vectorised torch implementation,
* ``interpret`` — CPU tensors through the real Triton kernels in Triton's interpreter,
* ``cuda``      — CUDA tensors through the compiled kernels (marked ``gpu``: ``pytest -m gpu``).

Without a GPU the interpreter must be on before rlscan's kernels are defined, so it is switched
on here, at collection, before any test imports them.
"""
import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"
    # the interpreter without its no-op re-patching at every device-function call: ~3.5x
    # faster interpreted scans, the same results (verify/interpreter.py)
    from rlscan.verify import interpreter
    interpreter.install()

BACKENDS = [
    pytest.param("torch", id="torch"),
    pytest.param("interpret", id="interpret"),
    pytest.param("cuda", id="cuda", marks=pytest.mark.gpu),
]


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", BACKENDS)


@pytest.fixture
def device(backend, monkeypatch):
    """The device for the backend under test, with RLSCAN_INTERPRET set to route CPU tensors."""
    if backend == "cuda":
        if not torch.cuda.is_available():
            pytest.skip("no CUDA device")
        monkeypatch.delenv("RLSCAN_INTERPRET", raising=False)
        return torch.device("cuda")
    if backend == "interpret" and torch.cuda.is_available():
        pytest.skip("the interpreter backend is tested on CPU-only machines")
    monkeypatch.setenv("RLSCAN_INTERPRET", "1" if backend == "interpret" else "0")
    return torch.device("cpu")


@pytest.fixture(autouse=True)
def nan_poisoned_outputs(monkeypatch):
    """Fresh output buffers start as NaN, so an unwritten lane fails every comparison."""
    import rlscan._layout
    monkeypatch.setattr(rlscan._layout, "POISON_OUTPUTS", True)


@pytest.fixture
def cuda_graph_stand_ins(monkeypatch):
    """``install(on_replay)``: torch.cuda's streams, graphs, events and synchronisation replaced
    by stand-ins, so the device-time code runs on a CPU: the captured Python runs once, every
    replay calls ``on_replay()`` and every pair of events measures 1 ms."""
    import contextlib

    class Graph:
        def capture_begin(self):
            pass

        def capture_end(self):
            pass

        def replay(self):
            on_replay[0]()

    class Event:
        def __init__(self, **kw):
            pass

        def record(self):
            pass

        def synchronize(self):
            pass

        def elapsed_time(self, end):
            return 1.0

    class Stream:
        def __init__(self, *a):
            pass

        def wait_stream(self, other):
            pass

    on_replay = [lambda: None]
    for name, stand_in in (("Stream", Stream), ("current_stream", lambda *a: Stream()),
                           ("stream", lambda *a: contextlib.nullcontext()),
                           ("graph", lambda *a, **k: contextlib.nullcontext()),
                           ("CUDAGraph", Graph), ("Event", Event),
                           ("synchronize", lambda *a: None)):
        monkeypatch.setattr(torch.cuda, name, stand_in)

    def install(hook=lambda: None):
        on_replay[0] = hook
    return install


@pytest.hookimpl(trylast=True)     # after -m and -k have deselected theirs: balanced shards
def pytest_collection_modifyitems(config, items):
    """``RLSCAN_TEST_SHARD=i/n`` keeps every n-th collected test from the i-th (0 <= i < n):
    n pytest processes side by side on one GPU host then run the suite in about 1/n of the
    time, since most of a GPU test's time is Triton compiling on the CPU (the whole ``-m gpu``
    suite on the H200: ~700 s in one process, fifteenth session). Round robin spreads each
    test's parametrisations over the shards."""
    shard = os.environ.get("RLSCAN_TEST_SHARD")
    if not shard:
        return
    try:
        i, n = (int(v) for v in shard.split("/"))
        if not 0 <= i < n:
            raise ValueError
    except ValueError:
        raise pytest.UsageError(f"RLSCAN_TEST_SHARD={shard!r}: expected i/n with 0 <= i < n") \
            from None
    keep = [item for k, item in enumerate(items) if k % n == i]
    config.hook.pytest_deselected(items=[item for k, item in enumerate(items) if k % n != i])
    items[:] = keep


class _Launcher:
    """Stands in for Triton's compiled launcher: keeps the argument list of every launch."""
    function, packed_metadata = 0, None

    def __init__(self):
        self.launches = []

    def run(self, gx, gy, gz, stream, function, meta, launch_meta, enter, exit_, *args):
        self.launches.append(((gx, gy), list(args)))


@pytest.fixture
def fake_direct_launch(monkeypatch):
    """The CUDA path's direct launches, on CPU tensors: launch._run hands the stand-in
    launcher the call's ints and reports the launch to _replay (rlscan/_replay.py), as it does
    on a GPU."""
    from rlscan import _layout, _replay   # (imported here: the interpreter is on by now)
    from rlscan.kernels import launch
    ck = _Launcher()

    def run(kernel, grid, args, objs, consts, options, spec, names=None):
        ck.run(grid[0], grid[1], 1, 0, 0, None, None, None, None, *args, *consts)
        _replay.record_launch(ck.run, (ck.function, ck.packed_metadata, None, None, None),
                              grid, args, objs, consts, 0)

    monkeypatch.setattr(launch, "_run", run)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda d: 0, raising=False)
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")
    monkeypatch.setattr(_layout, "POISON_OUTPUTS", False)
    monkeypatch.setattr(_replay, "_gate", launch._replay_allowed)
    monkeypatch.setattr(_replay, "_plans", {})
    return ck
