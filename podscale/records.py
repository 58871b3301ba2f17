"""Record types of a run: frozen, validated dataclasses stored as JSON Lines.

One file per process (``records/<layout>/process-<i>.jsonl``) holds that process's
``env``, ``case`` and ``sample`` records; ``run.json`` holds the :class:`Manifest`.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any

from podscale.errors import UsageError

SCHEMA = "podscale.run/1"
RECORD_SCHEMA = "podscale.records/1"
PHASES = ("compile", "warmup", "timed", "traced")


def _require(cond: bool, msg: str) -> None:
    if not cond:
        raise ValueError(msg)


@dataclass(frozen=True)
class Sample:
    """One raw timing: a process's wall time for one iteration of one phase of a case."""

    case_id: str
    process: int
    phase: str
    iteration: int
    seconds: float
    device: int | None = None  # device id where the time is per device; None = whole process

    def __post_init__(self) -> None:
        _require(self.phase in PHASES, f"unknown phase {self.phase!r}")
        _require(self.process >= 0 and self.iteration >= 0, "negative process or iteration")
        _require(math.isfinite(self.seconds) and self.seconds >= 0, "bad seconds value")


@dataclass(frozen=True)
class CaseRecord:
    """What one process knows about a case: its parameters, work and correctness check."""

    case_id: str
    process: int
    params: dict
    bytes_per_process: int
    flops_per_process: int
    bytes_per_device: int
    checked: int
    wrong: int
    max_error: float
    result: float | None = None

    def __post_init__(self) -> None:
        _require(0 <= self.wrong <= self.checked, "wrong must be within [0, checked]")
        _require(self.bytes_per_process >= 0 and self.flops_per_process >= 0, "negative work")


@dataclass(frozen=True)
class EnvRecord:
    """Environment seen by one worker process after ``jax.distributed.initialize``."""

    process: int
    process_count: int
    local_device_count: int
    global_device_count: int
    platform: str
    device_kind: str
    jax: str
    jaxlib: str
    hostname: str
    pid: int
    xla_flags: str
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Manifest:
    """The run's manifest (``run.json``)."""

    run_id: str
    created: str
    command: list[str]
    spec: dict
    layouts: list[str]
    environment: dict
    status: str = "running"  # running | complete | failed | interrupted
    error: str | None = None
    finished: str | None = None
    schema: str = SCHEMA

    def __post_init__(self) -> None:
        _require(self.schema == SCHEMA, f"unsupported schema {self.schema!r}")
        _require(self.status in ("running", "complete", "failed", "interrupted"), "bad status")


RECORD_TYPES: dict[str, type] = {"sample": Sample, "case": CaseRecord, "env": EnvRecord}
_TYPE_OF = {cls: name for name, cls in RECORD_TYPES.items()}


def to_line(record: Any) -> str:
    return json.dumps({"type": _TYPE_OF[type(record)], **asdict(record)}, sort_keys=True)


def from_line(line: str) -> Any:
    obj = json.loads(line)
    cls = RECORD_TYPES[obj.pop("type")]
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in obj.items() if k in names})


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
        self._dir, self._process, self._buffer = records_dir, process, []
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


def read_records(path: Path) -> list[Any]:
    """Read one JSON Lines file; a torn last line (killed writer) is dropped, any
    other bad line is an error naming the file and line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(from_line(line))
        except (ValueError, KeyError, TypeError) as exc:
            if n == len(lines) and not line.endswith("}"):
                break  # partially written final line of a killed process
            raise UsageError(f"{path}:{n}: not a podscale record ({exc})") from None
    return out


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    tmp = run_dir / "run.json.tmp"
    tmp.write_text(json.dumps(asdict(manifest), indent=2, sort_keys=True) + "\n")
    tmp.replace(run_dir / "run.json")


def read_manifest(run_dir: Path) -> Manifest:
    path = Path(run_dir) / "run.json"
    if not path.is_file():
        raise UsageError(f"{run_dir}: not a podscale run (no run.json)")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(obj, dict) or obj.get("schema") != SCHEMA:
            found = obj.get("schema") if isinstance(obj, dict) else type(obj).__name__
            raise UsageError(f"{path}: schema {found!r} is not {SCHEMA!r}")
        return Manifest(**obj)
    except (json.JSONDecodeError, TypeError, ValueError) as exc:
        raise UsageError(f"{path}: unreadable manifest ({exc})") from None
