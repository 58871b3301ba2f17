"""The stuck-rank watchdog: where no supervisor watches each process (``podscale worker``
under mpirun, srun, on TPU VMs or in pods), every process watches the job itself.

Each process marks its progress (case, phase, iteration) as it goes; a daemon thread
publishes it every few seconds to the coordination service's key-value store that
``jax.distributed`` already runs (``podscale/progress/<process>``). When a process's own
progress has not moved for ``timeout`` seconds — it is stuck, or waiting at a barrier for
one that is — its thread reads every process's entry, names the processes that are behind
(the least advanced, and any whose entry stopped coming), process 0 records that in
``run.json`` (``failed``) and tells every process to end; all exit with code 5 together
(process 0, which hosts the coordination service, last), each with one line, so the
scheduler ends the job and no runtime prints abort text about a vanished peer.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from podscale.core import lines
from podscale.core.groups import slice_words
from podscale.startup.jaxapi import CoordinationClient

PREFIX = "podscale/progress/"
#: in order; "reference": inputs made, building the reference (a collective for some
#: workloads); "ready": at the barrier before compiling, waiting for the others
PHASES = ("joined", "prepare", "reference", "ready", "compile", "warmup", "timed", "chain",
          "device", "check", "exact check", "traced", "done")
#: phases that run the step
STEPPING = ("warmup", "timed", "chain", "device", "traced", "check", "exact check")
ITERATED = ("warmup", "timed", "traced")  # ... and those that count its iterations
STUCK_KEY = "podscale/stuck"  # the first message, for process 0 to record
STOP_KEY = "podscale/stop"  # process 0 recorded it: every process ends
LEAVING = "podscale/leaving/"  # each process, just before it exits
#: set once this process is ending: an error its main thread meets then (a peer gone from
#: a collective) is a consequence, not news, and is not reported
STOPPING = threading.Event()
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
        where = f"{self.phase} iteration {self.iteration}" if self.phase in ITERATED \
            else self.phase
        state = ("its step dispatched, waiting for the result (device or peers)"
                 if self.dispatched else "inside its step, not yet dispatched (host side)")
        return f"case {self.case} ({self.case_id}), {where}, {state}"


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
                  now: float, period: float, slices: int = 1) -> str:
    """The stuck job in words: who is behind, where, and which slices they are in."""
    late, silent = behind(entries, processes, now, period)
    parts = [f"no progress for {timeout:g}s (case timeout) in a job of {processes} "
             "processes"]
    if late:
        where = entries[late[0]]["where"]
        parts.append(f"behind: process{'es' if len(late) > 1 else ''} "
                     f"{','.join(map(str, late))}{slice_words(late, processes, slices)} "
                     f"at {where}")
    if silent:
        parts.append(f"no report from process{'es' if len(silent) > 1 else ''} "
                     f"{','.join(map(str, silent))}{slice_words(silent, processes, slices)} "
                     f"for {3 * period:g}s or more")
    waiting = [p for p in range(processes) if p not in late and p not in silent]
    if waiting:
        mine = "" if me.process in late else f" (process {me.process} at {me.describe()})"
        parts.append(f"the other {len(waiting)} waited {time.monotonic() - me.moved:.0f}s"
                     + mine)
    return "; ".join(parts)


def _try_get(client: CoordinationClient, key: str) -> str | None:
    try:
        return client.key_value_try_get(key)
    except Exception:  # noqa: BLE001 - absent key, or the service is gone
        return None


def peers_verdict(client: CoordinationClient) -> str | None:
    """The verdict a process has already reached (recorded, or asked process 0 to record),
    or None: what a process signalled by the launcher once a peer left (mpirun's SIGTERM)
    records in place of 'interrupted'."""
    return _try_get(client, STOP_KEY) or _try_get(client, STUCK_KEY)


def _record(client: CoordinationClient, message: str,
            on_stuck: Callable[[str], None] | None) -> None:
    """Process 0 records the message (``on_stuck``) and tells every process to end."""
    if on_stuck is not None:
        try:
            on_stuck(message)
        except Exception:  # noqa: BLE001 - the exit matters more
            pass
    try:
        client.key_value_set(STOP_KEY, message, allow_overwrite=True)
    except Exception:  # noqa: BLE001
        pass


def _leave(client: CoordinationClient, process: int, processes: int, period: float) -> None:
    """End this process (exit 5) in step with the others: each says it is leaving and
    waits (a few periods at most) for every other, so no runtime sees a peer or the
    coordination service vanish while it still runs (and prints its abort text); process
    0, which hosts the service, goes last. Errors the main thread meets meanwhile are
    not reported (:data:`STOPPING`)."""
    STOPPING.set()
    sys.stdout.flush()
    try:
        client.key_value_set(f"{LEAVING}{process}", "1", allow_overwrite=True)
    except Exception:  # noqa: BLE001 - the service is gone: just go
        os._exit(EXIT_STUCK)
    deadline = time.monotonic() + 4 * period
    while time.monotonic() < deadline:
        try:
            if len(client.key_value_dir_get(LEAVING)) >= processes:
                break
        except Exception:  # noqa: BLE001
            break
        time.sleep(0.05)
    if process == 0:
        time.sleep(0.3)  # the others' exits land before the service goes
    os._exit(EXIT_STUCK)


def _entries(client: CoordinationClient) -> dict[int, dict]:
    """Every process's latest published entry, by process."""
    out = {}
    for key, value in client.key_value_dir_get(PREFIX):
        try:
            out[int(key.rsplit("/", 1)[1])] = json.loads(value)
        except (ValueError, IndexError):
            continue
    return out


def _end(client: CoordinationClient, process: int, processes: int, period: float,
         message: str, on_stuck: Callable[[str], None] | None) -> None:
    """Say why this process ends; process 0 records it and tells everyone, any other
    asks process 0 to (and waits a while to be told); then leave with the others. From
    here the main thread's errors (and the launcher's SIGTERM once a peer left) are this
    ending's consequences (:data:`STOPPING`)."""
    STOPPING.set()
    lines.say(f"podscale: error: process {process}: {message}", err=True)
    if process == 0:
        _record(client, message, on_stuck)
    elif not _try_get(client, STOP_KEY):
        try:  # for process 0 to record; then it tells everyone to end
            client.key_value_set(STUCK_KEY, message, allow_overwrite=False)
        except Exception:  # noqa: BLE001 - another process set it first
            pass
        try:
            client.blocking_key_value_get(STOP_KEY, int(3 * period * 1000))
        except Exception:  # noqa: BLE001 - process 0 is gone too: end anyway
            pass
    _leave(client, process, processes, period)


def start(progress: Progress, client: CoordinationClient, processes: int, timeout: float,
          on_stuck: Callable[[str], None] | None = None, slices: int = 1
          ) -> Callable[[], None]:
    """Publish ``progress`` and end this process when it stops moving for ``timeout``;
    the function that stops watching, returning once the thread has ended. Call it before
    ``jax.distributed.shutdown``: a daemon thread still inside a call to the coordination
    service when the interpreter finalizes is unwound through jaxlib's C++ frames, and
    the process aborts ("FATAL: exception not rethrown") after a run that succeeded."""
    period = max(0.5, min(2.0, timeout / 5))
    done = threading.Event()
    clock_zero = time.time() - time.monotonic()

    def publish() -> None:
        entry = {"position": progress.position(), "where": progress.describe(),
                 "at": clock_zero + time.monotonic()}
        client.key_value_set(f"{PREFIX}{progress.process}", json.dumps(entry),
                             allow_overwrite=True)

    def end(message: str) -> None:
        _end(client, progress.process, processes, period, message, on_stuck)

    def watch() -> None:
        while not done.wait(period):
            told = _try_get(client, STOP_KEY if progress.process else STUCK_KEY)
            if told:  # another process saw it first: end with it
                end(told)
            try:
                publish()
                if time.monotonic() - progress.moved <= timeout:
                    continue
                if done.wait(period):  # (meanwhile: the others' latest entries)
                    return
                message = stuck_message(progress, _entries(client), processes, timeout,
                                        clock_zero + time.monotonic(), period, slices)
            except Exception as exc:  # the coordination service itself is gone
                message = (f"no progress for {timeout:g}s and the coordination service "
                           f"does not answer ({type(exc).__name__}: {exc})")
                if time.monotonic() - progress.moved <= timeout:
                    continue
            end(message)

    thread = threading.Thread(target=watch, name="podscale-watchdog", daemon=True)
    thread.start()

    def stop() -> None:
        done.set()
        if threading.current_thread() is not thread:
            thread.join(timeout=10 * period)

    return stop
