"""Estimators inside ``torch.compile``: on the kernel path (CUDA, or the interpreter) a call is
one opaque op, ``rlscan::scan`` (rlscan/_custom_op.py), so a compiled function keeps one graph
(``fullgraph=True`` works) and gets the eager call's results, layout and errors."""
import pytest
import torch
import torch._dynamo

import rlscan

import cases

KERNEL_BACKENDS = [pytest.param("interpret", id="interpret"),
                   pytest.param("cuda", id="cuda", marks=pytest.mark.gpu)]


@pytest.fixture(params=KERNEL_BACKENDS)
def kdevice(request, monkeypatch):
    """The kernel path's device: CUDA, or CPU through Triton's interpreter."""
    if request.param == "cuda":
        if not torch.cuda.is_available():
            pytest.skip("no CUDA device")
        monkeypatch.delenv("RLSCAN_INTERPRET", raising=False)
        return torch.device("cuda")
    if torch.cuda.is_available():
        pytest.skip("the interpreter backend is tested on CPU-only machines")
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")
    return torch.device("cpu")


class Graphs:
    """A dynamo backend that keeps every graph it is given and runs it as traced."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward

    def ops(self):
        return [str(n.target) for g in self.graphs for n in g.graph.nodes
                if n.op == "call_function"]


def compiled(fn, backend, fullgraph=True):
    torch._dynamo.reset()
    return torch.compile(fn, fullgraph=fullgraph, backend=backend)


def on(device, kw):
    return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}


def _inputs(est, shape, seed):
    if est != "linear_scan":
        return cases.make(est, shape=shape, seed=seed)[0]
    g = torch.Generator().manual_seed(seed)
    return dict(a=torch.rand(shape, generator=g), b=torch.randn(shape, generator=g),
                init=torch.randn(shape[0], generator=g), reverse=True, out_dtype=torch.float64)


@pytest.mark.parametrize("est", cases.ESTIMATORS + ["linear_scan"])
def test_compiled_call_is_one_graph_around_one_scan_op_with_eager_results(kdevice, est):
    kw = on(kdevice, _inputs(est, (3, 41), seed=1))
    fn = getattr(rlscan, est)
    eager = cases.as_tuple(fn(**kw))
    rec = Graphs()
    traced = cases.as_tuple(compiled(lambda kw: fn(**kw), rec)(kw))
    assert len(rec.graphs) == 1
    assert [o for o in rec.ops() if o.startswith("rlscan.")] == ["rlscan.scan.default"], rec.ops()
    for t, e in zip(traced, eager):
        assert t.shape == e.shape and t.dtype == e.dtype and t.stride() == e.stride()
        assert torch.equal(t, e)


@pytest.mark.parametrize("est", cases.ESTIMATORS)
def test_cpu_torch_path_compiles_in_one_graph_for_every_estimator(est, monkeypatch):
    # CPU tensors outside the interpreter: dynamo traces the torch implementation's log-depth
    # scan (rlscan/_torch_path.py), no op; it sums in another order than the eager chunked scan
    monkeypatch.setenv("RLSCAN_INTERPRET", "0")
    kw = cases.make(est, shape=(3, 41), seed=1)[0]
    fn = getattr(rlscan, est)
    rec = Graphs()
    traced = cases.as_tuple(compiled(lambda kw: fn(**kw), rec)(kw))
    assert len(rec.graphs) == 1 and not [o for o in rec.ops() if o.startswith("rlscan.")]
    for t, e in zip(traced, cases.as_tuple(fn(**kw))):
        torch.testing.assert_close(t, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape, time_dim", [((37, 5), 0), ((2, 29, 3), 1), ((45,), 0),
                                             ((2, 3, 33), -1)])
def test_compiled_call_keeps_the_eager_layout_for_any_time_axis(kdevice, shape, time_dim):
    kw = on(kdevice, cases.make("gae", shape=shape, seed=2)[0])
    kw = {k: (v.movedim(-1, time_dim).contiguous()
              if isinstance(v, torch.Tensor) and v.shape == shape else v) for k, v in kw.items()}
    eager = rlscan.gae(**kw, time_dim=time_dim)
    traced = compiled(lambda kw: rlscan.gae(**kw, time_dim=time_dim), "aot_eager")(kw)
    for t, e in zip(traced, eager):
        assert t.shape == e.shape and t.is_contiguous() == e.is_contiguous()
        assert torch.equal(t, e)


@pytest.mark.parametrize("shape, time_dim, order", [
    ((5, 37), 1, (1, 0)),          # [N, T] stored time-major
    ((37, 5), 0, (1, 0)),          # [T, N] stored time-last
    ((2, 29, 3), 1, (1, 2, 0)),    # [B1, T, B2] stored [T, B2, B1]
    ((2, 3, 29), 2, (2, 0, 1))])   # [B1, B2, T] stored [T, B1, B2]
def test_compiled_call_keeps_the_eager_layout_whatever_the_inputs_memory_order(
        kdevice, shape, time_dim, order):
    # eager outputs follow the primary input's memory order (Layout.empty), and the kernel's
    # config follows the outputs' layout: the op's outputs must be allocated the same way
    def stored(x):     # x's values in `shape`, its memory in the axis order `order`
        return x.permute(*order).contiguous().permute(*[order.index(i) for i in range(x.dim())])
    time_last = shape[:time_dim] + shape[time_dim + 1:] + (shape[time_dim],)
    kw = on(kdevice, cases.make("gae", shape=time_last, seed=9)[0])
    kw = {k: (stored(v.movedim(-1, time_dim)) if isinstance(v, torch.Tensor)
              and v.shape == time_last else v) for k, v in kw.items()}
    eager = rlscan.gae(**kw, time_dim=time_dim)
    traced = compiled(lambda kw: rlscan.gae(**kw, time_dim=time_dim), "aot_eager")(kw)
    for t, e in zip(traced, eager):
        assert t.shape == e.shape == shape and t.stride() == e.stride()
        assert torch.equal(t, e)


def test_compiled_call_takes_per_step_gamma_tensors_and_bf16_outputs(kdevice):
    kw = on(kdevice, cases.make("vtrace", shape=(4, 23), seed=3)[0])
    kw["gamma"] = torch.linspace(0.9, 1.0, 4, device=kdevice)[:, None]   # per row, broadcast
    eager = rlscan.vtrace(**kw, out_dtype=torch.bfloat16)
    traced = compiled(lambda kw: rlscan.vtrace(**kw, out_dtype=torch.bfloat16), "aot_eager")(kw)
    for t, e in zip(traced, eager):
        assert t.dtype == torch.bfloat16 and torch.equal(t, e)


def test_compiled_call_follows_gamma_passed_as_an_argument(kdevice):
    # a float is a constant of the graph (a new value compiles anew); a 0-d tensor is data
    kw = on(kdevice, cases.make("discounted_returns", shape=(2, 30), seed=4)[0])
    del kw["gamma"]
    rec = Graphs()
    step = compiled(lambda kw, g: rlscan.discounted_returns(**kw, gamma=g) * 2, rec)
    for g in (0.9, 0.5, 0.9):
        assert torch.equal(step(kw, g), rlscan.discounted_returns(**kw, gamma=g) * 2)
    assert len(rec.graphs) == 2
    rec = Graphs()
    step = compiled(lambda kw, g: rlscan.discounted_returns(**kw, gamma=g) * 2, rec)
    for g in (0.9, 0.5, 0.7):
        g = torch.tensor(g, device=kdevice)
        assert torch.equal(step(kw, g), rlscan.discounted_returns(**kw, gamma=g) * 2)
    assert len(rec.graphs) == 1


@pytest.mark.parametrize("time_dim", [-1, 0])
def test_compiled_call_with_dynamic_shapes_serves_every_length(kdevice, time_dim):
    torch._dynamo.reset()
    step = torch.compile(lambda kw: rlscan.gae(**kw, time_dim=time_dim).advantages,
                         fullgraph=True, backend="aot_eager", dynamic=True)
    for N, T in [(3, 30), (3, 45), (5, 61)]:
        kw = on(kdevice, cases.make("gae", shape=(N, T), seed=T)[0])
        kw = {k: v.t().contiguous() if time_dim == 0 and isinstance(v, torch.Tensor)
              and v.dim() == 2 else v for k, v in kw.items()}
        assert torch.equal(step(kw), rlscan.gae(**kw, time_dim=time_dim).advantages), (N, T)


def test_compiled_call_rejects_interior_truncations_with_last_value_when_it_runs(kdevice):
    kw = on(kdevice, cases.make("gae", shape=(2, 19), seed=5, encoding="last_value")[0])
    del kw["truncated"]
    step = compiled(lambda kw, trunc: rlscan.gae(**kw, truncated=trunc).advantages, "aot_eager")
    at_end = torch.zeros(2, 19, dtype=torch.bool, device=kdevice)
    at_end[:, -1] = True
    assert torch.equal(step(kw, at_end), rlscan.gae(**kw, truncated=at_end).advantages)
    interior = at_end.clone()
    interior[1, 7] = True
    with pytest.raises(ValueError, match="interior truncations"):
        step(kw, interior)


@pytest.mark.parametrize("bad, match", [(dict(gamma=1.5), "gamma=1.5 is outside"),
                                        (dict(values=None), "values is required"),
                                        (dict(lmbda=torch.ones(2, 1) * 1.25),
                                         "lmbda must lie in"),
                                        (dict(terminated=torch.zeros(2, 8)), "terminated has "
                                         "shape")])
def test_compiled_call_raises_the_eager_error_for_bad_input(kdevice, bad, match):
    # a check that fails while dynamo traces ends the graph there (fullgraph=True: dynamo's
    # error, quoting ours); the call then runs eagerly and raises; a check that reads data (the
    # per-step λ's range, on CPU only as in eager calls) raises from the op when it runs
    kw = on(kdevice, cases.make("gae", shape=(2, 9), seed=6)[0])
    kw.update(on(kdevice, bad))
    if "lmbda" in bad and kdevice.type == "cuda":
        pytest.skip("per-step λ is not range-checked on CUDA (a host sync)")
    with pytest.raises(ValueError, match=match):
        compiled(lambda kw: rlscan.gae(**kw), "aot_eager", fullgraph=False)(kw)
    with pytest.raises(Exception, match=match):
        compiled(lambda kw: rlscan.gae(**kw), "aot_eager")(kw)


def test_inductor_compiles_a_training_step_around_the_op(kdevice):
    kw = on(kdevice, cases.make("gae", shape=(3, 33), seed=7)[0])

    def step(kw):
        adv, ret = rlscan.gae(**kw)
        return (adv - adv.mean()) / (adv.std() + 1e-8), ret

    eager = step(kw)
    traced = compiled(step, "inductor")(kw)
    for t, e in zip(traced, eager):
        torch.testing.assert_close(t, e, rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(64, 300), (2, 1 << 17)], ids=["row_block", "long_rows"])
def test_reduce_overhead_mode_replays_the_op_in_a_cuda_graph_with_new_inputs(shape):
    # long rows: the DB's chunked or look-back launches (a workspace) inside the captured graph
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    torch._dynamo.reset()
    step = torch.compile(lambda kw: rlscan.gae(**kw).advantages.clone(), mode="reduce-overhead",
                         fullgraph=True)
    for seed in range(5):   # warm-up, capture, then replays
        kw = on("cuda", cases.make("gae", shape=shape, seed=seed)[0])
        assert torch.equal(step(kw), rlscan.gae(**kw).advantages), seed


@pytest.mark.parametrize("time_dim", [-1, 0])
def test_compiled_calls_replay_the_ops_recorded_launches(fake_direct_launch, monkeypatch,
                                                         time_dim):
    # the op's calls take rlscan/_replay.py's plans as eager calls do: the first call of a
    # signature takes the whole path, later ones launch what it launched with their addresses
    from rlscan import _layout
    ck = fake_direct_launch
    whole = []
    kernel_launch = _layout._kernel_launch()
    monkeypatch.setattr(_layout, "_launch", lambda *a: whole.append(1) or kernel_launch(*a))

    def inputs(seed):
        kw = cases.make("vtrace", shape=(5, 20), seed=seed)[0]
        return {k: v.t().contiguous() if time_dim == 0 and isinstance(v, torch.Tensor) else v
                for k, v in kw.items()}

    step = compiled(lambda kw: rlscan.vtrace(**kw, time_dim=time_dim), "aot_eager")
    calls = [(kw, step(kw)) for kw in map(inputs, range(3))]
    assert len(whole) == 1 and len(ck.launches) == 3
    named = []
    for (kw, outs), (_, args) in zip(calls, ck.launches):
        names = {o.data_ptr(): f"out{k}" for k, o in enumerate(outs)}
        names.update({v.data_ptr(): k for k, v in kw.items() if isinstance(v, torch.Tensor)})
        named.append([names.get(a, a) if isinstance(a, int) else a for a in args])
    assert named[0] == named[1] == named[2]
    assert {"out0", "out1", "rewards", "values"} <= set(named[0])


@pytest.mark.gpu
@pytest.mark.parametrize("est", ["gae", "vtrace", "episodic_cumsum"])
def test_reduce_overhead_warm_up_keeps_lookback_workspaces_out_of_the_graphs_pool(est):
    # a look-back call's persistent workspace made during a CUDA graph tree's warm-up must not
    # be allocated in the tree's pool (its pool check fails: a block no output accounts for);
    # the outputs held from call to call, as a training loop may hold them
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from rlscan.kernels import launch
    with launch.force_config(strategy="lookback", BLOCK_N=1, BLOCK_T=64, num_warps=1,
                             CHUNKS_PER_SPAN=1):
        for T in (640, 960):      # a new size: a new workspace inside the tree's warm-up
            torch._dynamo.reset()
            step = torch.compile(lambda kw: cases.as_tuple(getattr(rlscan, est)(**kw))[0],
                                 mode="reduce-overhead", fullgraph=True)
            held = []
            for seed in range(4):
                kw = on("cuda", cases.make(est, shape=(3, T), seed=seed)[0])
                held.append(step(kw))
                expected = cases.as_tuple(getattr(rlscan, est)(**kw))[0]
                assert torch.equal(held[-1], expected), (T, seed)
                held = held[-1:]


@pytest.mark.gpu
@pytest.mark.parametrize("how", ["cuda_graph", "reduce_overhead"])
def test_last_value_with_truncated_is_refused_inside_a_cuda_graph_capture(how):
    # the check reads the flags on the host, which a capture cannot do: a clear error instead
    # of a broken capture, and an eager call afterwards still works
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    kw = on("cuda", cases.make("gae", shape=(4, 50), seed=10, encoding="last_value")[0])
    kw["truncated"] = torch.zeros(4, 50, dtype=torch.bool, device="cuda")
    kw["truncated"][:, -1] = True
    expected = rlscan.gae(**kw).advantages
    with pytest.raises(ValueError, match="CUDA graph capture"):
        if how == "cuda_graph":
            with torch.cuda.graph(torch.cuda.CUDAGraph()):
                rlscan.gae(**kw)
        else:
            torch._dynamo.reset()
            step = torch.compile(lambda kw: rlscan.gae(**kw).advantages.clone(),
                                 mode="reduce-overhead", fullgraph=True)
            for _ in range(3):     # warm-up, then the capture
                assert torch.equal(step(kw), expected)
    torch.cuda.synchronize()
    assert torch.equal(rlscan.gae(**kw).advantages, expected)
