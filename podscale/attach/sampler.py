"""Where the host spends the time the device waits for it: a thread that samples the main
thread's Python stack only while no recorded call is running (none dispatching, every
dispatched call's outputs ready: the device idle, the host the bottleneck), and attributes
each interval to the innermost frame of the program's own code (not JAX's, the standard
library's or podscale's): ``load_batch (train.py:12)``. Host time hidden behind device
work, or spent blocked on a result, costs the job nothing and is not counted. Samples are
summed per gap (after call ``seq``) and frame, so the analysis can say how much of the
time between two steps went where."""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
import time
from collections import defaultdict
from collections.abc import Callable

INTERVAL_S = 0.002


def _library_roots() -> tuple[str, ...]:
    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    import podscale

    paths.add(os.path.dirname(podscale.__file__))
    return tuple(os.path.realpath(p) + os.sep for p in paths)


class Sampler:
    """Samples ``main`` (a thread id) while ``busy()`` (the device) is false and a first
    call was made;
    ``flush()`` returns the rows ``[after_seq, frame, seconds]`` since the last flush."""

    def __init__(self, main: int, busy: Callable[[], bool], last_seq: Callable[[], int],
                 interval: float = INTERVAL_S) -> None:
        self.main, self.busy, self.last_seq, self.interval = main, busy, last_seq, interval
        self._roots = _library_roots()
        self._own: dict[str, bool] = {}
        self._sums: dict[tuple[int, str], float] = defaultdict(float)
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

    def _frame(self) -> str | None:
        """The innermost frame of the program's own code: a function by its first line,
        module level by the current one."""
        frame = sys._current_frames().get(self.main)
        while frame is not None:
            code = frame.f_code
            if self.user(code.co_filename):
                line = frame.f_lineno if code.co_name == "<module>" else code.co_firstlineno
                return f"{code.co_name} ({os.path.basename(code.co_filename)}:{line})"
            frame = frame.f_back
        return None

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.wait(self.interval):
            now = time.perf_counter()
            seq, dt, last = self.last_seq(), now - last, now
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

    def stop(self) -> list[list]:
        self._stop.set()
        self._thread.join()
        return self.flush()
