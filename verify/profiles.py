"""Hypothesis profiles and the example budget each one buys.

* ``ci``: derandomized (the same examples on every run), no example database, no deadline
  (Triton JIT compiles and the interpreter blow any deadline). Selected when ``CI=true``.
* ``dev``: random examples, the local database replays past failures first.
* ``thorough``: many examples and long horizons, for a GPU.

``HYPOTHESIS_PROFILE`` overrides the choice. A profile also fixes how many examples a property
gets (``base_examples`` times the property's weight) and the largest shapes the strategies draw
(:func:`budget`); the interpreter runs every element through Python, so it gets small shapes.
"""
import os
from typing import NamedTuple, Optional, Tuple

from hypothesis import HealthCheck, Phase, Verbosity, settings

PROFILES = ("ci", "dev", "thorough")
_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
            HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture]

settings.register_profile("ci", derandomize=True, database=None, deadline=None, max_examples=30,
                          print_blob=False, suppress_health_check=_SLOW_OK)
settings.register_profile("dev", deadline=None, max_examples=100, suppress_health_check=_SLOW_OK)
settings.register_profile("thorough", deadline=None, max_examples=600,
                          suppress_health_check=_SLOW_OK)

# examples per property at weight 1.0
BASE_EXAMPLES = {"ci": 30, "dev": 100, "thorough": 600}
# examples every estimator gets at least (rlscan-verify tops up its reference-match run): the
# weights alone gave eligibility traces, with fewer properties, 1983 (H200, 2026-11-30)
MIN_PER_ESTIMATOR = {"thorough": 2000}


class Budget(NamedTuple):
    """The largest shapes a strategy may draw."""
    max_rows: int
    max_T: int
    chunk_edges: Tuple[int, ...]   # block/chunk lengths whose edges (L-1, L, L+1) get drawn


# (profile, backend) -> budget. The interpreter scans a chunk element by element in Python,
# and its chunk is 64 steps (rlscan/kernels/launch.py), so T <= 70 still crosses one edge.
_BUDGETS = {
    ("ci", "interpret"): Budget(6, 70, (8, 16, 32, 64)),
    ("dev", "interpret"): Budget(8, 140, (16, 32, 64, 128)),
    ("thorough", "interpret"): Budget(17, 260, (16, 64, 128, 256)),
    ("ci", "torch"): Budget(8, 130, (16, 32, 64, 128)),
    ("dev", "torch"): Budget(12, 300, (32, 64, 128, 256)),
    ("thorough", "torch"): Budget(33, 1100, (64, 128, 256, 512, 1024)),
    ("ci", "cuda"): Budget(33, 1100, (64, 128, 256, 1024)),
    ("dev", "cuda"): Budget(65, 2100, (64, 128, 256, 512, 1024, 2048)),
    # thorough on a GPU: its float64 references and error bounds run sequentially over time on
    # the CPU, ~0.1 s an example at 2100 steps; 8 estimators in parallel fit 2000 examples each
    # in ~5 minutes of an H200 host
    ("thorough", "cuda"): Budget(130, 2100, (64, 128, 256, 512, 1024, 2048)),
}


def select(name: Optional[str] = None) -> str:
    """The profile to use: ``name``, else HYPOTHESIS_PROFILE, else ``ci`` under CI, else dev."""
    if name is None:
        name = os.environ.get("HYPOTHESIS_PROFILE") or (
            "ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "dev")
    if name not in PROFILES:
        raise ValueError(f"unknown Hypothesis profile {name!r}; expected one of {PROFILES}")
    return name


def load(name: Optional[str] = None) -> str:
    """Select and load a profile (what test modules call at import); returns its name."""
    name = select(name)
    settings.load_profile(name)
    return name


def budget(profile: str, backend: str) -> Budget:
    return _BUDGETS[(profile, backend)]


def examples(profile: str, weight: float = 1.0, base: Optional[int] = None) -> int:
    """Examples for a property of ``weight`` under ``profile``; ``base`` overrides the
    profile's examples at weight 1."""
    n = BASE_EXAMPLES[profile] if base is None else base
    return max(1, round(n * weight))


def run_settings(profile: str, max_examples: int, seed: Optional[int] = None) -> settings:
    """Settings for one property run: the profile, with quiet reporting (the caller prints its own
    reproducer) and one bug per run. A ``seed`` turns derandomization off so it takes effect."""
    kw = dict(max_examples=max_examples, report_multiple_bugs=False, verbosity=Verbosity.quiet,
              phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
    if seed is not None:
        kw["derandomize"] = False
    return settings(settings.get_profile(profile), **kw)
