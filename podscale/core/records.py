"""Record types of a run: frozen, validated dataclasses stored as JSON Lines.

One file per process (``records/<layout>/process-<i>.jsonl``) holds that process's
``env``, ``case`` and ``sample`` records; ``run.json`` holds the :class:`Manifest`.
Workers write them with :mod:`podscale.worker.writers`; analysis reads them from here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from podscale.core.errors import UsageError

SCHEMA = "podscale.run/2"
OLD_SCHEMAS = {"podscale.run/1": "podscale 0.1, before workloads and named mesh axes"}
PHASES = ("compile", "warmup", "timed", "traced")
STATUSES = ("running", "complete", "failed", "interrupted")
#: name of the profiler annotation taken right after a barrier, to align traces
SYNC_MARK = "podscale_sync"


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
    round: int = 0  # the repetition (a separate launch of the case's processes, see --rounds)

    def __post_init__(self) -> None:
        _require(self.phase in PHASES, f"unknown phase {self.phase!r}")
        _require(self.process >= 0 and self.iteration >= 0 and self.round >= 0,
                 "negative process, iteration or round")
        _require(math.isfinite(self.seconds) and self.seconds >= 0, "bad seconds value")


@dataclass(frozen=True)
class CaseRecord:
    """What one process knows about a case: the case itself (``Case.to_dict()``: workload,
    version, variant, dtype, layout, parameters, settings), its work and correctness check."""

    case_id: str
    process: int
    case: dict
    bytes_per_process: int
    flops_per_process: int
    bytes_per_device: int
    checked: int
    wrong: int
    max_error: float
    result: float | None = None
    collective: str | None = None
    participants: int = 1
    compile_kind: str = "lower+compile"  # or "first call (incl. execution)"
    round: int = 0
    hosts_per_group: int = 1  # processes one group of participants spans

    def __post_init__(self) -> None:
        _require(0 <= self.wrong <= self.checked, "wrong must be within [0, checked]")
        _require(self.bytes_per_process >= 0 and self.flops_per_process >= 0, "negative work")
        _require(self.participants >= 1 and self.hosts_per_group >= 1,
                 "participants and hosts per group must be >= 1")


@dataclass(frozen=True)
class SkipRecord:
    """A case this process could not run on its backend (e.g. an op XLA:CPU does not
    implement), with the backend's reason; it has no samples and no check."""

    case_id: str
    process: int
    case: dict
    reason: str

    def __post_init__(self) -> None:
        _require(bool(self.reason.strip()), "a skip needs a reason")


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
        _require(self.status in STATUSES, "bad status")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@contextmanager
def lifecycle(run_dir: Path, manifest: Manifest, *, write: bool = True) -> Iterator[None]:
    """The one manifest lifecycle of ``execute`` and ``podscale worker``: written as
    ``running``, then ``complete``, ``failed`` (with the error) or ``interrupted``.
    ``write=False`` (processes other than 0 of a cluster job) only runs the body."""
    if write:
        write_manifest(run_dir, manifest)
    status, error = "failed", None
    try:
        yield
        status = "complete"
    except KeyboardInterrupt:
        status, error = "interrupted", "interrupted by the user"
        raise
    except BaseException as exc:
        error = str(exc) or type(exc).__name__
        raise
    finally:
        if write:
            write_manifest(run_dir, replace(manifest, status=status, error=error,
                                            finished=now()))


RECORD_TYPES: dict[str, type] = {"sample": Sample, "case": CaseRecord, "env": EnvRecord,
                                  "skip": SkipRecord}
_TYPE_OF = {cls: name for name, cls in RECORD_TYPES.items()}


def to_line(record: Any) -> str:
    return json.dumps({"type": _TYPE_OF[type(record)], **asdict(record)}, sort_keys=True)


def from_line(line: str) -> Any:
    obj = json.loads(line)
    cls = RECORD_TYPES[obj.pop("type")]
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in obj.items() if k in names})


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
            if found in OLD_SCHEMAS:
                raise UsageError(f"{path}: schema {found!r} was written by "
                                 f"{OLD_SCHEMAS[found]}; this podscale reads {SCHEMA!r} "
                                 "(re-run it)")
            raise UsageError(f"{path}: schema {found!r} is not {SCHEMA!r}")
        return Manifest(**obj)
    except (json.JSONDecodeError, TypeError, ValueError) as exc:
        raise UsageError(f"{path}: unreadable manifest ({exc})") from None
