"""A hang roll-call for an attached program (on by default; ``--hang-timeout S|auto|off``),
living in every process so it holds under any launcher: a process that stops while the
others wait for it in a collective is named, with where it stands, and the job ends.

A heartbeat ``SILENT_BEATS`` late is a span in which the whole process stood still (its
record's ``silent``): the analysis names it as the cause of a slow step.

Every ``BEAT_S`` each process publishes a heartbeat to the coordination service's
key-value store: how many of its calls have completed, the oldest one it waits for
(``local_step #5``), its last call, and whether it is compiling (:attr:`CallLog.compiling
<podscale.attach.calls.CallLog.compiling>`), dispatching, waiting for a result or running
Python. Process 0 watches them: when no process has completed a call for the timeout
(auto: the larger of 60 s and 10x the p99 step), some process is outside Python (an idle
pause of all together is not a hang) and none is compiling (a long compile is not one
either, up to ``COMPILE_GRACE`` timeouts), it calls the roll: every process writes all its
threads' Python stacks (``faulthandler``) to ``hang/process-<i>.txt`` under the run
directory and publishes where its main thread stands in the program's own code
(file:line and the line's text). Process 0 groups the processes by what they wait for,
names the odd ones — "process 1 at train.py:57 (time.sleep(3600)) in Python after
local_step #4; processes 0, 2 waiting for local_step #5 since 14:02:11" — and publishes
the verdict; every process prints it and exits with ``EXIT_HANG``, process 0 last (it
holds the coordination service), having written the verdict to the manifest when it
keeps one. Each process also sends its last launches
(:data:`podscale.attach.calls.RECENT`): where processes launched different computations
at one launch number, the verdict names that desync too (:mod:`podscale.core.desync`).

The same heartbeat carries a failure (with the roll-call off too): a process whose script
raised or exited with a code other than 0 publishes it (:func:`failed`) and leaves without
JAX's shutdown, which would wait for peers that wait for it in a collective; every other
process sees it at its next beat, prints it, ends its record and exits with the script's
code (:meth:`RollCall.follow`), process 0 last.
"""

from __future__ import annotations

import faulthandler
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from podscale.attach.recorder import Recorder
from podscale.attach.rollwords import verdict_text
from podscale.core import envnames, lines
from podscale.core import runfolder as rf
from podscale.core.profilerecord import record
from podscale.startup.jaxapi import CoordinationClient

#: set once the roll is called: an error the main thread meets from then on (a peer gone
#: from a collective) is a consequence, neither shown nor recorded (:mod:`.session`)
ENDING = threading.Event()
BEAT_S = 1.0
#: a heartbeat this many beats late means the whole process stood still meanwhile (stopped,
#: swapped out, a thread holding the interpreter): recorded as a ``silent`` span
SILENT_BEATS = 2.5
PREFIX = "podscale/attach/hang/"
EXIT_HANG = 5
ROLL_WAIT_S = 5.0
FAILED = f"{PREFIX}failed"
LEFT = f"{PREFIX}left/"
#: how long process 0 (which holds the coordination service) waits for the others to read
#: a failure and leave, before it leaves too
LEAVE_WAIT_S = 5.0
#: the auto timeout (no ``--hang-timeout``): the larger of AUTO_MIN_S and AUTO_FACTOR x
#: the p99 of process 0's ready-to-ready intervals (``PODSCALE_HANG_AUTO_MIN_S`` plants
#: a shorter floor for the tests)
AUTO_MIN_S = 60.0
AUTO_FACTOR = 10.0
#: a process compiling (a first call or a re-compile, until its backend compile ends)
#: holds the alarm off, up to this many timeouts (a compiler that never returns hangs too)
COMPILE_GRACE = 10.0


def auto_min() -> float:
    return float(os.environ.get(envnames.HANG_AUTO_MIN_S, AUTO_MIN_S))


class RollCall:
    """The heartbeat and, on process 0, the watch."""

    def __init__(self, log: Any, record: Recorder, client: CoordinationClient,
                 processes: int, timeout: float | None, where: Any, keeps_manifest: bool,
                 stop: threading.Event, sampled: Callable[[], list] = list) -> None:
        """``record``: the joined process's (its run directory and process index)."""
        self.log, self.record, self.run_dir = log, record, record.run_dir
        self.process, self.processes, self.client = record.process or 0, processes, client
        self.timeout, self.where, self.keeps_manifest = timeout, where, keeps_manifest
        self.sampled = sampled  # the sampler's lines so far, kept at the verdict
        self._seen: dict[int, tuple[int, float]] = {}  # process -> (completed, since)
        self.beats: dict[int, dict] = {}  # every process's last heartbeat (process 0)
        self.progress = self._seen  # the live feed reads when each last completed a call
        self._stop = stop  # set at the program's end: no roll is called after it
        self.thread = threading.Thread(target=self._run, name="podscale-rollcall",
                                       daemon=True)
        self.thread.start()

    def _state(self) -> dict:
        log = self.log
        state = ("compiling" if log.compiling else "dispatching") if log.in_call else \
            "waiting" if log.dispatched > log.readied else "python"
        from podscale.attach.calls import label

        return {"completed": log.readied, "state": state,
                "waiting_for": label(log.waiting_for), "last": label(log.last_call),
                "calling": label(log.calling), "t": time.time()}

    def _run(self) -> None:
        last = self.log.clock()
        while not self._stop.wait(BEAT_S):
            now = self.log.clock()
            if now - last > SILENT_BEATS * BEAT_S * 1e6:  # the whole process stood still
                self.record.add(record({"kind": "silent", "from": last, "to": now}))
            last = now
            notice = None
            try:
                self.client.key_value_set(f"{PREFIX}beat/{self.process}",
                                          json.dumps(self._state()), allow_overwrite=True)
                notice = peer_failure(self.client, self.process)
                if notice is None and self.process == 0 and self.timeout != 0:
                    self._watch()
                if notice is None:
                    self.client.key_value_try_get(f"{PREFIX}roll")
            except Exception:  # noqa: BLE001 - no roll called (or the service is gone)
                continue
            if notice is not None:
                self.follow(notice)
            self._answer()
            return

    def follow(self, notice: dict) -> None:
        """Another process failed: say so, end this process's record and leave with its
        exit code (process 0 last: it holds the coordination service)."""
        ENDING.set()
        what = f"process {notice['process']} failed (exit code {notice['code']}" + (
            f": {notice['error']}" if notice.get("error") else "") + ")"
        lines.say(f"podscale: {what}; process {self.process} stops too", err=True)
        self.log.emit_ready()  # the steps before the failure are the run's record too
        for line in self.sampled():
            self.record.add(line)
        self.record.add(record({"kind": "end", "end": self.log.clock(),
                                "exit_code": notice["code"], "error": f"stopped: {what}",
                                "calls": self.log.seq}))
        self.record.flush()
        try:
            self.client.key_value_set(f"{LEFT}{self.process}", "1")
        except Exception:  # noqa: BLE001 - the service is gone: leave all the same
            pass
        if self.process == 0:
            if self.keeps_manifest:
                _mark_failed(self.run_dir, what)
            wait_for_the_others(self.client, self.processes)
        os._exit(int(notice["code"]))

    def _watch(self) -> None:
        beats = {int(k.rsplit("/", 1)[1]): json.loads(v)
                 for k, v in self.client.key_value_dir_get(f"{PREFIX}beat/")}
        self.beats = beats  # the live feed's view of the job
        now = time.time()
        for p, b in beats.items():
            if self._seen.get(p, (-1, 0.0))[0] != b["completed"]:
                self._seen[p] = (b["completed"], now)
        if len(beats) < self.processes or not self._seen:
            return
        since, limit = max(t for _, t in self._seen.values()), self.limit()
        states = {b["state"] for b in beats.values()}
        stuck = now - since > limit and states != {"python"}
        if stuck and ("compiling" not in states or now - since > COMPILE_GRACE * limit):
            self.client.key_value_set(f"{PREFIX}roll", f"{since} {limit}")

    def limit(self) -> float:
        """Seconds without a completed call before the roll is called: ``--hang-timeout``,
        else (auto) the larger of :data:`AUTO_MIN_S` and 10x the p99 step."""
        if self.timeout is not None:
            return self.timeout
        periods = sorted(self.log.periods)
        p99 = periods[int(0.99 * (len(periods) - 1))] / 1e6 if periods else 0.0
        return max(auto_min(), AUTO_FACTOR * p99)

    def _answer(self) -> None:
        """Dump this process's stacks, say where it stands, then leave with the verdict."""
        ENDING.set()
        folder = self.run_dir / "hang"
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / rf.process_name(self.process, ".txt")).open("w") as fh:
            faulthandler.dump_traceback(file=fh, all_threads=True)
        state = {**self._state(), "at": self.where(), "recent": list(self.log.recent)}
        self.client.key_value_set(f"{PREFIX}stack/{self.process}", json.dumps(state))
        if self.process == 0:
            since, limit = map(float, self.client.key_value_try_get(f"{PREFIX}roll").split())
            verdict = self._verdict(since, limit)
            self.client.key_value_set(f"{PREFIX}verdict", verdict)
        else:
            try:
                verdict = self.client.blocking_key_value_get(f"{PREFIX}verdict",
                                                             int(ROLL_WAIT_S * 2000))
            except Exception:  # noqa: BLE001 - process 0 is gone: say what this one knows
                verdict = "no progress; process 0 called the roll but did not answer"
        self._leave(verdict)

    def _verdict(self, since: float, limit: float) -> str:
        deadline = time.time() + ROLL_WAIT_S
        stacks: dict[int, dict] = {}
        while time.time() < deadline and len(stacks) < self.processes:
            stacks = {int(k.rsplit("/", 1)[1]): json.loads(v)
                      for k, v in self.client.key_value_dir_get(f"{PREFIX}stack/")}
            time.sleep(0.05)
        from podscale.startup.runtime import job_slices

        return verdict_text(stacks, self.processes, limit, since, auto=self.timeout is None,
                            slices=job_slices())

    def _leave(self, verdict: str) -> None:
        lines.say(f"podscale: hang: {verdict}", err=True)
        self.log.emit_ready()  # the steps before the hang are the run's record too
        for line in self.sampled():
            self.record.add(line)
        self.record.add(record({"kind": "hang", "verdict": verdict, "end": self.log.clock(),
                                "exit_code": EXIT_HANG}))
        self.record.flush()
        if self.process == 0:
            if self.keeps_manifest:
                _mark_failed(self.run_dir, f"hang: {verdict}")
            time.sleep(1.0)  # the others read the verdict from the service this one holds
        os._exit(EXIT_HANG)


def _mark_failed(run_dir: Path, error: str) -> None:
    from dataclasses import replace

    from podscale.core.records import now, read_manifest, write_manifest

    m = read_manifest(run_dir)
    write_manifest(run_dir, replace(m, status="failed", error=error, finished=now()))


def peer_failure(client: CoordinationClient, process: int) -> dict | None:
    """Another process's published failure (:func:`failed`), or None (none, or this
    process's own: its main thread leaves by itself)."""
    try:
        notice = json.loads(client.key_value_try_get(FAILED))
    except Exception:  # noqa: BLE001 - not set (the client raises NOT_FOUND)
        return None
    return notice if notice["process"] != process else None


def failed(client: CoordinationClient, process: int, code: int, error: str | None) -> None:
    """Publish this process's failure (the first one stands): its peers see it at their
    next heartbeat and leave with its code (:meth:`RollCall.follow`)."""
    line = (error or "").strip().splitlines()[-1:] or [""]
    try:
        client.key_value_set(FAILED, json.dumps({"process": process, "code": code,
                                                 "error": line[0][:300]}))
    except Exception:  # noqa: BLE001 - another's failure was first, or the service is gone
        pass


def wait_for_the_others(client: CoordinationClient, processes: int,
                        wait: float = LEAVE_WAIT_S) -> None:
    """Process 0, leaving after a failure: until every other process has said it leaves
    (or ``wait`` seconds), so that they read the failure from the service it holds."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            if len(client.key_value_dir_get(LEFT)) >= processes - 1:
                return
        except Exception:  # noqa: BLE001 - the service is gone
            return
        time.sleep(0.05)
