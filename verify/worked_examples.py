"""The worked examples of ALGORITHMS.md §4 as cases with their published outputs.

One row, T = 5: a termination at t=1, a truncation at t=3, the window ending mid-episode at t=4.
Inputs are rounded to float32 like every case; the published decimals are exact for the decimal
inputs, so they hold for the rounded ones to ~1e-7.
"""
import numpy as np

from .cases import Case, round_to


def _f32(x):
    return round_to(np.asarray(x, np.float64), "float32")


R = _f32([1.0, -0.5, 2.0, 0.5, 1.0])
V = _f32([0.5, 1.0, 0.8, 1.2, -0.4])
TERM = np.array([0, 1, 0, 0, 0], bool)
TRUNC = np.array([0, 0, 0, 1, 0], bool)
TRUNC_BOTH = np.array([0, 1, 0, 1, 0], bool)      # truncated also on the terminated step
BV = _f32([0.0, 0.0, 0.0, 2.0, 0.6])               # E2
BV_BOTH = _f32([0.0, 3.0, 0.0, 2.0, 0.6])
NV = _f32([1.0, 5.0, 1.2, 2.0, 0.6])               # E1; 5.0 at the terminated step is ignored
LOG_RATIO = _f32(np.log([0.5, 2.0, 1.5, 0.8, 1.1]))
G, LAM = float(np.float32(0.9)), float(np.float32(0.8))
LAM09 = float(np.float32(0.9))
Z = _f32([1.0, 2.0, 3.0, 4.0, 5.0])
DONES = np.array([0, 1, 0, 1, 0], bool)
ONES = np.ones(5)

GAE_ADV = [0.32, -1.5, 3.072, 1.1, 1.94]
GAE_RET = [0.82, -0.5, 3.872, 2.3, 1.54]
DISC = [0.55, -0.5, 4.07, 2.3, 1.54]


def _bw(est, **kw):
    return Case(est, dict(rewards=R, terminated=TERM, truncated=TRUNC, **kw))


WORKED_EXAMPLES = {
    "gae": [
        (_bw("gae", values=V, bootstrap_values=BV, gamma=G, lmbda=LAM),
         {"advantages": GAE_ADV, "returns": GAE_RET}),
        (_bw("gae", values=V, next_values=NV, gamma=G, lmbda=LAM),
         {"advantages": GAE_ADV, "returns": GAE_RET}),
        (Case("gae", dict(rewards=R, values=V, terminated=TERM, truncated=TRUNC_BOTH,
                          bootstrap_values=BV_BOTH, gamma=G, lmbda=LAM)),
         {"advantages": GAE_ADV, "returns": GAE_RET}),
    ],
    "lambda_returns": [
        (_bw("lambda_returns", values=V, bootstrap_values=BV, gamma=G, lmbda=LAM),
         {"out": GAE_RET}),
        (_bw("lambda_returns", next_values=NV, gamma=G, lmbda=LAM), {"out": GAE_RET}),
    ],
    "vtrace": [
        (_bw("vtrace", values=V, bootstrap_values=BV, log_ratio=LOG_RATIO, gamma=G,
             rho_bar=1.2, c_bar=0.95),
         {"vs": [0.39, -0.8, 4.2884, 2.08, 1.734],
          "pg_advantages": [-0.11, -1.8, 3.6864, 0.88, 2.134]}),
        (_bw("vtrace", values=V, next_values=NV, log_ratio=LOG_RATIO, gamma=G, lmbda=LAM09,
             rho_bar=1.2, c_bar=0.95),
         {"vs": [0.471, -0.8, 4.21316, 2.08, 1.734],
          "pg_advantages": [-0.11, -1.8, 3.6864, 0.88, 2.134]}),
        (_bw("vtrace", values=V, bootstrap_values=BV, log_ratio=LOG_RATIO, gamma=G,
             lmbda=LAM09, rho_bar=1.2, c_bar=0.95, pg_bootstrap="lambda_mix"),
         {"vs": [0.471, -0.8, 4.21316, 2.08, 1.734],
          "pg_advantages": [-0.029, -1.8, 3.59136, 0.88, 2.134]}),
    ],
    "discounted_returns": [
        (_bw("discounted_returns", values=V, bootstrap_values=BV, gamma=G), {"out": DISC}),
        (_bw("discounted_returns", next_values=NV, gamma=G), {"out": DISC}),
        (_bw("discounted_returns", gamma=G), {"out": [0.55, -0.5, 2.45, 0.5, 1.0]}),
        (Case("discounted_returns", dict(rewards=R, terminated=TERM, truncated=TRUNC_BOTH,
                                         values=V, bootstrap_values=BV_BOTH, gamma=G)),
         {"out": DISC}),
    ],
    "retrace": [
        (_bw("retrace", q_taken=V, expected_next_q=_f32([1.1, 7.0, 1.0, 2.0, 0.6]),
             log_ratio=LOG_RATIO, gamma=G, lmbda=LAM09, c_bar=1.0),
         {"out": [0.775, -0.5, 3.6128, 2.3, 1.54]}),
    ],
    "eligibility_traces": [
        (Case("eligibility_traces", dict(inputs=Z, dones=DONES, gamma=G, lmbda=LAM)),
         {"out": [1, 2.72, 3, 6.16, 5]}),
        (Case("eligibility_traces", dict(inputs=Z, dones=DONES, gamma=G, lmbda=LAM,
                                         seed=np.array(10.0))),
         {"out": [8.2, 7.904, 3, 6.16, 5]}),
        (Case("eligibility_traces", dict(inputs=Z, dones=DONES, gamma=G, lmbda=LAM,
                                         seed=np.array(10.0), done_prev=np.array(True))),
         {"out": [1, 2.72, 3, 6.16, 5]}),
    ],
    "episodic_cumsum": [
        (Case("episodic_cumsum", dict(inputs=R, dones=DONES)), {"out": [1, 0.5, 2, 2.5, 1]}),
        (Case("episodic_cumsum", dict(inputs=ONES, dones=DONES)), {"out": [1, 2, 1, 2, 1]}),
        (Case("episodic_cumsum", dict(inputs=ONES, dones=np.array([1, 0, 1, 0, 1], bool),
                                      boundary="starts_at")), {"out": [1, 2, 1, 2, 1]}),
    ],
    "linear_scan": [],
}
