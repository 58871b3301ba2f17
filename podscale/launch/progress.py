"""Progress of long work: cases done / total, the current case and an ETA.

On a terminal, one live bar rewritten in place (on stderr); otherwise one plain line per
finished case (on the ``say`` callback, stdout by default). Cases finish in plan order,
so counting the case records process 0 has written tells which case runs now.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from podscale.core.case import Case

_ENDS = (b'"type": "case"', b'"type": "skip"')  # a case ends with one of these records


def width() -> int:
    """The terminal's columns (80 where there is none): no progress line is longer."""
    return shutil.get_terminal_size((80, 24)).columns


def fit(text: str, columns: int) -> str:
    """``text`` cut to ``columns``, the middle elided (a case id's ends say the most)."""
    if len(text) <= columns:
        return text
    keep = max(columns - 1, 2)
    return text[: keep // 2] + "…" + text[len(text) - (keep - keep // 2):]


def labels(cases: Sequence[Case]) -> list[str]:
    """Each case's id without the parts every case of its workload shares (the workload and
    the layout always kept), so that progress lines cut to the terminal stay distinct."""
    parts = [c.id.split("/") for c in cases]
    same: dict[str, set[int]] = {}
    for c, p in zip(cases, parts):
        if c.workload not in same:
            group = [q for d, q in zip(cases, parts) if d.workload == c.workload]
            same[c.workload] = {i for i in range(1, len(p) - 1)
                                if all(len(q) == len(p) and q[i] == p[i] for q in group)}
    return ["/".join(x for i, x in enumerate(p) if i not in same[c.workload])
            for c, p in zip(cases, parts)]


def fit_label(label: str, columns: int) -> str:
    """A :func:`labels` label in ``columns``: parameters as their values alone where the
    whole one does not fit (``algorithm=flat`` as ``flat``), then the middle elided."""
    if len(label) > columns:
        label = "/".join(part.split("=", 1)[-1] for part in label.split("/"))
    return fit(label, columns)


def short(seconds: float) -> str:
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.1f}min"


class Clock:
    """The ETA from measured costs: the mean cost of a case after a launch's first and of
    a launch's first case (starting the processes, joining, the first compile), times what
    is left of each; nothing until a case has finished. Means, not medians: the time left
    is a sum, and a grid's cases alternate between cheap and dear (sizes 4K and 1M), which
    swings a median from one to the other. Cases seen finished together share the time
    since the last. ``weights``: each launch's cost relative to the others' (its processes:
    where they share the cores, a case of 16 costs about 16 of one), so a study's launches
    of 1 to 16 processes do not swing the ETA from case to case."""

    def __init__(self, launch_sizes: Sequence[int], weights: Sequence[float] = ()) -> None:
        self.sizes = list(launch_sizes)
        self.weights = list(weights) or [1.0] * len(self.sizes)
        self.launch, self.at = -1, 0.0
        self.first: list[float] = []  # launch start -> its first case done
        self.each: list[float] = []  # between consecutive cases of a launch
        self.done_in_launch = 0

    def start_launch(self, now: float) -> None:
        self.launch, self.at, self.done_in_launch = self.launch + 1, now, 0

    def _weight(self, launch: int) -> float:
        return float(self.weights[launch]) if 0 <= launch < len(self.weights) else 1.0

    def case_done(self, now: float, count: int = 1) -> None:
        """``count`` cases finished since the last call (the time shared among them)."""
        share = (now - self.at) / self._weight(self.launch) / max(count, 1)
        for _ in range(count):
            (self.first if self.done_in_launch == 0 else self.each).append(share)
            self.done_in_launch += 1
        self.at = now

    def left(self) -> float | None:
        if not self.each:  # one case's cost is not measured yet
            return None
        per_case, per_launch = statistics.fmean(self.each), statistics.fmean(self.first)
        this = max(self.sizes[self.launch] - self.done_in_launch, 0) \
            if 0 <= self.launch < len(self.sizes) else 0

        def whole(n: int, w: float) -> float:  # a launch of n cases, from its start
            return w * (per_launch + (n - 1) * per_case)

        w = self._weight(self.launch)
        starting = self.done_in_launch == 0 and this > 0
        return (whole(this, w) if starting else this * per_case * w) + sum(
            whole(n, self._weight(i)) for i, n in enumerate(self.sizes[self.launch + 1:],
                                                            self.launch + 1))


class Progress:
    """Cases done of the total, each case as its records arrive, with an ETA: one line per
    case, or one live line on a terminal."""

    def __init__(self, cases: Sequence[Case], say: Callable[[str], None] | None = print,
                 stream: TextIO | None = None, launch_sizes: Sequence[int] = (),
                 launch_weights: Sequence[float] = ()) -> None:
        self.cases, self.total = list(cases), len(cases)
        self.labels = labels(self.cases)
        self._say = say
        self.stream = stream or sys.stderr
        self.live = say is print and self.stream.isatty()
        self.done, self._base = 0, 0
        self._files: dict[Path, tuple[int, int]] = {}
        self.started = time.monotonic()
        self._last_poll = 0.0
        self.clock = Clock(launch_sizes or [len(cases)], launch_weights)

    def say(self, message: str) -> None:
        if self._say is None:
            return
        if self.live:
            self.stream.write("\r\033[K")
        self._say(message)

    def start_launch(self, lead_files: Sequence[Path]) -> None:
        # files of earlier rounds already hold records: count only what is appended
        self._base = self.done
        self._files = {p: (p.stat().st_size if p.exists() else 0, 0) for p in lead_files}
        self.clock.start_launch(time.monotonic())

    def _count(self) -> int:
        """Case records in the launch's files, reading only what was appended."""
        for path, (offset, count) in self._files.items():
            try:
                with path.open("rb") as fh:
                    fh.seek(offset)
                    data = fh.read()
            except OSError:
                continue
            end = data.rfind(b"\n") + 1  # whole lines only
            self._files[path] = (offset + end, count + sum(data[:end].count(e) for e in _ENDS))
        return sum(count for _, count in self._files.values())

    def eta(self) -> str:
        left = self.clock.left()
        return "--" if left is None else short(left)

    def poll(self) -> None:
        """Called by the supervisor's loop; reads the records at most 5 times a second."""
        if self._say is None or not self.total:
            return
        now = time.monotonic()
        if now - self._last_poll < 0.2:
            return
        self._last_poll = now
        done = min(self._base + self._count(), self.total)
        if done == self.done and not self.live:
            return
        if done > self.done:
            self.clock.case_done(now, done - self.done)
        for i in range(self.done, done):
            if not self.live:
                tail = f" done ({short(now - self.started)}, ETA {self.eta()})"
                head = f"# [{i + 1}/{self.total}] "
                self._say(head + fit_label(self.labels[i], width() - len(head) - len(tail))
                          + tail)
        self.done = done
        if self.live:
            current = self.labels[done] if done < self.total else "finishing"
            bar = f"[{'#' * (12 * done // self.total)}{'.' * (12 - 12 * done // self.total)}]"
            head, tail = f"{bar} {done}/{self.total} ", f" ETA {self.eta()}"
            line = head + fit_label(current, width() - 1 - len(head) - len(tail)) + tail
            self.stream.write(f"\r\033[K{line}")
            self.stream.flush()

    def close(self) -> None:
        if self.live and self.total:
            self.stream.write("\r\033[K")
            self.stream.flush()
