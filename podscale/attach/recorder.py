"""The per-process record of an attached program: ``profile/process-<i>.jsonl`` under the
run directory, one JSON object a line, each of a kind :mod:`podscale.core.profilerecord`
declares.

Lines are kept in memory until the next would take the batch past ``BATCH_BYTES``; the
batch is then appended to the process's file and published to the coordination service's
key-value store (``podscale/attach/batch/<process>/<n>``). Process 0 drains the store
every few seconds (so it never holds more than a few batches per process) into the files
of processes whose file it cannot see: hosts without a shared filesystem still leave one complete
record per process in process 0's run directory."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from podscale.core import lines
from podscale.core.profilerecord import line as checked_line
from podscale.core.profilerecord import path_of
from podscale.startup.jaxapi import CoordinationClient

BATCH_BYTES = 1000
PREFIX = "podscale/attach/batch/"
DRAIN_S = 2.0


class Recorder:
    """Buffers lines until the process is known (``joined``), then batches them."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.process: int | None = None
        self.client: CoordinationClient | None = None
        self._lines: list[str] = []
        self._size = 0
        self._batches = 0
        self._lock = threading.Lock()
        #: where the record could not be written (a full disk): batches after it are lost
        self.lost = ""

    def joined(self, process: int, client: CoordinationClient | None) -> None:
        self.process, self.client = process, client
        path_of(self.run_dir, process).parent.mkdir(parents=True, exist_ok=True)

    def add(self, obj: dict) -> None:
        """Keep a line (one of the record's declared kinds); a batch goes out before it
        would pass ``BATCH_BYTES`` (a line larger than that alone goes in a batch of its
        own)."""
        try:
            checked_line(obj)
        except ValueError as exc:  # podscale's own slip: said, never the program's failure
            lines.say(f"podscale: a profile line not written: {exc}", err=True)
            return
        line = json.dumps(obj, separators=(",", ":"))
        if self.process is not None and self._size + len(line) + 1 > BATCH_BYTES:
            self.flush()
        with self._lock:
            self._lines.append(line)
            self._size += len(line) + 1

    def flush(self) -> None:
        if self.process is None:
            return
        with self._lock:
            batch, self._lines, self._size = self._lines, [], 0
            n, self._batches = self._batches, self._batches + (1 if batch else 0)
        if not batch:
            return
        text = "\n".join(batch) + "\n"
        path = path_of(self.run_dir, self.process)
        try:
            if not self.lost:
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(text)
        except OSError as exc:  # a full disk: said once, never the program's failure
            self.lost = f"{path}: {exc.strerror or exc}"
            lines.say(f"podscale: note: process {self.process}: its profile record stops "
                      f"here ({self.lost}); the program runs on", err=True)
        if self.client is not None:
            try:
                self.client.key_value_set(f"{PREFIX}{self.process}/{n:09d}", text)
            except Exception:  # noqa: BLE001 - the service gone at the end: the file stays
                pass


class Drain:
    """Process 0: copy peers' batches from the store into files it cannot see, and delete
    them from the store, every ``DRAIN_S`` seconds and once more at the end."""

    def __init__(self, run_dir: Path, client: CoordinationClient) -> None:
        self.run_dir, self.client = run_dir, client
        self._shared: dict[int, bool] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="podscale-drain", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(DRAIN_S):
            self.once()

    def once(self) -> None:
        with self._lock:
            try:
                items = sorted(self.client.key_value_dir_get(PREFIX))
            except Exception:  # noqa: BLE001 - service going away
                return
            for key, text in items:
                process = int(key[len(PREFIX):].split("/", 1)[0])
                if process and not self._seen(process):
                    with path_of(self.run_dir, process).open("a", encoding="utf-8") as fh:
                        fh.write(text)
                try:
                    self.client.key_value_delete(key)
                except Exception:  # noqa: BLE001
                    pass

    def _seen(self, process: int) -> bool:
        """Whether this host sees the process's own file (a shared filesystem), decided at
        its first batch: the process writes its file before it publishes."""
        if process not in self._shared:
            self._shared[process] = path_of(self.run_dir, process).exists()
        return self._shared[process]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.once()
