"""Progress of long work: cases done / total, the current case and an ETA.

On a terminal, one live bar rewritten in place (on stderr); otherwise one plain line per
finished case (on the ``say`` callback, stdout by default). Cases finish in plan order,
so counting the case records process 0 has written tells which case runs now.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from podscale.core.case import Case

_ENDS = (b'"type": "case"', b'"type": "skip"')  # a case ends with one of these records


def eta(elapsed: float, done: int, total: int) -> str:
    if done == 0 or done >= total:
        return "--"
    left = elapsed / done * (total - done)
    return f"{left:.0f}s" if left < 120 else f"{left / 60:.1f}min"


class Progress:
    def __init__(self, cases: Sequence[Case], say: Callable[[str], None] | None = print,
                 stream=None) -> None:
        self.cases, self.total = list(cases), len(cases)
        self._say = say
        self.stream = stream or sys.stderr
        self.live = say is print and self.stream.isatty()
        self.done, self._base = 0, 0
        self._files: dict[Path, tuple[int, int]] = {}
        self.started = time.monotonic()
        self._last_poll = 0.0

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
        for i in range(self.done, done):
            if not self.live:
                self._say(f"# [{i + 1}/{self.total}] {self.cases[i].id} done "
                          f"(elapsed {now - self.started:.0f}s, ETA "
                          f"{eta(now - self.started, i + 1, self.total)})")
        self.done = done
        if self.live:
            current = self.cases[done].id if done < self.total else "finishing"
            width = 24
            filled = int(width * done / self.total)
            self.stream.write(f"\r\033[K[{'#' * filled}{'.' * (width - filled)}] "
                              f"{done}/{self.total} {current} ETA "
                              f"{eta(now - self.started, done, self.total)}")
            self.stream.flush()

    def close(self) -> None:
        if self.live and self.total:
            self.stream.write("\r\033[K")
            self.stream.flush()
