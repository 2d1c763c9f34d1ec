"""rlscan.verify: a property-based correctness framework for rlscan's kernels (and for any
implementation with rlscan's signature), against float64 sequential references.

* ``reference``  — the normative float64 loops of ALGORITHMS.md §3
* ``strategies`` — Hypothesis ``@composite`` strategies for shapes, layouts, dtypes, flags, γ/λ,
  thresholds, ratios, values, and NaN/inf planted where the math must ignore it
* ``tolerance``  — error bounds from a rounding-error model (worst error/bound is reported)
* ``properties`` (with ``checks``, ``identities``, ``exact``) — what must hold, beyond matching
  the reference
* ``runner``, ``cli`` — ``rlscan-verify``; ``profiles`` — the Hypothesis profiles ci/dev/thorough
* ``mutants`` — planted bugs the verifier must catch; ``examples`` — every failure ever found
"""
