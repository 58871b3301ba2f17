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

import numpy as np

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
_FIELDS = {cls: tuple(f.name for f in fields(cls)) for cls in RECORD_TYPES.values()}
SAMPLE_FIELDS = _FIELDS[Sample]


def to_dict(record: Any) -> dict:
    """A record as the plain dict its JSON line holds (with its ``type``); shallow:
    records hold JSON values, no nested records."""
    cls = type(record)
    return {"type": _TYPE_OF[cls], **{name: getattr(record, name) for name in _FIELDS[cls]}}


def to_line(record: Any) -> str:
    return json.dumps(to_dict(record), sort_keys=True)




def from_line(line: str) -> Any:
    obj = json.loads(line)
    cls = RECORD_TYPES[obj.pop("type")]
    names = _FIELDS[cls]
    return cls(**{k: v for k, v in obj.items() if k in names})


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _parse(path: Path, lines: list[str], numbers) -> list[Any]:
    """Records of the given (0-based) lines, one by one; a torn last line (killed
    writer) is dropped, any other bad line is an error naming the file and line."""
    out = []
    for i in numbers:
        line = lines[i]
        if not line.strip():
            continue
        try:
            out.append(from_line(line))
        except (ValueError, KeyError, TypeError) as exc:
            if i == len(lines) - 1 and not line.endswith("}"):
                break  # partially written final line of a killed process
            raise UsageError(f"{path}:{i + 1}: not a podscale record ({exc})") from None
    return out


def read_records(path: Path) -> list[Any]:
    """Every record of one JSON Lines file, as objects (see :func:`_parse`)."""
    lines = _lines(path)
    return _parse(path, lines, range(len(lines)))


def read_columns(path: Path) -> tuple[dict[str, np.ndarray], list[Any]]:
    """One JSON Lines file as (sample columns, the other records as objects). The file is
    parsed in one go; samples — nearly every line of a run — are validated column by column
    with :class:`Sample`'s rules, the other records as objects. A file that does not parse
    whole (a torn last line, a bad line) is read line by line as :func:`read_records` does,
    which drops a torn last line and names any other bad line."""
    text = path.read_text(encoding="utf-8")
    try:
        objs = json.loads("[" + ",".join(text.splitlines()) + "]")
        whole = all(isinstance(o, dict) for o in objs)
    except ValueError:
        whole = False
    if not whole:  # line by line: drops a torn last line, names any other bad line
        records = read_records(path)
        return _sample_columns([asdict(r) for r in records if isinstance(r, Sample)]), \
            [r for r in records if not isinstance(r, Sample)]
    try:
        other = [from_dict(o) for o in objs if o.get("type") != "sample"]
        return _sample_columns([o for o in objs if o.get("type") == "sample"]), other
    except (ValueError, KeyError, TypeError):
        read_records(path)  # names the first bad line
        raise


def from_dict(obj: dict) -> Any:
    """A record from :func:`to_dict`'s form, validated (unknown keys are ignored)."""
    cls = RECORD_TYPES[obj["type"]]
    return cls(**{k: v for k, v in obj.items() if k in _FIELDS[cls]})


def _sample_columns(objs: list[dict]) -> dict[str, np.ndarray]:
    """Sample dicts as columns, validated with :class:`Sample`'s rules (ValueError or
    TypeError when one breaks them)."""
    get = {name: [o.get(name) for o in objs] for name in SAMPLE_FIELDS}
    out = {"case_id": np.array(get["case_id"], dtype=object),
           "process": np.array(get["process"], dtype=np.int64),
           "phase": np.array(get["phase"], dtype=object),
           "iteration": np.array(get["iteration"], dtype=np.int64),
           "seconds": np.array(get["seconds"], dtype=np.float64),
           "device": np.array(get["device"], dtype=object),
           "round": np.array([0 if r is None else r for r in get["round"]], np.int64)}
    ok = np.isin(out["phase"], PHASES) & (out["process"] >= 0) & (out["iteration"] >= 0) & (
        out["round"] >= 0) & np.isfinite(out["seconds"]) & (out["seconds"] >= 0) & np.fromiter(
        (isinstance(c, str) for c in out["case_id"]), dtype=bool, count=len(objs))
    if not ok.all():
        raise ValueError(f"bad sample {objs[int(np.argmin(ok))]}")
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
