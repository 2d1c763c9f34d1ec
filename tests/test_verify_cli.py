"""``rlscan-verify``: options, progress, the closing table, exit codes, reproducers."""
import shutil
import subprocess
import sys

import pytest

from rlscan.verify import backends, cli, profiles
from rlscan.verify.properties import PROPERTIES

profiles.load()


@pytest.fixture(autouse=True)
def _restore_backend_env():
    with backends.preserved_environment():
        yield


def run(capsys, *args):
    code = cli.main(list(args))
    return code, capsys.readouterr().out


def test_rlscan_passes_and_the_run_ends_with_the_table(capsys):
    code, out = run(capsys, "--estimator", "gae", "--estimator", "linear_scan", "--examples", "6",
                    "--backend", "torch", "--profile", "ci")
    assert code == 0, out
    lines = out.rstrip().splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("estimator"))
    assert lines[head].split() == ["estimator", "examples", "worst", "err/bound", "result"]
    rows = [line.split() for line in lines[head + 2:head + 4]]
    assert [r[0] for r in rows] == ["gae", "linear_scan"]
    assert all(r[-1] == "pass" and int(r[1]) > 0 and float(r[2]) <= 1 for r in rows)
    assert "property runs passed" in lines[-1]


def test_progress_shows_one_line_per_property_run(capsys):
    code, out = run(capsys, "--estimator", "episodic_cumsum", "--examples", "3",
                    "--backend", "torch", "--profile", "ci")
    assert code == 0
    progress = [line for line in out.splitlines() if line.startswith("[")]
    from rlscan.verify.properties import for_estimator
    assert len(progress) == len(for_estimator("episodic_cumsum"))
    assert all(" ex " in line and line.rstrip().endswith("s") for line in progress)


def test_interpreter_is_the_default_without_a_gpu(capsys):
    code, out = run(capsys, "--estimator", "retrace", "--property", "matches_reference",
                    "--examples", "3", "--profile", "ci")
    assert code == 0, out
    expected = "cuda" if backends.default() == "cuda" else "interpret"
    assert f"rlscan on {expected}" in out.splitlines()[0]


def test_impl_of_rlscan_itself_passes(capsys):
    code, out = run(capsys, "--impl", "rlscan:vtrace", "--estimator", "vtrace",
                    "--property", "matches_reference", "--examples", "5", "--backend", "torch")
    assert code == 0, out
    assert "depth model sequential" in out   # the worst case, for an unknown implementation


def test_a_failure_exits_1_and_prints_a_runnable_reproducer(capsys):
    code, out = run(capsys, "--impl", "rlscan.verify.mutants:linear_scan_swapped_combine",
                    "--property", "matches_reference", "--profile", "ci")
    assert code == 1
    assert "==== FAILURE: linear_scan / matches_reference" in out
    source = out.split("---- reproducer (shrunk example)\n", 1)[1].split(
        "---- end of reproducer", 1)[0]
    assert "load_target('rlscan.verify.mutants:linear_scan_swapped_combine'" in source
    with pytest.raises(AssertionError, match="differs from the float64 reference"):
        exec(compile(source, "<reproducer>", "exec"), {})


def test_fail_fast_stops_at_the_first_failing_property(capsys):
    code, out = run(capsys, "--impl", "rlscan.verify.mutants:retrace_c_at_t", "--profile", "ci",
                    "--fail-fast")
    assert code == 1
    assert len([line for line in out.splitlines() if line.startswith("[")]) == 1


def test_seed_makes_the_search_reproducible(capsys):
    args = ("--estimator", "gae", "--property", "matches_reference", "--examples", "5",
            "--backend", "torch", "--seed", "7", "--profile", "ci")
    table = lambda out: out.split("estimator", 1)[1].rsplit("\n", 2)[0]  # noqa: E731
    _, first = run(capsys, *args)
    _, second = run(capsys, *args)
    assert table(first) == table(second)


@pytest.mark.parametrize("args, message", [
    (["--impl", "rlscan.verify.mutants"], "expected module:function"),
    (["--impl", "rlscan.verify.adapters:with_rlscan_signature"], "which estimator"),
    (["--impl", "no_such_module_xyz:f"], "No module named"),
    (["--property", "no_such_property"], "unknown property"),
    (["--jobs", "0"], "--jobs must be >= 1"),
    (["--split-examples", "-1"], "--split-examples must be >= 0"),
])
def test_usage_errors_exit_2_with_a_message(capsys, args, message):
    code, out = run(capsys, *args, "--backend", "torch")
    assert code == 2
    assert message in out


def test_jobs_runs_the_same_plan_in_worker_processes(capsys):
    """--jobs N: the same property runs and the same table as one process (the ci profile is
    derandomized, so the examples are the same too); progress lines come as runs end."""
    args = ("--estimator", "discounted_returns", "--examples", "4", "--backend", "torch",
            "--profile", "ci")
    table = lambda out: out.split("\nestimator", 1)[1].rsplit("\n", 2)[0]  # noqa: E731
    progress = lambda out: sorted(  # noqa: E731
        " ".join(line.split("]", 1)[1].split()[:3]) for line in out.splitlines()
        if line.startswith("["))
    code1, serial = run(capsys, *args)
    code2, parallel = run(capsys, *args, "--jobs", "2")
    assert code1 == code2 == 0, parallel
    assert table(serial) == table(parallel)
    assert progress(serial) == progress(parallel)


def test_jobs_reports_failures_with_their_reproducers(capsys):
    code, out = run(capsys, "--impl", "rlscan.verify.mutants:linear_scan_swapped_combine",
                    "--property", "matches_reference", "--property", "done_severs_dependence",
                    "--profile", "ci", "--jobs", "2")
    assert code == 1
    assert "==== FAILURE: linear_scan / matches_reference" in out
    assert "==== FAILURE: linear_scan / done_severs_dependence" in out
    assert out.count("---- reproducer (shrunk example)") == 2


def test_a_failure_is_reported_as_its_run_ends(capsys):
    """The reproducer follows the failing run's progress line, before the next run's: a run cut
    short by a timeout keeps the reports of the runs that ended."""
    code, out = run(capsys, "--impl", "rlscan.verify.mutants:linear_scan_swapped_combine",
                    "--property", "matches_reference", "--property", "combine_exact",
                    "--profile", "ci")
    assert code == 1
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("[  1/2]"))
    second = next(i for i, line in enumerate(lines) if line.startswith("[  2/2]"))
    failure = lines.index("==== FAILURE: linear_scan / matches_reference")
    assert first < failure < second, out
    assert "Reported above, under their progress lines: linear_scan / matches_reference" in out


def test_list_names_every_property(capsys):
    code, out = run(capsys, "--list")
    assert code == 0
    assert all(name in out for name in PROPERTIES)


def test_console_script_is_installed():
    exe = shutil.which("rlscan-verify")
    cmd = [exe] if exe else [sys.executable, "-m", "rlscan.verify.cli"]
    done = subprocess.run(cmd + ["--list"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "matches_reference" in done.stdout


@pytest.mark.slow
def test_full_ci_run_passes_for_rlscan(capsys):
    """What CI's verify step runs: every estimator and property on the default backend."""
    code, out = run(capsys, "--profile", "ci")
    assert code == 0, out


def test_thorough_plan_gives_every_estimator_at_least_2000_examples():
    """The property weights alone gave eligibility traces 1983 examples under thorough; the
    plan tops up each estimator's reference-match run to the profile's minimum."""
    from rlscan.verify import profiles
    from rlscan.verify.cli import top_up
    from rlscan.verify.properties import for_estimator
    ests = ["discounted_returns", "gae", "lambda_returns", "vtrace", "retrace",
            "eligibility_traces", "episodic_cumsum", "linear_scan"]
    runs = [(e, p, profiles.examples("thorough", p.weight)) for e in ests
            for p in for_estimator(e)]
    before = {e: sum(n for x, _, n in runs if x == e) for e in ests}
    assert min(before.values()) < 2000           # the gap this closes is real
    after = top_up(runs, profiles.MIN_PER_ESTIMATOR["thorough"])
    for e in ests:
        total = sum(n for x, _, n in after if x == e)
        assert total == max(2000, before[e])
        grown = [(p.name, n) for x, p, n in after if x == e] != \
            [(p.name, n) for x, p, n in runs if x == e]
        assert grown == (before[e] < 2000)


def test_an_interrupted_run_summarises_what_finished_and_never_passes(capsys, monkeypatch):
    """SIGINT (Ctrl-C, or `timeout -s INT` on a time-capped machine) in the middle of a run:
    the finished runs' table and the unfinished runs' names are printed, and the exit code is
    130, not 0 (1 had a finished run failed)."""
    from rlscan.verify import runner
    real, calls = runner.run_property, []

    def stop_at_the_third(*args, **kwargs):
        calls.append(args[1:3])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "run_property", stop_at_the_third)
    code, out = run(capsys, "--estimator", "episodic_cumsum", "--examples", "2",
                    "--backend", "torch", "--profile", "ci")
    from rlscan.verify.properties import for_estimator
    names = [p.name for p in for_estimator("episodic_cumsum")]
    assert code == 130
    summary = next(line for line in out.splitlines() if line.startswith("Interrupted after"))
    assert f"2 of {len(names)} property runs finished, 2 passed, 0 failed" in summary
    assert summary.endswith(", ".join(f"episodic_cumsum / {n}" for n in names[2:]))
    assert [line.split()[0] for line in out.splitlines() if line.startswith("episodic")] == \
        ["episodic_cumsum"]                                    # the table's row
    assert "property runs passed in" not in out


def test_an_interrupted_run_with_a_failure_among_the_finished_exits_1(capsys, monkeypatch):
    """Cut after a failing run (a planted bug in Retrace's trace coefficient): exit 1, the
    failure counted in the summary."""
    from rlscan.verify import runner
    real, calls = runner.run_property, []

    def stop_at_the_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "run_property", stop_at_the_second)
    code, out = run(capsys, "--impl", "rlscan.verify.mutants:retrace_c_at_t", "--profile", "ci")
    assert code == 1
    assert "1 of " in out and "finished, 0 passed, 1 failed" in out


def test_an_interrupted_parallel_run_summarises_at_once_without_waiting_for_its_workers(
        capsys, monkeypatch):
    """--jobs: SIGINT while the workers hold runs: the summary prints and the exit code is
    130 without waiting for the pool (a worker killed mid-run can leave it stuck, and a
    time-capped machine kills the process soon after its SIGINT); the queued runs are
    cancelled."""
    import concurrent.futures as cf

    class Pool:                    # a pool whose shutdown would hang if it waited first
        made = []

        def __init__(self, *args, **kwargs):
            self.futures, self.shutdowns = [], []
            Pool.made.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.shutdown(wait=True)

        def submit(self, *args):
            f = cf.Future()
            if not self.futures:   # the first run to end is cut by the SIGINT
                f.set_exception(KeyboardInterrupt())
            self.futures.append(f)
            return f

        def shutdown(self, wait=True, cancel_futures=False):
            if wait and not self.shutdowns:
                raise AssertionError("waited for the workers")
            self.shutdowns.append((wait, cancel_futures))

    monkeypatch.setattr(cf, "ProcessPoolExecutor", Pool)
    code, out = run(capsys, "--estimator", "episodic_cumsum", "--examples", "2", "--backend",
                    "torch", "--profile", "ci", "--jobs", "2")
    assert code == 130
    assert "Interrupted after" in out and "0 of " in out
    assert Pool.made[0].shutdowns[0] == (False, True)


def test_split_cuts_long_runs_into_parts_with_their_own_seeds():
    """--split-examples K: a run of n > K examples becomes ceil(n / K) near-equal parts; part 0
    keeps the run's seed, part k > 0 searches from seed + k (from k under the derandomized ci
    profile, else all parts would draw the same examples; from a random seed otherwise)."""
    from rlscan.verify.properties import PROPERTIES
    prop = PROPERTIES["matches_reference"]
    parts = cli.split([("gae", prop, 401), ("gae", prop, 200)], 200, None, derandomized=True)
    assert [(n, k, of, s) for _, _, n, k, of, s in parts] == [
        (134, 0, 3, None), (134, 1, 3, 1), (133, 2, 3, 2), (200, 0, 1, None)]
    assert [s for *_, s in cli.split([("gae", prop, 600)], 200, 5, False)] == [5, 6, 7]
    assert [s for *_, s in cli.split([("gae", prop, 600)], 200, None, False)] == [None] * 3
    assert cli.split([("gae", prop, 601)], 0, 9, True) == [("gae", prop, 601, 0, 1, 9)]
    assert [cli.run_name(r)[1] for r in parts] == ["matches_reference 1/3",
                                                   "matches_reference 2/3",
                                                   "matches_reference 3/3",
                                                   "matches_reference"]


def test_jobs_run_split_parts_and_the_table_counts_them_all(capsys):
    """With --jobs, parts run as runs of their own (a progress line each) and the table sums
    their examples; without --jobs nothing is split."""
    args = ("--estimator", "gae", "--property", "matches_reference", "--examples", "7",
            "--backend", "torch", "--profile", "ci", "--split-examples", "3")
    code, out = run(capsys, *args, "--jobs", "2")
    assert code == 0, out
    assert "1 property runs (3 with parts)" in out.splitlines()[0]
    names = sorted(line.split("]", 1)[1].split()[1:3] for line in out.splitlines()
                   if line.startswith("["))
    assert names == [["matches_reference", f"{k}/3"] for k in (1, 2, 3)]
    row = next(line.split() for line in out.splitlines() if line.startswith("gae "))
    assert int(row[1]) >= 7 and row[-1] == "pass"
    code, out = run(capsys, *args)
    assert code == 0 and "with parts" not in out
    assert len([line for line in out.splitlines() if line.startswith("[")]) == 1
