"""pytest-benchmark timings of a few representative cells (``pytest -m benchmark`` on a CUDA
machine; needs the ``bench`` extra). Each round synchronises, so a round is one eager call as a
training loop pays it. The full grid, with device time against the bandwidth floor and the
baselines, is ``rlscan-bench``."""
import json

import pytest
import torch

from rlscan.tune import grid

CELLS = [("gae", 4096, 128), ("gae", 8, 65536), ("vtrace", 16384, 512),
         ("episodic_cumsum", 1, 1048576)]


@pytest.mark.benchmark
@pytest.mark.parametrize("layout", ["time_last", "time_major"])
@pytest.mark.parametrize("est, N, T", CELLS, ids=[f"{e}-{n}x{t}" for e, n, t in CELLS])
def test_eager_call_time(benchmark, est, N, T, layout, monkeypatch):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    import rlscan._layout
    monkeypatch.setattr(rlscan._layout, "POISON_OUTPUTS", False)   # no NaN fill: a user's call
    call = grid.place(grid.draw(grid.Cell(est, N, T, "float32", layout), 0, "cuda"), layout, "cuda")

    def once():
        out = grid.run(est, call)
        torch.cuda.synchronize()
        return out

    # the first call compiles, the second records the launches later calls replay: a training
    # loop's steady state starts at the third (without these pytest-benchmark calibrated on the
    # compile and ran 5 rounds of 95-220 us, H100, 2026-12-06)
    once()
    once()
    out = benchmark(once)
    assert all(torch.isfinite(o).all() for o in out)


@pytest.mark.parametrize("argv, expected", [
    (["--dtypes", "float64"], "--dtypes: 'float64': expected a comma list of float32, bfloat16"),
    (["--layouts", "time_major,rows"], "--layouts: 'rows': expected a comma list of time_last"),
    (["--baselines", "compile,jit"], "--baselines: 'jit': expected a comma list of compile, loop"),
    (["--estimators", "gea"], "--estimators: 'gea': expected a comma list of discounted_returns"),
    (["--shapes", "4096x"], "--shapes: shape '4096x': expected ROWSxSTEPS")])
def test_bench_rejects_bad_arguments_before_any_gpu_work(argv, expected, capsys, monkeypatch):
    from rlscan.tune import bench
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)   # would go on to measure
    monkeypatch.setattr(bench, "copy_bandwidth", lambda: pytest.fail("measured a bad call"))
    with pytest.raises(SystemExit) as e:
        bench.main(argv)
    assert e.value.code == 2 and expected in capsys.readouterr().err


def test_bench_without_baselines_or_cuda_says_so(capsys, monkeypatch):
    from rlscan.tune import bench
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert bench.main(["--baselines", "", "--layouts", "time_major, time_last"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


def test_bench_markdown_lists_every_cell_and_says_how_loop_was_warmed(tmp_path):
    """rlscan-bench's JSON holds the run as measured; its table: one line per cell with its
    figures, the bare launch timed beside its loop, absent figures (baselines, an older run's
    bare launch) as dashes, then the targets met and any baseline's error,
    and the header says how long the process made eager calls before the loop figures and what
    a bare launch cost on the host at the grid's start and end."""
    from rlscan.tune import bench
    meta = dict(device="GPU", date="2026-12-01", torch="2", triton="3", bandwidth_tb_s=4.26,
                host_warmup_s=2.0, host_start={"bare_triton_launch": 11.42, "torch_add": 8.1},
                host_end={"bare_triton_launch": 17.6, "torch_add": 12.5})
    rows = [dict(estimator="gae", N=4096, T=128, dtype="float32", layout="time_last",
                 full_us=30.0, loop_us=18.9, bare_launch_loop_us=11.3, device_us=3.6,
                 floor_us=2.5, device_over_floor=1.44, loop_device_us=1266.5,
                 speedup_vs_loop=351.8),
            # a row of an older run, before each cell timed a bare launch beside its loop
            dict(estimator="gae", N=8, T=65536, dtype="float32", layout="time_last",
                 full_us=40.0, loop_us=26.0, device_us=7.1, floor_us=2.5,
                 device_over_floor=2.84, loop_device_us=None,
                 loop_error="RuntimeError: Cannot copy between CPU and CUDA tensors")]
    bench.save(rows, meta, str(tmp_path))
    assert json.loads((tmp_path / "bench.json").read_text()) == {"meta": meta, "results": rows}
    text = (tmp_path / "bench.md").read_text()
    assert "loop after 2 s of eager calls" in text
    assert ("at the start, a bare Triton launch 11.4, torch.add 8.1; at the end, a bare Triton "
            "launch 17.6, torch.add 12.5") in text
    assert ("| gae | 4096 | 128 | float32 | time_last | 30.0 | 18.9 | 11.3 | 3.6 | 2.5 | 1.44 "
            "| — | — | 1266.5 | 351.8 |") in text
    assert ("| gae | 8 | 65536 | float32 | time_last | 40.0 | 26.0 | — | 7.1 | 2.5 | 2.84 | — "
            "| — | — | — |") in text
    # then the targets (both cells under a 20 µs floor: within floor + 3 µs, one of
    # two), and why a baseline's column is empty
    assert "- float32 time_last: 2 cells" in text
    assert ("the rest within floor + 3 us: 1/2\n"
            "  - worst: gae 8x65536 7.1 us, floor 2.5 (+4.6)") in text
    assert ("## Baselines that did not run\n\n- loop: RuntimeError: Cannot copy between CPU and "
            "CUDA tensors\n") in text


def test_loop_pair_times_the_call_and_the_reference_in_turns(monkeypatch):
    """Each cell's loop and the bare launch beside it take turns (a rep of one, a rep of the
    other), so a host that slows down mid-cell slows both; each gets its own best rep."""
    from rlscan.tune import bench
    clock, order = [0.0], []                  # µs; which function each call was
    cost = {"fn": 18.0, "ref": 11.0}          # µs a call, a little more with every call

    class Event:
        def record(self):
            self.t = clock[0]

        def synchronize(self):
            pass

        def elapsed_time(self, end):          # ms, as CUDA events report
            return (end.t - self.t) / 1e3

    def timed(name):
        def f():
            order.append(name)
            clock[0] += cost[name]
            cost[name] += 0.001
        return f

    monkeypatch.setattr(bench, "_events", lambda: (Event(), Event()))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    fn_us, ref_us = bench.loop_pair_us(timed("fn"), timed("ref"), calls=4, reps=3)
    assert order[:2] == ["fn", "ref"]                       # one warm-up call each
    runs = [order[i:i + 4] for i in range(2, len(order), 4)]
    assert [r[0] for r in runs] == ["fn", "ref"] * 3 and all(len(set(r)) == 1 for r in runs)
    assert 18.0 < fn_us < 18.01 and 11.0 < ref_us < 11.01   # each one's best (first) rep
    assert bench.loop_pair_us(timed("fn"), None, calls=4, reps=2)[1] is None


def test_bench_rotates_enough_input_sets_that_l2_cannot_hold_them(monkeypatch):
    """A cell's device column rotates over input sets spanning three L2 caches (the tuner's
    rule), at least 4, so small shapes are not timed from L2; ``--sets N`` still forces N."""
    from rlscan.tune import bench
    per_set = grid.traffic_bytes(grid.draw(grid.Cell("gae", 8, 64, "float32", "time_last"), 0),
                                 grid.n_outputs("gae"))
    drawn, timed, draw = [], [], grid.draw
    monkeypatch.setattr(bench.grid, "draw", lambda cell, i, dev="cpu": drawn.append(i) or
                        draw(cell, i, "cpu"))
    monkeypatch.setattr(bench.grid, "place", lambda call, layout, dev: call)
    monkeypatch.setattr(bench, "device_us", lambda fns, **k: timed.append(len(fns)) or 1.0)
    monkeypatch.setattr(bench, "loop_pair_us", lambda f, g: (1.0, 1.0))
    monkeypatch.setattr(bench, "full_us", lambda f: 1.0)
    monkeypatch.setattr(bench, "bare_launch", lambda: None)
    l2 = 50 * per_set
    row = bench.bench_cell("gae", 8, 64, "float32", "time_last", [], 1e12, 0, l2)
    assert row["input_sets"] == timed[-1] == 150 and drawn == list(range(150))
    assert bench.bench_cell("gae", 8, 64, "float32", "time_last", [], 1e12, 0, per_set)[
        "input_sets"] == 4                                         # at least 4
    assert bench.bench_cell("gae", 8, 64, "float32", "time_last", [], 1e12, 7, l2)[
        "input_sets"] == 7 == timed[-1]


def test_device_us_puts_every_input_set_in_the_graph_equally_often(cuda_graph_stand_ins):
    from rlscan.tune import bench
    ran = []
    cuda_graph_stand_ins()
    fns = [(lambda i=i: ran.append(i)) for i in range(7)]
    bench.device_us(fns, calls=20, replays=2)
    captured = ran[2:]                        # after the two warm-up calls
    assert len(captured) == 21 and all(captured.count(i) == 3 for i in range(7))


@pytest.mark.parametrize("back_to_back", [False, True])
def test_device_us_waits_after_each_replay_or_once_after_all_of_them(cuda_graph_stand_ins,
                                                                    monkeypatch, back_to_back):
    """Timed from an idle GPU, each replay's end event is waited for before the next replay is
    enqueued; back to back (the tuner's way), every replay is enqueued first and the device is
    waited for once. Either way each replay's pair of events gives one timing, per call."""
    import torch
    from rlscan.tune import bench
    log = []

    class Event:
        def __init__(self, **kw):
            pass

        def record(self):
            log.append("record")

        def synchronize(self):
            log.append("wait")

        def elapsed_time(self, end):
            return 2.0                       # ms a replay
    cuda_graph_stand_ins(lambda: log.append("replay"))
    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: log.append("wait all"))
    assert bench.device_us([lambda: None], calls=20, replays=3,
                           back_to_back=back_to_back) == pytest.approx(100.0)
    timed = log[log.index("record"):]
    if back_to_back:
        assert timed == ["record", "replay", "record"] * 3 + ["wait all"]
    else:
        assert timed == ["record", "replay", "record", "wait"] * 3


@pytest.mark.parametrize("hold", [True, False])
def test_device_us_holds_every_captured_calls_outputs_through_the_replays(cuda_graph_stand_ins,
                                                                        hold):
    # outputs freed inside the capture would be the next call's block: its writes could stay in L2
    import weakref
    from rlscan.tune import bench

    class Output:
        pass
    made, alive = [], []
    cuda_graph_stand_ins(lambda: alive.append(sum(r() is not None for r in made)))

    def call():
        out = Output()
        made.append(weakref.ref(out))
        return out
    bench.device_us([call, call], calls=20, replays=2, hold_outputs=hold)
    assert len(made) == 22                    # two warm-up calls, then 20 captured
    if hold:
        assert alive and all(n == 20 for n in alive)
    else:
        assert alive and all(n <= 1 for n in alive)   # at most the last one, still named
    assert all(r() is None for r in made)     # none outlives the measurement


def test_cpu_path_benchmark_times_an_earlier_revision_beside_the_shipped_path(tmp_path,
                                                                               monkeypatch):
    """benchmarks/cpu_path.py --against REV loads rlscan/_torch_path.py as it was at REV (here
    the checkout's HEAD), checks its outputs against the shipped path's, and adds its column."""
    import importlib.util
    import subprocess
    import sys
    from pathlib import Path

    from rlscan import _torch_path
    root = Path(__file__).resolve().parent.parent
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True).returncode:
        pytest.skip("not a git checkout")
    monkeypatch.setenv("RLSCAN_INTERPRET", "0")           # the torch path, not the interpreter
    spec = importlib.util.spec_from_file_location("cpu_path", root / "benchmarks" / "cpu_path.py")
    cpu_path = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cpu_path)
    cpu_path.main(["--estimators", "gae,episodic_cumsum", "--shapes", "4x64", "--reps", "1",
                   "--against", "HEAD", "--out", str(tmp_path)])
    rows = json.loads((tmp_path / "cpu_path.json").read_text())["rows"]
    assert [r["estimator"] for r in rows] == ["gae", "episodic_cumsum"]
    assert all(r["at HEAD"] > 0 and r["shipped"] > 0 for r in rows)
    text = (tmp_path / "cpu_path.md").read_text()
    assert "| at HEAD | at HEAD ÷ shipped |" in text
    assert text.count("| 4×64 |") == 2
    loaded = sys.modules["rlscan._torch_path_at_HEAD"]       # a module of its own, from git
    assert loaded is not _torch_path and loaded.run is not _torch_path.run


@pytest.mark.gpu
@pytest.mark.parametrize("est", ["gae", "vtrace", "eligibility_traces", "discounted_returns"])
def test_bench_eager_loop_baseline_is_timed_in_a_cuda_graph(est):
    """The eager-loop baseline (the torch path with a sequential scan) runs inside the device
    column's CUDA graph: nothing in it may copy from pageable host memory (a scalar γ made with
    torch.tensor did, and the baseline's column went empty on the H100)."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from rlscan.tune import bench
    row = bench.bench_cell(est, 8, 64, "float32", "time_last", ["loop"], bw=1e12, sets=4)
    assert "loop_error" not in row, row.get("loop_error")
    assert row["loop_device_us"] > 0 and row["speedup_vs_loop"] > 0


def test_grid_report_counts_the_targets_and_reads_a_saved_stdout_like_its_json(tmp_path,
                                                                              capsys):
    """benchmarks/grid_report.py: a cell with a floor of 20 µs or more meets the target within
    1.25x of it, any other within floor + 3 µs; a run's saved stdout reads as its JSON does."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("grid_report",
                                                  root / "benchmarks" / "grid_report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    cells = [("gae", 8, 262144, 24.0, 20.0), ("gae", 16, 128, 40.0, 30.0),   # 1.20x, 1.33x
             ("vtrace", 4, 64, 5.9, 3.0), ("vtrace", 8, 64, 6.2, 3.0)]       # +2.9, +3.2
    rows = [dict(estimator=e, N=n, T=t, dtype="float32", layout="time_last", device_us=d,
                 floor_us=f) for e, n, t, d, f in cells]
    (tmp_path / "a.json").write_text(json.dumps({"meta": {}, "results": rows}))
    (tmp_path / "b.log").write_text("warning: noise\n" + "".join(
        f"[{i}/4] {e:18s} {n:>6d}x{t:<7d} float32  time_last  device {2 * d:8.1f} floor "
        f"{f:7.1f} ({2 * d / f:5.2f}x) loop 9.0\n" for i, (e, n, t, d, f) in enumerate(cells)))
    a, b = report.load(tmp_path / "a.json"), report.load(tmp_path / "b.log")
    assert a.keys() == b.keys() and len(a) == 4
    text = "\n".join(report.target_lines(a))
    assert "within 1.25x: 1/2" in text and "within floor + 3 us: 1/2" in text
    assert "gae 16x128 40.0 us, floor 30.0 (1.33x)" in text and "vtrace 8x64" in text
    assert "vtrace 4x64" not in text
    assert "geomean 2.000" in report.against(b, a)[0]
    report.main([str(tmp_path / "b.log"), "--against", str(tmp_path / "a.json"),
                 "--md", str(tmp_path / "r.md")])
    assert (tmp_path / "r.md").read_text() == capsys.readouterr().out
