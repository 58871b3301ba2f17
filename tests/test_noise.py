"""A quiet CI gate: each case's noise floor from A/A runs, and verdicts judged beyond it.
A case that moves 30% between launches with nothing changed is not called slower at 30%
once its floor is learnt, and a 1.5x slowdown beyond the floor still is (no JAX)."""

import numpy as np
import pandas as pd

from podscale.analysis.verdicts.compare import verdicts
from podscale.analysis.verdicts.noise import floors


def test_a_floor_is_the_run_to_run_spread():
    times = pd.DataFrame({"r1": [1.0, 2.0], "r2": [1.1, np.nan], "r3": [1.25, np.nan]},
                         index=["wobbly", "once"])
    got = floors(times)
    assert list(got) == ["wobbly"]  # a case in one run has no floor
    pairs = np.abs(np.log([1.1 / 1.0, 1.25 / 1.0, 1.25 / 1.1]))
    assert np.isclose(got["wobbly"], np.expm1(np.percentile(pairs, 95)), rtol=1e-12)


def test_verdicts_beyond_the_floor():
    rng = np.random.default_rng(0)
    a = {c: 1e-3 * np.exp(rng.normal(0, 0.01, 5)) for c in ("wobbly", "steady")}
    b = {"wobbly": a["wobbly"] * 1.3, "steady": a["steady"] * 1.5}
    plain = verdicts(a, b, threshold=0.05, alpha=0.05).set_index("case_id")
    assert plain.loc["wobbly", "verdict"] == "slower"  # at --threshold alone: an alarm
    gated = verdicts(a, b, threshold=0.05, alpha=0.05,
                     noise={"wobbly": 0.4, "steady": 0.3}).set_index("case_id")
    assert gated.loc["wobbly", "verdict"] == "~" and gated.loc["wobbly", "threshold"] == 0.4
    assert gated.loc["steady", "verdict"] == "slower"  # 1.5x is beyond its 30% floor
