"""The record of a profiled program (``podscale profile``/``attach``):
``profile/process-<i>.jsonl`` under the run directory, one JSON object a line, each of a
kind declared in :data:`KINDS` with its required fields. The process's first line
(``start``) names the form it is written in (``schema``).

Written by :mod:`podscale.attach` (every line checked by :func:`line` as it is added),
read by ``podscale.load_profile``, which refuses a form or a kind it does not know.

Form history (:data:`SCHEMA`, the one written now; :data:`READABLE`, every one read):

- ``podscale.profile/1`` (0.5.0): the first declared form: the kinds below, the schema
  on ``start``, ``degraded`` (JAX hooks the release lacked).
- ``podscale.profile/0``: lines written before 0.5.0 declared it (no ``schema`` on
  ``start``); the same kinds but ``degraded``, read alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from podscale.core import runfolder as rf
from podscale.core.errors import UsageError

SCHEMA = "podscale.profile/1"
#: an unversioned record (before 0.5.0)
UNVERSIONED = "podscale.profile/0"
READABLE = (UNVERSIONED, SCHEMA)
#: the folder of the records under a run directory
FOLDER = rf.PROFILE


#: the device facts a ``join`` or ``devices`` line carries (:func:`podscale.attach.joining.devices`)
DEVICE_FIELDS = ("platform", "device_kind", "local_devices", "peaks", "slice")
_DEVICE_MARKS = tuple((f, f) for f in DEVICE_FIELDS)


@dataclass(frozen=True)
class Kind:
    """A kind of line: its name, the fields every line of it holds (those the reader
    cannot do without: a line of an older podscale may lack the others), the fields it
    may hold besides, and what it says. How the reader takes it: ``marks`` (field, the
    process mark it sets), ``rows`` (the table a line adds itself to, as a row), or with
    ``spread`` its ``rows`` field's rows, each one row; a kind with neither has a reader
    of its own (:mod:`podscale.analysis.profile.load`)."""

    name: str
    required: tuple[str, ...]
    says: str
    optional: tuple[str, ...] = ()
    marks: tuple[tuple[str, str], ...] = ()
    rows: str | None = None
    spread: bool = False

    def line(self, **fields: Any) -> dict[str, Any]:
        """A line of this kind: every required field given, no field it does not
        declare (ValueError naming what is wrong)."""
        unknown = sorted(set(fields) - set(self.required) - set(self.optional))
        if unknown:
            raise ValueError(f"a {self.name!r} line declares no {', '.join(unknown)}")
        _check(self.name, fields)
        return {"kind": self.name, **fields}


#: every kind of line a profiled process writes
KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("start", ("attach",), "the process attached (its clock's origin), pid, host",
         ("schema", "process_start", "pid", "host", "script", "argv"),
         marks=(("attach", "attach"), ("process_start", "process_start"), ("pid", "pid"),
                ("host", "host"))),
    Kind("join", ("start", "end"),
         "the program joined the job (jax.distributed.initialize), with its devices",
         ("process", "processes", *DEVICE_FIELDS),
         marks=(("start", "join_start"), ("end", "join_end"), ("processes", "processes"),
                *_DEVICE_MARKS)),
    Kind("offset", ("offset_us", "rtt_us"), "the clock's offset from process 0's",
         marks=(("offset_us", "offset_us"), ("rtt_us", "rtt_us"))),
    Kind("devices", (), "a one-process program that never joined: its devices",
         DEVICE_FIELDS, marks=_DEVICE_MARKS),
    Kind("memory", ("devices",), "each device's memory in use and its peak",
         marks=(("devices", "device_memory"),)),
    Kind("degraded", ("hooks",), "JAX hooks this release lacked: what each cost",
         marks=(("hooks", "degraded"),)),
    Kind("computation", ("id", "name", "wrapper"), "a computation the program defined",
         rows="computation"),
    Kind("calls", ("rows",), "calls of computations: [id, seq, dispatch, returned, ready]",
         rows="call", spread=True),
    Kind("threads", ("calls",), "calls made from threads other than the main one, counted",
         marks=(("calls", "other_threads"),)),
    Kind("compile", ("end",), "one of JAX's compile duration events",
         ("event", "fun", "seconds", "seq", "ahead"), rows="compile"),
    Kind("cache", ("hit", "end"), "the persistent compilation cache's answer", ("seq",),
         rows="cache"),
    Kind("arm", ("vars",), "an A/B arm's variables as the program ran with them (at its "
         "first computation)", marks=(("vars", "arm_vars"),)),
    Kind("compiled", ("id", "seq", "call"), "a call that compiled: its program's facts",
         ("shapes", "leaves", "outputs", "program", "peers", "flops", "bytes", "memory",
          "loop_flops", "loops", "identity"),
         rows="compiled"),
    Kind("step", ("name", "num", "seqs", "enter", "exit"),
         "one of the program's own StepTraceAnnotations"),
    Kind("program", ("name",), "the step's optimized program saved (file), or why not",
         ("file", "error"), rows="program"),
    Kind("capture", ("steps", "file", "rows", "cut"), "a captured window, reduced",
         ("ops", "origin_us", "start", "stop", "reduce_s", "trigger", "wall")),
    Kind("capture_skipped", ("reason",), "a capture that did not happen, and why",
         ("steps", "trigger")),
    Kind("capture_failed", ("error",), "a capture that failed", ("steps", "trigger")),
    Kind("gaps", ("rows",), "sampled host time between calls: [seq, frame, seconds]",
         rows="gaps", spread=True),
    Kind("silent", ("from", "to"), "a span in which the process stood still"),
    Kind("hang", ("verdict",), "the roll-call ended the job here", ("end", "exit_code")),
    Kind("end", ("end", "exit_code"), "the process ended", ("error", "calls"),
         marks=(("end", "end"), ("exit_code", "exit_code"), ("error", "error"))),
)}


#: every kind a line may be, for the type checker: a misspelt kind at a write site fails
#: mypy (``tests/test_profile_analysis.py`` holds it to :data:`KINDS`)
KindName = Literal[
    "start", "join", "offset", "devices", "memory", "degraded", "computation", "calls",
    "threads", "compile", "cache", "arm", "compiled", "step", "program", "capture",
    "capture_skipped", "capture_failed", "gaps", "silent", "hang", "end"]


def record(kind: KindName, **fields: Any) -> dict[str, Any]:
    """A line of kind ``kind`` as its declaration allows (:meth:`Kind.line`): the one way
    podscale writes one (``record("silent", **{"from": a, "to": b})`` for a keyword)."""
    return _kind(kind).line(**fields)


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
    """``obj`` checked as a line of the record (ValueError where it is not one), as it is:
    the recorder checks every line it adds, with no copy."""
    _check(str(obj.get("kind")), obj)
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
