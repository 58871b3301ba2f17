"""Anomaly-triggered captures: the detector's rule on planted series, and the numbering of
a wall-time capture's executions by their launch, partial ones left out (no processes)."""

import numpy as np

from podscale.attach.anomaly import HISTORY, MIN_HISTORY, Episodes, anomalous, first_step, whole


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


def proposals(periods: list[float], job: dict[int, tuple[str, int]] | None = None) -> list:
    """(step, onset) of each proposal, over the last ``HISTORY`` periods as a process keeps
    them; ``job``: before step k, the job took the anomaly at a step ("taken", step) or a
    capture ended with that many steps seen ("captured", seen)."""
    ep, out = Episodes(), []
    for k, period in enumerate(periods):
        what, n = (job or {}).get(k, ("", 0))
        if what:
            getattr(ep, what)(n)
        onset = ep.propose(k, period, sorted(periods[max(0, k - HISTORY):k]))
        if onset is not None:
            out.append((k, onset))
    return out


def test_a_slow_stretch_proposes_once_and_a_stall_just_before_it_does_not_hide_it():
    rng = np.random.default_rng(3)
    base = list(6000 * rng.lognormal(0, 0.1, 300))  # 6 ms steps
    stretch = [p + (50_000 if 120 <= k < 160 else 0) for k, p in enumerate(base)]
    assert proposals(stretch) == [(120, 120)]
    # the stretch stays one episode though its slow steps stop being anomalous as they
    # fill the history (from about step 145), and though one of them is quick
    assert not anomalous(stretch[150], sorted(stretch[100:150]))
    dip = stretch.copy()
    dip[130] = 6000
    assert proposals(dip) == [(120, 120)]
    # a busy machine's stall at 116, which the job captures until 121 steps are seen, and
    # the stretch 4 steps later: the stretch proposes its onset once the capture and the 3
    # steps after it are over (a 50-step cooldown after 116 had hidden the stretch)
    stall = stretch.copy()
    stall[116] = 40_000
    job = {117: ("taken", 116), 122: ("captured", 121)}
    assert proposals(stall, job) == [(116, 116), (125, 120)]
    # another process's word for the stretch arrives before this process sees its onset,
    # or this process sees the onset a step later: it proposes none for that episode
    taken = {119: ("taken", 120), 125: ("captured", 124)}
    assert proposals(stretch, taken) == []
    late = [p if k != 120 else base[120] for k, p in enumerate(stretch)]
    assert proposals(late, taken) == []
    # a stall in the steps right after a capture is its own (the profiler's stop): none
    stalls = base.copy()
    stalls[50] = stalls[56] = 40_000
    assert proposals(stalls) == [(50, 50), (56, 56)]
    assert proposals(stalls, {51: ("taken", 50), 56: ("captured", 55)}) == [(50, 50)]
    # a later episode is a new one
    again = stretch.copy()
    again[250] = 60_000
    assert proposals(again, {121: ("taken", 120), 125: ("captured", 124)}) == [
        (120, 120), (250, 250)]


def test_a_step_is_numbered_by_its_call_not_by_the_calls_seen():
    """The watcher is told each ready call's index among its computation's calls: a call
    it was not told of (another computation was the step then, or its ready time was
    unknown) leaves a gap in the numbering, and no period spans it."""
    import threading
    from types import SimpleNamespace

    from podscale.attach.anomaly import Anomalies
    from podscale.attach.windows import StepChoice

    capture = SimpleNamespace(is_step=StepChoice("local_step").is_step)
    watch = Anomalies(capture, 3, lambda: 0, lambda _: None, threading.Event())
    step = SimpleNamespace(name="local_step", id=0)
    for k in (0, 1, 2, 4, 5):  # call 3 never seen
        watch.observe(step, [step], 6000 * k, k)
    assert [k for k, _ in watch.ready[0]] == [0, 1, 2, 4, 5]
    assert list(watch.periods[0]) == [6000, 6000, 6000]  # 0-1, 1-2, 4-5: none over 2-4
