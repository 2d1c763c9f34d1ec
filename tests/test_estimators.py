"""The public estimators against the float64 reference, on every backend (conftest.py):
worked examples, random data with terminations and truncations, layouts, dtypes, per-step
coefficients, chunk edges, NaN in ignored slots, empty inputs."""

import contextlib
import itertools

import numpy as np
import pytest
import torch

import rlscan
from rlscan import tuning
from rlscan.kernels import configs as C, heuristic, launch, lookback_state
from rlscan.kernels.launch import force_config

import cases
from cases import (BACKWARD, ESTIMATORS, assert_matches, call, make, per_step_in, reference,
                   scale_of)

NAN = float("nan")


def row(*xs, dtype=torch.float32):
    return torch.tensor([list(xs)], dtype=dtype)


# ---------------------------------------------------------------- ALGORITHMS.md §4 worked row
R = row(1.0, -0.5, 2.0, 0.5, 1.0)
V = row(0.5, 1.0, 0.8, 1.2, -0.4)
TERM = row(0, 1, 0, 0, 0, dtype=torch.bool)
TRUNC = row(0, 0, 0, 1, 0, dtype=torch.bool)
BV = row(0.0, NAN, NAN, 2.0, 0.6)            # E2; NaN where bootstrap values are never read
NV = row(1.0, NAN, 1.2, 2.0, 0.6)            # E1; NaN at the terminated (ignored) step
LOG_RATIO = torch.log(row(0.5, 2.0, 1.5, 0.8, 1.1))


def close(out, expected, atol=2e-6):
    np.testing.assert_allclose(out.detach().cpu().double().numpy(), [expected], rtol=0, atol=atol)


@pytest.mark.parametrize("enc", ["next_values", "bootstrap_values"])
def test_worked_example_gae_and_lambda_returns(backend, device, enc):
    succ = {"next_values": NV, "bootstrap_values": BV}[enc].to(device)
    d = lambda x: x.to(device)   # noqa: E731
    adv, ret = rlscan.gae(d(R), d(V), d(TERM), d(TRUNC), gamma=0.9, lmbda=0.8, **{enc: succ})
    close(adv, [0.32, -1.5, 3.072, 1.1, 1.94])
    close(ret, [0.82, -0.5, 3.872, 2.3, 1.54])
    g = rlscan.lambda_returns(d(R), d(TERM), d(TRUNC), values=d(V), gamma=0.9, lmbda=0.8,
                              **{enc: succ})
    close(g, [0.82, -0.5, 3.872, 2.3, 1.54])


def test_worked_example_terminated_wins_over_truncated(backend, device):
    d = lambda x: x.to(device)   # noqa: E731
    trunc = TRUNC.clone()
    trunc[0, 1] = True
    bv = BV.clone()
    bv[0, 1] = 3.0
    adv, _ = rlscan.gae(d(R), d(V), d(TERM), d(trunc), bootstrap_values=d(bv), gamma=0.9,
                        lmbda=0.8)
    close(adv, [0.32, -1.5, 3.072, 1.1, 1.94])
    g = rlscan.discounted_returns(d(R), d(TERM), d(trunc), bootstrap_values=d(bv), gamma=0.9)
    close(g, [0.55, -0.5, 4.07, 2.3, 1.54])


@pytest.mark.parametrize("lmbda, mix, vs, pg", [
    (1.0, "vs", [0.39, -0.8, 4.2884, 2.08, 1.734], [-0.11, -1.8, 3.6864, 0.88, 2.134]),
    (0.9, "vs", [0.471, -0.8, 4.21316, 2.08, 1.734], [-0.11, -1.8, 3.6864, 0.88, 2.134]),
    (0.9, "lambda_mix", [0.471, -0.8, 4.21316, 2.08, 1.734],
     [-0.029, -1.8, 3.59136, 0.88, 2.134]),
])
def test_worked_example_vtrace(backend, device, lmbda, mix, vs, pg):
    d = lambda x: x.to(device)   # noqa: E731
    out = rlscan.vtrace(d(R), d(V), d(TERM), d(TRUNC), log_ratio=d(LOG_RATIO),
                        bootstrap_values=d(BV), gamma=0.9, lmbda=lmbda, rho_bar=1.2,
                        c_bar=0.95, pg_bootstrap=mix)
    close(out.vs, vs)
    close(out.pg_advantages, pg)
    # the same ratio as a pair of log-probabilities
    out2 = rlscan.vtrace(d(R), d(V), d(TERM), d(TRUNC), target_logp=d(LOG_RATIO - 1.5),
                         behaviour_logp=d(torch.full_like(R, -1.5)), next_values=d(NV),
                         gamma=0.9, lmbda=lmbda, rho_bar=1.2, c_bar=0.95, pg_bootstrap=mix)
    close(out2.vs, vs)
    close(out2.pg_advantages, pg)


def test_worked_example_returns_retrace_traces_and_prefix_sums(backend, device):
    d = lambda x: x.to(device)   # noqa: E731
    close(rlscan.discounted_returns(d(R), d(TERM), d(TRUNC), next_values=d(NV), gamma=0.9),
          [0.55, -0.5, 4.07, 2.3, 1.54])
    close(rlscan.discounted_returns(d(R), d(TERM), d(TRUNC), gamma=0.9),
          [0.55, -0.5, 2.45, 0.5, 1.0])
    q_ret = rlscan.retrace(d(R), d(V), d(row(1.1, NAN, 1.0, 2.0, 0.6)), d(TERM), d(TRUNC),
                           target_probs=d(row(0.25, 1.0, 0.75, 0.4, 0.55)),
                           behaviour_probs=d(row(0.5, 0.5, 0.5, 0.5, 0.5)),
                           gamma=0.9, lmbda=0.9)
    close(q_ret, [0.775, -0.5, 3.6128, 2.3, 1.54])
    z, dones = d(row(1.0, 2, 3, 4, 5)), d(TERM | TRUNC)
    close(rlscan.eligibility_traces(z, dones, gamma=0.9, lmbda=0.8), [1, 2.72, 3, 6.16, 5])
    seed = d(torch.tensor([10.0]))
    close(rlscan.eligibility_traces(z, dones, gamma=0.9, lmbda=0.8, seed=seed),
          [8.2, 7.904, 3, 6.16, 5])
    close(rlscan.eligibility_traces(z, dones, gamma=0.9, lmbda=0.8, seed=seed,
                                    done_prev=d(torch.tensor([True]))), [1, 2.72, 3, 6.16, 5])
    close(rlscan.episodic_cumsum(d(R), dones), [1, 0.5, 2, 2.5, 1])
    close(rlscan.episodic_cumsum(d(torch.ones(1, 5)), dones), [1, 2, 1, 2, 1])
    starts = d(row(1, 0, 1, 0, 1, dtype=torch.uint8))
    close(rlscan.episodic_cumsum(d(torch.ones(1, 5)), starts, seed=seed, boundary="starts_at"),
          [1, 2, 1, 2, 1])


# ---------------------------------------------------------------- random data vs reference
SHAPES = [(1, 1), (3, 2), (5, 37), (2, 3, 70), (6, 130)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("est", ESTIMATORS)
def test_matches_float64_reference(backend, device, est, shape):
    kw, rk = make(est, shape, seed=hash((est, shape)) % 1000)
    out = call(est, kw, device)
    assert_matches(out, reference(est, rk), T=shape[-1], scale=scale_of(est, rk))


@pytest.mark.parametrize("encoding", ["next_values", "bootstrap", "last_value", "none"])
@pytest.mark.parametrize("est", ["gae", "lambda_returns", "discounted_returns", "vtrace"])
def test_every_successor_value_encoding_matches_reference(backend, device, est, encoding):
    if encoding == "none" and est != "discounted_returns":
        pytest.skip("only discounted returns run without successor values")
    kw, rk = make(est, (3, 41), seed=7, encoding=encoding)
    if encoding == "none":
        kw.pop("values", None)
        rk.pop("values", None)
    out = call(est, kw, device)
    assert_matches(out, reference(est, rk), T=41, scale=scale_of(est, rk))


def record_constexprs(monkeypatch, *names):
    """Spy on the scan kernel's launches: the returned list gets, per launch of the fused
    kernel, the value of the named constexpr (a tuple of them for several names; the name
    ``kernel``: the kernel object launched)."""
    from rlscan.kernels import launch
    taken, run = [], launch._run

    def spy(kernel, grid, args, objs, consts, options, spec, kernel_names=launch._CONSTEXPRS):
        if kernel_names is launch._CONSTEXPRS:
            got = tuple(kernel if n == "kernel" else consts[kernel_names.index(n)]
                        for n in names)
            taken.append(got if len(names) > 1 else got[0])
        return run(kernel, grid, args, objs, consts, options, spec, kernel_names)

    monkeypatch.setattr(launch, "_run", spy)
    return taken


def matches_reference_under(config: dict, est: str, kw: dict, rk: dict, device, T: int):
    """One call with the launch config forced, against the float64 reference."""
    with force_config(**config):
        out = call(est, kw, device)
    assert_matches(out, reference(est, rk), T=T, scale=scale_of(est, rk))


@pytest.mark.parametrize("config", [None, dict(strategy="chunked", BLOCK_N=1, BLOCK_T=16,
                                                num_warps=1, CHUNKS_PER_SPAN=1),
                                    dict(strategy="lookback", BLOCK_N=2, BLOCK_T=16,
                                         num_warps=1, CHUNKS_PER_SPAN=1)])
@pytest.mark.parametrize("est", BACKWARD)
def test_right_padded_sequences_match_each_sequence_alone(backend, device, est, config):
    """Language-model batches: sequences of different lengths right-padded to T, each ended by
    terminated at its last real token. Every real token's outputs equal those of the sequence
    computed alone, whatever the padding holds (NaN here): the flag cuts the carry from the
    padding, and nothing of a terminated step's successor is read."""
    if config is not None and backend == "torch":
        pytest.skip("the torch path has no launch configs")
    T, lengths = 50, (50, 23, 1, 17)
    kw, rk = make(est, (len(lengths), T), seed=3)
    padded = dict(kw)
    for i, n in enumerate(lengths):
        rk["terminated"][i, n - 1] = True
    padded["terminated"] = rk["terminated"].clone()
    for name, x in kw.items():
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.shape == (len(lengths), T):
            x = x.clone()
            for i, n in enumerate(lengths):
                x[i, n:] = float("nan")
            padded[name] = x
    with force_config(**config) if config else contextlib.nullcontext():
        out = cases.as_tuple(call(est, padded, device))
    for i, n in enumerate(lengths):
        alone = {k: (v[i:i + 1, :n] if isinstance(v, torch.Tensor) else v) for k, v in rk.items()}
        assert_matches(tuple(o[i:i + 1, :n] for o in out), reference(est, alone), T=n,
                       scale=scale_of(est, alone))


@pytest.mark.parametrize("strategy, block_n, block_t, per_span", [
    ("row_block", 1, 16, None), ("row_block", 2, 32, None), ("row_block", 4, 16, None),
    ("chunked", 1, 16, 1), ("chunked", 2, 16, 2), ("lookback", 1, 16, 1),
    ("lookback", 2, 16, 1)])
@pytest.mark.parametrize("est", ESTIMATORS)
def test_chunk_edges_do_not_change_results(backend, device, est, strategy, block_n, block_t,
                                           per_span):
    """T = 3 chunks + 1 and a done exactly on a chunk edge; N not a multiple of BLOCK_N; row
    blocks walking whole rows, and both spanned strategies with spans of 1 and 2 chunks."""
    if backend == "torch":
        pytest.skip("the torch path has no chunks")
    shape = (5, 3 * block_t + 1)
    kw, rk = make(est, shape, seed=block_t)
    flag = "dones" if "dones" in kw else "terminated"
    kw[flag][:, block_t - 1] = True
    kw[flag][:, 2 * block_t] = True
    matches_reference_under(dict(strategy=strategy, BLOCK_N=block_n, BLOCK_T=block_t,
                                 num_warps=1, CHUNKS_PER_SPAN=per_span), est, kw, rk, device,
                            T=shape[-1])


@pytest.mark.parametrize("carry", ["fold", "carry_pass"])
@pytest.mark.parametrize("est", ["gae", "lambda_returns", "retrace", "eligibility_traces"])
def test_chunked_carry_by_fold_or_carry_pass_matches_reference(backend, device, est, carry,
                                                                monkeypatch):
    """35 spans per row (a fold tile of 64, half of it padding). The chunked fix-up pass finds
    the value entering its span by folding the earlier spans' summaries itself (two launches),
    or, when they would not fit one small tile, from the separate carry pass (three launches).
    (71 spans took 32-38 s a fold case in the interpreter, the slowest tests of the suite.)"""
    if backend == "torch":
        pytest.skip("the torch path has no spans")
    from rlscan.kernels import launch
    if carry == "carry_pass":
        monkeypatch.setattr(launch, "_FOLD_PER_THREAD", 0)
    shape = (3, 16 * 34 + 3)
    kw, rk = make(est, shape, seed=13)
    matches_reference_under(dict(strategy="chunked", BLOCK_N=2, BLOCK_T=16, num_warps=1,
                                 CHUNKS_PER_SPAN=1), est, kw, rk, device, T=shape[-1])


@pytest.mark.parametrize("est", ["gae", "vtrace", "retrace", "episodic_cumsum"])
def test_walking_chunks_without_prefetch_matches_reference(backend, device, est, monkeypatch):
    """Programs walking several chunks normally issue the next chunk's loads one chunk ahead
    (launch._PREFETCH); the plain walk, kept for measurements, gives the same results, in row
    blocks (4 chunks a row) and in spans of 3 chunks (the last span shorter)."""
    if backend == "torch":
        pytest.skip("the torch path has no chunks")
    from rlscan.kernels import launch
    monkeypatch.setattr(launch, "_PREFETCH", False)
    shape = (5, 3 * 16 + 1)
    kw, rk = make(est, shape, seed=17)
    matches_reference_under(dict(strategy="row_block", BLOCK_N=2, BLOCK_T=16, num_warps=1),
                            est, kw, rk, device, T=shape[-1])
    shape = (3, 7 * 16 + 5)
    kw, rk = make(est, shape, seed=19)
    matches_reference_under(dict(strategy="chunked", BLOCK_N=1, BLOCK_T=16, num_warps=1,
                                 CHUNKS_PER_SPAN=3), est, kw, rk, device, T=shape[-1])


@pytest.mark.parametrize("gather", [True, False])
@pytest.mark.parametrize("strategy", ["row_block", "chunked", "lookback"])
def test_vtrace_next_lane_by_gather_or_second_composition_matches_reference(
        backend, device, strategy, gather, monkeypatch):
    """V-trace's vs[t+1] comes from a gather of the next lane when each row of the tile lies
    in one warp, else from the second composition the scan carries (launch._NEXT_GATHER turns
    the gather off); both agree with the reference across chunk edges and spans."""
    if backend == "torch":
        pytest.skip("the torch path has no chunks")
    from rlscan.kernels import launch
    monkeypatch.setattr(launch, "_NEXT_GATHER", gather)
    shape = (5, 3 * 16 + 1)
    kw, rk = make("vtrace", shape, seed=23)
    kw["terminated"][:, 15] = True
    matches_reference_under(dict(strategy=strategy, BLOCK_N=2, BLOCK_T=16, num_warps=1,
                                 CHUNKS_PER_SPAN=1), "vtrace", kw, rk, device, T=shape[-1])


@pytest.mark.parametrize("two_level, tail", [(True, 4), (False, 4), (True, 1)])
@pytest.mark.parametrize("strategy", ["row_block", "chunked", "lookback"])
@pytest.mark.parametrize("block_n, block_t", [(8, 16), (1, 256), (1, 1024)])
@pytest.mark.parametrize("est", BACKWARD)
def test_two_level_backward_scan_matches_reference(backend, device, est, block_n, block_t,
                                                   strategy, two_level, tail, monkeypatch):
    """Configs with TWO_LEVEL scan backward chunks in two levels (groups of 4 steps in a thread,
    the later groups by shuffles, and with 256 or 1024 steps a row two or eight parts of 32
    groups held in each thread's registers): with and without it the results agree with the
    reference across group, part, chunk and span edges, with a partial row block and dones on
    the last and first steps of groups and parts. The launcher really takes the path asked
    for; on rows of odd length (``tail`` 1) in groups of 1 step, but 4 in chunks of 1024 (at
    most 8 parts a thread)."""
    if backend == "torch":
        pytest.skip("the torch path has no chunks")
    taken = record_constexprs(monkeypatch, "TWO_LEVEL", "GROUP")
    shape = (5 if block_n > 1 else 2, 3 * block_t + tail)
    # γλ near 1, ratios of 1 and no episode ends in row 0: every step reaches far back,
    # across groups, parts and chunks; the last row ends episodes on group and part edges
    kw, rk = make(est, shape, seed=29, gamma=0.999, lmbda=1.0)
    if "log_ratio" in kw:
        kw["log_ratio"] = rk["log_ratio"] = torch.zeros(shape)
    kw["terminated"][:-1] = kw["truncated"][:-1] = False
    edge = shape[1] - block_t                      # the first step of the last chunk
    for t in (edge + 3, edge + 4, edge + block_t // 2 - 1, edge + block_t // 2):
        kw["terminated"][-1, t] = True             # group 0's last step, group 1's first; parts
    # 8 rows x 4 groups, or 1 row x 32 groups, fill the one warp
    matches_reference_under(dict(strategy=strategy, BLOCK_N=block_n, BLOCK_T=block_t,
                                 num_warps=1, CHUNKS_PER_SPAN=1, TWO_LEVEL=two_level), est, kw,
                            rk, device, T=shape[-1])
    assert taken and set(taken) == {(int(two_level), 4 if tail == 4 or block_t == 1024 else 1)}


@pytest.mark.parametrize("block_n, block_t, split, group", [
    (8, 16, 2, 4), (8, 16, 8, 4), (2, 128, 2, 4), (4, 32, 4, 4), (8, 16, 4, 4), (16, 16, 16, 4),
    (32, 16, 32, 4), (8, 32, 8, 8), (4, 64, 2, 8)])
@pytest.mark.parametrize("est", BACKWARD)
def test_rows_split_over_tile_rows_match_reference(backend, device, est, block_n, block_t,
                                                   split, group, monkeypatch):
    """SPLIT tile rows a row (each scans one of SPLIT consecutive chunks, then the values
    entering them are composed across the tile rows; groups of 4 or 8 steps a thread): the
    reference's results with a row count no multiple of the rows a program, a last iteration
    whose earlier tile rows lie partly or (SPLIT 8) wholly before step 0, episode ends on the
    steps either side of the tile rows' chunk edges, and one row with none (every step reaches
    back across all of them). A forward scan under the same config splits only with one input
    row a program."""
    if backend == "torch":
        pytest.skip("the torch path has no chunks")
    taken = record_constexprs(monkeypatch, "SPLIT", "GROUP")
    step = split * block_t                         # steps of a row one iteration covers
    shape = (5, 2 * step + block_t + group)        # rows of whole groups
    kw, rk = make(est, shape, seed=31, gamma=0.999, lmbda=1.0)
    if "log_ratio" in kw:
        kw["log_ratio"] = rk["log_ratio"] = torch.zeros(shape)
    kw["terminated"][0] = kw["truncated"][0] = False
    for t in (shape[1] - block_t - 1, shape[1] - block_t, shape[1] - step - 1):
        kw["terminated"][1, t] = True              # last chunk's edge, an iteration's edge
        kw["truncated"][2, t] = True
    cfg = dict(strategy="row_block", BLOCK_N=block_n, BLOCK_T=block_t, num_warps=1,
               TWO_LEVEL=True, GROUP=group, SPLIT=split)
    matches_reference_under(cfg, est, kw, rk, device, T=shape[-1])
    assert taken and set(taken) == {(split, group)}
    kw, rk = make("episodic_cumsum", (3, 40), seed=31)
    matches_reference_under(cfg, "episodic_cumsum", kw, rk, device, T=40)
    # a forward scan splits only with one input row a program
    assert taken[-1] == ((split, 4) if block_n == split else (1, 4))


@pytest.mark.parametrize("block_n, block_t, two_level", [(2, 16, False), (4, 32, False),
                                                        (16, 16, False), (32, 16, False),
                                                        (4, 32, True)])
@pytest.mark.parametrize("est", ["eligibility_traces", "episodic_cumsum", "gae", "vtrace"])
def test_split_rows_of_one_input_row_a_program_match_reference_both_ways(
        backend, device, est, block_n, block_t, two_level, monkeypatch):
    """One input row a program spread over SPLIT = BLOCK_N tile rows, in plain tiles for both
    scan directions (and two-level for backward ones): the reference's results with the value
    entering a row from ``seed`` and ``done_prev`` (forward) or bootstrap values (backward),
    episode ends (forward: resets on the step after) on the steps either side of the tile
    rows' chunk edges and of an iteration's edge, a partial last iteration, and one row with
    none (every step reaches across all of them)."""
    if backend == "torch":
        pytest.skip("the torch path has no chunks")
    if two_level and est not in BACKWARD:
        pytest.skip("the two-level scan is backward only")
    taken = record_constexprs(monkeypatch, "SPLIT", "TWO_LEVEL")
    step = block_n * block_t
    shape = (4, 2 * step + block_t + 3)
    kw, rk = make(est, shape, seed=37, gamma=0.999, lmbda=1.0)
    if "log_ratio" in kw:
        kw["log_ratio"] = rk["log_ratio"] = torch.zeros(shape)
    flag = "dones" if "dones" in kw else "terminated"
    for d in (kw, rk):
        d[flag][0] = False
        if "truncated" in d:
            d["truncated"][0] = False
    edges = (block_t - 1, block_t, step - 1, step, shape[1] - block_t - 1, shape[1] - block_t)
    for t in edges:
        kw[flag][1, t] = rk[flag][1, t] = True
    cfg = dict(strategy="row_block", BLOCK_N=block_n, BLOCK_T=block_t, num_warps=1,
               TWO_LEVEL=two_level, SPLIT=block_n)
    matches_reference_under(cfg, est, kw, rk, device, T=shape[-1])
    assert taken and set(taken) == {(block_n, int(two_level))}


@pytest.mark.parametrize("strategy, block_n, block_t, group", [
    ("row_block", 16, 16, 8), ("chunked", 16, 16, 8), ("chunked", 1, 256, 8),
    ("row_block", 1, 1024, 8), ("lookback", 1, 256, 8),
    ("row_block", 4, 128, 16), ("chunked", 1, 1024, 16), ("lookback", 2, 256, 16)])
@pytest.mark.parametrize("est", BACKWARD)
def test_two_level_groups_of_8_or_16_steps_match_reference_in_bf16(backend, device, est,
                                                                    strategy, block_n, block_t,
                                                                    group, monkeypatch):
    """Two-level tiles of groups of 8 steps a thread (GROUP=8, measured by the tuner for 16-bit
    inputs) or 16 (valid, not yet a candidate): bf16 inputs with bool flags give the reference's
    results on the rounded inputs across group (steps 7 | 8, 15 | 16), part, chunk and span
    edges, with a partial row block; the launcher passes GROUP with the two-level scan and 4 to
    a forward scan under the same config."""
    if backend == "torch":
        pytest.skip("the torch path has no chunks")
    taken = record_constexprs(monkeypatch, "TWO_LEVEL", "GROUP")
    shape = (17 if block_n > 1 else 2, 3 * block_t + group)     # rows of whole groups
    kw, _ = make(est, shape, seed=43, gamma=0.999, lmbda=1.0)
    if "log_ratio" in kw:
        kw["log_ratio"] = torch.zeros(shape)
    kw["terminated"][:-1] = kw["truncated"][:-1] = False
    edge = shape[1] - block_t                      # the first step of the last chunk
    for t in (edge + group - 1, edge + group, edge + block_t // 2 - 1, edge + block_t // 2):
        kw["terminated"][-1, t] = True             # group 0's last step, group 1's first; parts
    half, rounded = per_step_in(torch.bfloat16, kw)
    cfg = dict(strategy=strategy, BLOCK_N=block_n, BLOCK_T=block_t, num_warps=1,
               CHUNKS_PER_SPAN=1, TWO_LEVEL=True, GROUP=group)
    with force_config(**cfg):
        out = call(est, half, device)
    assert_matches(out, reference(est, rounded), T=shape[-1], scale=scale_of(est, rounded))
    assert taken and set(taken) == {(1, group)}
    kw, rk = make("episodic_cumsum", (3, 40), seed=43)
    matches_reference_under(cfg, "episodic_cumsum", kw, rk, device, T=40)
    assert taken[-1] == (0, 4)


@pytest.mark.parametrize("T, stride, dtype, group", [
    (3 * 128 + 1, None, torch.float32, 1), (3 * 128 + 2, None, torch.float32, 2),
    (3 * 128 + 4, None, torch.float32, 4), (3 * 128 + 4, None, torch.bfloat16, 4),
    (3 * 128 + 2, None, torch.bfloat16, 2), (3 * 128, 3 * 128 + 1, torch.float32, 1)])
@pytest.mark.parametrize("est", ["gae", "vtrace", "discounted_returns"])
def test_two_level_groups_shrink_to_the_alignment_of_the_rows(backend, device, est, T, stride,
                                                              dtype, group, monkeypatch):
    """A two-level tile's groups hold no more steps than the power of two dividing T and the
    row strides (``launch._GROUP_BY_ALIGNMENT``): fp32 groups of 4 and bf16 groups of 8 take 1,
    2 or 4 steps a thread on rows of 385, 386 and 388 steps, and on rows of 384 sliced from a
    buffer of 385 (T aligned, the row stride odd); a split tile, episode ends on the steps
    either side of group, part, tile-row and chunk edges, and the reference's results (on the
    rounded inputs for bf16). Rows of T a multiple of 16 with an odd stride run the kernel
    with T unspecialised (``launch._ODD_STRIDE_KERNEL``), the rest the shipped one."""
    if backend == "torch":
        pytest.skip("the torch path has no chunks")
    taken = record_constexprs(monkeypatch, "TWO_LEVEL", "GROUP", "SPLIT", "kernel")
    n, width = 5, stride or T
    full, _ = make(est, (n, width), seed=67, gamma=0.999, lmbda=1.0)
    if "log_ratio" in full:
        full["log_ratio"] = torch.zeros(n, width)
    full["terminated"][0] = full["truncated"][0] = False
    for t in (T - 2, T - 1 - group, T - 129, T - 128, T - 257, 0, 1):
        full["terminated"][1, t] = True
        full["truncated"][2, t] = True
    half, rounded = per_step_in(dtype, full)

    def rows(kw, dev=None):     # [n, T] views (moved first: a copy of a view is compact)
        return {k: v.to(dev)[:, :T] if torch.is_tensor(v) and v.dim() == 2 else v
                for k, v in kw.items()}
    per_step, rounded = rows(half, device), rows(rounded)
    assert per_step["rewards"].stride(0) == width
    g8 = dtype == torch.bfloat16    # (8 steps a thread fill a warp's lanes at 256 a row)
    cfg = dict(strategy="row_block", BLOCK_N=4, BLOCK_T=256 if g8 else 128, num_warps=4,
               TWO_LEVEL=True, GROUP=8 if g8 else 4, SPLIT=4)
    with force_config(**cfg):
        out = call(est, per_step)
    assert_matches(out, reference(est, rounded), T=T, scale=scale_of(est, rounded))
    kernel = launch._ODD_STRIDE_KERNEL if stride else launch.fused_scan_kernel
    assert taken and set(taken) == {(1, group, 4, kernel)}
    # as configured where the launcher does not shrink them
    monkeypatch.setattr(launch, "_GROUP_BY_ALIGNMENT", False)
    taken.clear()
    with force_config(**cfg):
        assert_matches(call(est, per_step), reference(est, rounded), T=T,
                       scale=scale_of(est, rounded))
    assert set(taken) == {(1, cfg["GROUP"], 4, kernel)}


@pytest.mark.parametrize("tile", [(4, 256, 4, 4), (8, 128, 8, 8), (2, 128, 2, 1), (2, 512, 2, 1),
                                  (1, 1024, 1, 1)],
                         ids=["4x256w4sp4", "8x128w8sp8", "2x128w2", "2x512w2", "1x1024w1"])
@pytest.mark.parametrize("est", ["gae", "vtrace", "discounted_returns"])
def test_two_level_tiles_on_rows_sliced_from_rows_one_step_longer(backend, device, est, tile,
                                                                  monkeypatch):
    """x[:, :T] of rows of T + 1 (T a multiple of 16, the row stride odd), as training code
    slices values: every two-level tile, forced, runs on the kernel with T unspecialised
    (``launch._ODD_STRIDE_KERNEL``) and matches the reference. On an H200 the 4-warp split tile
    on the kernel that specialises T died of a misaligned address here (fifty-eighth session,
    300x2048)."""
    if backend == "torch":
        pytest.skip("the torch path has no tiles")
    taken = record_constexprs(monkeypatch, "TWO_LEVEL", "kernel")
    bn, bt, warps, split = tile
    n, T = (12, 2048) if device == "cuda" else (5, max(bt, 256))
    full, full_ref = make(est, (n, T + 1), seed=71)
    kw = {k: v.to(device)[:, :T] if torch.is_tensor(v) and v.dim() == 2 else v
          for k, v in full.items()}
    rk = {k: v[:, :T] if torch.is_tensor(v) and v.dim() == 2 else v for k, v in full_ref.items()}
    assert kw["rewards"].stride(0) == T + 1
    cfg = dict(strategy="row_block", BLOCK_N=bn, BLOCK_T=bt, num_warps=warps, TWO_LEVEL=True,
               SPLIT=split)
    matches_reference_under(cfg, est, kw, rk, device, T=T)
    assert set(taken) == {(1, launch._ODD_STRIDE_KERNEL)}


@pytest.mark.parametrize("est", ["gae", "vtrace", "discounted_returns"])
def test_one_row_sliced_from_a_longer_row_keeps_its_alignment(backend, device, est,
                                                              monkeypatch):
    """values[:, :T] of one row of T + 1 (a language model's sequence): the row stride scales
    no address, so the call keeps T's groups, ALIGN_T and kernel (not the odd-stride twin) and
    matches the reference, with episode ends either side of group and chunk edges; two such
    rows do shrink to groups of one step."""
    if backend == "torch":
        pytest.skip("the torch path has no tiles")
    taken = record_constexprs(monkeypatch, "GROUP", "ALIGN_T", "kernel")
    T = 2048 if device == "cuda" else 384
    cfg = dict(strategy="row_block", BLOCK_N=2, BLOCK_T=128, num_warps=2, TWO_LEVEL=True)
    for n, want in ((1, (4, 1, launch.fused_scan_kernel)), (2, (1, 1, launch._ODD_STRIDE_KERNEL))):
        full, full_ref = make(est, (n, T + 1), seed=73)
        for t in (T - 1, T - 4, T - 5, T - 128, T - 129):
            full["terminated"][0, t] = full_ref["terminated"][0, t] = True
        kw = {k: v.to(device)[:, :T] if torch.is_tensor(v) and v.dim() == 2 else v
              for k, v in full.items()}
        rk = {k: v[:, :T] if torch.is_tensor(v) and v.dim() == 2 else v
              for k, v in full_ref.items()}
        assert kw["rewards"].stride(0) == T + 1
        taken.clear()
        matches_reference_under(cfg, est, kw, rk, device, T=T)
        assert set(taken) == {want}, n


def test_two_level_groups_keep_at_most_8_parts_a_chunk():
    """Groups shrink to the rows' alignment, but a chunk of 512 steps keeps groups of 2 and one
    of 1024 steps groups of 4: a thread holds at most 8 parts of 32 groups
    (``configs.two_level_fits``)."""
    assert [launch._aligned_group(a, 128) for a in (1, 2, 4, 8, 16)] == [1, 2, 4, 8, 16]
    assert [launch._aligned_group(a, 512) for a in (1, 2, 4)] == [2, 2, 4]
    assert [launch._aligned_group(a, 1024) for a in (1, 2, 4, 8)] == [4, 4, 4, 8]
    assert launch._pow2_dividing(385, 385) == 1 and launch._pow2_dividing(386, 0) == 2
    assert launch._pow2_dividing(384, 385) == 1 and launch._pow2_dividing(4096, 8192) == 16


def test_two_level_is_ignored_for_forward_scans_and_time_major_buffers(backend, device,
                                                                      monkeypatch):
    """TWO_LEVEL is a backward, time-last scan: a forward estimator or a time-major call under
    the same config runs the plain scan (and still matches the reference)."""
    if backend == "torch":
        pytest.skip("the torch path has no chunks")
    taken = record_constexprs(monkeypatch, "TWO_LEVEL")
    cfg = dict(strategy="row_block", BLOCK_N=8, BLOCK_T=16, num_warps=1, TWO_LEVEL=True)
    kw, rk = make("eligibility_traces", (5, 37), seed=31)
    matches_reference_under(cfg, "eligibility_traces", kw, rk, device, T=37)
    kw, rk = make("gae", (5, 37), seed=31)
    major = {k: (v.t().contiguous() if isinstance(v, torch.Tensor) and v.dim() == 2 else v)
             for k, v in kw.items()}
    with force_config(**cfg):
        out = call("gae", major, device, time_dim=0)
    assert_matches(tuple(x.t().cpu() for x in out), reference("gae", rk), T=37,
                   scale=scale_of("gae", rk))
    assert taken == [0, 0]


@pytest.mark.parametrize("est", ["discounted_returns", "vtrace", "eligibility_traces"])
def test_register_cap_reaches_the_launch_and_keeps_results(backend, device, est, monkeypatch):
    """A config's maxnreg goes to the kernel launch as Triton's ``maxnreg`` option (ptxas may
    then spill, never change a result): capped at 32, the results still match the reference
    (on the GPU with real spills for V-trace, whose tile takes 72 registers uncapped)."""
    if backend == "torch":
        pytest.skip("the torch path has no launch options")
    from rlscan.kernels import launch
    seen, options = [], launch._options

    def spy(opts):
        seen.append(opts)
        return options(opts)

    monkeypatch.setattr(launch, "_options", spy)
    monkeypatch.setattr(launch, "_compiled", {})   # the direct path calls _options on a compile
    shape = (5, 2 * 128 + 3)
    kw, rk = make(est, shape, seed=37)
    matches_reference_under(dict(strategy="row_block", BLOCK_N=2, BLOCK_T=128, num_warps=2,
                                 TWO_LEVEL=True, maxnreg=32), est, kw, rk, device,
                            T=shape[-1])
    assert seen and all(options(o)["maxnreg"] == 32 for o in seen)
    assert "maxnreg" not in options((2, 1, None, False))
    assert "maxnreg" not in options((4, 3, None, True))


@pytest.mark.parametrize("est", BACKWARD)
def test_register_capped_lookback_spans_walking_to_the_row_start_match_reference(backend, device,
                                                                                 est):
    """Look-back spans of 256 steps under the tuner's register cap (`configs._register_cap`:
    64, V-trace 96; the shipped DB's choice at 32x32768 and first `bounded_walk` config at
    8x262144 and 1x1M), and V-trace's at 64 too, where it spills: rows of 10 spans with random
    episode ends, and one with none at γ = 0.999, λ = 1, whose spans fold their nearest 8
    predecessors and then walk back to the row's start (V-trace's and Retrace's truncated
    ratios end the walk earlier, where their product underflows to 0), give the reference's
    results (the interpreter ignores the cap and checks the walk alone)."""
    if backend == "torch":
        pytest.skip("the torch path has no launch configs")
    shape = (3, 10 * 256 + 5)
    kw, rk = make(est, shape, seed=59, gamma=0.999, lmbda=1.0)    # rk shares kw's tensors
    for flag in ("terminated", "truncated", "dones"):
        if kw.get(flag) is not None:
            kw[flag][1] = False
    span = dict(strategy="lookback", BLOCK_N=1, BLOCK_T=256, num_warps=1, num_stages=1,
                CHUNKS_PER_SPAN=1, TWO_LEVEL=True)
    tuned = [c for c in C.candidates(est, 8, 262144, "time_last", "float32")
             if c.get("maxnreg") and dict(c, maxnreg=None) == dict(span, maxnreg=None)]
    assert [c["maxnreg"] for c in tuned] == [96 if est == "vtrace" else 64]
    for regs in sorted({tuned[0]["maxnreg"], 64}):
        matches_reference_under(dict(span, maxnreg=regs), est, kw, rk, device, T=shape[-1])


@pytest.mark.parametrize("est", ["eligibility_traces", "episodic_cumsum"])
def test_register_capped_forward_lookback_spans_match_reference(backend, device, est):
    """Forward scans' plain look-back span 1x256/w1 under the tuner's cap (64 registers,
    `configs._FORWARD_LOOKBACK_CAPS`; 72 uncapped): rows of 10 spans with random episode ends
    (and a done flag before t = 0), one with none, whose spans walk back to the row's start,
    give the reference's results (the interpreter ignores the cap and checks the walk)."""
    if backend == "torch":
        pytest.skip("the torch path has no launch configs")
    shape = (3, 10 * 256 + 5)
    kw, rk = make(est, shape, seed=67, gamma=0.999, lmbda=1.0)    # rk shares kw's tensors
    kw["dones"][1] = False
    span = dict(strategy="lookback", BLOCK_N=1, BLOCK_T=256, num_warps=1, num_stages=1,
                CHUNKS_PER_SPAN=1, maxnreg=64)
    assert span in C.candidates(est, 32, 32768, "time_last", "float32")
    matches_reference_under(span, est, kw, rk, device, T=shape[-1])


@pytest.mark.parametrize("est", BACKWARD)
def test_register_capped_split_tiles_in_groups_of_8_match_reference_in_bf16(backend, device,
                                                                            est):
    """The tuner's capped 16-bit split tile (4x256/w4/sp4 in groups of 8 at 64 registers,
    `configs._register_cap`: measured for GAE and Retrace; V-trace spills under it, the others
    hold at most 64 registers anyway): bf16 inputs with bool flags give the reference's
    results on the rounded inputs, rows of two whole iterations of 1,024 steps and 264 more,
    episode ends either side of the tile rows' chunk and the iterations' edges, and one row
    with none. The interpreter ignores the cap: there one estimator checks the tile."""
    if backend == "torch":
        pytest.skip("the torch path has no launch configs")
    if backend == "interpret" and est != "retrace":
        pytest.skip("the interpreter ignores the cap; the split tile is checked once")
    cfg = dict(strategy="row_block", BLOCK_N=4, BLOCK_T=256, num_warps=4, num_stages=1,
               TWO_LEVEL=True, GROUP=8, SPLIT=4, maxnreg=64)
    in_tuner = cfg in C.candidates(est, 1024, 8192, "time_last", "bfloat16")
    assert in_tuner == (est in ("gae", "retrace"))
    assert cfg not in C.candidates(est, 1024, 8192, "time_last", "float32")
    shape = (6, 2 * 1024 + 256 + 8)                   # rows of whole groups of 8
    kw, _ = make(est, shape, seed=61, gamma=0.999, lmbda=1.0)
    if "log_ratio" in kw:
        kw["log_ratio"] = torch.zeros(shape)
    kw["terminated"][0] = kw["truncated"][0] = False
    T = shape[1]
    for t in (T - 257, T - 256, T - 1025, T - 1024, 255, 256):  # edges counted from either end
        kw["terminated"][1, t] = True
        kw["truncated"][2, t] = True
    half, rounded = per_step_in(torch.bfloat16, kw)
    with force_config(**cfg):
        out = call(est, half, device)
    assert_matches(out, reference(est, rounded), T=shape[-1], scale=scale_of(est, rounded))


@pytest.mark.parametrize("T", [385, 450, 512, 513, 1023])
@pytest.mark.parametrize("est", BACKWARD)
def test_one_walk_split_tile_matches_reference_on_its_rows_and_its_buckets_longer_ones(
        backend, device, est, T):
    """The tuner's one-walk split tile (`configs._SPLIT_ROWS_ONE_WALK`: 4x128/w4/sp4, measured
    on rows of 385-512 steps): one iteration covers such a row, its first tile row partly
    before step 0 (T = 385: 127 of its 128 steps), the carry composed across the 4 tile rows;
    the DB's 64-127 x 512-1023 bucket also runs it on rows of up to 1,023 steps, two walks.
    Episode ends on the tile rows' chunk edges, one row with none, 65 rows (5 in the
    interpreter, which checks the ends of the range)."""
    if backend == "torch":
        pytest.skip("the torch path has no launch configs")
    if backend == "interpret" and T not in (385, 1023):
        pytest.skip("the interpreter checks the shortest row and the longest")
    cfg = dict(strategy="row_block", BLOCK_N=4, BLOCK_T=128, num_warps=4, num_stages=1,
               TWO_LEVEL=True, SPLIT=4)
    assert (cfg in C.candidates(est, 65, T, "time_last", "float32")) == (T <= 512)
    shape = (65 if backend != "interpret" else 5, T)
    kw, rk = make(est, shape, seed=67, gamma=0.999, lmbda=1.0)
    if "log_ratio" in kw:
        kw["log_ratio"] = rk["log_ratio"] = torch.zeros(shape)
    kw["terminated"][0] = kw["truncated"][0] = False
    for t in (T - 129, T - 128, T - 257, T - 256, T - 385, T - 384, T - 513, T - 512):
        if t >= 0:                                 # chunk and walk edges counted from the end
            kw["terminated"][1, t] = True
            kw["truncated"][2, t] = True
    matches_reference_under(cfg, est, kw, rk, device, T=T)


def test_vtrace_chunked_tile_under_its_register_cap_matches_reference(backend, device):
    """V-trace's capped chunked twin (2x128/w2, 4 chunks a span, at 64 registers, where its
    fix-up spills 8 bytes on the H200; `configs._register_cap`): rows of 3 spans and 5 more
    steps, episode ends on span and chunk edges, one row with none at γ = 0.999, λ = c̄ = 1
    and ratios of 1, whose carry crosses every span. The interpreter ignores the cap and
    checks the tile."""
    if backend == "torch":
        pytest.skip("the torch path has no launch configs")
    cfg = dict(strategy="chunked", BLOCK_N=2, BLOCK_T=128, num_warps=2, num_stages=1,
               CHUNKS_PER_SPAN=4, TWO_LEVEL=True, maxnreg=64)
    assert cfg in C.candidates("vtrace", 8, 262144, "time_last", "float32")
    shape = (5, 3 * 512 + 5)
    kw, rk = make("vtrace", shape, seed=71, gamma=0.999, lmbda=1.0)
    kw["c_bar"] = rk["c_bar"] = 1.0
    kw["log_ratio"][0] = 0.0                       # rk shares kw's tensors
    kw["terminated"][0] = kw["truncated"][0] = False
    for t in (511, 512, 1023, 1024 + 127, 1024 + 128):
        kw["terminated"][1, t] = True
        kw["truncated"][2, t] = True
    matches_reference_under(cfg, "vtrace", kw, rk, device, T=shape[-1])


@pytest.mark.parametrize("ends", ["random", "none"])
@pytest.mark.parametrize("window", [(16, 16), None])
@pytest.mark.parametrize("est", ["gae", "vtrace", "episodic_cumsum"])
def test_lookback_across_many_windows_matches_reference(backend, device, est, window, ends,
                                                        monkeypatch):
    """71 spans per row, their published summaries folded the nearest 8 first, then in windows
    of 16 and in the shipped windows. With episode ends a span's fold stops at the first reset
    it meets; with none it walks every window back to span 0 (episodic sums: a = 1, nothing
    decays to a reset)."""
    if backend == "torch":
        pytest.skip("the torch path has no spans")
    if window is None and backend == "interpret" and (ends == "none" or est != "gae"):
        # the interpreter runs spans in order (the fold meets a published summary at once):
        # windows of 16 walk back the same way, and one estimator checks the shipped windows
        pytest.skip("covered on CPU by windows of 16 and by GAE in the shipped windows")
    if window is not None:
        monkeypatch.setattr(launch, "_LOOKBACK_WINDOW", window)
    shape = (3, 16 * 70 + 3)
    kw, rk = make(est, shape, seed=11)
    if ends == "none":
        for flag in ("terminated", "truncated", "dones", "done_prev"):
            if flag in kw:
                kw[flag] = rk[flag] = torch.zeros_like(kw[flag])
    matches_reference_under(dict(strategy="lookback", BLOCK_N=2, BLOCK_T=16, num_warps=1,
                                 CHUNKS_PER_SPAN=1), est, kw, rk, device, T=shape[-1])


@pytest.mark.parametrize("T, phases", [(16 * 32, [4]), (16 * 32 + 1, [1, 2])])
def test_a_tuned_lookback_with_too_many_spans_runs_as_chunked_spans(backend, device, T, phases,
                                                                    monkeypatch):
    """A tuning-DB look-back config runs as look-back spans up to configs.LOOKBACK_MAX_SPANS
    spans a row, and beyond as chunked spans of the same tile (a row without resets would walk
    back over all of them); the results stay the reference's either way. Forced configs are
    run as given. The limit is lowered from the shipped 256 to 32 spans: the same boundary,
    an eighth of the interpreter's work (64 s of CI time at 256)."""
    from rlscan.kernels import configs
    if backend == "torch":
        pytest.skip("the torch path has no spans")
    assert configs.LOOKBACK_MAX_SPANS == 256
    monkeypatch.setattr(configs, "LOOKBACK_MAX_SPANS", 32)
    phase = record_constexprs(monkeypatch, "PHASE")
    cfg = dict(strategy="lookback", BLOCK_N=1, BLOCK_T=16, num_warps=1, CHUNKS_PER_SPAN=1)
    _db_entry(monkeypatch, cfg)
    kw, rk = make("discounted_returns", (1, T), seed=5)
    assert_matches(call("discounted_returns", kw, device), reference("discounted_returns", rk),
                   T=T)
    assert phase == phases
    phase.clear()
    with force_config(**cfg):
        call("discounted_returns", kw, device)
    assert phase == [4]


def _db_entry(monkeypatch, config, bounded=()):
    """Every bucket's tuning-DB entry is ``config`` with ``bounded_walk`` ``bounded`` (configs
    whose walks may reach the first window)."""
    from rlscan.kernels import configs
    walk = tuple((c, configs.LOOKBACK_FIRST_WINDOW) for c in bounded)
    monkeypatch.setattr(tuning, "_cache", {})
    monkeypatch.setattr(tuning, "_resolve", lambda pb, key: (config, walk))


def _gae_through_a_bounded_walk_entry(monkeypatch, device, T, seed, gamma, lmbda):
    """GAE on 2 rows of ``T`` steps without episode ends, with configs.LOOKBACK_MAX_SPANS 32 and
    every DB entry chunked 1x16 holding the look-back 1x16 as its bounded_walk: checks the
    results against the reference and returns the PHASE constexprs launched (look-back: [4];
    chunked: [1, 2])."""
    from rlscan.kernels import configs
    monkeypatch.setattr(configs, "LOOKBACK_MAX_SPANS", 32)
    phase = record_constexprs(monkeypatch, "PHASE")
    tile = dict(BLOCK_N=1, BLOCK_T=16, num_warps=1, CHUNKS_PER_SPAN=1)
    _db_entry(monkeypatch, dict(strategy="chunked", **tile), [dict(strategy="lookback", **tile)])
    kw, rk = make("gae", (2, T), seed=seed, gamma=gamma, lmbda=lmbda)
    for flag in ("terminated", "truncated"):       # no episode end: only the decay ends a walk
        kw[flag] = rk[flag] = torch.zeros_like(kw[flag])
    assert_matches(call("gae", kw, device), reference("gae", rk), T=T)
    return phase


@pytest.mark.parametrize("gamma, lmbda, phases", [(0.3, 1.0, [4]), (0.6, 0.5, [4]),
                                                  (0.5, 0.9, [1, 2]), (1.0, 1.0, [1, 2])])
def test_a_bounded_walk_config_runs_where_the_coefficients_end_every_walk_early(
        backend, device, gamma, lmbda, phases, monkeypatch):
    """Beyond configs.LOOKBACK_MAX_SPANS spans a row (32 here: 41 spans), a DB entry's
    bounded_walk look-back config runs when the call's scalar coefficients make the product of
    a underflow to 0 within the first window of spans (GAE, 16-step spans: γ·λ = 0.3 does,
    0.45 not), episode ends or not; else the entry's winner runs. The results are the
    reference's either way."""
    if backend == "torch":
        pytest.skip("the torch path has no spans")
    assert _gae_through_a_bounded_walk_entry(monkeypatch, device, 16 * 40 + 5, 9, gamma,
                                             lmbda) == phases


@pytest.mark.parametrize("spans, phases", [(32, [4]), (33, [1, 2])])
def test_a_bounded_walk_config_runs_on_rows_within_the_span_limit_whatever_the_coefficients(
        backend, device, spans, phases, monkeypatch):
    """An entry's bounded_walk config is kept apart for its bucket's longer rows; a call whose
    rows make at most configs.LOOKBACK_MAX_SPANS spans (32 here) runs it even at γ = λ = 1 on
    rows with no episode end, where every span walks back to the row's start, and matches the
    reference; one span more and the entry's winner runs."""
    if backend == "torch":
        pytest.skip("the torch path has no spans")
    assert _gae_through_a_bounded_walk_entry(monkeypatch, device, 16 * (spans - 1) + 5, 11,
                                             1.0, 1.0) == phases


def test_lookback_workspace_stays_clean_call_after_call(backend, device, monkeypatch):
    """A look-back call needs no fill: its stream's persistent workspace (lookback_state.py)
    has one half all "not yet" when a call starts; the call publishes there and resets the
    other half (the call before's summaries), whatever the data, so the halves alternate and
    calls of two sizes in any order, with episode ends or none, all match the reference."""
    if backend == "torch":
        pytest.skip("the torch path has no spans")
    monkeypatch.setattr(lookback_state, "_eager", type(lookback_state._eager)())
    monkeypatch.setattr(lookback_state, "_spares", {})
    cfg = dict(strategy="lookback", BLOCK_N=2, BLOCK_T=16, num_warps=1, CHUNKS_PER_SPAN=1)
    used = {}                                     # size -> the half its last call published to
    for i, (rows, ends) in enumerate([(3, True), (3, False), (5, True), (3, True), (3, False),
                                      (5, False), (5, True)]):
        T = 16 * 9 + 5                            # 10 spans a row
        kw, rk = make("gae", (rows, T), seed=20 + i)
        if not ends:
            for flag in ("terminated", "truncated"):
                kw[flag] = rk[flag] = torch.zeros_like(kw[flag])
        matches_reference_under(cfg, "gae", kw, rk, device, T=T)
        nk = rows * 10
        (w,) = [w for (dev, _, n), w in lookback_state._eager.items() if n == nk]
        h = 1 - used.get(nk, 1)                   # a new workspace's clean half is half 0
        assert w.shape == (lookback_state.words(nk),) == (2 * nk,)
        assert (w[h * nk:(h + 1) * nk] != -1).all()              # this call's summaries
        assert (w[(1 - h) * nk:(2 - h) * nk] == -1).all()        # reset for the next call
        used[nk] = h
    assert len(lookback_state._spares) == 2                    # one for a capture, a size


def test_lookback_window_covers_the_row_within_its_bounds():
    """A look-back step reads every earlier span of its row (the next power of two), but never
    fewer than the lower bound nor more than the upper one."""
    lo, hi = launch._LOOKBACK_WINDOW
    ks = (1, lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, 4 * hi)
    assert [launch._lookback_window(k) for k in ks] == [lo, lo, lo, 2 * lo, hi, hi, hi, hi]


def test_lookback_window_of_a_wide_tile_stays_within_its_threads_words():
    """A tile of many rows folds narrower windows: BLOCK_N x window summaries spread over the
    program's threads, at most launch._LOOKBACK_WORDS each, and never fewer than 2 spans (a
    128-row time-major tile with 64-span windows spilled 54 KB a thread). One-row spans of
    time-last rows keep their windows whatever the words."""
    words = launch._LOOKBACK_WORDS
    hi = launch._LOOKBACK_WINDOW[1]
    assert launch._lookback_window(4096, 1, 1) == hi
    assert launch._lookback_window(4096, 2, 2) == hi
    assert launch._lookback_window(64, 128, 1) == max(2, 32 * words // 128)
    assert launch._lookback_window(64, 128, 4) == 4 * 32 * words // 128
    assert launch._lookback_window(64, 4096, 1) == 2
    for k in (1, 8, 64, 4096):
        for bn, warps in ((1, 1), (64, 2), (128, 1), (256, 2)):
            w = launch._lookback_window(k, bn, warps)
            assert w >= 2 and (w * bn <= 32 * warps * words or w == 2)


@pytest.mark.parametrize("strategy, fold", [("row_block", None), ("chunked", "fold"),
                                             ("chunked", "carry_pass"), ("lookback", None)])
def test_launcher_passes_addresses_and_keeps_the_tensors_for_tritons_own_path(
        monkeypatch, strategy, fold):
    """launch() hands the compiled launcher ints for every pointer argument (no data_ptr() or
    driver query per argument there) and records which tensor each one is, so the first launch,
    through Triton's JIT, specialises on the tensors themselves."""
    from rlscan.kernels import launch
    from rlscan.kernels.scan import chunk_carry_kernel, fill_kernel, fused_scan_kernel
    calls = []
    monkeypatch.setattr(launch, "_run", lambda kernel, grid, args, objs, consts, options, spec,
                        names=launch._CONSTEXPRS: calls.append((kernel, args, objs, consts)))
    if fold == "carry_pass":
        monkeypatch.setattr(launch, "_FOLD_PER_THREAD", 0)
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")
    kw, _ = make("vtrace", (3, 70), seed=1)
    with force_config(strategy=strategy, BLOCK_N=2, BLOCK_T=16, num_warps=1, CHUNKS_PER_SPAN=1):
        call("vtrace", kw, "cpu")
    kernels = {"fold": [fused_scan_kernel] * 2,
               "carry_pass": [fused_scan_kernel, chunk_carry_kernel, fused_scan_kernel]}
    assert [k for k, *_ in calls] == kernels.get(fold, [fused_scan_kernel])
    if strategy == "lookback":      # a capture with no workspace ready: the fill, then the scan
        calls.clear()
        monkeypatch.setattr(lookback_state, "acquire", lambda *a: None)
        with force_config(strategy=strategy, BLOCK_N=2, BLOCK_T=16, num_warps=1,
                          CHUNKS_PER_SPAN=1):
            call("vtrace", kw, "cpu")
        assert [k for k, *_ in calls] == [fill_kernel, fused_scan_kernel]
    pointers = {"P0", "P1", "TERM", "TRUNC", "NV", "X1", "X2", "G", "L", "ROW0", "ROW1", "O0",
                "O1", "WA", "WB", "WC", "W"}
    for kernel, args, objs, consts in calls:
        names = kernel.arg_names
        assert len(args) + len(consts) == len(names)
        assert not any(isinstance(a, torch.Tensor) for a in args)
        assert sorted(i for i, _ in objs) == [i for i, n in enumerate(names) if n in pointers]
        for i, x in objs:
            assert isinstance(x, torch.Tensor) and args[i] == x.data_ptr()
        assert all(isinstance(a, torch.Tensor) for a in
                   [launch._tensors(args, objs)[i] for i, _ in objs])


@pytest.mark.parametrize("first", [True, False], ids=["first-dependent", "first-plain"])
@pytest.mark.parametrize("strategy, fold", [("row_block", None), ("chunked", "fold"),
                                             ("chunked", "carry_pass"), ("lookback", None)])
def test_launches_are_programmatic_dependent_ones_where_the_gpu_has_them(monkeypatch, strategy,
                                                                        fold, first):
    """Where the GPU has programmatic dependent launch, every launch of a call is one
    (launch_pdl, PDL constexpr 1): the first waits inside for the kernels before it before it
    touches memory, chunked's first phase and the fill then let the next launch start, and each
    later launch waits before it reads the launch before. With ``_PDL_FIRST`` off the first
    launch is a plain one (PDL constexpr 0 where it is the call's only launch). Without the
    capability nothing is dependent."""
    from rlscan.kernels.scan import fused_scan_kernel
    calls = []
    monkeypatch.setattr(launch, "_run", lambda kernel, grid, args, objs, consts, options, spec,
                        names=launch._CONSTEXPRS:
                        calls.append((kernel, dict(zip(names, consts)), options)))
    if fold == "carry_pass":
        monkeypatch.setattr(launch, "_FOLD_PER_THREAD", 0)
    monkeypatch.setattr(launch, "_PDL_FIRST", first)
    monkeypatch.setenv("RLSCAN_INTERPRET", "1")
    kw, _ = make("gae", (3, 70), seed=1)
    for capable in (True, False):
        calls.clear()
        monkeypatch.setattr(launch, "_pdl_capable", lambda device, c=capable: c)
        with force_config(strategy=strategy, BLOCK_N=2, BLOCK_T=16, num_warps=1,
                          CHUNKS_PER_SPAN=1):
            call("gae", kw, "cpu")
        dependent = [options[3] for _, _, options in calls]
        assert dependent == [capable and first] + [capable] * (len(calls) - 1)
        pdl = [consts["PDL"] for _, consts, _ in calls]
        # (a look-back call on its stream's workspace is one launch: no fill to wait for)
        alone = strategy in ("row_block", "lookback")
        assert pdl == ([int(capable and first)] if alone else [int(capable)] * len(calls))
        assert all(launch._options(o).get("launch_pdl", False) == d
                   for (_, _, o), d in zip(calls, dependent))
        if strategy == "chunked":
            # the fix-up issues its first chunk's loads before it reads the carry
            assert calls[-1][0] is fused_scan_kernel and calls[-1][1]["PREFETCH"] == 1


def test_interpreter_cpu_tensors_and_older_tritons_never_launch_dependent(monkeypatch):
    """The interpreter has no grid-dependency instructions, CPU tensors no launches, and a
    Triton without the launch option or the in-kernel wait no programmatic dependent launch."""
    assert launch._pdl_capable(torch.device("cpu")) is False
    import triton.language.extra.cuda as cuda
    assert launch._triton_has_pdl() == hasattr(cuda, "gdc_wait")
    monkeypatch.delattr(cuda, "gdc_wait", raising=False)
    assert launch._triton_has_pdl() is False


@pytest.mark.gpu
def test_time_major_rows_of_more_than_65535_spans_match_the_time_last_call():
    """An untuned time-major call whose heuristic spans (32x8 tiles, 4 chunks a span) would
    number more than a launch grid's 65535 along y walks longer spans and matches the same
    rows time-last (whose 1x1024 spans stay within the limit)."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from rlscan.kernels.heuristic import heuristic_config
    N, T = 32, 32 * 65535 + 4096
    cfg = heuristic_config(N, T, time_major=True)
    assert -(-T // (cfg["BLOCK_T"] * cfg["CHUNKS_PER_SPAN"])) > 65535, cfg
    gen = torch.Generator(device="cuda").manual_seed(53)
    r = torch.randn(T, N, device="cuda", generator=gen)
    done = torch.rand(T, N, device="cuda", generator=gen) < 0.001
    major = rlscan.discounted_returns(r, done, gamma=0.999, time_dim=0)
    last = rlscan.discounted_returns(r.t().contiguous(), done.t().contiguous(), gamma=0.999)
    torch.testing.assert_close(major.t(), last, rtol=1e-4, atol=1e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("est", ["gae", "vtrace", "episodic_cumsum"])
def test_cached_launch_respecialises_for_misaligned_and_strided_views(est):
    """The launcher reuses a compiled kernel by Triton's specialisation key (launch._run): after
    an aligned, contiguous call, views that start 4 bytes off alignment and have an odd row
    stride must get their own kernel and still match the reference."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    kw, rk = make(est, (6, 48), seed=5)
    expected = reference(est, rk)
    assert_matches(call(est, kw, "cuda"), expected, T=48, scale=scale_of(est, rk))

    def shifted(x):
        if not isinstance(x, torch.Tensor) or x.dim() != 2:
            return x.cuda() if isinstance(x, torch.Tensor) else x
        big = torch.zeros(x.shape[0], x.shape[1] + 1, dtype=x.dtype, device="cuda")
        big[:, 1:] = x.cuda()
        return big[:, 1:]                       # data_ptr 4 bytes past alignment, stride 49
    views = {k: shifted(v) for k, v in kw.items()}
    primary = views["inputs" if "inputs" in views else "rewards"]
    assert primary.data_ptr() % 16 != 0 and primary.stride(0) == 49
    assert_matches(call(est, views), expected, T=48, scale=scale_of(est, rk))


@pytest.mark.gpu
@pytest.mark.parametrize("T", [1500, 3000, 5000])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("est", ["gae", "vtrace", "episodic_cumsum"])
def test_one_long_row_in_a_few_wide_spans_matches_reference(est, dtype, T):
    """One row split into 2-5 spans of 1024-step chunks (the default for a single long row):
    the fix-up pass folds a handful of span summaries in a tile as wide as its chunk (triton
    3.6 aborted compiling a 2-wide fold beside 1024-wide bf16 chunks). bf16 inputs must give
    the float32 results of the rounded inputs."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    kw, _ = make(est, (1, T), seed=T)
    inputs, rounded = per_step_in(dtype, kw)
    with force_config(strategy="chunked", BLOCK_N=1, BLOCK_T=1024, num_warps=4,
                      CHUNKS_PER_SPAN=1):
        out = call(est, inputs, "cuda")
    assert_matches(out, reference(est, rounded), T=T, scale=scale_of(est, rounded))


@pytest.mark.gpu
@pytest.mark.parametrize("N, T, gamma, lmbda, walk", [
    (1, 1 << 20, 0.99, 0.95, True), (1, 1 << 20, 1.0, 0.95, True), (1, 1 << 20, 1.0, 1.0, False),
    (8, 1 << 18, 0.99, 0.95, True), (8, 1 << 18, 0.99, 0.96, False)])
def test_a_long_row_without_episode_ends_runs_what_its_coefficients_allow(N, T, gamma, lmbda,
                                                                          walk):
    """GAE on rows of 2**20 or 2**18 steps with no episode end, the shipped DB's config
    (nothing forced): where γ·λ bounds every look-back walk to its first window, the entry's
    bounded_walk look-back runs, else its chunked winner (which_config reports it, given the
    coefficients); either matches the reference. At 8 x 2**18 the bounded config's spans are
    256 steps: γ·λ = 0.9405 ends its walks within 8 spans (since the thirty-first session's
    slack of one span), 0.9504 does not."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    kw, rk = make("gae", (N, T), seed=4, gamma=gamma, lmbda=lmbda)
    for flag in ("terminated", "truncated"):
        kw[flag] = rk[flag] = torch.zeros_like(kw[flag])
    choice = rlscan.which_config("gae", kw["rewards"].cuda(), gamma=gamma, lmbda=lmbda)
    if choice.source.startswith("db:") and choice.gpu == "nvidia-h200":   # the shipped DB
        assert (choice.config["strategy"] == "lookback") is walk, choice
    assert_matches(call("gae", kw, "cuda"), reference("gae", rk), T=T, scale=scale_of("gae", rk))


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(64, 300), (2, 1 << 17)], ids=["row_block", "long_rows"])
def test_a_call_on_another_gpu_than_the_current_one_runs_on_its_inputs_gpu(shape):
    """Triton launches on the current device; inputs on cuda:1 while cuda:0 is current must
    still be solved on cuda:1 (launch.launch switches the device), call after call (the first
    call records, later ones take the whole path: a plan replays only on its own device)."""
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")
    kw, rk = make("gae", shape, seed=8)
    expected = reference("gae", rk)
    with torch.cuda.device(0):
        for _ in range(3):
            out = call("gae", kw, "cuda:1")
            assert all(o.device == torch.device("cuda:1") for o in out)
            assert_matches(out, expected, T=shape[1], scale=scale_of("gae", rk))
    with torch.cuda.device(1):   # and from its own device, after the calls from the other
        assert_matches(call("gae", kw, "cuda:1"), expected, T=shape[1], scale=scale_of("gae", rk))


@pytest.mark.gpu
@pytest.mark.parametrize("tile", [(256, 1), (1024, 4), (2048, 8)], ids=lambda t: f"{t[0]}w{t[1]}")
@pytest.mark.parametrize("est", ["gae", "discounted_returns", "episodic_cumsum"])
def test_persistent_lookback_equals_the_filled_one_call_after_call_on_two_streams(est, tile):
    """Look-back on the streams' persistent workspaces (PHASE 4) gives bitwise what look-back on
    a freshly filled workspace (PHASE 3) gives, for 24 calls alternating two streams without
    synchronising between them and two sizes, long rows with and without episode ends (every
    span walks back to the row's start): no summary of another call is ever folded. With 4 and
    8 warps a program every warp must pick the same half: a barrier orders their reads of the
    program's slot before its stores (a race without it is the suspected cause of the tuner
    stalling at 512x4096, where such tiles are candidates; twentieth session)."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    bt, warps = tile
    cfg = dict(strategy="lookback", BLOCK_N=1, BLOCK_T=bt, num_warps=warps, CHUNKS_PER_SPAN=1,
               TWO_LEVEL=est != "episodic_cumsum" and warps == 1)
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    calls = []
    for i in range(24):
        kw, _ = make(est, (3, bt * 60 + 7) if i % 3 else (64, bt * 8), seed=100 + i)
        if i % 4 == 1:
            for flag in ("terminated", "truncated", "dones"):
                if flag in kw:
                    kw[flag] = torch.zeros_like(kw[flag])
        calls.append({k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in kw.items()})
    torch.cuda.synchronize()
    with force_config(**cfg):
        persistent = []
        for i, kw in enumerate(calls):
            with torch.cuda.stream(streams[i % 2]):
                persistent.append(call(est, kw, "cuda"))
        torch.cuda.synchronize()
        with pytest.MonkeyPatch.context() as m:
            m.setattr(lookback_state, "acquire", lambda *a: None)
            filled = [call(est, kw, "cuda") for kw in calls]
    for p, f in zip(persistent, filled):
        for a, b in zip(p if isinstance(p, tuple) else (p,), f if isinstance(f, tuple) else (f,)):
            torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.gpu
@pytest.mark.parametrize("strategy", [None, "chunked", "lookback", "lookback-filled"])
def test_calls_capture_in_a_cuda_graph_and_replay_on_new_inputs(strategy, monkeypatch):
    """Every launch path (row block; chunked: two launches and a workspace; look-back: the
    captured call's persistent workspace, or with none ready a filled one) records into a CUDA
    graph, and every replay after new inputs are copied into the captured buffers gives what an
    eager call gives on them; two graphs replayed in turn, and eager calls between, too."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    cfg = dict(strategy=strategy.split("-")[0], BLOCK_N=2, BLOCK_T=64, num_warps=2,
               CHUNKS_PER_SPAN=1) if strategy else None
    kw, _ = make("gae", (6, 300), seed=1)
    static = {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    with (force_config(**cfg) if cfg else contextlib.nullcontext()):
        rlscan.gae(**static)                     # compile outside the capture
        torch.cuda.synchronize()
        if strategy == "lookback-filled":       # no spare: the capture fills its own
            monkeypatch.setattr(lookback_state, "_spares", {})
        graphs, outs = [], []
        for _ in range(2):
            graphs.append(torch.cuda.CUDAGraph())
            with torch.cuda.graph(graphs[-1]):
                outs.append(rlscan.gae(**static))
        for seed in range(2, 7):
            fresh, _ = make("gae", (6, 300), seed=seed)
            for k, v in fresh.items():
                if isinstance(v, torch.Tensor):
                    static[k].copy_(v)
            adv, ret = outs[seed % 2]
            graphs[seed % 2].replay()
            expected = rlscan.gae(**static)
            torch.testing.assert_close(adv, expected.advantages, rtol=0, atol=0)
            torch.testing.assert_close(ret, expected.returns, rtol=0, atol=0)


@pytest.mark.gpu
@pytest.mark.parametrize("strategy", ["row_block", "chunked", "chunked-carry", "lookback",
                                      "lookback-filled"])
def test_back_to_back_calls_read_what_the_kernel_before_them_wrote(strategy, monkeypatch):
    """A call's first launch is a programmatic dependent one (sm_90+): it may launch while the
    kernel before it still runs, and must read nothing before that kernel is done. Chains of
    calls, each one's output the next one's input, right after a torch kernel that writes the
    first input, with no synchronisation between: bitwise what the same chain gives with the
    stream synchronised after every kernel."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    cfg = dict(strategy=strategy.split("-")[0], BLOCK_N=1, BLOCK_T=256, num_warps=1,
               CHUNKS_PER_SPAN=1)
    if strategy == "chunked-carry":
        monkeypatch.setattr(launch, "_FOLD_PER_THREAD", 0)
    if strategy == "lookback-filled":
        monkeypatch.setattr(lookback_state, "acquire", lambda *a: None)
    kw, _ = make("gae", (8, 256 * 24 + 5), seed=9)
    kw = {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    base = kw["rewards"].clone()

    def chain(sync):
        outs = []
        for i in range(6):
            kw["rewards"] = base * (1.0 + 0.25 * i)      # a torch kernel writes the input
            if sync:
                torch.cuda.synchronize()
            for _ in range(3):                           # each output the next input
                adv, _ = rlscan.gae(**kw)
                if sync:
                    torch.cuda.synchronize()
                kw["rewards"] = adv
            outs.append(adv)
        torch.cuda.synchronize()
        return outs

    with force_config(**cfg):
        rlscan.gae(**kw)                                 # compile first
        synced = chain(True)
        for _ in range(3):
            for a, b in zip(chain(False), synced):
                torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("strategy", ["default", "chunked", "lookback"])
def test_linear_scan_generic_recurrence_both_directions(backend, device, strategy):
    gen = torch.Generator().manual_seed(3)
    a = torch.rand(4, 50, generator=gen) * 1.2 - 0.1     # non-constant, some negative
    b = torch.randn(4, 50, generator=gen)
    init = torch.randn(4, generator=gen)
    cfg = (dict(strategy=strategy, BLOCK_N=2, BLOCK_T=16, CHUNKS_PER_SPAN=1, num_warps=1)
           if strategy != "default" else None)
    for reverse in (False, True):
        if cfg and backend != "torch":
            with force_config(**cfg):
                out = rlscan.linear_scan(a.to(device), b.to(device), reverse=reverse,
                                         init=init.to(device))
        else:
            out = rlscan.linear_scan(a.to(device), b.to(device), reverse=reverse,
                                     init=init.to(device))
        expected = cases.ref.linear_scan(a.double().numpy(), b.double().numpy(),
                                         reverse=reverse, init=init.double().numpy())
        m = cases.ref.magnitude(a.double().numpy(), b.double().numpy(), reverse=reverse,
                                init=init.double().numpy())
        assert_matches(out, expected, T=50, scale=m)


# ---------------------------------------------------------------- layouts
@pytest.mark.parametrize("est", ESTIMATORS)
def test_time_major_equals_time_last(backend, device, est):
    kw, _ = make(est, (6, 29), seed=11)
    out_last = cases.as_tuple(call(est, kw, device))
    major = {k: (v.t().contiguous() if isinstance(v, torch.Tensor) and v.dim() == 2 else v)
             for k, v in kw.items()}
    out_major = cases.as_tuple(call(est, major, device, time_dim=0))
    for a, b in zip(out_last, out_major):
        assert b.shape == (29, 6) and b.stride() == (6, 1)   # the caller's layout is kept
        torch.testing.assert_close(a, b.t(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("strategy, block_n, block_t, per_span, lane_rows", [
    ("row_block", 4, 16, None, False), ("row_block", 128, 4, None, False),
    ("chunked", 4, 16, 1, False), ("chunked", 128, 4, 3, False), ("lookback", 4, 16, 1, False),
    ("lookback", 128, 4, 1, False), ("row_block", 32, 8, None, True),
    ("row_block", 32, 32, None, True), ("chunked", 32, 4, 3, True), ("chunked", 8, 32, 2, False),
    ("chunked", 8, 16, 4, False)])
@pytest.mark.parametrize("est", BACKWARD)
def test_time_major_backward_scans_over_descending_lanes_match_reference(
        backend, device, est, strategy, block_n, block_t, per_span, lane_rows, monkeypatch):
    """Time-major [T, N] backward scans load each chunk in descending time and scan it forward
    (no lane reversals): results match the reference across chunk and span edges with dones on
    chunk edges and a partial row block, V-trace's next lane by gather where the tile keeps a
    row's steps in one thread with 4 rows a thread (128 rows a warp) and by the second
    composition elsewhere (also in tiles of one row a lane), and the launcher really takes the
    descending path (for time-major buffers only) and the kernel of one row a lane for
    ``LANE_ROWS`` tiles (with no contiguity declared); time-last calls ignore ``LANE_ROWS``."""
    if backend == "torch":
        pytest.skip("the torch path has no chunks")
    taken = record_constexprs(monkeypatch, "DESCEND", "NEXT_GATHER", "CONTIG_ROWS", "kernel")
    shape = (5, 3 * block_t * (per_span or 1) + 1)
    kw, rk = make(est, shape, seed=31 + block_t, gamma=0.999, lmbda=1.0)
    kw["terminated"][1:, block_t - 1] = True
    kw["truncated"][2:, 2 * block_t] = True
    major = {k: (v.t().contiguous() if isinstance(v, torch.Tensor) and v.dim() == 2 else v)
             for k, v in kw.items()}
    config = dict(strategy=strategy, BLOCK_N=block_n, BLOCK_T=block_t, num_warps=1,
                  CHUNKS_PER_SPAN=per_span, LANE_ROWS=lane_rows)
    with force_config(**config):
        out = call(est, major, device, time_dim=0)
        out_last = call(est, kw, device)
    assert_matches(tuple(o.t() for o in cases.as_tuple(out)), reference(est, rk), T=shape[-1],
                   scale=scale_of(est, rk))
    gather = est == "vtrace" and block_n >= 128 and not lane_rows
    kernel = launch._lane_rows_kernel if lane_rows else launch.fused_scan_kernel
    assert taken[0][:2] == (1, int(gather)) and taken[-1][0] == 0, taken
    assert taken[0][3] is kernel and (taken[0][2] == 0) == lane_rows, taken
    assert taken[-1][3] is launch.fused_scan_kernel, taken
    for a, b in zip(cases.as_tuple(out_last), cases.as_tuple(out)):
        torch.testing.assert_close(a, b.t(), rtol=1e-5, atol=1e-5)


def test_forward_scans_keep_ascending_lanes_in_time_major_buffers(backend, device,
                                                                  monkeypatch):
    """Descending lanes are for backward scans only: time-major eligibility traces and prefix
    sums scan their ascending lanes forward (and match the reference), in tiles of 4 rows a
    thread and of one row a lane."""
    if backend == "torch":
        pytest.skip("the torch path has no chunks")
    taken = record_constexprs(monkeypatch, "DESCEND")
    for est in ("eligibility_traces", "episodic_cumsum"):
        kw, rk = make(est, (5, 37), seed=37)
        major = {k: (v.t().contiguous() if isinstance(v, torch.Tensor) and v.dim() == 2 else v)
                 for k, v in kw.items()}
        for cfg in (dict(BLOCK_N=128, BLOCK_T=4), dict(BLOCK_N=32, BLOCK_T=8, LANE_ROWS=True)):
            with force_config(strategy="row_block", num_warps=1, **cfg):
                out = call(est, major, device, time_dim=0)
            assert_matches(out.t(), reference(est, rk), T=37, scale=scale_of(est, rk))
    assert taken == [0, 0, 0, 0]


def _untuned_calls_match_reference(backend, device, est, monkeypatch, *, gpu_shapes, cpu_shape,
                                   forced, expected, seed, time_major=False,
                                   dtype=torch.float32):
    """A heuristic rule's test: on the GPU each of ``gpu_shapes`` with no DB entry, its
    ``which_config`` being ``expected(N, T)`` (the heuristic's choice); in the interpreter
    (whose heuristic keeps small tiles) ``cpu_shape`` under each config of ``forced``. Every
    call, its per-step inputs in ``dtype``, matches the float64 reference on those inputs."""
    if backend == "torch":
        pytest.skip("the torch path has no tiles")
    if backend == "cuda":
        monkeypatch.setattr(tuning, "_cache", {})
        monkeypatch.setattr(tuning, "_cache_above", {})
        monkeypatch.setattr(tuning, "_resolve", lambda pb, key: None)
        monkeypatch.setattr(tuning, "_lookup", lambda *key: None)    # and the buckets above
        runs = [(shape, None) for shape in gpu_shapes]
    else:
        runs = [(cpu_shape, cfg) for cfg in forced]
    dim = 0 if time_major else -1
    for (N, T), cfg in runs:
        kw, rk = make(est, (N, T), seed=seed)
        if dtype != torch.float32:
            kw, rk = per_step_in(dtype, kw)
        if time_major:
            kw = {k: (v.t().contiguous() if isinstance(v, torch.Tensor) and v.dim() == 2 else v)
                  for k, v in kw.items()}
        with (force_config(**cfg) if cfg else contextlib.nullcontext()):
            if cfg is None:
                x = kw["inputs" if "inputs" in kw else "rewards"].to(device)
                assert tuning.which_config(est, x, time_dim=dim).config == dict(
                    expected(N, T), num_stages=1), (N, T)
            out = call(est, kw, device, time_dim=dim)
        if time_major:
            out = tuple(o.t() for o in cases.as_tuple(out))
        assert_matches(out, reference(est, rk), T=T, scale=scale_of(est, rk))


_MID_TIME_MAJOR = [dict(strategy="row_block", BLOCK_N=16, BLOCK_T=64, num_warps=8,
                        SCALAR_LOADS=True),
                   dict(strategy="chunked", BLOCK_N=32, BLOCK_T=8, num_warps=1,
                        CHUNKS_PER_SPAN=8, LANE_ROWS=True),
                   dict(strategy="row_block", BLOCK_N=32, BLOCK_T=64, num_warps=4)]


def _mid_time_major_choice(est, N, T):
    if N < 1024:
        return _WALK_8                                     # 560-1023 rows x 384-1023 steps
    if T >= 1024:
        return _WALK_8 if est == "retrace" else _MID_TIME_MAJOR[1]   # fp32 Retrace walks
    if N >= 8192 and est in ("discounted_returns", "eligibility_traces"):
        # fp32, the lightest kernels: 32x64/w4 in one wave of 3 an SM, then lane rows
        return _MID_TIME_MAJOR[2] if N <= 3 * 32 * 132 else _MANY_ROWS_LANES
    return _MID_TIME_MAJOR[0]


@pytest.mark.parametrize("est", ESTIMATORS)
def test_untuned_mid_sized_time_major_calls_match_reference(backend, device, est, monkeypatch):
    """The heuristic's configs for untuned [T, N] buffers of 560-16383 rows below 2048 steps
    (heuristic.heuristic_config: 16x64/w8 row blocks whole, or spans of 8 chunks of 32x8
    one-row-a-lane tiles; the row blocks with ``SCALAR_LOADS``; 8x128/w8 row blocks below 1024
    rows; 32x64/w4 row blocks for fp32 discounted returns and traces from 8192 rows while they
    fit one wave, then 32x16/w1 lane rows): in the interpreter forced on 37 rows x 100 steps
    (ragged row tiles, a ragged last chunk and span); on the GPU the heuristic itself, with no
    DB entry (fp32), at 1030x300, 1100x1030 (Retrace: 8x128/w8), 700x700, 9000x300 and
    13000x200."""
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch,
        gpu_shapes=[(1030, 300), (1100, 1030), (700, 700), (9000, 300), (13000, 200)],
        cpu_shape=(37, 100), forced=_MID_TIME_MAJOR, seed=29, time_major=True,
        expected=lambda N, T: _mid_time_major_choice(est, N, T))


@pytest.mark.parametrize("est", ESTIMATORS)
def test_untuned_bf16_time_major_calls_of_hundreds_of_rows_match_reference(
        backend, device, est, monkeypatch):
    """The heuristic's configs for untuned bf16 [T, N] buffers of 640-1023 rows x 384-1023
    steps (8x128/w8 row blocks below 768 steps, spans of 8 chunks of 32x8 one-row-a-lane tiles
    from there): in the interpreter forced on 37 rows x 100 steps; on the GPU the heuristic
    itself, with no DB entry, at 700x500 and 700x900. The reference runs on the bf16-rounded
    inputs."""
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch, gpu_shapes=[(700, 500), (700, 900)],
        cpu_shape=(37, 100), forced=[_WALK_8, _MID_TIME_MAJOR[1]], seed=71, time_major=True,
        dtype=torch.bfloat16, expected=lambda N, T: _WALK_8 if T < 768 else _MID_TIME_MAJOR[1])


_MANY_ROWS_LANES = dict(strategy="row_block", BLOCK_N=32, BLOCK_T=16, num_warps=1,
                        LANE_ROWS=True)
_TENS_OF_ROWS_SPANS = dict(strategy="chunked", BLOCK_N=32, BLOCK_T=8, num_warps=1,
                           CHUNKS_PER_SPAN=4)


@pytest.mark.parametrize("est", ESTIMATORS)
def test_untuned_time_major_calls_of_16k_rows_or_tens_of_long_rows_match_reference(
        backend, device, est, monkeypatch):
    """The heuristic's configs for untuned [T, N] buffers of 16384-32767 rows x 128-1023 steps
    (32x16/w1 row blocks of one row a lane) and of 32-127 rows from 4096 steps (spans of 4
    chunks of 32x8/w1): in the interpreter forced on 37 rows x 90 steps (a ragged row tile,
    last chunk and last span); on the GPU the heuristic itself, with no DB entry, at
    17000x200, 40x33000 and 100x5000."""
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch, gpu_shapes=[(17000, 200), (40, 33000), (100, 5000)],
        cpu_shape=(37, 90), forced=[_MANY_ROWS_LANES, _TENS_OF_ROWS_SPANS], seed=43,
        time_major=True,
        expected=lambda N, T: _MANY_ROWS_LANES if N > 128 else _TENS_OF_ROWS_SPANS)


def _split_rows(s):
    return dict(strategy="row_block", BLOCK_N=s, BLOCK_T=128, num_warps=s, SPLIT=s,
                TWO_LEVEL=True)


@pytest.mark.parametrize("est", ESTIMATORS)
def test_untuned_long_time_last_rows_match_reference(backend, device, est, monkeypatch):
    """The heuristic's configs for untuned time-last calls of 128-1023 rows from 2048 steps, and
    of fp32 128-511 rows from 1024 (a row on 16 warps below 512 rows from 4096 steps, else on 8;
    two-level where backward): in the interpreter forced on 3 rows x 1100 steps (a ragged last
    chunk, walks of several chunks); on the GPU the heuristic itself, with no DB entry (fp32),
    at 200x4100, 600x2100 and 300x1500 (below 512 rows 8 warps from 1024 steps, 16 from 4096)."""
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch, gpu_shapes=[(200, 4100), (600, 2100), (300, 1500)],
        cpu_shape=(3, 1100), forced=[_split_rows(16), _split_rows(8)], seed=31,
        expected=lambda N, T: _split_rows(16 if N < 512 and T >= 4096 else 8))


@pytest.mark.parametrize("est", ESTIMATORS)
def test_untuned_bf16_long_time_last_rows_match_reference(backend, device, est, monkeypatch):
    """The same split rows for bf16 time-last calls of 128-511 rows from 1024 steps (8 warps a
    row below 4096 steps, 16 from there): in the interpreter 8 warps forced on 3 rows x 1100
    steps; on the GPU the heuristic itself, with no DB entry, at 300x1500, 200x3000 and
    200x4100. The reference runs on the bf16-rounded inputs."""
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch, gpu_shapes=[(300, 1500), (200, 3000), (200, 4100)],
        cpu_shape=(3, 1100), forced=[_split_rows(8)], seed=73, dtype=torch.bfloat16,
        expected=lambda N, T: _split_rows(16 if T >= 4096 else 8))


_WIDE_ROWS = dict(strategy="row_block", BLOCK_N=1, BLOCK_T=512, num_warps=4)
_ROWS_ON_4_WARPS = dict(strategy="row_block", BLOCK_N=4, BLOCK_T=256, num_warps=4, SPLIT=4,
                        TWO_LEVEL=True)


@pytest.mark.parametrize("est", ESTIMATORS)
def test_untuned_fp32_time_last_calls_of_1024_long_rows_match_reference(
        backend, device, est, monkeypatch):
    """The heuristic's configs for untuned fp32 time-last calls of 1024+ rows from 2048 steps:
    GAE's, V-trace's and Retrace's rows each on 4 warps, two-level, the other estimators'
    1x512/w4 row blocks: in the interpreter the split tile forced on 3 rows x 600
    steps (a ragged row tile, a ragged last chunk; every estimator); on the GPU the heuristic
    itself, with no DB entry, at 1030x2100, and at 1030x2101, an odd length, where the split
    tile gives way to 1x512/w4 (``configs.for_odd_rows``)."""
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch, gpu_shapes=[(1030, 2100), (1030, 2101)],
        cpu_shape=(3, 600), forced=[_ROWS_ON_4_WARPS], seed=53,
        expected=lambda N, T: _ROWS_ON_4_WARPS if est in ("gae", "vtrace", "retrace")
        and T % 2 == 0 else _WIDE_ROWS)


_SPANS_OF_4 = dict(strategy="chunked", BLOCK_N=2, BLOCK_T=128, num_warps=2, CHUNKS_PER_SPAN=4,
                   TWO_LEVEL=True)


@pytest.mark.parametrize("est", ESTIMATORS)
def test_untuned_time_last_calls_once_split_into_one_chunk_spans_match_reference(
        backend, device, est, monkeypatch):
    """The heuristic's configs for untuned time-last calls that used to run one-chunk spans:
    1x512/w4 row blocks for 64-2046 rows below 2048 steps, spans of 4 (or 2) chunks of 2x128
    for fewer or longer rows: in the interpreter forced on 3 rows x 1100 steps (a ragged last
    chunk and span); on the GPU the heuristic itself, with no DB entry, at 100x1000,
    1500x600, 32x40000 (5008 chunks of 2x128: spans of 4), 16x40000 (2504: spans of 2) and
    8x40000 (1252: spans of 2); fp32 GAE and discounted returns take look-back spans at the
    last three (the next test)."""
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch, cpu_shape=(3, 1100), forced=[_WIDE_ROWS, _SPANS_OF_4],
        gpu_shapes=[(100, 1000), (1500, 600), (32, 40000), (16, 40000), (8, 40000)], seed=37,
        expected=lambda N, T: _WIDE_ROWS if T < 2048 else _tens_of_long_rows_look_back(
            est, T) or dict(_SPANS_OF_4, CHUNKS_PER_SPAN=4 if N > 16 else 2))


_LOOK_BACK_1X256 = dict(strategy="lookback", BLOCK_N=1, BLOCK_T=256, num_warps=1,
                        CHUNKS_PER_SPAN=1)


def _tens_of_long_rows_look_back(est, T):
    """The heuristic's look-back config for 8-63 untuned fp32 time-last rows of 12000-65536
    steps (None for the estimators that keep chunked spans), as it runs at T's alignment."""
    if est not in ("gae", "discounted_returns"):
        return None
    if T % 2:
        return _LOOK_BACK_1X256                              # one level, uncapped
    return dict(_LOOK_BACK_1X256, TWO_LEVEL=True, **({"maxnreg": 64} if est == "gae" else {}))


@pytest.mark.parametrize("est", ["gae", "discounted_returns"])
def test_untuned_tens_of_long_fp32_rows_run_look_back_spans_that_match_reference(
        backend, device, est, monkeypatch):
    """fp32 GAE and discounted returns of 8-63 untuned time-last rows of 12000-65536 steps run
    look-back spans of 1x256/w1 (two-level, GAE's capped at 64 registers; at an odd length one
    level, uncapped): in the interpreter both forms forced on 3 rows x 1100 steps (5 spans a
    row, the last ragged); on the GPU the heuristic itself, with no DB entry, at 8x40000,
    40x12000 and 12x30001 (odd)."""
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch, cpu_shape=(3, 1100),
        forced=[_tens_of_long_rows_look_back(est, 1100), _LOOK_BACK_1X256],
        gpu_shapes=[(8, 40000), (40, 12000), (12, 30001)], seed=83,
        expected=lambda N, T: _tens_of_long_rows_look_back(est, T))


# (N, T, the bucket above whose entry runs): shapes whose own bucket neither shipped DB (the
# H200's, the H100's) tunes, within 1/32 of a bucket both tune (tuning._buckets_above)
_BELOW_TUNED = [(4096, 127, (4096, 128)), (4095, 128, (4096, 128)), (4095, 511, (4096, 512)),
                (64, 511, (64, 512)), (32, 32767, (32, 32768))]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("est", ESTIMATORS)
def test_untuned_shapes_just_below_a_tuned_bucket_run_its_entry_and_match_reference(
        backend, device, est, dtype, monkeypatch):
    """Time-last calls one row or one step short of a tuned bucket (T - 1 tokens of rewards,
    odd lengths among them) run that bucket's entry, as which_config reports, and match the
    float64 reference on their per-step inputs: on the GPU with its shipped DB at
    ``_BELOW_TUNED``; in the interpreter at 64x511 (fp32) and 63x512 (bf16), CPU tensors
    looking up the shipped H200 DB (its 64x512 entry)."""
    if backend == "torch":
        pytest.skip("the torch path has no tiles")
    runs = _BELOW_TUNED
    if backend == "interpret":
        monkeypatch.setattr(tuning, "_device_slug", lambda d: "nvidia-h200")
        for memo in ("_db_slugs", "_cache", "_cache_above"):
            monkeypatch.setattr(tuning, memo, {})
        # one shape a dtype: the interpreter takes ~3.5 s a call here
        runs = [(64, 511, (64, 512)) if dtype == torch.float32 else (63, 512, (64, 512))]
    for N, T, above in runs:
        kw, rk = make(est, (N, T), seed=89)
        if dtype != torch.float32:
            kw, rk = per_step_in(dtype, kw)
        x = kw["inputs" if "inputs" in kw else "rewards"].to(device)
        got = tuning.which_config(est, x)
        assert got.source.startswith(("db:", "overlay:")), (N, T, got)
        assert (got.rows[0], got.steps[0]) == above, (N, T, got)
        out = call(est, kw, device)
        assert_matches(out, reference(est, rk), T=T, scale=scale_of(est, rk))


_WALK_8 = dict(strategy="row_block", BLOCK_N=8, BLOCK_T=128, num_warps=8)


@pytest.mark.parametrize("est", ["gae", "lambda_returns", "vtrace", "retrace"])
def test_untuned_fp32_time_major_rows_of_2048_steps_walk_in_row_blocks_and_match_reference(
        backend, device, est, monkeypatch):
    """The heuristic's row blocks for untuned fp32 [T, N] buffers of 2048-8192 rows x
    2048-4095 steps of the estimators whose steps load the most (8x128/w8 while its programs
    fit in one wave, then 16x64/w8): in the interpreter 8x128/w8 forced on 37 rows x 300 steps
    (a ragged row tile, a ragged last chunk); on the GPU the heuristic itself, with no DB
    entry, at 2100x2100 (8x128/w8 for each) and 4100x2050 (16x64/w8 for each)."""
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch, gpu_shapes=[(2100, 2100), (4100, 2050)],
        cpu_shape=(37, 300), forced=[_WALK_8], seed=59, time_major=True,
        expected=lambda N, T: _WALK_8 if N < 4096 else dict(
            strategy="row_block", BLOCK_N=16, BLOCK_T=64, num_warps=8, SCALAR_LOADS=True))


@pytest.mark.parametrize("est", ESTIMATORS)
def test_untuned_fp32_time_major_calls_of_thousands_of_rows_of_1024_steps_walk_in_row_blocks(
        backend, device, est, monkeypatch):
    """On the GPU, the heuristic's row blocks for untuned fp32 [T, N] buffers below 4096 rows
    of 1024-2047 steps where the rows fill the GPU, with no DB entry: at 2100x1100 8x128/w8
    for GAE, λ-returns, V-trace and Retrace, the lane-row spans for the forward scans; at
    3000x1100 8x128/w8 for all; at 3600x1100 16x64/w8, but 8x128/w8 for the forward scans
    with 4 programs an SM. (Their tiles run forced in the interpreter in the tests around.)"""
    if backend != "cuda":
        pytest.skip("the heuristic's own choice: GPU only")
    forward = est in ("eligibility_traces", "episodic_cumsum")

    def expected(N, T):
        if N == 2100:
            return _WALK_8 if est in BACKWARD and est != "discounted_returns" else \
                _MID_TIME_MAJOR[1]
        return _WALK_8 if N == 3000 or forward else _MID_TIME_MAJOR[0]
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch, gpu_shapes=[(2100, 1100), (3000, 1100), (3600, 1100)],
        cpu_shape=None, forced=[], seed=67, time_major=True, expected=expected)


@pytest.mark.parametrize("est", ESTIMATORS)
def test_untuned_time_major_thousands_of_rows_of_hundreds_of_steps_walk_8_rows_a_program(
        backend, device, est, monkeypatch):
    """The heuristic's 8x128/w8 row blocks for untuned [T, N] buffers of 1024-4095 rows x
    384-1023 steps (while their programs fit in one wave): in the interpreter forced on 37
    rows x 300 steps; on the GPU the heuristic itself, with no DB entry, at 2100x600 and
    1030x390 (within one wave for every estimator, V-trace's 2112 rows the fewest)."""
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch, gpu_shapes=[(2100, 600), (1030, 390)],
        cpu_shape=(37, 300), forced=[_WALK_8], seed=61, time_major=True,
        expected=lambda N, T: _WALK_8)


_LANE_SPANS_32x16 = dict(strategy="chunked", BLOCK_N=32, BLOCK_T=16, num_warps=1,
                        CHUNKS_PER_SPAN=4, LANE_ROWS=True)


@pytest.mark.parametrize("est", ESTIMATORS)
def test_untuned_fp32_time_major_calls_of_few_hundred_long_rows_take_narrow_spans_and_match_reference(
        backend, device, est, monkeypatch):
    """The heuristic's spans for untuned fp32 [T, N] buffers of 128-1023 rows x 4096-32767
    steps: of 4 chunks of 32x16 tiles of one row a lane, but for V-trace and Retrace of 4
    chunks of 32x8 tiles: in the interpreter forced on 37 rows x 300 steps (a ragged row tile,
    last chunk and last span); on the GPU the heuristic itself, with no DB entry, at 300x5000
    and 800x6000 (GAE and λ-returns: spans of 128x4 tiles past 512 rows)."""
    spans = _TENS_OF_ROWS_SPANS if est in ("vtrace", "retrace") else _LANE_SPANS_32x16
    wide_spans = dict(strategy="chunked", BLOCK_N=128, BLOCK_T=4, num_warps=1,
                      CHUNKS_PER_SPAN=8)       # GAE's and λ-returns' past 512 rows
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch, gpu_shapes=[(300, 5000), (800, 6000)],
        cpu_shape=(37, 300), forced=[spans], seed=67, time_major=True,
        expected=lambda N, T: wide_spans if N > 512 and est in ("gae", "lambda_returns")
        else spans)


_ROW_PAIRS = dict(strategy="chunked", BLOCK_N=2, BLOCK_T=64, num_warps=2, CHUNKS_PER_SPAN=4)


@pytest.mark.parametrize("est", ESTIMATORS)
def test_untuned_time_major_calls_of_two_or_three_long_rows_match_reference(
        backend, device, est, monkeypatch):
    """The heuristic's spans of 4 chunks of 2x64/w2 for untuned [T, 2] and [T, 3] buffers from
    2**16 steps: in the interpreter forced on 3 rows x 700 steps (a ragged row tile, last
    chunk and last span); on the GPU the heuristic itself, with no DB entry, at 3x70000."""
    _untuned_calls_match_reference(
        backend, device, est, monkeypatch, gpu_shapes=[(3, 70000)], cpu_shape=(3, 700),
        forced=[_ROW_PAIRS], seed=47, time_major=True, expected=lambda N, T: _ROW_PAIRS)


# CONTIG_ROWS bits of the per-step inputs make() gives (P0 1, P1 2, TERM 4, TRUNC 8, NV 16, X1 32)
_CONTIG_BITS = {"gae": 31, "vtrace": 63, "retrace": 63, "eligibility_traces": 5}


@pytest.mark.parametrize("est", list(_CONTIG_BITS))
def test_time_major_loads_mark_only_unit_stride_rows_contiguous(backend, device, est,
                                                                monkeypatch):
    """Time-major loads tell the compiler that rows come in runs of 4 adjacent elements (so
    bf16 inputs and bool flags keep the fp32 tile's layout) for exactly the per-step inputs
    whose row stride is 1: not a column slice (row stride 2), not a per-step γ of shape [T, 1]
    (row stride 0), but a per-env γ of shape [N] (row stride 1); never for time-last buffers
    or tiles of fewer than 4 rows. Each call, with bf16 inputs and bool flags over a partial
    row block of 37 rows, gives the reference's results on the rounded inputs; so do tiles of
    one row a lane (``LANE_ROWS``), which declare no row contiguous."""
    if backend == "torch":
        pytest.skip("the torch path has no tiles")
    taken = record_constexprs(monkeypatch, "CONTIG_ROWS")
    N, T = 37, 29
    kw, _ = make(est, (N, T), seed=41)
    half, rounded = per_step_in(torch.bfloat16, kw)
    first = "inputs" if "inputs" in kw else "rewards"
    # made on the device: moving a strided view there would copy it contiguous
    sliced = torch.zeros(T, 2 * N, dtype=torch.bfloat16, device=device)
    sliced[:, ::2] = half[first].t().to(device)
    gen = torch.Generator().manual_seed(3)
    g_step, g_env = torch.rand(T, 1, generator=gen) / 2 + 0.5, torch.rand(N, generator=gen)
    cases_ = [   # (time-major overrides, the γ the reference sees, CONTIG_ROWS)
        ({}, kw["gamma"], _CONTIG_BITS[est]),
        ({first: sliced[:, ::2], "gamma": g_step}, g_step.expand(T, N).t(),
         _CONTIG_BITS[est] & ~1),
        ({"gamma": g_env}, g_env[:, None].expand(N, T), _CONTIG_BITS[est] | 128)]
    for (over, gamma, bits), lanes in itertools.product(cases_, (False, True)):
        major = {k: (v.t().contiguous() if isinstance(v, torch.Tensor) and v.dim() == 2 else v)
                 for k, v in half.items()}
        major.update(over)
        tile = dict(BLOCK_N=32, BLOCK_T=8, LANE_ROWS=True) if lanes else dict(BLOCK_N=128,
                                                                             BLOCK_T=4)
        with force_config(strategy="row_block", num_warps=1, **tile):
            out = call(est, major, device, time_dim=0)
        rk = dict(rounded, gamma=gamma)
        assert_matches(tuple(o.t() for o in cases.as_tuple(out)), reference(est, rk), T=T,
                       scale=scale_of(est, rk))
        assert taken.pop() == (0 if lanes else bits), (over.keys(), bits, lanes)
    with force_config(strategy="row_block", BLOCK_N=2, BLOCK_T=4, num_warps=1):
        call(est, {k: (v.t().contiguous() if isinstance(v, torch.Tensor) and v.dim() == 2
                       else v) for k, v in half.items()}, device, time_dim=0)
    call(est, half, device)
    assert taken == [0, 0]


def test_any_time_axis_and_strided_views(backend, device):
    """[B1, T, B2] with time in the middle, and non-contiguous slices, need no copies."""
    gen = torch.Generator().manual_seed(5)
    r = torch.randn(3, 40, 4, generator=gen)
    v = torch.randn(3, 40, 4, generator=gen)
    term = torch.rand(3, 40, 4, generator=gen) < 0.1
    lv = torch.randn(3, 4, generator=gen)
    out = rlscan.gae(r.to(device), v.to(device), term.to(device), last_value=lv.to(device),
                     time_dim=1, gamma=0.95, lmbda=0.9)
    assert out.advantages.shape == (3, 40, 4)
    per_row = rlscan.gae(r.movedim(1, -1).reshape(12, 40).to(device),
                         v.movedim(1, -1).reshape(12, 40).to(device),
                         term.movedim(1, -1).reshape(12, 40).to(device),
                         last_value=lv.reshape(12).to(device), gamma=0.95, lmbda=0.9)
    torch.testing.assert_close(out.advantages.movedim(1, -1).reshape(12, 40),
                               per_row.advantages, rtol=1e-6, atol=1e-6)
    # every second step of a wider buffer: strided time axis
    wide = torch.randn(4, 80, generator=gen)
    flags = torch.rand(4, 80, generator=gen) < 0.1
    sliced = rlscan.discounted_returns(wide[:, ::2].to(device), flags[:, ::2].to(device))
    dense = rlscan.discounted_returns(wide[:, ::2].contiguous().to(device),
                                      flags[:, ::2].contiguous().to(device))
    torch.testing.assert_close(sliced, dense, rtol=1e-6, atol=1e-6)   # configs may differ


def _padded(kw: dict, time_major: bool, pad: int, device, dtype=None) -> dict:
    """``kw``'s [N, T] tensors time-last (or [T, N] time-major), as views of buffers ``pad``
    wider along their contiguous axis, made on the device (moving a view there would copy
    it); float tensors in ``dtype`` where given."""
    out = {}
    for k, v in kw.items():
        if not (isinstance(v, torch.Tensor) and v.dim() == 2):
            out[k] = v.to(device) if isinstance(v, torch.Tensor) else v
            continue
        v = v.t() if time_major else v
        if dtype is not None and v.is_floating_point():
            v = v.to(dtype)
        big = torch.zeros(v.shape[0], v.shape[1] + pad, dtype=v.dtype, device=device)
        big[:, :v.shape[1]] = v.to(device)
        out[k] = big[:, :v.shape[1]]
    return out


@pytest.mark.parametrize("time_major", [False, True], ids=["time_last", "time_major"])
@pytest.mark.parametrize("est", ["gae", "vtrace", "eligibility_traces"])
def test_lengths_divisible_by_2_to_8_are_said_so_and_match_reference(backend, device, est,
                                                                    time_major, monkeypatch):
    """Triton proves a load aligned only from ints divisible by 16, so rows of 40 steps loaded
    one value an instruction. The launcher now says which smaller power of two divides T and
    every row stride (time-last: ``ALIGN_T``), or N and every time stride (time-major:
    ``ALIGN_N``), and never more than holds: the first 40 columns of a 44-wide buffer say 4, of
    a 56-wide one 48 say 8, odd lengths and multiples of 16 say nothing (1). Time-major tiles of
    16x64/w8 keep their loads scalar (nothing said), and so do 1-3-row ones in bf16, but
    V-trace's. Every call matches the reference, in row blocks, chunked spans and look-back
    spans."""
    if backend == "torch":
        pytest.skip("the torch path has no kernel")
    taken = record_constexprs(monkeypatch, "ALIGN_T", "ALIGN_N")
    tiles = ([(dict(strategy="row_block", BLOCK_N=8, BLOCK_T=8), True),
              (dict(strategy="chunked", BLOCK_N=8, BLOCK_T=4, CHUNKS_PER_SPAN=2), True)]
             if time_major else
             [(dict(strategy="row_block", BLOCK_N=2, BLOCK_T=16), True),
              (dict(strategy="chunked", BLOCK_N=2, BLOCK_T=8, CHUNKS_PER_SPAN=2), True),
              (dict(strategy="lookback", BLOCK_N=2, BLOCK_T=8, CHUNKS_PER_SPAN=1), True)])
    # tiles told or not by their shape, where 8 is said (the interpreter is slow on 16x64)
    by_shape = [(dict(strategy="row_block", BLOCK_N=16, BLOCK_T=64, num_warps=8),
               est == "vtrace"), (dict(strategy="row_block", BLOCK_N=2, BLOCK_T=8), True)]
    for length, pad, said in [(40, 0, 8), (36, 0, 4), (34, 0, 2), (37, 0, 1), (48, 0, 1),
                              (40, 4, 4), (48, 8, 8)]:
        shape = (length, 13) if time_major else (5, length)
        kw, rk = make(est, shape, seed=length + pad)
        views = _padded(kw, time_major, pad, device)
        for tile, says in tiles + (by_shape if time_major and said == 8 else []):
            del taken[:]
            with force_config(**{"num_warps": 1, **tile}):
                out = call(est, views, device, **({"time_dim": 0} if time_major else {}))
            out = tuple(o.t() for o in cases.as_tuple(out)) if time_major else out
            assert_matches(out, reference(est, rk), T=shape[1], scale=scale_of(est, rk))
            expected = (1, said if says else 1) if time_major else (said, 1)
            assert taken and set(taken) == {expected}, (length, pad, tile, taken)


def test_time_major_tiles_told_n_are_those_whose_vectors_won():
    """``ALIGN_N`` (launch._tells_n): every V-trace tile; for the others every tile but
    16x64/w8 (its vectors spread a chunk over lanes and warps: scalar won there), and with
    2-byte inputs neither 32x64/w4 nor tiles of 1-3 rows (bf16 lost with vectors there), each
    measured on the H100 (fiftieth session)."""
    from rlscan import _problem as P
    tells = launch._tells_n
    for est in range(8):
        vtrace = est == P.VTRACE
        assert tells(est, 16, 64, 8, 4) == tells(est, 16, 64, 8, 2) == vtrace
        assert tells(est, 2, 128, 2, 2) == tells(est, 32, 64, 4, 2) == vtrace
        assert tells(est, 2, 128, 2, 4) and tells(est, 32, 64, 4, 4)
        assert tells(est, 128, 4, 1, 2) and tells(est, 16, 64, 4, 4) and tells(est, 32, 8, 1, 2)
        assert tells(est, 4, 128, 2, 2) and tells(est, 1, 64, 1, 4)


@pytest.mark.parametrize("est", ["gae", "discounted_returns", "vtrace", "eligibility_traces"])
def test_scalar_loads_tiles_run_the_unspecialised_kernel_in_time_major_buffers_only(
        backend, device, est, monkeypatch):
    """``SCALAR_LOADS`` (the heuristic's 16x64/w8 time-major tiles): discounted returns, GAE and
    λ-returns launch the kernel of lane-row tiles (time strides unspecialised, nothing said in
    ALIGN_N), so their loads stay one value an instruction at N = 48 as at 40; V-trace and the
    forward scans ignore it, as time-last buffers do. Results match the reference either way,
    across chunk edges, in row blocks and spans."""
    if backend == "torch":
        pytest.skip("the torch path has no kernel")
    taken = record_constexprs(monkeypatch, "kernel", "ALIGN_N")
    honours = est in ("gae", "discounted_returns")
    for N, said in ((40, 8), (48, 1)):
        kw, rk = make(est, (N, 21), seed=N)
        major = {k: (v.t().contiguous() if isinstance(v, torch.Tensor) and v.dim() == 2 else v)
                 for k, v in kw.items()}
        for tile in (dict(strategy="row_block"), dict(strategy="chunked", CHUNKS_PER_SPAN=2)):
            cfg = dict(tile, BLOCK_N=16, BLOCK_T=8, num_warps=1, SCALAR_LOADS=True)
            del taken[:]
            with force_config(**cfg):
                out = call(est, major, device, time_dim=0)
                last = call(est, kw, device)
            assert_matches(tuple(o.t() for o in cases.as_tuple(out)), reference(est, rk), T=21,
                           scale=scale_of(est, rk))
            assert_matches(last, reference(est, rk), T=21, scale=scale_of(est, rk))
            kernels = {k for k, _ in taken}
            major_launches = taken[:len(taken) // 2]
            if honours:
                assert {k for k, _ in major_launches} == {launch._lane_rows_kernel}, taken
                assert {a for _, a in major_launches} == {1}, taken
            else:
                assert kernels == {launch.fused_scan_kernel}, taken
            assert taken[-1][0] is launch.fused_scan_kernel   # time-last: ignored
    assert C.label(C.validate(cfg)).endswith("/c2/sl")
    with pytest.raises(ValueError, match="SCALAR_LOADS"):
        C.validate(dict(cfg, SCALAR_LOADS="yes"))


def test_the_heuristics_16x64_time_major_tiles_ask_for_scalar_loads(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    for N, T in ((1500, 600), (80, 3008), (24, 12000), (1000, 200)):
        cfg = heuristic.heuristic_config(N, T, time_major=True)
        assert (cfg["BLOCK_N"], cfg["BLOCK_T"], cfg["num_warps"]) == (16, 64, 8), (N, T)
        assert cfg["SCALAR_LOADS"] is True and C.validate(cfg)["SCALAR_LOADS"], (N, T)
    for N, T, tm in ((1000, 3000, True), (8, 40, True), (1500, 600, False)):
        assert "SCALAR_LOADS" not in heuristic.heuristic_config(N, T, time_major=tm), (N, T, tm)


def test_align_is_the_largest_power_of_two_below_16_dividing_every_length():
    assert launch._align(3000, 3000, 0, 3000) == 8
    assert launch._align(3000, 3004) == 4
    assert launch._align(3008, 3008) == 1          # Triton's own specialisation says 16
    assert launch._align(48, 56) == 8
    assert launch._align(1000, 1) == 1            # a unit stride: nothing to say
    assert launch._align(4095) == 1


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("est", ["gae", "vtrace", "discounted_returns", "episodic_cumsum"])
@pytest.mark.parametrize("shape, time_major, pad", [
    ((2000, 3000), False, 0), ((64, 3000), False, 4), ((1500, 600), False, 0),
    ((8, 40000), False, 0), ((480, 9000), True, 0), ((200, 1000), True, 4)])
def test_calls_on_lengths_divisible_by_4_or_8_but_not_16_match_reference(est, dtype, shape,
                                                                        time_major, pad):
    """The configs the DB or the heuristic picks (nothing forced), at lengths divisible by 8
    or 4 but not 16, where the loads are vectorised on the launcher's word (ALIGN_T, ALIGN_N):
    bf16 two-level tiles of 8 steps a thread, split rows, spans, time-major row blocks; shapes
    are (steps, rows) time-major; 8x40000 (a multiple of 16) is the control. bf16 inputs give
    the float32 results of the rounded ones."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    N, T = (shape[1], shape[0]) if time_major else shape
    kw, _ = make(est, (N, T), seed=N + T)
    _, rounded = per_step_in(dtype, kw)
    views = _padded(kw, time_major, pad, "cuda", dtype)
    out = call(est, views, **({"time_dim": 0} if time_major else {}))
    out = tuple(o.t() for o in cases.as_tuple(out)) if time_major else out
    assert_matches(out, reference(est, rounded), T=T, scale=scale_of(est, rounded))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("est", ["gae", "discounted_returns", "lambda_returns", "vtrace"])
@pytest.mark.parametrize("N, T, tile", [
    (1504, 608, dict(strategy="row_block")), (1000, 200, dict(strategy="row_block")),
    (80, 3008, dict(strategy="chunked", CHUNKS_PER_SPAN=1)),
    (24, 4000, dict(strategy="chunked", CHUNKS_PER_SPAN=2))])
def test_time_major_16x64_tiles_with_scalar_loads_match_reference(est, dtype, N, T, tile):
    """The heuristic's time-major 16x64/w8 tiles with ``SCALAR_LOADS`` (the unspecialised
    kernel for discounted returns, GAE, λ-returns; V-trace ignores it), at N a multiple of 16
    and not, row blocks and spans: bf16 inputs give the float32 results of the rounded ones."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    kw, _ = make(est, (N, T), seed=N + T)
    _, rounded = per_step_in(dtype, kw)
    views = _padded(kw, True, 0, "cuda", dtype)
    with force_config(BLOCK_N=16, BLOCK_T=64, num_warps=8, SCALAR_LOADS=True, **tile):
        out = call(est, views, time_dim=0)
    out = tuple(o.t() for o in cases.as_tuple(out))
    assert_matches(out, reference(est, rounded), T=T, scale=scale_of(est, rounded))


# ---------------------------------------------------------------- dtypes and coefficients
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("est", ESTIMATORS)
def test_half_inputs_equal_float32_math_on_rounded_inputs(backend, device, est, dtype):
    kw, _ = make(est, (3, 33), seed=2)
    half = {k: (v.to(dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v)
            for k, v in kw.items()}
    rounded = {k: (v.float() if isinstance(v, torch.Tensor) and v.is_floating_point() else v)
               for k, v in half.items()}
    for a, b in zip(cases.as_tuple(call(est, half, device)),
                    cases.as_tuple(call(est, rounded, device))):
        assert a.dtype == torch.float32
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("flag_dtype", [torch.uint8, torch.float32, torch.int64])
def test_flag_dtypes_are_nonzero_means_true(backend, device, flag_dtype):
    kw, _ = make("gae", (3, 20), seed=4)
    as_bool = rlscan.gae(**{k: v.to(device) if isinstance(v, torch.Tensor) else v
                            for k, v in kw.items()})
    kw["terminated"] = kw["terminated"].to(flag_dtype) * 3     # nonzero, not only 1
    kw["truncated"] = kw["truncated"].to(flag_dtype)
    other = rlscan.gae(**{k: v.to(device) if isinstance(v, torch.Tensor) else v
                          for k, v in kw.items()})
    torch.testing.assert_close(as_bool.advantages, other.advantages, rtol=0, atol=0)


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float64])
def test_out_dtype(backend, device, out_dtype):
    kw, _ = make("vtrace", (2, 9), seed=1)
    out = call("vtrace", kw, device, out_dtype=out_dtype)
    ref32 = call("vtrace", kw, device)
    assert out.vs.dtype == out.pg_advantages.dtype == out_dtype
    torch.testing.assert_close(out.vs.float(), ref32.vs, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("est", ["gae", "lambda_returns", "vtrace", "retrace",
                                 "discounted_returns", "eligibility_traces"])
@pytest.mark.parametrize("kind", ["per_row", "per_step"])
def test_tensor_gamma_and_lambda(backend, device, est, kind):
    T = 23
    kw, rk = make(est, (4, T), seed=9)
    gen = torch.Generator().manual_seed(1)
    shape = (4, 1) if kind == "per_row" else (4, T)
    kw["gamma"] = rk["gamma"] = torch.rand(shape, generator=gen) * 0.5 + 0.5
    if "lmbda" in kw:
        kw["lmbda"] = rk["lmbda"] = torch.rand(shape, generator=gen)
    out = call(est, kw, device)
    assert_matches(out, reference(est, {k: v for k, v in rk.items()}), T=T,
                   scale=scale_of(est, rk))


def test_gamma_and_lambda_edges_zero_and_one(backend, device):
    kw, rk = make("gae", (3, 17), seed=12)
    for g, lam in [(0.0, 0.5), (1.0, 1.0), (0.5, 0.0)]:
        kw.update(gamma=g, lmbda=lam)
        rk.update(gamma=g, lmbda=lam)
        assert_matches(call("gae", kw, device), reference("gae", rk), T=17,
                       scale=scale_of("gae", rk))


# ---------------------------------------------------------------- masking and edge cases
def test_nan_and_inf_in_ignored_slots_never_leak(backend, device):
    kw, rk = make("gae", (4, 30), seed=21, encoding="next_values")
    term = kw["terminated"]
    boot = (kw["truncated"] | torch.zeros_like(term).index_fill_(1, torch.tensor([29]), True))
    kw["next_values"] = kw["next_values"].masked_fill(term, NAN)
    clean = rlscan.gae(**{k: v.to(device) if isinstance(v, torch.Tensor) else v
                          for k, v in kw.items()})
    assert torch.isfinite(clean.advantages).all()
    # bootstrap values are read only at truncations and T-1
    kw2, _ = make("vtrace", (4, 30), seed=21)
    boot = kw2["truncated"] & ~kw2["terminated"]
    boot[:, -1] = True
    kw2["bootstrap_values"] = kw2["bootstrap_values"].masked_fill(~boot, float("inf"))
    out = call("vtrace", kw2, device)
    assert torch.isfinite(out.vs).all() and torch.isfinite(out.pg_advantages).all()


def test_termination_severs_inf_in_next_episode(backend, device):
    r = torch.tensor([[1.0, 2.0, float("inf"), 1.0]])
    term = torch.tensor([[False, True, False, False]])
    g = rlscan.discounted_returns(r.to(device), term.to(device), gamma=0.9)
    close(g[:, :2], [1 + 0.9 * 2.0, 2.0])
    assert torch.isinf(g[0, 2])


def test_ratio_zero_and_infinite_with_finite_thresholds(backend, device):
    kw, rk = make("vtrace", (2, 12), seed=5)
    kw["log_ratio"][0, ::3] = -float("inf")   # ratio 0
    kw["log_ratio"][1, ::4] = float("inf")    # ratio +inf, clipped to rho_bar, c_bar
    rk["log_ratio"] = kw["log_ratio"]
    out = call("vtrace", kw, device)
    assert_matches(out, reference("vtrace", rk), T=12, scale=scale_of("vtrace", rk))


@pytest.mark.parametrize("shape", [(4, 0), (0, 7), (2, 0, 3)], ids=str)
@pytest.mark.parametrize("est", ESTIMATORS)
def test_empty_inputs_give_empty_outputs(backend, device, est, shape):
    kw, _ = make(est, (1, 3))
    batch = shape[:-1]
    for k, v in list(kw.items()):
        if isinstance(v, torch.Tensor):
            kw[k] = torch.zeros(shape if v.dim() == 2 else batch, dtype=v.dtype)
    for o in cases.as_tuple(call(est, kw, device)):
        assert o.shape == shape


@pytest.mark.gpu
def test_more_than_2_31_elements_index_correctly(backend, device):
    if backend != "cuda":
        pytest.skip("needs ~20 GB of GPU memory")
    N, T = (2**31) // 1024 + 3, 1024                 # 2^31 + 3072 elements per tensor
    r = torch.empty(N, T, device=device).uniform_(-1, 1)
    dones = torch.rand(N, T, device=device) < 0.05
    out = rlscan.episodic_cumsum(r, dones)
    tail = slice(N - 3, N)
    expected = cases.ref.episodic_cumsum(r[tail].double().cpu().numpy(),
                                         dones[tail].cpu().numpy())
    assert_matches(out[tail], expected, T=T, scale=np.abs(expected) + 8)
    del out, r, dones
    torch.cuda.empty_cache()
