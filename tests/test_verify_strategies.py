"""The strategies draw what the issue asks for, valid for rlscan's API, with non-finite values
only where the math must ignore them; cases materialise exactly; profiles select as documented."""
import os

import numpy as np
import pytest
import torch
from hypothesis import Phase, find, given, settings, strategies as st

from rlscan.verify import backends, profiles, strategies as S
from rlscan.verify.cases import ESTIMATORS, LAYOUTS, Case, round_to
from rlscan.verify.targets import load_target

profiles.load()
BUDGET = profiles.Budget(max_rows=6, max_T=70, chunk_edges=(16, 32, 64))
FIND = settings(max_examples=3000, database=None, phases=[Phase.generate])  # no shrinking


@pytest.fixture(autouse=True)
def _restore_backend_env():
    with backends.preserved_environment():
        yield


@pytest.mark.parametrize("estimator", ESTIMATORS)
@settings(max_examples=40)
@given(data=st.data())
def test_drawn_cases_are_valid_calls_with_a_finite_reference(estimator, data):
    case = data.draw(S.cases(estimator, BUDGET))
    assert 1 <= case.rows <= BUDGET.max_rows and 1 <= case.T <= BUDGET.max_T
    for name, v in case.inputs.items():
        if isinstance(v, np.ndarray) and v.dtype != bool:
            fin = v[np.isfinite(v)]
            assert np.array_equal(round_to(fin, case.dtype), fin), name
    for name, out in case.reference().items():
        assert np.isfinite(out).all(), (name, case)      # NaN planted only where ignored
    outs = load_target(None, backend="torch").call(case)
    assert set(outs) == set(case.reference())


@pytest.mark.parametrize("estimator", ESTIMATORS)
@settings(max_examples=30)
@given(data=st.data())
def test_ignored_slots_really_are_ignored_by_the_reference(estimator, data):
    case = data.draw(S.cases(estimator, BUDGET, plant=False))
    planted = case.replace(inputs={k: np.where(m, np.nan, case.inputs[k])
                                   for k, m in S.ignored_slots(case).items()})
    for name, out in planted.reference().items():
        np.testing.assert_array_equal(out, case.reference()[name])


def test_shapes_reach_block_and_chunk_edges_and_extra_batch_axes():
    for T in (1, 63, 64, 65):
        find(S.shapes(BUDGET), lambda s, T=T: s[-1] == T, settings=FIND)
    find(S.shapes(BUDGET), lambda s: len(s) == 3, settings=FIND)
    find(S.shapes(BUDGET), lambda s: len(s) == 1, settings=FIND)


def test_forced_configs_cover_every_launch_strategy_with_and_without_the_two_level_scan():
    """The verifier forces small configs so that its small shapes cross chunk, span and group
    edges: every strategy the tuner may pick is among them, plain and two-level, each a config
    the launcher accepts and each spanned one with at least two chunks a row within 64 steps;
    the row block and chunked spans also as tiles of one row a lane (time-major calls)."""
    from rlscan.kernels import configs as C
    seen, lanes = set(), set()
    for cfg in S.SMALL_CONFIGS:
        c = C.validate(cfg)
        seen.add((c["strategy"], bool(c.get("TWO_LEVEL"))))
        if c.get("LANE_ROWS"):
            lanes.add(c["strategy"])
        if c["strategy"] in C.SPANNED:
            assert 2 * c["BLOCK_T"] * c["CHUNKS_PER_SPAN"] <= 64, cfg
    assert seen == {(s, two) for s in C.STRATEGIES for two in (False, True)}
    assert lanes == {"row_block", "chunked"}


def test_flag_patterns_cover_the_episode_edge_cases():
    shape = (3, 12)
    for want in (lambda f: not f.any(), lambda f: f.all(),
                 lambda f: f[:, 0].all() and not f[:, 1:].any(),
                 lambda f: f[:, -1].all() and not f[:, :-1].any(),
                 lambda f: any("111" in "".join("1" if x else "0" for x in r) for r in f),
                 lambda f: 0 < f.mean() < 0.1):
        find(S.flag_arrays(shape), want, settings=FIND)


def test_both_flags_on_one_step_are_drawn():
    both = lambda x: ("truncated" in x and "terminated" in x  # noqa: E731
                      and (x["truncated"] & x["terminated"]).any())
    find(S.cases("gae", BUDGET, plant=False), lambda c: both(c.inputs), settings=FIND)


def test_discounts_include_exact_0_and_1_per_row_and_per_step():
    shape = (2, 5)
    find(S.unit_coefs(shape), lambda g: isinstance(g, float) and g == 0.0, settings=FIND)
    find(S.unit_coefs(shape), lambda g: isinstance(g, float) and g == 1.0, settings=FIND)
    find(S.unit_coefs(shape), lambda g: isinstance(g, np.ndarray) and g.shape == (2, 1),
         settings=FIND)
    g = find(S.unit_coefs(shape, "bfloat16"), lambda g: isinstance(g, np.ndarray)
             and g.shape == shape and (g == 0).any() and (g == 1).any(), settings=FIND)
    assert ((0 <= g) & (g <= 1)).all()


def test_thresholds_include_infinity():
    find(S.thresholds(), lambda t: t == float("inf"), settings=FIND)


def test_log_ratios_reach_zero_one_and_huge_ratios_only_with_finite_thresholds():
    shape = (4, 16)
    find(S.log_ratios(shape, "float32", True), lambda x: (x == -np.inf).any()
         and (x >= 100).any() and (x == 0).any(), settings=FIND)

    @given(S.log_ratios(shape, "float32", False))
    def bounded(x):
        assert np.all(x <= 0.5)
    bounded()


def test_values_span_tiny_to_large_magnitudes():
    x = find(S.reals((64,), "float32"), lambda x: np.abs(x[x != 0]).min(initial=1) < 1e-15
             and np.abs(x).max() > 1e5, settings=FIND)
    assert np.isfinite(x).all()


def test_nan_is_planted_in_next_values_at_terminations_and_in_stray_bootstrap_entries():
    def planted(name):
        return lambda c: name in c.inputs and np.isnan(c.inputs[name]).any()
    find(S.cases("gae", BUDGET), planted("next_values"), settings=FIND)
    find(S.cases("vtrace", BUDGET), planted("bootstrap_values"), settings=FIND)
    find(S.cases("retrace", BUDGET), planted("expected_next_q"), settings=FIND)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_layouts_hold_the_same_values(layout):
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    case = Case("episodic_cumsum", {"inputs": x, "dones": x % 3 == 0}, layout=layout)
    kw = case.api_kwargs()
    t = kw["inputs"]
    assert torch.equal(t.movedim(kw["time_dim"], -1), torch.as_tensor(x, dtype=torch.float32))
    if layout == "strided":
        assert not t.is_contiguous()
        assert torch.isnan(t.as_strided((t.numel() * 2,), (1,))[1::2]).all()   # hidden half
    if layout == "sliced":
        assert t.stride() == (15, 5, 1) and not t.is_contiguous()         # rows of T + 1 steps
        assert torch.isnan(t.as_strided((6,), (5,), 4)).all()            # the hidden last step
    if layout in ("time_major", "time_middle"):
        assert kw["time_dim"] in (0, 1) and t.is_contiguous()


def test_flag_and_input_dtypes_are_honoured():
    case = Case("gae", {"rewards": np.ones((2, 3)), "values": np.zeros((2, 3)),
                        "terminated": np.eye(2, 3, dtype=bool)}, dtype="bfloat16",
                flag_dtype="uint8")
    kw = case.api_kwargs()
    assert kw["rewards"].dtype == torch.bfloat16 and kw["terminated"].dtype == torch.uint8


@settings(max_examples=30)
@given(st.sampled_from(ESTIMATORS).flatmap(lambda e: S.cases(e, BUDGET)))
def test_case_source_rebuilds_the_case_exactly(case):
    from math import inf, nan  # noqa: F401  (names the source uses)
    from numpy import array    # noqa: F401
    rebuilt = eval(case.to_source())
    assert rebuilt.estimator == case.estimator and rebuilt.layout == case.layout
    for k, v in case.inputs.items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(rebuilt.inputs[k], v)
        else:
            assert rebuilt.inputs[k] == v or (v != v and rebuilt.inputs[k] != rebuilt.inputs[k])


def test_profiles_ci_under_ci_and_overridable(monkeypatch):
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    monkeypatch.setenv("CI", "true")
    assert profiles.select() == "ci"
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "thorough")
    assert profiles.select() == "thorough"
    monkeypatch.delenv("HYPOTHESIS_PROFILE")
    monkeypatch.delenv("CI")
    assert profiles.select() == "dev"
    ci = settings.get_profile("ci")
    assert ci.derandomize and ci.database is None and ci.deadline is None
    with pytest.raises(ValueError):
        profiles.select("nightly")


def test_this_suite_runs_under_the_profile_ci_selects():
    expected = "ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else None
    if expected and not os.environ.get("HYPOTHESIS_PROFILE"):
        assert settings().derandomize and settings().database is None
