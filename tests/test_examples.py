"""The scripts in examples/ run and pass their own checks (each exits with a message if rlscan
disagrees with what it compares against), at small sizes, on the CPU path."""
import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize("script, argv", [
    ("quickstart.py", []),
    ("ppo_rollout.py", ["--steps", "24", "--envs", "16"]),
    ("llm_padded.py", ["--batch", "3", "--max-len", "40"]),
])
def test_example_runs_and_passes_its_own_checks(script, argv, monkeypatch, capsys):
    monkeypatch.setenv("RLSCAN_INTERPRET", "0")
    monkeypatch.setattr("sys.argv", [script, *argv])
    runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    out = capsys.readouterr().out
    assert "device cpu" in out or "device: cpu" in out
