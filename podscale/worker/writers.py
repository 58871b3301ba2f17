"""Writers of a worker's records: straight to a per-process JSON Lines file, or gathered
to process 0 for hosts without a shared filesystem."""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from podscale.core import runfolder as rf
from podscale.core.errors import DiskFull
from podscale.core.recordfile import to_line


class RecordWriter:
    """Appends records to one process's JSON Lines file, flushing after each batch."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh: IO[str] = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise DiskFull(exc.filename or path, exc) from None

    def write(self, *records: Any) -> None:
        self.append("".join(to_line(r) + "\n" for r in records))

    def append(self, text: str) -> None:
        """``text`` appended and flushed; :class:`DiskFull` naming the file where the disk
        refuses it."""
        try:
            self._fh.write(text)
            self._fh.flush()
        except OSError as exc:
            raise DiskFull(self.path, exc) from None

    def flush(self) -> None:
        """Records are flushed as they are written; a no-op kept for GatheringWriter's API."""

    def close(self) -> None:
        try:
            self._fh.close()
        except OSError as exc:
            raise DiskFull(self.path, exc) from None


class GatheringWriter:
    """For hosts without a shared filesystem: every process buffers its records and, at
    each :meth:`flush` (a collective: all processes call it together), process 0 gathers
    them with ``multihost_utils.process_allgather`` and appends them to each process's file."""

    def __init__(self, records_dir: Path, process: int) -> None:
        self._dir, self._process = records_dir, process
        self._buffer: list[str] = []
        self._writers: dict[int, RecordWriter] = {}

    def write(self, *records: Any) -> None:
        self._buffer.extend(to_line(r) + "\n" for r in records)

    def flush(self) -> None:
        import numpy as np
        from jax.experimental import multihost_utils

        data = np.frombuffer("".join(self._buffer).encode(), dtype=np.uint8)
        self._buffer = []
        sizes = np.asarray(multihost_utils.process_allgather(np.array([data.size], np.int32)))
        sizes = sizes.reshape(-1)
        padded = np.zeros(max(int(sizes.max()), 1), np.uint8)
        padded[: data.size] = data
        everything = np.asarray(multihost_utils.process_allgather(padded)).reshape(len(sizes), -1)
        if self._process != 0:
            return
        for p, n in enumerate(sizes):
            if n:
                w = self._writers.setdefault(
                    p, RecordWriter(self._dir / rf.process_name(p, ".jsonl")))
                w.append(bytes(everything[p, :n]).decode())

    def close(self) -> None:
        self.flush()
        for w in self._writers.values():
            w.close()


#: what a worker writes its records with
Writer = RecordWriter | GatheringWriter
