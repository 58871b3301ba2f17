"""The stuck-rank watchdog: where no supervisor watches each process (``podscale worker``
under mpirun, srun, on TPU VMs or in pods), every process watches the job itself.

Each process marks its progress (case, phase, iteration) as it goes; a daemon thread
publishes it every few seconds to the coordination service's key-value store that
``jax.distributed`` already runs (``podscale/progress/<process>``). When a process's own
progress has not moved for ``timeout`` seconds — it is stuck, or waiting at a barrier for
one that is — its thread reads every process's entry, names the processes that are behind
(the least advanced, and any whose entry stopped coming), process 0 records that in
``run.json`` (``failed``), and the process exits with code 5 so that the scheduler ends
the job. Every process does the same within a few seconds of each other.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

PREFIX = "podscale/progress/"
#: in order; "reference": inputs made, building the reference (a collective for some
#: workloads); "ready": at the barrier before compiling, waiting for the others
PHASES = ("joined", "prepare", "reference", "ready", "compile", "warmup", "timed", "check",
          "exact check", "traced", "done")
STEPPING = ("warmup", "timed", "traced", "check", "exact check")  # phases that run the step
STUCK_KEY = "podscale/stuck"  # the first message, for process 0 to record
RECORDED_KEY = "podscale/stuck-recorded"
EXIT_STUCK = 5


@dataclass
class Progress:
    """This process's position in the run, and when it last moved."""

    process: int
    case: int = -1
    case_id: str = ""
    phase: str = "joined"
    iteration: int = 0
    moved: float = field(default_factory=time.monotonic)
    #: the current step is dispatched (waiting for the device or its peers); False: still
    #: host-side, before dispatching it
    dispatched: bool = False

    def mark(self, case: int, case_id: str, phase: str, iteration: int = 0) -> None:
        self.case, self.case_id, self.phase, self.iteration = case, case_id, phase, iteration
        self.moved, self.dispatched = time.monotonic(), False

    def position(self) -> tuple[int, int, int, int]:
        return self.case, PHASES.index(self.phase), self.iteration, int(self.dispatched)

    def describe(self) -> str:
        if self.case < 0:
            return "joined, before the first case"
        if self.phase not in STEPPING:
            return f"case {self.case} ({self.case_id}), {self.phase}"
        state = ("its step dispatched, waiting for the result (device or peers)"
                 if self.dispatched else "inside its step, not yet dispatched (host side)")
        return f"case {self.case} ({self.case_id}), {self.phase} iteration {self.iteration}, " \
               f"{state}"


def behind(entries: dict[int, dict], processes: int, now: float, period: float
           ) -> tuple[list[int], list[int]]:
    """(processes least advanced, processes whose entry is missing or stale)."""
    stale = sorted(p for p in range(processes)
                   if p not in entries or now - entries[p]["at"] > 3 * period)
    live = {p: e for p, e in entries.items() if p not in stale}
    if not live:
        return [], stale
    least = min(tuple(e["position"]) for e in live.values())
    return sorted(p for p, e in live.items() if tuple(e["position"]) == least), stale


def stuck_message(me: Progress, entries: dict[int, dict], processes: int, timeout: float,
                  now: float, period: float) -> str:
    late, silent = behind(entries, processes, now, period)
    parts = [f"no progress for {timeout:g}s (case timeout) in a job of {processes} "
             "processes"]
    if late:
        where = entries[late[0]]["where"]
        parts.append(f"behind: process{'es' if len(late) > 1 else ''} "
                     f"{','.join(map(str, late))} at {where}")
    if silent:
        parts.append(f"no report from process{'es' if len(silent) > 1 else ''} "
                     f"{','.join(map(str, silent))} for {3 * period:g}s or more")
    waiting = [p for p in range(processes) if p not in late and p not in silent]
    if waiting:
        mine = "" if me.process in late else f" (process {me.process} at {me.describe()})"
        parts.append(f"the other {len(waiting)} waited {time.monotonic() - me.moved:.0f}s"
                     + mine)
    return "; ".join(parts)


def _try_get(client, key: str) -> str | None:
    try:
        return client.key_value_try_get(key)
    except Exception:  # noqa: BLE001 - absent key, or the service is gone
        return None


def _record(client, process: int, message: str, on_stuck: Callable[[str], None] | None,
            wait_s: float) -> None:
    """Process 0 records the message (``on_stuck``); any other process leaves it for
    process 0 and waits a moment for that before it exits (a scheduler ends the whole job
    at the first exit)."""
    if process == 0:
        if on_stuck is not None:
            try:
                on_stuck(message)
            except Exception:  # noqa: BLE001 - the exit matters more
                pass
        try:
            client.key_value_set(RECORDED_KEY, "1", allow_overwrite=True)
        except Exception:  # noqa: BLE001
            pass
        return
    try:
        client.key_value_set(STUCK_KEY, message, allow_overwrite=False)
    except Exception:  # noqa: BLE001 - another process set it first
        pass
    try:
        client.blocking_key_value_get(RECORDED_KEY, int(wait_s * 1000))
    except Exception:  # noqa: BLE001 - process 0 is gone too: exit anyway
        pass


def start(progress: Progress, client, processes: int, timeout: float,
          on_stuck: Callable[[str], None] | None = None) -> threading.Thread:
    """Publish ``progress`` and end this process when it stops moving for ``timeout``."""
    period = max(0.5, min(2.0, timeout / 5))
    clock_zero = time.time() - time.monotonic()

    def publish() -> None:
        entry = {"position": progress.position(), "where": progress.describe(),
                 "at": clock_zero + time.monotonic()}
        client.key_value_set(f"{PREFIX}{progress.process}", json.dumps(entry),
                             allow_overwrite=True)

    def entries() -> dict[int, dict]:
        out = {}
        for key, value in client.key_value_dir_get(PREFIX):
            try:
                out[int(key.rsplit("/", 1)[1])] = json.loads(value)
            except (ValueError, IndexError):
                continue
        return out

    def watch() -> None:
        while True:
            time.sleep(period)
            seen = _try_get(client, STUCK_KEY) if progress.process == 0 else None
            if seen:  # another process saw it first: process 0 records it and ends too
                message = seen
                print(f"podscale: error: process 0: {message}", flush=True)
                _record(client, 0, message, on_stuck, period)
                os._exit(EXIT_STUCK)
            try:
                publish()
                if time.monotonic() - progress.moved <= timeout:
                    continue
                time.sleep(period)  # the others' latest entries
                message = stuck_message(progress, entries(), processes, timeout,
                                        clock_zero + time.monotonic(), period)
            except Exception as exc:  # the coordination service itself is gone
                message = (f"no progress for {timeout:g}s and the coordination service "
                           f"does not answer ({type(exc).__name__}: {exc})")
                if time.monotonic() - progress.moved <= timeout:
                    continue
            print(f"podscale: error: process {progress.process}: {message}", flush=True)
            _record(client, progress.process, message, on_stuck, 3 * period)
            sys.stdout.flush()
            os._exit(EXIT_STUCK)

    thread = threading.Thread(target=watch, name="podscale-watchdog", daemon=True)
    thread.start()
    return thread
