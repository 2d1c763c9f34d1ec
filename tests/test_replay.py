"""Recorded launch plans (rlscan/_replay.py): a repeated call signature launches exactly what
the whole path would have launched, and every call the plan cannot describe takes the whole
path. On CPU a stand-in for the compiled launcher captures the argument lists; on CUDA the
outputs are compared bitwise."""
import pytest
import torch
import triton

import rlscan
from rlscan import _layout, _replay, tuning
from rlscan.kernels import launch, lookback_state
from rlscan.kernels.scan import chunk_carry_kernel, fill_kernel, fused_scan_kernel

from cases import ESTIMATORS, call, make


def _outputs(out):
    return list(out) if isinstance(out, tuple) else [out]


def _normalised(launches, outs, inputs):
    # outputs and workspaces are fresh allocations at other addresses in every call: name the
    # outputs, and give every workspace address as its offset from the first launch's first
    # workspace argument (WA, or the look-back fill's W)
    names = {o.data_ptr(): f"out{k}" for k, o in enumerate(outs)}
    given = {x.data_ptr() for x in inputs.values() if isinstance(x, torch.Tensor)}
    kernels = {len(k.arg_names): k for k in (fused_scan_kernel, chunk_carry_kernel, fill_kernel)}
    workspace = {fused_scan_kernel: ("WA", "WB", "WC"), chunk_carry_kernel: ("WA", "WB", "WC",
                                                                          "ROW0"),
                 fill_kernel: ("W",)}
    first = kernels[len(launches[0][1])]
    base = launches[0][1][first.arg_names.index(workspace[first][0])]
    normal = []
    for grid, args in launches:
        kernel = kernels[len(args)]
        a = [names.get(x, x) if isinstance(x, int) else x for x in args]
        for name in workspace[kernel]:
            i = kernel.arg_names.index(name)
            if args[i] not in given and args[i] not in names:
                a[i] = ("workspace", args[i] - base)
        normal.append((grid, a))
    return normal


def _plans():
    return [p for p in _replay._plans.values() if p is not None]


def _count_replays(monkeypatch, seen: list, replay_too=True):
    """Every replay from now on appends its arguments to ``seen`` (and then launches, unless
    ``replay_too`` is false): each plan's generated function is wrapped where it is made, or
    now for plans that already have one."""
    def counted(fn):
        return lambda *a: seen.append(a) or (fn(*a) if replay_too else None)
    generate = _replay._Plan.compile

    def compile_counted(plan):
        generate(plan)
        plan.replay = counted(plan.replay)
    monkeypatch.setattr(_replay._Plan, "compile", compile_counted)
    for p in _plans():
        if p.source is not None:
            p.replay = counted(p.replay)


def _variants():
    for est in ESTIMATORS:
        yield est, {}
    yield "gae", {"encoding": "next_values"}
    yield "gae", {"encoding": "last_value"}
    yield "vtrace", {"target_logp": True}
    yield "gae", {"time_major": True}
    yield "lambda_returns", {"batch": True}
    yield "gae", {"bf16": True}
    yield "discounted_returns", {"gamma_tensor": True}
    yield "episodic_cumsum", {"out_dtype": torch.bfloat16}
    yield "gae", {"spans": True}
    yield "vtrace", {"spans": True, "time_major": True}
    yield "eligibility_traces", {"spans": True}
    yield "gae", {"spans": True, "carry_pass": True}
    yield "linear_scan", {"spans": True, "carry_pass": True}
    yield "gae", {"spans": True, "lookback": True}
    yield "episodic_cumsum", {"spans": True, "lookback": True}
    yield "gae", {"spans": True, "lookback": True, "filled": True}


def _inputs(est, opts, seed):
    # few rows, long rows: the heuristic splits them into spans (two launches, a workspace)
    shape = (2, 3, 20) if opts.get("batch") else (2, 1000) if opts.get("spans") else (5, 20)
    if est == "linear_scan":
        g = torch.Generator().manual_seed(seed)
        return dict(a=torch.rand(shape, generator=g), b=torch.randn(shape, generator=g),
                    init=torch.randn(shape[0], generator=g))
    kw, _ = make(est, shape, seed=seed, encoding=opts.get("encoding", "bootstrap"))
    if opts.get("target_logp"):
        kw["target_logp"] = kw.pop("log_ratio")
        kw["behaviour_logp"] = torch.randn(shape)
    if opts.get("time_major"):
        kw = {k: (v.t().contiguous() if isinstance(v, torch.Tensor) and v.dim() == 2 else v)
              for k, v in kw.items()}
        kw["time_dim"] = 0
    if opts.get("bf16"):
        kw = {k: (v.bfloat16() if isinstance(v, torch.Tensor) and v.is_floating_point() else v)
              for k, v in kw.items()}
    if opts.get("gamma_tensor"):
        kw["gamma"] = torch.rand(shape[0], 1) * 0.5 + 0.5        # per row, broadcast
    if "out_dtype" in opts:
        kw["out_dtype"] = opts["out_dtype"]
    return kw


@pytest.mark.parametrize("est, opts", list(_variants()),
                         ids=[f"{e}-{'-'.join(o) or 'default'}" for e, o in _variants()])
def test_repeated_signature_launches_what_the_whole_path_would(fake_direct_launch, monkeypatch,
                                                              est, opts):
    ck = fake_direct_launch
    if opts.get("carry_pass"):      # summaries folded by a third launch in between
        monkeypatch.setattr(launch, "_FOLD_PER_THREAD", 0)
    if opts.get("lookback"):        # as a tuning DB entry would choose: one launch on the
        monkeypatch.setattr(launch, "select_config", lambda pb: dict(   # stream's workspace
            strategy="lookback", BLOCK_N=2, BLOCK_T=64, num_warps=1, CHUNKS_PER_SPAN=1))
    if opts.get("filled"):          # none ready (a capture): the fill, then the scan
        monkeypatch.setattr(lookback_state, "acquire", lambda *a: None)
    call(est, _inputs(est, opts, seed=1))                      # records
    assert len(_plans()) == 1
    n = len(ck.launches)
    assert n == (3 if opts.get("carry_pass") else
                 1 if opts.get("lookback") and not opts.get("filled") else
                 2 if opts.get("spans") else 1)
    second = _inputs(est, opts, seed=2)
    result_r = call(est, second)                               # replays
    launches_r = ck.launches[n:]
    _replay._gate, ck.launches = None, []
    result_w = call(est, second)                               # the whole path, same inputs
    assert type(result_r) is type(result_w)                    # GAE / VTrace / a tensor
    replayed, whole = _outputs(result_r), _outputs(result_w)
    assert _normalised(launches_r, replayed, second) == _normalised(ck.launches, whole, second)
    for r, w in zip(replayed, whole):
        assert (r.shape, r.stride(), r.dtype) == (w.shape, w.stride(), w.dtype)


def test_value_checked_calls_are_never_replayed(fake_direct_launch):
    """last_value cannot express interior truncations, which is a check of the flags' values:
    a call that passed it must not let a later call with interior truncations through."""
    kw, _ = make("gae", (3, 20), seed=1, encoding="last_value")
    kw["truncated"] = torch.zeros(3, 20, dtype=torch.bool)
    call("gae", kw)
    assert _plans() == []
    kw["truncated"] = kw["truncated"].clone()
    kw["truncated"][0, 5] = True
    kw["terminated"] = torch.zeros(3, 20, dtype=torch.bool)
    with pytest.raises(ValueError, match="interior truncations"):
        call("gae", kw)


def test_copies_shared_addresses_and_tritons_own_launches_take_the_whole_path(
        fake_direct_launch, monkeypatch):
    ck = fake_direct_launch
    kw, _ = make("episodic_cumsum", (4, 20), seed=1)
    kw["seed"] = torch.randn(8)[::2]                # per-row input copied to be contiguous
    call("episodic_cumsum", kw)
    kw, _ = make("gae", (4, 20), seed=1)
    kw["bootstrap_values"] = kw["values"]           # one tensor passed twice
    call("gae", kw)
    assert len(ck.launches) == 2
    # a launch through Triton's own path (a profiler's launch hook, an unchecked Triton)
    direct_run = launch._run
    monkeypatch.setattr(launch, "_run", lambda *a, **k: (_replay.not_replayable(),
                                                         direct_run(*a, **k)))
    kw, _ = make("gae", (4, 20), seed=2)
    call("gae", kw, gamma=0.5)
    assert len(ck.launches) == 3
    assert _plans() == []
    assert len(_replay._plans) == 3                 # each signature decided once


def test_inputs_that_require_grad_are_checked_on_every_call(fake_direct_launch):
    """A recorded plan never serves a call whose inputs require grad (that check depends on
    grad mode, which no signature holds): with grad mode on such a call raises even after the
    same shapes were recorded, and under torch.no_grad() it runs the whole path, unrecorded."""
    ck = fake_direct_launch
    kw, _ = make("gae", (4, 20), seed=1)
    call("gae", kw)
    call("gae", kw)
    assert len(_plans()) == 1 and len(ck.launches) == 2
    kw["values"] = kw["values"].clone().requires_grad_()
    with pytest.raises(ValueError, match="values requires grad"):
        call("gae", kw)
    with torch.no_grad():
        call("gae", kw)
        call("gae", kw)
    assert len(_plans()) == 1 and len(ck.launches) == 4


def test_new_signatures_and_bad_input_take_the_whole_path(fake_direct_launch):
    kw, _ = make("gae", (4, 20), seed=1)
    call("gae", kw)
    assert len(_plans()) == 1
    call("gae", kw, gamma=0.5)                      # another scalar: another plan
    call("gae", {k: (v[:3] if isinstance(v, torch.Tensor) else v) for k, v in kw.items()})
    assert len(_plans()) == 3
    with pytest.raises(ValueError, match="gamma"):
        call("gae", kw, gamma=1.5)
    call("gae", kw, gamma=1.0)
    with pytest.raises(TypeError, match="gamma"):
        call("gae", kw, gamma=True)                 # True == 1.0, yet not a valid gamma
    with pytest.raises(ValueError, match="values has shape"):
        call("gae", kw, values=kw["values"][:, :10])
    with pytest.raises(TypeError, match="float64"):
        call("gae", kw, rewards=kw["rewards"].double())


def test_signatures_that_never_repeat_stop_being_recorded(fake_direct_launch, monkeypatch):
    """gamma annealed every call: after _MISS_LIMIT misses in a row only one miss in
    _MISS_LIMIT is recorded; a signature that then repeats is recorded and replayed again."""
    monkeypatch.setattr(_replay, "_MISS_LIMIT", 4)
    recorded, replayed = [], []
    _count_replays(monkeypatch, replayed)
    plan = _replay._plan
    monkeypatch.setattr(_replay, "_plan", lambda *a: recorded.append(1) or plan(*a))
    kw, _ = make("discounted_returns", (4, 20), seed=1)
    for i in range(20):
        call("discounted_returns", kw, gamma=0.5 + i / 100)
    assert len(recorded) == 4 + 4 and replayed == []   # the first 4, then misses 8, 12, 16, 20
    for _ in range(4):
        call("discounted_returns", kw, gamma=0.9)       # misses 21-23 whole path, 24 records
    call("discounted_returns", kw, gamma=0.9)
    assert len(recorded) == 9 and len(replayed) == 1
    call("discounted_returns", kw, gamma=0.1)           # the run of misses starts over
    assert len(recorded) == 10


def test_a_plan_generates_its_launch_function_when_its_signature_first_repeats(
        fake_direct_launch):
    """Recording a call generates nothing (~0.3 ms a plan: signatures that never repeat would
    pay it every time); the first replay generates the plan's function, later ones call it."""
    kw, _ = make("gae", (4, 20), seed=1)
    call("gae", kw)
    (plan,) = _plans()
    assert plan.source is None and plan.replay == plan.first_replay
    call("gae", kw)
    generated = plan.replay
    assert plan.source.startswith("def replay(primary, sources, ")
    assert generated != plan.first_replay
    call("gae", kw)
    assert plan.replay is generated and len(fake_direct_launch.launches) == 3


def test_hooks_and_forced_configs_bypass_plans(fake_direct_launch, monkeypatch):
    ck = fake_direct_launch
    kw, _ = make("gae", (4, 20), seed=1)
    call("gae", kw)
    replays = []
    _count_replays(monkeypatch, replays, replay_too=False)
    with launch.force_config(BLOCK_N=1, BLOCK_T=8, num_warps=1):
        call("gae", kw)
    monkeypatch.setattr(_layout, "POISON_OUTPUTS", True)
    call("gae", kw)
    assert replays == [] and len(ck.launches) == 3


def test_reloading_the_tuning_db_drops_plans(fake_direct_launch):
    kw, _ = make("gae", (4, 20), seed=1)
    call("gae", kw)
    assert len(_plans()) == 1
    tuning.load()
    assert _plans() == []


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(300, 128), (64, 2048), (4, 8192)])
@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("est", ESTIMATORS + ["linear_scan"])
def test_replays_give_the_whole_paths_outputs_bitwise(monkeypatch, est, time_major, shape):
    """(4, 8192): spans whose summaries go through the carry pass when they are chunked."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    monkeypatch.setattr(_layout, "POISON_OUTPUTS", False)
    monkeypatch.setattr(_replay, "_plans", {})
    if shape == (4, 8192):
        monkeypatch.setattr(launch, "_FOLD_PER_THREAD", 0)

    def inputs(seed):
        if est == "linear_scan":
            g = torch.Generator().manual_seed(seed)
            kw = dict(a=torch.rand(shape, generator=g), b=torch.randn(shape, generator=g),
                      init=torch.randn(shape[0], generator=g))
        else:
            kw, _ = make(est, shape, seed=seed)
        kw = {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
        if time_major:
            kw = {k: (v.t().contiguous() if isinstance(v, torch.Tensor) and v.dim() == 2
                      else v) for k, v in kw.items()}
            kw["time_dim"] = 0
        return kw

    replays = []
    _count_replays(monkeypatch, replays)
    call(est, inputs(1))
    assert len(_plans()) == 1      # every strategy launches directly on CUDA
    second = inputs(2)
    replayed = _outputs(call(est, second))
    assert len(replays) == len(_plans())
    monkeypatch.setattr(_replay, "_gate", None)
    whole = _outputs(call(est, second))
    for r, w in zip(replayed, whole):
        assert (r.shape, r.stride(), r.dtype) == (w.shape, w.stride(), w.dtype)
        torch.testing.assert_close(r, w, rtol=0, atol=0, equal_nan=True)


@pytest.mark.gpu
def test_replayed_calls_capture_in_a_cuda_graph(monkeypatch):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    monkeypatch.setattr(_layout, "POISON_OUTPUTS", False)
    monkeypatch.setattr(_replay, "_plans", {})
    kw, _ = make("vtrace", (512, 128), seed=1)
    static = {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    rlscan.vtrace(**static)                                  # records, outside the capture
    assert len(_plans()) == 1
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        vs, pg = rlscan.vtrace(**static)                     # replays into the graph
    fresh, _ = make("vtrace", (512, 128), seed=2)
    for k, v in fresh.items():
        if isinstance(v, torch.Tensor):
            static[k].copy_(v)
    graph.replay()
    monkeypatch.setattr(_replay, "_gate", None)
    expected = rlscan.vtrace(**static)
    torch.testing.assert_close(vs, expected.vs, rtol=0, atol=0)
    torch.testing.assert_close(pg, expected.pg_advantages, rtol=0, atol=0)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(300, 128), (4, 8192)])
def test_direct_launches_skip_tritons_python_wrapper_with_the_same_outputs(monkeypatch, shape):
    """On triton 3.6 direct launches, first calls and replays alike, call the C launch function
    itself (launch._launcher_of), with outputs bitwise those of launches through Triton's
    CudaLauncher.__call__. (4, 8192) with no fold: spans, the carry pass, the fix-up."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    monkeypatch.setattr(_layout, "POISON_OUTPUTS", False)
    monkeypatch.setattr(launch, "_FOLD_PER_THREAD", 0)
    kw, _ = make("gae", shape, seed=3)
    kw = {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in kw.items()}

    def twice():                     # the first call records a plan, the second replays it
        monkeypatch.setattr(launch, "_compiled", {})
        monkeypatch.setattr(_replay, "_plans", {})
        call("gae", kw)
        out = _outputs(call("gae", kw))
        plan, = _plans()
        runs = [run for run, *_ in plan.launches] + [run for run, _, _ in
                                                     launch._compiled.values()]
        return out, runs, [ck for _, _, ck in launch._compiled.values()]

    raw, runs, cks = twice()
    if triton.__version__.startswith("3.6."):
        assert launch._RAW_LAUNCH and cks
        assert all(type(r).__name__ == "builtin_function_or_method" for r in runs)
        assert set(runs) == {ck.run.launch for ck in cks}
    monkeypatch.setattr(launch, "_RAW_LAUNCH", False)
    wrapped, runs, cks = twice()
    assert set(runs) == {ck.run for ck in cks}
    for r, w in zip(raw, wrapped):
        torch.testing.assert_close(r, w, rtol=0, atol=0, equal_nan=True)
