"""Where the host spends the time the device waits for it: a thread that samples the main
thread's Python stack only while no recorded call is running (none dispatching, every
dispatched call's outputs ready: the device idle, the host the bottleneck), and attributes
each interval to the innermost frame of the program's own code (not JAX's, the standard
library's or podscale's): ``load_batch (train.py:12)``. Host time hidden behind device
work, or spent blocked on a result, costs the job nothing and is not counted. Samples are
summed per gap (after call ``seq``) and frame, so the analysis can say how much of the
time between two steps went where.

The program's other Python threads (an asynchronous checkpoint's, a prefetcher's; not
podscale's; listed anew when their count changes) are read at every sample, whatever the
device does: each thread's CPU time since the last read (its own CPU clock: a thread that
waits or sleeps costs none, and one read costs a microsecond), summed by the call it
delayed (the one in flight, or while none is, the next), the thread's name and its
innermost frame of the program's own code (else of an installed package's: ``_save
(async_checkpointer.py:120)``), with when that time began and ended on this process's
clock: the analysis spreads it over the steps it overlapped (a thread that holds the
interpreter for 25 ms is read only after, when the step it slowed may be over). A step
that slows while such a thread burns the CPU is named with it, not with the device
alone. Threads a library starts outside Python (tensorstore's, XLA's) are not seen."""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from podscale.core.profilerecord import record

INTERVAL_S = 0.002
#: the program's other threads are listed anew when their count changes, and at least
#: every this many samples (100 ms: one ended and another began); a thread first seen has
#: its CPU since it started counted then
LIST_EVERY = 50
#: threads of podscale's own (the sampler, the watcher, the roll-call, ...)
OWN_PREFIX = "podscale-"


def thread_cpu(ident: int) -> float | None:
    """A thread's CPU time in seconds (its own clock), or None where it cannot be read."""
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(ident))
    except (AttributeError, OSError, OverflowError):
        return None


def _library_roots() -> tuple[str, ...]:
    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    import podscale

    paths.add(os.path.dirname(podscale.__file__))
    return tuple(os.path.realpath(p) + os.sep for p in paths)


class Sampler:
    """Samples ``main`` (a thread id) while ``busy()`` (the device) is false and a first
    call was made, and the other threads always (``clock``: the record's, µs);
    ``flush()`` returns the rows ``[after_seq, frame, seconds]`` since the last flush."""

    def __init__(self, main: int, busy: Callable[[], bool], last_seq: Callable[[], int],
                 clock: Callable[[], int] = lambda: time.monotonic_ns() // 1000,
                 interval: float = INTERVAL_S) -> None:
        self.main, self.busy, self.last_seq, self.interval = main, busy, last_seq, interval
        self.clock = clock
        self._roots = _library_roots()
        self._own: dict[str, bool] = {}
        self._sums: dict[tuple[int, str], float] = defaultdict(float)
        #: the other threads' CPU: (seq, thread, frame) -> [seconds, begin, end] (µs, clock)
        self._others: dict[tuple[int, str, str], list[float]] = {}
        self._cpu: dict[int, float] = {}
        self._threads: list[tuple[int, str]] = []
        self._count = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="podscale-sampler",
                                        daemon=True)
        self._thread.start()

    def user(self, filename: str) -> bool:
        """Whether a frame's file is the program's own (not a library's or podscale's)."""
        own = self._own.get(filename)
        if own is None:
            real = os.path.realpath(filename)
            own = self._own[filename] = not filename.startswith("<") and \
                not real.startswith(self._roots)
        return own

    def _frame(self, frame: Any = None, library: bool = False) -> str | None:
        """The innermost frame of the program's own code (the main thread's, or
        ``frame``'s stack): a function by its first line, module level by the current one;
        ``library``: else the innermost of an installed package's."""
        frame = sys._current_frames().get(self.main) if frame is None else frame
        found = None
        while frame is not None:
            code = frame.f_code
            if self.user(code.co_filename):
                found = frame
                break
            if library and found is None and "-packages" in code.co_filename:
                found = frame
            frame = frame.f_back
        if found is None:
            return None
        code = found.f_code
        line = found.f_lineno if code.co_name == "<module>" else code.co_firstlineno
        return f"{code.co_name} ({os.path.basename(code.co_filename)}:{line})"

    def _read_others(self, seq: int, listing: bool) -> None:
        """Each other thread's CPU time since its last read, by its current frame (before
        the first call: none counted, the clocks only read)."""
        count = threading.active_count()
        if listing or count != self._count:
            self._count = count
            self._threads = [(t.ident, t.name) for t in threading.enumerate()
                             if t.ident is not None and t.ident != self.main
                             and not t.name.startswith(OWN_PREFIX)]
        spent = []
        for ident, name in self._threads:
            cpu = thread_cpu(ident)
            if cpu is not None:
                spent.append((ident, name, cpu - self._cpu.get(ident, 0.0)))
                self._cpu[ident] = cpu
        spent = [s for s in spent if s[2] > 0]
        if seq < 0 or not spent:
            return
        frames = sys._current_frames()
        delayed = seq if self.busy() else seq + 1  # the call in flight, or the next
        now = self.clock()
        with self._lock:
            for ident, name, seconds in spent:
                frame = frames.get(ident)  # None: it ended meanwhile (never main's)
                where = (self._frame(frame, library=True) if frame is not None else None) or "?"
                key = (delayed, name, where)
                had = self._others.setdefault(key, [0.0, now - seconds * 1e6, now])
                had[0] += seconds
                had[1], had[2] = min(had[1], now - seconds * 1e6), now

    def _run(self) -> None:
        last, tick = time.perf_counter(), 0
        while not self._stop.wait(self.interval):
            now = time.perf_counter()
            seq, dt, last = self.last_seq(), now - last, now
            self._read_others(seq, tick % LIST_EVERY == 0)
            tick += 1
            if seq < 0 or self.busy():
                continue
            frame = self._frame()
            if frame is not None:
                with self._lock:
                    self._sums[(seq, frame)] += dt

    def flush(self) -> list[list]:
        with self._lock:
            rows = [[seq, frame, round(s, 6)] for (seq, frame), s in self._sums.items()]
            self._sums.clear()
        return rows

    def flush_others(self) -> list[list]:
        """The other threads' rows ``[seq, thread, frame, seconds, begin_us, end_us]``
        since the last."""
        with self._lock:
            rows = [[seq, name, where, round(s, 6), round(begin), round(end)]
                    for (seq, name, where), (s, begin, end) in self._others.items()]
            self._others.clear()
        return rows

    def lines(self) -> list[dict[str, Any]]:
        """What the sampler holds, as record lines: the host gaps, then (where any other
        thread spent CPU) the other threads' time."""
        others = self.flush_others()
        return [record({"kind": "gaps", "rows": self.flush()}),
                *([record({"kind": "background", "rows": others})] if others else [])]

    def stop(self) -> list[dict[str, Any]]:
        """Stop sampling; :meth:`lines`."""
        self._stop.set()
        self._thread.join()
        return self.lines()
