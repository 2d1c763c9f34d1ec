"""The Hypothesis suite: every property of verify/properties.py for every estimator, against
rlscan on its CPU torch path and on its Triton kernels in the interpreter.

The ``ci`` profile (CI=true) is derandomized; the interpreter, which runs each scan element in
Python, gets small shapes. A property listed in verify/examples.py's KNOWN_BUGS is
an ``xfail(strict=True)``: it must fail until the bug is fixed, then the entry must go.
"""
import pytest

from rlscan.verify import backends, examples, profiles, runner
from rlscan.verify.cases import ESTIMATORS
from rlscan.verify.properties import PROPERTIES, for_estimator
from rlscan.verify.targets import load_target

PROFILE = profiles.load()
SCALE = {"ci": 1, "dev": 3, "thorough": 30}[PROFILE]
# the interpreter's count doubled from 20 when verify/interpreter.py made its scans ~3.5x
# faster (this file: 86 s -> 150 s in CI's two workers, 2026-12-06)
BASE_EXAMPLES = {"torch": 40, "interpret": 40}


@pytest.fixture(autouse=True)
def _restore_backend_env():
    with backends.preserved_environment():
        yield


def _runs():
    for path in ("torch", "interpret"):
        for est in ESTIMATORS:
            for prop in for_estimator(est):
                marks = []
                reason = examples.KNOWN_BUGS.get((est, prop.name))
                if reason:
                    marks.append(pytest.mark.xfail(strict=True, reason=reason))
                yield pytest.param(path, est, prop.name, marks=marks,
                                   id=f"{path}-{est}-{prop.name}")


@pytest.mark.parametrize("path, estimator, prop", list(_runs()))
def test_rlscan_has_property(path, estimator, prop):
    target = load_target(None, backend=path)
    p = PROPERTIES[prop]
    n = profiles.examples(PROFILE, p.weight, BASE_EXAMPLES[path] * SCALE)
    outcome = runner.run_property(target, estimator, p, profile=PROFILE, max_examples=n)
    if outcome.failure:
        pytest.fail(f"{outcome.failure.error}\n\nreproducer:\n{outcome.failure.reproducer}",
                    pytrace=False)
    assert outcome.examples >= 1
    assert outcome.worst <= 1.0


@pytest.mark.parametrize("path", ["torch", "interpret"])
@pytest.mark.parametrize("found", examples.FOUND,
                         ids=[f"{f.estimator}-{f.prop}-{i}" for i, f in enumerate(examples.FOUND)])
def test_every_failure_ever_found_stays_fixed(path, found):
    target = load_target(None, backend=path)
    check = PROPERTIES[found.prop].check
    if (found.estimator, found.prop) in examples.KNOWN_BUGS:
        pytest.xfail(examples.KNOWN_BUGS[(found.estimator, found.prop)])
    check(target, found.case, **found.extra)


def test_every_estimator_has_the_core_properties():
    core = {"matches_reference", "nonfinite_stays_in_its_episode", "done_severs_dependence",
            "rows_are_independent", "time_major_equals_time_last",
            "half_inputs_equal_fp32_math", "deterministic"}
    for est in ESTIMATORS:
        assert core <= {p.name for p in for_estimator(est)}, est
