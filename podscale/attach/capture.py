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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podscale.attach.stepreduce import reduce_steps
from podscale.startup.artifacts import stamp


@dataclass(frozen=True)
class Windows:
    """Which steps to capture: ``start:stop`` once, or every ``every`` steps for
    ``length`` steps (starting at step ``every``)."""

    start: int | None = None
    stop: int | None = None
    every: int | None = None
    length: int = 2
    #: steps captured after an anomalous step (:mod:`.anomaly`); 0: none
    anomalies: int = 0

    def __post_init__(self) -> None:
        from podscale.core.errors import UsageError

        if self.anomalies < 0:
            raise UsageError(f"--profile-anomalies {self.anomalies}: want K >= 1 steps "
                             "to capture after an anomalous step")

        if self.start is not None and (self.stop is None or not 0 <= self.start < self.stop):
            raise UsageError(f"--profile-steps {self.start}:{self.stop}: want A:B with "
                             "0 <= A < B (steps A to B-1)")
        if self.every is not None and (self.every < 1 or not 1 <= self.length <= self.every):
            raise UsageError(f"--profile-every {self.every}: want N >= 1 and a capture "
                             f"length 1..N (got {self.length})")

    @classmethod
    def parse(cls, steps: str | None, every: int | None, length: int = 2,
              anomalies: int = 0) -> Windows | None:
        if steps is None and every is None and not anomalies:
            return None
        if steps is None and every is None:
            return cls(anomalies=anomalies)
        if steps is not None:
            a, _, b = steps.partition(":")
            if not (a.isascii() and a.isdigit() and b.isascii() and b.isdigit()):
                from podscale.core.errors import UsageError

                raise UsageError(f"--profile-steps {steps!r}: want A:B (steps A to B-1)")
            return cls(int(a), int(b), every, length, anomalies)
        return cls(every=every, length=length, anomalies=anomalies)

    def opens(self, k: int) -> int | None:
        """The window's end (exclusive) if a capture starts at step ``k``."""
        if self.start is not None and k == self.start:
            return self.stop
        if self.every is not None and k and k % self.every == 0:
            return k + self.length
        return None


class Capture:
    """Starts and stops the profiler around windows of the step computation's calls."""

    def __init__(self, run_dir: Path, process: Callable[[], int], windows: Windows,
                 step: str | None, emit: Callable[[dict], None],
                 clock: Callable[[], int]) -> None:
        self.run_dir, self.process, self.windows = run_dir, process, windows
        self.step, self.emit, self.clock = step, emit, clock
        self.until: int | None = None  # the open window's end
        self.began, self.name = 0, step
        self.opened: list[int] = []
        self.seen = 0  # steps dispatched so far
        self.opened_any = False  # whether a window of steps opened
        self.yielded = False  # the wall-time capture's session was stopped for the program
        self.last: Any = None  # the last captured step's outputs
        self.saved: set[str] = set()  # computations whose program process 0 saved
        #: each step computation's XLA module name (``jit_step``; a pmap's is ``jit__fun``),
        #: read from its compiled program at its first window: what the trace calls it
        self.modules: dict[str, str | None] = {}
        #: one profiler session at a time: a fixed window or a wall-time one
        #: (:mod:`.anomaly`, from its listener thread)
        self.lock = threading.Lock()
        self.busy = False  # a wall-time capture is running

    def is_step(self, comp: Any, computations: list) -> bool:
        """Whether ``comp`` is the step windows count: the one named ``--step``, else the
        computation with the most calls x weight so far (its program's work: a helper
        called three times a step is not the step). Every process runs the same programs
        the same number of times, so every process counts the same computation."""
        if self.step is not None:
            return bool(comp.name == self.step)
        return comp.calls * comp.weight >= max(c.calls * c.weight for c in computations)

    def weigh(self, facts: dict[str, Any]) -> float:
        """A computation's weight: its compiled program's flops + bytes accessed (XLA's
        cost analysis, the same on every process, as :func:`.programs.describe` read it),
        at least 1; 1 where ``--step`` names the step (no weight is needed) or XLA says
        nothing (calls alone decide)."""
        if self.step is not None:
            return 1.0
        return max(1.0, float(facts.get("flops") or 0) + float(facts.get("bytes") or 0))

    def before(self, k: int, name: str, program: Callable[[], Any] | None = None) -> None:
        """Before step ``k`` (a call of computation ``name``) is dispatched: close a window
        that ends here, open one that starts here (``program``: the step's ``Compiled``,
        saved once, by process 0)."""
        self.seen = max(self.seen, k + 1)
        if self.until is not None and k >= self.until:
            self._stop(k)
        end = self.windows.opens(k)
        if self.until is None and end is not None and self.busy:
            self.emit({"kind": "capture_skipped", "steps": [k, end],
                       "reason": "an anomaly's capture held the profiler"})
        if self.until is None and end is not None and not self.busy:
            if program is not None and name not in self.modules:
                self.modules[name] = module_name(program)
            if program is not None and name not in self.saved and self.process() == 0:
                self.saved.add(name)
                self._save_program(name, program)
            _ready(self.last)  # the devices idle: the session holds steps k.. alone
            t0 = self.clock()  # from here podscale's cost (the device waits on it)
            with self.lock:
                if self.busy:
                    return
                self.opened_any = True
                try:
                    profiler()[0](str(self._tmp()))
                    stamp(self.run_dir.name, self.process())
                except Exception as exc:  # noqa: BLE001 - the program's own session holds it
                    self.emit({"kind": "capture_skipped", "steps": [k, end],
                               "reason": _held(exc)})
                    return
                self.until, self.began, self.name = end, k, name
            self.opened = [t0, self.clock()]

    def yield_to_program(self) -> None:
        """The program starts its own profiler session: podscale's open one stops first
        (kept, cut short, and said), so that the program's starts as it would alone."""
        if self.until is not None:
            self.emit({"kind": "capture_skipped", "steps": [self.began, self.until],
                       "reason": "the program started its own profiler session: podscale's "
                                 "capture stopped there (cut short)"})
            self._stop(self.seen)
        elif self.busy:  # an anomaly's wall-time capture: stopped, its thread told
            with self.lock:
                if self.busy and not self.yielded:
                    profiler()[1]()
                    self.yielded = True

    def after(self, k: int, out: Any) -> None:
        """After step ``k`` is dispatched: keep its outputs where the next step opens or
        continues a window (they are waited on there), else none."""
        keep = self.until is not None or self.windows.opens(k + 1) is not None
        self.last = out if keep else None

    def close(self) -> None:
        """At the script's end: a window still open stops where the steps stopped; a
        window of steps the program never reached is said (a skipped capture)."""
        if self.until is not None:
            self._stop(None)
        w = self.windows
        if self.opened_any or (w.start is None and w.every is None):
            return
        asked = f"--profile-steps {w.start}:{w.stop}" if w.start is not None else \
            f"--profile-every {w.every}"
        self.emit({"kind": "capture_skipped",
                   "steps": [w.start, w.stop] if w.start is not None else None,
                   "reason": f"{asked} never opened: the step ran {self.seen} time(s)"})

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
            path = self.run_dir / "hlo" / layout.key / file_name(name)
            save_hlo(program(), path, case_id=name, case_devices=[d.id for d in devices],
                     hosts=layout.hosts, devices_per_host=layout.devices_per_host)
            self.emit({"kind": "program", "name": name, "file": f"{path}.hlo.txt"})
        except Exception as exc:  # noqa: BLE001 - the program runs on regardless
            self.emit({"kind": "program", "name": name, "error": f"{type(exc).__name__}: "
                       f"{str(exc).splitlines()[0] if str(exc) else ''}"})

    def _tmp(self) -> Path:
        return self.run_dir / "traces" / f".tmp-process-{self.process()}"

    def _stop(self, k: int | None) -> None:
        t0 = self.clock()
        _ready(self.last)
        with self.lock:
            profiler()[1]()
        window = (self.began, self.until if k is not None else None)
        end = window[1] if window[1] is not None else "end"
        dest = self._keep(f"{self.run_dir.name}-steps-{window[0]}-{end}")
        started = time.perf_counter()
        skew = self.clock() - time.time_ns() // 1000  # this clock against the wall's
        reduced, ops, origin = reduce_steps(dest, self.name, self.began, skew,
                                            self.modules.get(self.name or "")) \
            if dest else ([], {}, None)
        want = (window[1] - window[0]) if window[1] is not None else None
        self.emit({"kind": "capture", "steps": list(window), "file": str(dest),
                   "rows": reduced, "ops": ops, "origin_us": origin, "start": self.opened,
                   "stop": [t0, self.clock()],
                   "reduce_s": round(time.perf_counter() - started, 4),
                   "cut": want is not None and len(reduced) < want})
        self.until, self.last = None, None

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
        found = list(self._tmp().glob("plugins/profile/*/*.xplane.pb"))
        if not found:
            return None
        session = self.run_dir / "traces" / "plugins" / "profile" / session_name
        session.mkdir(parents=True, exist_ok=True)
        dest = session / f"process-{self.process()}.xplane.pb"
        shutil.move(str(found[0]), dest)
        shutil.rmtree(self._tmp(), ignore_errors=True)
        return dest


#: the profiler's start and stop as JAX defines them, taken before the program's are
#: wrapped (:mod:`.entry`): podscale's own sessions use these
_ORIGINAL: list[Callable[..., Any]] = []


def profiler() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """JAX's own ``start_trace`` and ``stop_trace`` (not the program's wrapped ones)."""
    if not _ORIGINAL:
        import jax.profiler

        _ORIGINAL[:] = [jax.profiler.start_trace, jax.profiler.stop_trace]
    return _ORIGINAL[0], _ORIGINAL[1]


def _held(exc: Exception) -> str:
    text = str(exc)
    if "already" in text:
        return "the program holds the profiler (its own session was running)"
    return f"the profiler would not start: {type(exc).__name__}: {text.splitlines()[0]}"


def module_name(program: Callable[[], Any]) -> str | None:
    """The XLA module name of a computation's compiled program (``program()``, answered
    from JAX's caches), or None where the runtime does not say."""
    from podscale.startup.jaxapi import module_name as of

    try:
        return of(program())
    except Exception:  # noqa: BLE001 - the trace reduction falls back on the names
        return None


def _ready(out: Any) -> None:
    """Wait for a step's outputs (one donated meanwhile is already consumed: skipped)."""
    import jax

    for leaf in jax.tree_util.tree_leaves(out):
        try:
            leaf.block_until_ready()
        except Exception:  # noqa: BLE001 - deleted by donation, or not an array
            continue
