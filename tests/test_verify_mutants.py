"""Planted bugs (verify/mutants.py) must fail ``rlscan-verify --impl … --profile ci``, with a
shrunk example whose printed reproducer, run as it stands, raises the same failure."""
import re

import numpy as np
import pytest

from rlscan.verify import backends, cli, mutants, reference as ref
from rlscan.verify.cases import Case
from rlscan.verify.properties import PropertyFailure
from rlscan.verify.targets import infer_estimator
from rlscan.verify.worked_examples import WORKED_EXAMPLES


@pytest.fixture(autouse=True)
def _restore_backend_env():
    with backends.preserved_environment():
        yield


def _verify(capsys, *args):
    code = cli.main(list(args))
    return code, capsys.readouterr().out


@pytest.mark.parametrize("name", mutants.MUTANTS)
def test_planted_bug_fails_rlscan_verify_ci(capsys, name):
    code, out = _verify(capsys, "--impl", f"rlscan.verify.mutants:{name}", "--profile", "ci")
    assert code == 1, out
    est = infer_estimator(getattr(mutants, name))
    table_row = next(line for line in out.splitlines() if line.startswith(est + " "))
    assert "FAIL" in table_row
    # the plain comparison with the reference catches every planted bug on its own
    assert re.search(r"FAIL: .*matches_reference", table_row), table_row


def _first_reproducer(out: str) -> str:
    block = out.split("---- reproducer (shrunk example)\n", 1)[1]
    return block.split("---- end of reproducer", 1)[0]


@pytest.mark.parametrize("name", ["retrace_c_at_t", "gae_bootstrap_added"])
def test_printed_reproducer_replays_the_failure(capsys, name):
    code, out = _verify(capsys, "--impl", f"rlscan.verify.mutants:{name}", "--profile", "ci",
                        "--property", "matches_reference")
    assert code == 1
    source = _first_reproducer(out)
    with pytest.raises(PropertyFailure):
        exec(compile(source, "<reproducer>", "exec"), {})


def _worked(est, index=0):
    case, _ = WORKED_EXAMPLES[est][index]
    return case


def _call(fn, case):
    out = fn(**case.api_kwargs("cpu"))
    return [o.double().numpy() for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name, est, index", [
    ("eligibility_traces_lambda_dropped", "eligibility_traces", 0),
    ("vtrace_lambda_dropped", "vtrace", 1),
    ("retrace_c_at_t", "retrace", 0),
    ("discounted_returns_swapped_combine", "discounted_returns", 0),
    ("gae_truncation_as_termination", "gae", 0),
    ("discounted_returns_truncation_as_termination", "discounted_returns", 0),
])
def test_each_mutant_is_wrong_on_the_worked_example(name, est, index):
    case = _worked(est, index)
    expected = case.reference()
    got = _call(getattr(mutants, name), case)
    assert any(not np.allclose(g, e, atol=1e-6) for g, e in zip(got, expected.values()))


def test_bootstrap_added_mutants_differ_only_with_stray_bootstrap_entries():
    case = _worked("gae", 0)   # bootstrap_values zero off the boot steps: addition is harmless
    got = _call(mutants.gae_bootstrap_added, case)
    assert np.allclose(got[0], case.reference()["advantages"], atol=1e-6)
    stray = case.replace(inputs={"bootstrap_values": case.inputs["bootstrap_values"] + 1.0})
    got = _call(mutants.gae_bootstrap_added, stray)
    assert not np.allclose(got[0], stray.reference()["advantages"], atol=1e-6)


def test_swapped_combine_reverses_which_b_gets_which_decay():
    a, b = np.array([0.5, 2.0, 1.0]), np.array([1.0, 2.0, 4.0])
    case = Case("linear_scan", {"a": a, "b": b, "reverse": False})
    got = _call(mutants.linear_scan_swapped_combine, case)[0]
    assert not np.allclose(got, ref.linear_scan(a, b))
    assert np.allclose(got[0], b[0])   # one element: no combine, nothing to get wrong
