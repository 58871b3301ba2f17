"""The record of a profiled program (``podscale profile``/``attach``):
``profile/process-<i>.jsonl`` under the run directory, one JSON object a line, each of a
kind declared in :data:`KINDS` with its required fields. The process's first line
(``start``) names the form it is written in (``schema``).

Written by :mod:`podscale.attach` (every line checked by :func:`line` as it is added),
read by ``podscale.load_profile``, which refuses a form or a kind it does not know.

Form history (:data:`SCHEMA`, the one written now; :data:`READABLE`, every one read):

- ``podscale.profile/1`` (0.5.0): the first declared form: the kinds below, the schema
  on ``start``, ``degraded`` (JAX hooks the release lacked), ``background`` (the
  program's other threads' CPU; added before 0.5.0 was released).
- ``podscale.profile/0``: lines written before 0.5.0 declared it (no ``schema`` on
  ``start``); the same kinds but ``degraded``, read alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from podscale.core import profilelines as pl
from podscale.core import runfolder as rf
from podscale.core.errors import UsageError

SCHEMA = "podscale.profile/1"
#: an unversioned record (before 0.5.0)
UNVERSIONED = "podscale.profile/0"
READABLE = (UNVERSIONED, SCHEMA)
#: the folder of the records under a run directory
FOLDER = rf.PROFILE


#: the device facts a ``join`` or ``devices`` line carries (:func:`podscale.attach.joining.devices`)
DEVICE_FIELDS = tuple(pl.DeviceFacts.__annotations__)
_DEVICE_MARKS = tuple((f, f) for f in DEVICE_FIELDS)


@dataclass(frozen=True)
class Kind:
    """A kind of line: its declaration (a TypedDict of :mod:`podscale.core.profilelines`,
    whose keys are the fields every line of it holds, those the reader cannot do
    without, and the ``NotRequired`` ones it may hold besides: a line of an older
    podscale may lack them) and what it says. How the reader takes it: ``marks`` (field,
    the process mark it sets), ``rows`` (the table a line adds itself to, as a row), or
    with ``spread`` its ``rows`` field's rows, each one row; a kind with neither has a
    reader of its own (:mod:`podscale.analysis.profile.load`)."""

    declared: Any
    says: str
    marks: tuple[tuple[str, str], ...] = ()
    rows: str | None = None
    spread: bool = False
    #: read from the declaration once (every line written or read is checked against them):
    #: the kind's name, the fields every line holds and those it may, in declared order
    name: str = field(init=False)
    required: tuple[str, ...] = field(init=False)
    optional: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        fields = self.declared.__annotations__
        need, may = self.declared.__required_keys__, self.declared.__optional_keys__
        object.__setattr__(self, "name", pl.kind_of(self.declared))
        object.__setattr__(self, "required",
                           tuple(f for f in fields if f in need and f != "kind"))
        object.__setattr__(self, "optional", tuple(f for f in fields if f in may))


#: every kind of line a profiled process writes
KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind(pl.Start, "the process attached (its clock's origin), pid, host",
         marks=(("attach", "attach"), ("process_start", "process_start"), ("pid", "pid"),
                ("host", "host"))),
    Kind(pl.Join, "the program joined the job (jax.distributed.initialize), with its devices",
         marks=(("start", "join_start"), ("end", "join_end"), ("processes", "processes"),
                *_DEVICE_MARKS)),
    Kind(pl.Offset, "the clock's offset from process 0's",
         marks=(("offset_us", "offset_us"), ("rtt_us", "rtt_us"))),
    Kind(pl.Devices, "a one-process program that never joined: its devices",
         marks=_DEVICE_MARKS),
    Kind(pl.Memory, "each device's memory in use and its peak",
         marks=(("devices", "device_memory"),)),
    Kind(pl.Degraded, "JAX hooks this release lacked: what each cost",
         marks=(("hooks", "degraded"),)),
    Kind(pl.Computation, "a computation the program defined", rows="computation"),
    Kind(pl.Calls, "calls of computations: [id, seq, dispatch, returned, ready]",
         rows="call", spread=True),
    Kind(pl.Threads, "calls made from threads other than the main one, counted",
         marks=(("calls", "other_threads"),)),
    Kind(pl.Compile, "one of JAX's compile duration events", rows="compile"),
    Kind(pl.Cache, "the persistent compilation cache's answer", rows="cache"),
    Kind(pl.Arm, "an A/B arm's variables as the program ran with them (at its first "
         "computation)", marks=(("vars", "arm_vars"),)),
    Kind(pl.Compiled, "a call that compiled: its program's facts", rows="compiled"),
    Kind(pl.Step, "one of the program's own StepTraceAnnotations"),
    Kind(pl.Program, "the step's optimized program saved (file), or why not",
         rows="program"),
    Kind(pl.Capture, "a captured window, reduced"),
    Kind(pl.CaptureSkipped, "a capture that did not happen, and why"),
    Kind(pl.CaptureFailed, "a capture that failed"),
    Kind(pl.Gaps, "sampled host time between calls: [seq, frame, seconds]", rows="gaps",
         spread=True),
    Kind(pl.Background, "CPU time of the program's other threads, sampled: [seq, thread, "
         "frame, seconds]", rows="background", spread=True),
    Kind(pl.Silent, "a span in which the process stood still"),
    Kind(pl.Hang, "the roll-call ended the job here"),
    Kind(pl.End, "the process ended", marks=(("end", "end"), ("exit_code", "exit_code"),
                                              ("error", "error"))),
)}


def record(line: pl.Line) -> dict[str, Any]:
    """A line as its declaration allows (mypy checks the literal at every write site:
    ``record({"kind": "silent", "from": a, "to": b})``). It never raises: the recorder
    checks each line it adds (:func:`line`), says a slip and goes on without it."""
    return cast(dict[str, Any], line)


def path_of(run_dir: Path, process: int) -> Path:
    """Process ``process``'s record under ``run_dir``."""
    return run_dir / FOLDER / rf.process_name(process, ".jsonl")


def record_files(run_dir: Path) -> list[Path]:
    """Every process's record under ``run_dir``, by process."""
    return sorted(Path(run_dir, FOLDER).glob(rf.process_glob(".jsonl")),
                  key=lambda p: rf.process_of(p) or 0)


@dataclass(frozen=True)
class Line:
    """One line of the record: its kind and its fields (the kind's required ones among
    them)."""

    kind: str
    fields: Mapping[str, Any]

    def __post_init__(self) -> None:
        _check(self.kind, self.fields)

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> Line:
        return cls(str(obj.get("kind")), {k: v for k, v in obj.items() if k != "kind"})

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.fields}


def _kind(kind: str) -> Kind:
    known = KINDS.get(kind)
    if known is None:
        raise ValueError(f"unknown kind of profile line {kind!r}")
    return known


def _check(kind: str, fields: Mapping[str, Any]) -> None:
    missing = [f for f in _kind(kind).required if f not in fields]
    if missing:
        raise ValueError(f"a {kind!r} line without {', '.join(missing)}")


def line(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` checked as a line of the record (ValueError where it is not one: an
    unknown kind, a field missing or not declared), as it is: the recorder checks every
    line it adds, with no copy."""
    kind = str(obj.get("kind"))
    _check(kind, obj)
    declared = _kind(kind).declared.__annotations__
    unknown = [f for f in obj if f not in declared]
    if unknown:
        raise ValueError(f"a {kind!r} line declares no {', '.join(sorted(unknown))}")
    return obj


def schema_of(objs: list[dict[str, Any]], where: str) -> str:
    """The form a process's lines are written in (its ``start`` line's); UsageError for a
    form this podscale does not read."""
    start = next((o for o in objs if o.get("kind") == "start"), {})
    schema = str(start.get("schema", UNVERSIONED))
    if schema not in READABLE:
        raise UsageError(f"{where}: written as {schema}, which this podscale does not read "
                         f"(it reads {', '.join(READABLE)}): read it with the podscale that "
                         "wrote it, or a newer one")
    return schema


def checked(objs: list[dict[str, Any]], where: str) -> list[Line]:
    """Every line as a :class:`Line`; UsageError naming the first that is none (an unknown
    kind: a newer writer, or not podscale's record)."""
    out = []
    for n, obj in enumerate(objs, 1):
        try:
            out.append(Line.of(obj))
        except ValueError as exc:
            raise UsageError(f"{where}: record {n}: {exc}") from None
    return out


def window_label(first: Any, stop: Any) -> str:
    """A capture window's steps as read, both ends held: ``5-7`` (``--profile-steps 5:8``),
    ``5`` (one step), ``15-end`` (still open when the program ended, short of its end)."""
    a = int(first)
    if stop is None or stop != stop:  # None, or NaN in a frame
        return f"{a}-end"
    return f"{a}" if int(stop) - 1 <= a else f"{a}-{int(stop) - 1}"
