"""Writers of a worker's records: straight to a per-process JSON Lines file, or gathered
to process 0 for hosts without a shared filesystem."""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from podscale.core.recordfile import to_line


class RecordWriter:
    """Appends records to one process's JSON Lines file, flushing after each batch."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = path.open("a", encoding="utf-8")

    def write(self, *records: Any) -> None:
        self._fh.write("".join(to_line(r) + "\n" for r in records))
        self._fh.flush()

    def flush(self) -> None:
        """Records are flushed as they are written; a no-op kept for GatheringWriter's API."""

    def close(self) -> None:
        self._fh.close()


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
                    p, RecordWriter(self._dir / f"process-{p}.jsonl"))
                w._fh.write(bytes(everything[p, :n]).decode())
                w._fh.flush()

    def close(self) -> None:
        self.flush()
        for w in self._writers.values():
            w.close()


#: what a worker writes its records with
Writer = RecordWriter | GatheringWriter
