"""Profiler capture windows every process agrees on without talking: windows are step
indices (``--profile-steps A:B``, ``--profile-every N``), and step *k* is every process's
*k*-th call of the step computation, so each process starts its own profiler session
before step A and stops it once step B-1's outputs are ready.

Each capture is one XProf session for the whole job, one file per process:
``traces/plugins/profile/<run>-steps-A-B/process-<i>.xplane.pb`` (two processes on one
host never collide). At its first capture, process 0 also saves the step's optimized
program (``RUN/hlo/<layout>/<name>.hlo.txt``, from JAX's in-memory cache: no compile) for
``podscale profile --replay``. Right after it, the process reduces its own trace to one row per
step (:mod:`podscale.attach.stepreduce`). A capture that holds fewer executions than steps
(a session cut short, the profiler's event limit) says so in its record, never a short
step."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from podscale.attach.jaxside import held, module_name, profiler, ready
from podscale.attach.stepreduce import reduce_steps
from podscale.attach.windows import StepChoice, Windows
from podscale.core import runfolder as rf
from podscale.core import xprof
from podscale.core.profilerecord import record, window_label
from podscale.startup.artifacts import stamp
from podscale.startup.runtime import first_line


class Capture:
    """Starts and stops the profiler around windows of the step computation's calls."""

    def __init__(self, run_dir: Path, process: Callable[[], int], windows: Windows,
                 step: str | None, emit: Callable[[dict], None],
                 clock: Callable[[], int]) -> None:
        self.run_dir, self.process, self.windows = run_dir, process, windows
        self.emit, self.clock = emit, clock
        self.choice = StepChoice(step)
        self.until: int | None = None  # the open window's end
        self.began, self.name = 0, step
        #: each computation's calls when the open window began (its steps count from there)
        self.at_open: dict[str, int] = {}
        self.opened: list[int] = []
        self.seen = 0  # steps dispatched so far
        self.opened_any = False  # whether a window of steps opened
        self.yielded = False  # the wall-time capture's session was stopped for the program
        #: each computation's last outputs, while they are to be waited on
        self.last: dict[int, Any] = {}
        self.saved: set[str] = set()  # computations whose program process 0 saved
        #: each step computation's XLA module name (``jit_step``; a pmap's is ``jit__fun``),
        #: read from its compiled program at its first window: what the trace calls it
        self.modules: dict[str, str | None] = {}
        self.computations: list = []
        #: one profiler session at a time: a fixed window or a wall-time one
        #: (:mod:`.anomaly`, from its listener thread)
        self.lock = threading.Lock()
        self.busy = False  # a wall-time capture is running

    def is_step(self, comp: Any, computations: list) -> bool:
        """Whether ``comp`` is the step windows count (:class:`.windows.StepChoice`)."""
        return self.choice.is_step(comp, computations)

    def before(self, comp: Any, computations: list,
               program: Callable[[], Any] | None = None) -> None:
        """Before a call of ``comp`` is dispatched (its ``calls``-th): close a window that
        ends at this call of the step, open one that starts here, on the step's call, or
        on any computation's while the step is not yet known (``program``: the call's
        ``Compiled``; the step's is saved once, by process 0)."""
        self.computations, k = computations, comp.calls
        step = self.choice.is_step(comp, computations)
        settled = self.choice.settled(computations)
        if step:
            self.seen = max(self.seen, k + 1)
        if self.until is not None and step and settled and k >= self.until:
            self._learn(comp.name, program)
            self._stop(k, comp.name)
        end = self.windows.opens(k)
        if self.until is None and end is not None and (step or not settled):
            self._open(k, end, comp.name if step and settled else None, program)

    def _open(self, k: int, end: int, step: str | None,
              program: Callable[[], Any] | None) -> None:
        if self.busy:
            self.emit(record({"kind": "capture_skipped", "steps": [k, end],
                              "reason": "an anomaly's capture held the profiler"}))
            return
        if step is not None:
            self._learn(step, program)
        ready(self.last)  # the devices idle: the session holds steps k.. alone
        self.last.clear()
        t0 = self.clock()  # from here podscale's cost (the device waits on it)
        with self.lock:
            if self.busy:
                return
            self.opened_any = True
            try:
                profiler()[0](str(self._tmp()))
                stamp(self.run_dir.name, self.process())
            except Exception as exc:  # noqa: BLE001 - the program's own session holds it
                self.emit(record({"kind": "capture_skipped", "steps": [k, end],
                                  "reason": held(exc)}))
                return
            self.until, self.began, self.name = end, k, step
            self.at_open = {c.name: c.calls for c in self.computations}
        self.opened = [t0, self.clock()]

    def _learn(self, name: str, program: Callable[[], Any] | None) -> None:
        """The step's module name, and (process 0, once) its program saved."""
        if program is None:
            return
        if name not in self.modules:
            self.modules[name] = module_name(program)
        if name not in self.saved and self.process() == 0:
            self.saved.add(name)
            self._save_program(name, program)

    def yield_to_program(self) -> None:
        """The program starts its own profiler session: podscale's open one stops first
        (kept, cut short, and said), so that the program's starts as it would alone."""
        if self.until is not None:
            self.emit(record({"kind": "capture_skipped", "steps": [self.began, self.until],
                              "reason": "the program started its own profiler session: "
                                        "podscale's capture stopped there (cut short)"}))
            self._stop(self.seen, self._step_now())
        elif self.busy:  # an anomaly's wall-time capture: stopped, its thread told
            with self.lock:
                if self.busy and not self.yielded:
                    profiler()[1]()
                    self.yielded = True

    def after(self, comp: Any, out: Any) -> None:
        """After a call of ``comp`` is dispatched: keep its outputs (each computation's
        last) while a window is open, or where its next call opens one: they are waited on
        there, so that a session holds no earlier call still queued on the devices and
        stops only once its calls ran."""
        comps = self.computations or [comp]
        opens = self.windows.opens(comp.calls + 1) is not None and (
            self.choice.is_step(comp, comps) or not self.choice.settled(comps))
        if self.until is not None or opens:
            self.last[comp.id] = out
        else:
            self.last.pop(comp.id, None)

    def close(self) -> None:
        """At the script's end: a window still open stops where the steps stopped; a
        window of steps the program never reached is said (a skipped capture)."""
        if self.until is not None:
            self._stop(None, self._step_now())
        w = self.windows
        if self.opened_any or (w.start is None and w.every is None):
            return
        asked = f"--profile-steps {w.start}:{w.stop}" if w.start is not None else \
            f"--profile-every {w.every}"
        self.emit(record({"kind": "capture_skipped",
                          "steps": [w.start, w.stop] if w.start is not None else None,
                          "reason": f"{asked} never opened: the step ran {self.seen} time(s)"}))

    def _save_program(self, name: str, program: Callable[[], Any]) -> None:
        """The step's optimized HLO and device order (as ``podscale replay`` saves a
        case's), its devices every process's, process-major; a failure is recorded,
        never raised into the program."""
        import jax

        from podscale.core.case import Layout
        from podscale.startup.artifacts import file_name, save_hlo

        try:
            devices = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
            layout = Layout(jax.process_count(), jax.local_device_count())
            path = self.run_dir / rf.HLO / layout.key / file_name(name)
            save_hlo(program(), path, case_id=name, case_devices=[d.id for d in devices],
                     hosts=layout.processes, devices_per_host=layout.devices_per_host)
            self.emit(record({"kind": "program", "name": name, "file": f"{path}.hlo.txt"}))
        except Exception as exc:  # noqa: BLE001 - the program runs on regardless
            self.emit(record({"kind": "program", "name": name,
                              "error": f"{type(exc).__name__}: "
                                       f"{str(exc).splitlines()[0] if str(exc) else ''}"}))

    def _step_now(self) -> str | None:
        best = self.choice.best(self.computations)
        return best.name if best is not None else self.name

    def _tmp(self) -> Path:
        return self.run_dir / rf.TRACES / rf.temporary(self.process())

    def _stop(self, k: int | None, name: str | None) -> None:
        t0 = self.clock()
        ready(self.last)
        with self.lock:
            try:
                profiler()[1]()
            except Exception as exc:  # noqa: BLE001 - its trace not written (a full disk)
                self.emit(record({"kind": "capture_failed", "steps": [self.began, self.until],
                                  "error": f"{type(exc).__name__}: {first_line(exc)}"}))
                self.until = None
                self.last.clear()
                shutil.rmtree(self._tmp(), ignore_errors=True)
                return
        complete = k is not None or self.until is not None and self.seen >= self.until
        window = (self.began, self.until if complete else None)
        dest = self._keep(f"{self.run_dir.name}-steps-{window_label(*window)}")
        started = time.perf_counter()
        skew = self.clock() - time.time_ns() // 1000  # this clock against the wall's
        first = self.at_open.get(name or "", self.began)  # the step's calls at the start
        reduced, ops, origin = reduce_steps(dest, name, first, skew,
                                            self.modules.get(name or ""), window) \
            if dest else ([], {}, None)
        want = (window[1] - window[0]) if window[1] is not None else None
        self.emit(record({"kind": "capture", "steps": list(window), "file": str(dest),
                          "rows": reduced, "ops": ops, "origin_us": origin,
                          "start": self.opened, "stop": [t0, self.clock()],
                          "reduce_s": round(time.perf_counter() - started, 4),
                          "cut": want is not None and len(reduced) < want}))
        self.until = None
        self.last.clear()

    def wall(self, label: str, name: str | None, wait: Callable[[], None]) \
            -> tuple[Path | None, list[dict], dict, list[list[int]], float | None] | None:
        """Profile from now until ``wait`` returns (on the calling thread, not the
        program's): the trace kept as session ``<run>-<label>``, its steps reduced and
        numbered from 0 (each row's ``end_us`` places it), the spans of the profiler's
        start and stop; None while a fixed window or the program's own session holds the
        profiler."""
        with self.lock:
            if self.until is not None or self.busy:
                return None
            try:
                t0 = self.clock()
                profiler()[0](str(self._tmp()))
                stamp(self.run_dir.name, self.process())
                t1 = self.clock()
            except Exception:  # noqa: BLE001 - the program's own session holds it
                return None
            self.busy, self.yielded = True, False
        try:
            wait()
        finally:
            with self.lock:
                t2 = self.clock()
                if not self.yielded:
                    profiler()[1]()
                t3 = self.clock()
                self.busy = False
        dest = self._keep(f"{self.run_dir.name}-{label}")
        skew = self.clock() - time.time_ns() // 1000
        rows, ops, origin = reduce_steps(dest, name, 0, skew, self.modules.get(name or "")) \
            if dest else ([], {}, None)
        return dest, rows, ops, [[t0, t1], [t2, t3]], origin

    def _keep(self, session_name: str) -> Path | None:
        return xprof.keep(self._tmp(), self.run_dir / rf.TRACES, session_name, self.process())
