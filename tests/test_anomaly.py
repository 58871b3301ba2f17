"""Anomaly-triggered captures: the detector's rule on planted series, and the numbering of
a wall-time capture's executions by their launch, partial ones left out (no processes)."""

import numpy as np

from podscale.attach.anomaly import HISTORY, MIN_HISTORY, anomalous, first_step, whole


def test_rule_ignores_noise_and_finds_a_planted_slow_step():
    rng = np.random.default_rng(7)
    periods = list(6000 * rng.lognormal(0, 0.25, 400))  # 6 ms steps, 25% log-sd noise
    fired = [k for k in range(MIN_HISTORY, len(periods))
             if anomalous(periods[k], periods[max(0, k - HISTORY):k])]
    assert fired == []
    periods[300] *= 5  # one step 5x slower
    assert anomalous(periods[300], periods[250:300])
    assert not anomalous(periods[300], periods[290:300])  # too little history to judge
    # a step 3x the median is scheduling noise on a busy machine, not an anomaly
    assert not anomalous(3 * float(np.median(periods[250:300])), periods[250:300])


def test_executions_numbered_by_launch_and_partial_ones_left_out():
    # steps 10..14 ready every 10 ms; the profiler ran from 19.95 ms to 43.5 ms
    readies = [(k, 10_000 * (k - 9)) for k in range(10, 15)]  # 10 ms .. 50 ms
    assert first_step(19_900, readies) == 11 and first_step(20_000, readies) == 11
    assert first_step(60_000, readies) is None
    # executions ending at 19.9 (step 11, begun before the profiler), 29.9 (12), 39.9 (13)
    # and 43 (step 14, stopped before its end): only 12 and 13 are whole
    rows = [{"step": i, "end_us": e} for i, e in enumerate((19_900, 29_900, 39_900, 43_000))]
    kept = whole(rows, readies, began=19_950, stopped=43_500)
    assert [r["step"] for r in kept] == [12, 13]
    # begun at 21 ms, step 12 (which followed step 11's end at 20 ms) is partial too
    assert [r["step"] for r in whole(rows, readies, 21_000, 43_500)] == [13]
    assert whole(rows, readies, began=0, stopped=60_000)[0]["step"] == 11
    assert whole([{"step": 0}], readies, 0, 1) == []  # no clock to place it: none
