"""Run a user's script unmodified as ``__main__`` in this process, recorded.

The script sees its own ``sys.argv`` and ``__name__ == "__main__"``; its file is only read.
Before it runs, JAX's entry points are wrapped (:mod:`.calls`), compile events are taken
from ``jax.monitoring``, and ``jax.distributed.initialize`` is wrapped so that the
script's own call joins the job: with no arguments under ``podscale profile`` it gets the
local coordinator podscale started, under a cluster launcher JAX's auto-detection as
usual. The script's exit code is returned; a script that raises exits 1 with its
traceback, as ``python script.py`` would."""

from __future__ import annotations

import os
import runpy
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from podscale.attach import SUPERVISED, calls, clock, entry, recorder
from podscale.attach.capture import Capture
from podscale.attach.ending import exit_code, meet, note_sigint, print_as_python, unless_ending
from podscale.attach.joining import (
    alone,
    device_memory,
    devices,
    ended_alone,
    env_process,
    no_cluster,
    said_device_count,
)
from podscale.attach.livefeed import FeedOptions, LiveFeed
from podscale.attach.sampler import Sampler
from podscale.attach.windows import Windows
from podscale.core import envnames, lines
from podscale.core.profilerecord import SCHEMA, record
from podscale.startup.jaxapi import DEGRADED, computed

#: how long a short script's end waits for its clock offset (process 0 answers the peers'
#: round trips one peer after another)
CLOCK_WAIT_S = 30.0
#: how long the end waits for each thread to leave the coordination service (a poll: POLL_MS)
STOP_WAIT_S = 5.0
ZERO_OFFSET = record({"kind": "offset", "offset_us": 0, "rtt_us": 0})


class Session:
    """The recording around one run of the script."""

    def __init__(self, run_dir: Path, script: Path, args: list[str],
                 windows: Windows | None = None, step: str | None = None,
                 hang_timeout: float | None = None, feed: FeedOptions | None = None) -> None:
        from podscale.startup.ledger import process_start

        self.clock = clock.Clock()
        self.clock.skew_us = clock.planted().get(env_process(), 0)
        self.record = recorder.Recorder(run_dir)
        started = process_start()
        self.record.add(record({"kind": "start", "schema": SCHEMA, "attach": self.clock.now(),
                                "process_start": None if started is None else
                                round(started * 1e6) + self.clock.skew_us,
                                "pid": os.getpid(), "host": os.uname().nodename,
                                "script": str(script), "argv": args}))
        self.run_dir, self.script, self.args = run_dir, script, args
        self.windows, self.step, self.hang_timeout = windows, step, hang_timeout
        self.drain: recorder.Drain | None = None
        self.measuring: threading.Thread | None = None  # this process's clock offset
        #: the threads that talk to the coordination service, stopped and joined at the
        #: end (one left inside a blocking call as the interpreter exits aborts it)
        self.talking: list[threading.Thread] = []
        self.rollcall: Any = None  # the heartbeat: hangs and peers' failures (.hang)
        self.stop, self.processes = threading.Event(), 1
        self.anomalies: Any = None  # anomaly-triggered captures (:mod:`.anomaly`)
        self.signalled = threading.Event()  # a SIGINT arrived
        self.feed_options = feed
        self.feed: LiveFeed | None = None  # the live metrics (:mod:`.livefeed`)

    def install(self) -> None:
        import jax

        from podscale.attach.events import Events
        from podscale.startup.runtime import simulate_cpu

        simulate_cpu(jax)
        self.log = calls.CallLog(self.clock.now, self.record.add)
        self.log.on_first = self._unjoined
        self.undo = entry.install(self.log, self._initialize,
                                  Events(self.log, self.record.add, self.clock.now))
        if self.windows is not None:
            self.log.capture = Capture(self.run_dir, lambda: self.record.process or 0,
                                       self.windows, self.step, self.record.add,
                                       self.clock.now)
        if self.windows is not None and self.windows.anomalies:
            from podscale.attach.anomaly import Anomalies

            self.anomalies = Anomalies(self.log.capture, self.windows.anomalies,
                                       self.clock.now, self.record.add, self.stop)
            self.talking.append(self.anomalies.start())
        from podscale.attach.livefeed import job_view, observe
        # the anomaly captures and the live feed are told of each ready call
        self.feed = observe(self.log, self.anomalies, self.feed_options,
                            lambda: self.record.process or 0,
                            lambda: job_view(self.rollcall), serves=env_process() == 0)
        note_sigint(self.signalled)
        self.sampler = Sampler(threading.main_thread().ident or 0, self.log.device_busy,
                               lambda: self.log.last_seq, self.log.clock)

    def _unjoined(self) -> None:
        """Before the program's first computation: where its launcher started several
        processes and it has not joined them, it never will (JAX allows no join after a
        computation), and each process would run alone and record as the job's process
        0. The job cannot be measured: this process says so and ends (exit 2)."""
        from podscale.startup.faults import launcher_size

        arm = [n for n in os.environ.get(envnames.ARM_VARS, "").split(",") if n]
        if arm:  # as the program runs with them: it may have replaced the arm's
            self.record.add(record({"kind": "arm", "vars": {n: os.environ.get(n) for n in arm}}))
        size = launcher_size()
        if self.record.process is None and env_process() == 0:
            said_device_count()  # before the program's first computation: at start-up
        if self.record.process is None and size is not None and size > 1:
            self._refuse(f"process {env_process()} never joined the job: the program "
                         "computes without calling jax.distributed.initialize() first, so "
                         f"each of its {size} processes runs alone; run it as one process "
                         "(--hosts 1), or call jax.distributed.initialize() before any "
                         "JAX computation")

    def _refuse(self, message: str) -> None:
        """End this process: the job cannot be measured (its record says why)."""
        if self.record.process is None:
            self.record.joined(env_process(), None)
        self.record.add(record({"kind": "end", "end": self.clock.now(), "exit_code": 2,
                                "error": message, "calls": self.log.seq}))
        self.record.flush()
        lines.say(f"podscale: {message}", err=True)
        os._exit(2)

    def _initialize(self, original: Callable[..., None]) -> Callable[..., None]:
        """``jax.distributed.initialize`` as the program calls it: joined where podscale's
        launcher says (its coordinator), then this process's join recorded."""
        from podscale.startup.runtime import local_join

        def initialize(*args: Any, **kwargs: Any) -> None:
            if self.record.process is not None:  # as JAX says it (before podscale's own
                # reads of the job, which started the backend, would change its words)
                raise RuntimeError("distributed.initialize should only be called once.")
            join = local_join() or alone()
            if join and not args and not kwargs.get("coordinator_address"):
                kwargs.update(join)
            began = self.clock.now()
            try:
                original(*args, **kwargs)
            except (ValueError, OSError) as exc:  # no cluster around a call of no arguments
                if join or args or kwargs or not no_cluster(exc):
                    raise
                lines.say("podscale: no cluster environment found (mpirun, Slurm, TPU VM, "
                          "Kubernetes, or JAX_COORDINATOR_ADDRESS): the program runs as a "
                          "one-process job", err=True)
            self._joined(began)

        return initialize

    def _joined(self, began: int) -> None:
        import jax

        from podscale.startup.jaxapi import coordination_client

        process, self.processes = jax.process_index(), jax.process_count()
        from podscale.startup.faults import launcher_size

        size = launcher_size()
        if size is not None and size != self.processes:
            self._refuse(f"process {env_process()} joined a job of {self.processes} "
                         f"process(es) where its launcher started {size}: the processes "
                         "did not join one job (check the program's own "
                         "jax.distributed.initialize() arguments)")
        client = coordination_client() if self.processes > 1 else None
        self.record.joined(process, client)
        self.record.add(record({"kind": "join", "start": began, "end": self.clock.now(),
                                "process": process, "processes": self.processes, **devices()}))
        if client is None or process == 0:  # process 0's clock is the job's
            self.record.add(ZERO_OFFSET)
        if process == 0:
            said_device_count(jax.local_device_count())
        if self.anomalies is not None:
            self.anomalies.joined(client, process)
        if client is not None and process == 0:
            self.talking.append(clock.answer(client, self.processes, self.clock.now,
                                             self.stop))
            self.drain = recorder.Drain(self.run_dir, client)
        elif client is not None:
            self.measuring = clock.measure(
                client, process, self.clock.now, lambda off, rtt: self.record.add(
                    record({"kind": "offset", "offset_us": off, "rtt_us": rtt})), self.stop)
            self.talking.append(self.measuring)
        if client is not None:  # hang timeout None: auto; 0: off (a peer's failure still)
            from podscale.attach.hang import RollCall
            from podscale.attach.rollwords import main_thread_at

            self.rollcall = RollCall(
                self.log, self.record, client, self.processes, self.hang_timeout,
                lambda: main_thread_at(self.sampler.user),
                keeps_manifest=not os.environ.get(SUPERVISED), stop=self.stop,
                sampled=self.sampler.lines)
            self.talking.append(self.rollcall.thread)
        self.record.flush()

    def run(self) -> int:
        """The script as ``__main__``; its exit code."""
        saved = sys.argv, sys.path[0]
        sys.argv = [str(self.script), *self.args]
        sys.path[0] = str(self.script.resolve().parent)
        code, error = 0, None
        try:
            runpy.run_path(str(self.script), run_name="__main__")
        except SystemExit as exc:
            code = exit_code(exc.code)
        except KeyboardInterrupt as exc:
            if self.signalled.is_set():  # Ctrl-C, or the launcher's SIGINT
                self.close(130, "interrupted")
                raise
            print_as_python(exc)  # the script's own raise: its failure, as Python's
            code, error = 130, "KeyboardInterrupt (raised by the program)"
        except BaseException as exc:  # the script's own failure: shown as Python would
            unless_ending()
            self._unless_a_peer_failed()
            print_as_python(exc)
            code, error = 1, f"{type(exc).__name__}: {exc}"
        finally:
            sys.argv, sys.path[0] = saved
        self.close(code, error)
        return code

    def _unless_a_peer_failed(self) -> None:
        """The script's error comes after another process's failure (a collective whose
        peer left): that failure is the job's, and this process leaves with it."""
        if self.rollcall is None or self.record.client is None:
            return
        from podscale.attach.hang import peer_failure

        notice = peer_failure(self.record.client, self.record.process or 0)
        if notice is not None:
            self.undo()
            self.rollcall.follow(notice)

    def close(self, code: int, error: str | None) -> None:
        """Finish the record: rows of every queued call, the sampled gaps, the end; then
        (a clean exit of a job of several processes) meet the others, and process 0 drains
        the store once more."""
        program_computed = computed()  # before this process's own calls start JAX
        if self.log.capture is not None:
            self.log._quietly(self.log.capture.close)
        self.undo()
        self.log.drain()
        if self.feed is not None:  # its last word: every step the program made
            self.feed.publish()
        for line in self.sampler.stop():
            self.record.add(line)
        self.record.add(record({"kind": "memory", "devices": device_memory()}))
        if DEGRADED:  # a JAX hook gone in this release: what the record lacks, in words
            self.record.add(record({"kind": "degraded", "hooks": dict(DEGRADED)}))
        if self.record.process is None:  # a one-process script that never joined
            ended_alone(code, program_computed, error)
            self.record.joined(env_process(), None)
            self.record.add(ZERO_OFFSET)
            self.record.add(record({"kind": "devices", **devices()}))
        self.record.add(record({"kind": "end", "end": self.clock.now(), "exit_code": code,
                                "error": error, "calls": self.log.seq}))
        if self.measuring is not None and code == 0:  # a short script: its offset first
            self.measuring.join(timeout=CLOCK_WAIT_S)
        self.record.flush()
        client = self.record.client
        if client is not None:
            if code:
                from podscale.attach.hang import failed

                failed(client, self.record.process or 0, code, error)
            meet(client, self.record.process, self.processes, code)
        self.stop.set()
        for thread in self.talking:
            thread.join(timeout=STOP_WAIT_S)
        if self.drain is not None:
            self.drain.stop()


def attach(run_dir: Path, script: Path, args: list[str], windows: Windows | None = None,
           step: str | None = None, hang_timeout: float | None = None,
           feed: FeedOptions | None = None) -> int:
    """``podscale attach``: record one process's run of ``script`` under ``run_dir``;
    ``windows``: the steps the profiler captures; ``step``: the step's computation name
    (default: the most calls x work); ``hang_timeout``: seconds without a completed call
    (while some process waits and none compiles) before the hang roll-call ends the job
    (None: auto, :func:`podscale.attach.hang.RollCall.limit`; 0: no roll-call)."""
    from podscale.startup.lifeline import hold

    hold(group=True)  # under podscale profile: die with it, with the program's children
    session = Session(run_dir, script, args, windows, step, hang_timeout, feed)
    session.install()
    return session.run()
