"""``RLSCAN_TEST_SHARD=i/n`` (conftest.py): n processes split the suite between them."""
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _collect(shard):
    env = dict(os.environ)
    env.pop("RLSCAN_TEST_SHARD", None)
    if shard is not None:
        env["RLSCAN_TEST_SHARD"] = shard
    p = subprocess.run([sys.executable, "-m", "pytest", "test_bad_input.py", "-q",
                        "--collect-only", "-p", "no:cacheprovider"], cwd=HERE, env=env,
                       capture_output=True, text=True)
    return p.returncode, [line for line in p.stdout.splitlines() if "::" in line], p.stderr


def test_shards_partition_the_suite_and_reject_a_bad_spec():
    rc, whole, _ = _collect(None)
    assert rc == 0 and len(whole) > 10
    parts = [_collect(f"{i}/3")[1] for i in range(3)]
    assert sorted(sum(parts, [])) == sorted(whole)                 # each test in one shard
    assert max(map(len, parts)) - min(map(len, parts)) <= 1        # round robin: balanced
    rc, _, err = _collect("3/3")
    assert rc != 0 and "RLSCAN_TEST_SHARD" in err
