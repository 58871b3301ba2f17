"""Anomaly-triggered captures (``--profile-anomalies K``): a step much slower than the
steps before it opens a profiler capture of the next K steps on every process.

**Detection** runs on the watcher thread, where each call's ready time arrives: the step's
period (ready to ready) against the last ``HISTORY`` periods of the step computation (at
least ``MIN_HISTORY``) is anomalous above ``max(median + 3·MAD, MIN_RATIO × median)`` —
ml-goodput-measurement's rule, with a floor so that a machine's scheduling noise on short
steps is not one.

**Agreement.** Hosts dispatch asynchronously, so by the time one process sees a slow step
the others may be steps ahead of their devices: a window by step index cannot be agreed
in time. A capture here is by wall time instead. The first process to see an anomaly
writes ``podscale/attach/anomaly/<n>`` in the coordination service's store (the first
writer wins); a listener thread on every process waits on that key and starts its
profiler at once, stops it once K more steps are ready, and numbers the captured
executions by their launch: each execution's end is matched to the first step whose
ready time follows it (both on the process's clock). Devices that meet in the step's
collectives run the same steps at the same wall time, so every process holds the steps
after the anomalous one. The record is a ``capture`` like a fixed window's, with the
trigger (step, process); ``ANOMALY_WINDOWS`` at most, one at a time, and none while a
fixed window is open.

**Episodes.** A slow stretch is one anomaly: its first anomalous step proposes, and the
stretch proposes no more until ``CALM`` steps in a row are back under the bar it began
with (:class:`Episodes`); a process whose stretch began by the step after the job's
trigger takes that trigger for its own. Nothing proposes while a capture is under way or
in the ``CALM`` steps after it (starting and stopping the profiler stall steps); a stretch
still on after them proposes its first step then.
"""

from __future__ import annotations

import statistics
import threading
from bisect import bisect_left, insort
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from podscale.core.defaults import ANOMALY_RATIO
from podscale.core.profilerecord import record
from podscale.startup.jaxapi import CoordinationClient

HISTORY = 50
MIN_HISTORY = 20
MIN_RATIO = ANOMALY_RATIO
#: anomaly captures per run
ANOMALY_WINDOWS = 3
#: steps in a row back under its bar that end an episode
CALM = 3
PREFIX = "podscale/attach/anomaly/"
POLL_MS = 200
#: a capture waits at most this many median steps (and this long) for its K steps
WAIT_STEPS, WAIT_MAX_S = 20, 60.0


def _median(ranked: Sequence[float]) -> float:
    n = len(ranked)
    return ranked[n // 2] if n % 2 else (ranked[n // 2 - 1] + ranked[n // 2]) / 2


def anomalous(period: float, history: Sequence[float], ordered: bool = False) -> bool:
    """Whether ``period`` is an anomaly against ``history`` (the rule above; ``ordered``:
    ``history`` is sorted already). A period under ``MIN_RATIO`` x the median, every usual
    step, is answered from the median alone: the MAD is computed for the rare rest."""
    if len(history) < MIN_HISTORY:
        return False
    ranked = history if ordered else sorted(history)
    if period <= MIN_RATIO * _median(ranked):
        return False
    return period > bar(ranked)


def bar(ranked: Sequence[float]) -> float:
    """The period above which a step is anomalous against the sorted ``ranked``."""
    med = _median(ranked)
    return max(MIN_RATIO * med, med + 3 * statistics.median(abs(x - med) for x in ranked))


class Episodes:
    """Which anomalous steps propose a capture, once per episode. An episode begins at an
    anomalous step (its onset) and lasts until ``CALM`` steps in a row are back under the
    bar it began with (the history's own bar rises as slow steps fill it, and one quick
    step in a slow stretch does not end it). An episode the job took (its onset by the
    step after the job's trigger: processes may number one onset a step apart) proposes
    nothing; nor does any step while a capture is under way or in the ``CALM`` steps after
    it (a capture's own start and stop stall the steps): an episode still on after them
    proposes its onset then."""

    def __init__(self) -> None:
        self.bar: float | None = None  # the current episode's, at its onset
        self.calm = 0  # steps in a row under it
        self.onset = -1
        self.done = True  # the current episode proposed, or the job took it
        self.covered = -2  # the last step proposed or taken
        self.quiet: float = -1  # no proposal at a step up to this one
        self.lock = threading.Lock()  # the decision and a taken word: one at a time

    def propose(self, k: int, period: float, ranked: Sequence[float]) -> int | None:
        """Step ``k`` took ``period`` after the sorted ``ranked``: the onset of an episode
        to propose now, or None."""
        if self.bar is not None:
            self.calm = self.calm + 1 if period <= self.bar else 0
            if self.calm >= CALM:
                self.bar = None
        if self.bar is None:
            if not anomalous(period, ranked, ordered=True):
                return None
            self.bar, self.calm, self.onset = bar(ranked), 0, k
            self.done = self.covered >= k - 1
        if self.done or k <= self.quiet:
            return None
        self.done, self.covered = True, max(self.covered, self.onset)
        return self.onset

    def taken(self, step: int) -> None:
        """The job captures the anomaly at ``step``, from now."""
        self.covered, self.quiet = max(self.covered, step), float("inf")
        if self.bar is not None and self.onset <= step + 1:
            self.done = True

    def captured(self, seen: int) -> None:
        """The capture ended when ``seen`` steps were ready."""
        self.quiet = seen + CALM


def first_step(end_us: float, readies: list[tuple[int, int]]) -> int | None:
    """The step an execution ending at ``end_us`` was: the first whose ready time (the
    watcher's, just after the end) is not before it; ``readies`` sorted by time."""
    times = [r for _, r in readies]
    i = bisect_left(times, end_us)
    return readies[i][0] if i < len(readies) else None


def whole(rows: list[dict], readies: list[tuple[int, int]], began: int,
          stopped: int) -> list[dict]:
    """The captured executions numbered by their launch (the first by
    :func:`first_step`, the rest in order), less the partial ones: a step whose
    predecessor was ready before the profiler began (its first ops may predate the
    session) or which was not ready before it stopped (its last ones are missing)."""
    if not rows or "end_us" not in rows[0]:
        return []
    by_time = sorted(readies, key=lambda r: r[1])
    first = first_step(rows[0]["end_us"], by_time)
    if first is None:
        return []
    ready = dict(readies)
    out = []
    for i, r in enumerate(rows):
        k = first + i
        if ready.get(k - 1, -1) >= began and ready.get(k, stopped + 1) <= stopped:
            out.append({**r, "step": k})
    return out


class Anomalies:
    """The detector (``observe``, on the watcher thread) and the listener that captures
    on every process (``start``; ``joined`` gives it the job's store)."""

    def __init__(self, capture: Any, length: int, clock: Callable[[], int],
                 emit: Callable[[dict], None], stop: threading.Event) -> None:
        self.capture, self.length, self.clock, self.emit = capture, length, clock, emit
        self._stop = stop
        self.ready: dict[int, deque[tuple[int, int]]] = {}  # computation -> (k, ready)
        self.periods: dict[int, deque[float]] = {}
        self.ranked: dict[int, list[float]] = {}  # the same periods, sorted
        self.client: CoordinationClient | None = None
        self.process = 0
        self.step_name: str | None = None
        self.step_id = -1
        self.taken = 0  # windows captured (or begun)
        self.episodes = Episodes()
        self._words: deque[str] = deque()  # one process: proposals go here, not the store
        self._moved = threading.Condition()
        self.thread: threading.Thread | None = None

    def start(self) -> threading.Thread:
        """Listen: to this process's own proposals until the job is joined."""
        self.thread = threading.Thread(target=self._listen, name="podscale-anomaly",
                                       daemon=True)
        self.thread.start()
        return self.thread

    def joined(self, client: CoordinationClient, process: int) -> None:
        """From now on proposals go through the store (``client`` None: one process)."""
        self.process, self.client = process, client

    def observe(self, comp: Any, computations: list, ready_us: int, k: int) -> None:
        """The ``k``-th call of ``comp`` is ready: if it is the step, its period (from the
        call before it, where that one was seen) against the last."""
        if not self.capture.is_step(comp, computations):
            return
        self.step_name, self.step_id = comp.name, comp.id
        readies = self.ready.setdefault(comp.id, deque(maxlen=4 * HISTORY))
        periods = self.periods.setdefault(comp.id, deque(maxlen=HISTORY))
        ranked = self.ranked.setdefault(comp.id, [])
        if readies and readies[-1][0] == k - 1:
            period = ready_us - readies[-1][1]
            if self.thread is not None and self.taken < ANOMALY_WINDOWS:
                with self.episodes.lock:
                    onset = self.episodes.propose(k, period, ranked)
                    if onset is not None:
                        self._propose(onset)
            if len(periods) == HISTORY:  # the oldest leaves both
                del ranked[bisect_left(ranked, periods[0])]
            periods.append(period)
            insort(ranked, period)
        readies.append((k, ready_us))
        with self._moved:
            self._moved.notify_all()

    def _propose(self, k: int) -> None:
        word = f"{k}:{self.process}"
        if self.client is None:
            if not self._words:  # as the store's key: the first proposal waits, alone
                self._words.append(word)
            return
        try:  # the first writer wins; a later one finds the key taken
            self.client.key_value_set(f"{PREFIX}{self.taken}", word)
        except Exception:  # noqa: BLE001 - another process proposed first
            pass

    def _listen(self) -> None:
        while not self._stop.is_set() and self.taken < ANOMALY_WINDOWS:
            word = self._next_word()
            if word is None:
                continue
            step, _, by = word.partition(":")
            with self.episodes.lock:  # the job's anomaly: this process proposes none for it
                self.episodes.taken(int(step))
                self.taken += 1
            try:
                self._capture(int(step), int(by))
            except Exception as exc:  # noqa: BLE001 - the program runs on regardless
                self.emit(record({"kind": "capture_failed", "trigger": [int(step), int(by)],
                                  "error": f"{type(exc).__name__}: {exc}"}))
            with self.episodes.lock:
                self.episodes.captured(self._steps_seen())

    def _next_word(self) -> str | None:
        if self.client is None:
            if self._words:
                return self._words.popleft()
            self._stop.wait(POLL_MS / 1000)
            return None
        try:
            return str(self.client.blocking_key_value_get(f"{PREFIX}{self.taken}", POLL_MS))
        except Exception:  # noqa: BLE001 - nothing yet (a deadline), or the service gone
            return None

    def _steps_seen(self) -> int:
        d = self.ready.get(self.step_id)
        return d[-1][0] + 1 if d else 0

    def _capture(self, step: int, by: int) -> None:
        """Profile now until ``length`` more steps are ready, then reduce and record."""
        periods = [p for d in self.periods.values() for p in d]
        wait_s = min(WAIT_MAX_S, WAIT_STEPS * self.length *
                     (statistics.median(periods) / 1e6 if periods else 1.0) + 5)
        # the K steps after the one in flight (whose first ops may predate the session);
        # the trigger counts as seen (its watcher may not have noted it yet)
        target = max(self._steps_seen(), step + 1) + self.length + 1
        got = self.capture.wall(f"anomaly-{self.taken - 1}", self.step_name,
                                lambda: self._wait(target, wait_s))
        if got is None:  # a fixed window holds the profiler
            self.emit(record({"kind": "capture_skipped", "trigger": [step, by],
                              "reason": "the profiler was held (a --profile-steps/"
                                        "--profile-every window, or the program's own "
                                        "session)"}))
            return
        dest, rows, ops, spans, origin = got
        rows = whole(rows, self._readies(), spans[0][0], spans[1][0])
        steps = [rows[0]["step"], rows[-1]["step"] + 1] if rows else [step + 1, None]
        self.emit(record({"kind": "capture", "steps": steps, "file": str(dest), "rows": rows,
                          "ops": ops, "origin_us": origin, "trigger": [step, by],
                          "wall": spans, "cut": not rows}))

    def _readies(self) -> list[tuple[int, int]]:
        """The step computation's (k, ready) pairs, oldest first."""
        return list(self.ready.get(self.step_id, ()))

    def _wait(self, target: int, timeout_s: float) -> None:
        with self._moved:
            self._moved.wait_for(lambda: self._steps_seen() >= target or self._stop.is_set(),
                                 timeout=timeout_s)
