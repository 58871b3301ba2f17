"""A process's records file: JSON Lines, one record a line with its ``type``, written a
line at a time (:mod:`podscale.worker.writers`) and read back whole, or, for the samples
that are nearly every line of a run, as validated columns (:func:`read_columns`)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from podscale.core.errors import UsageError
from podscale.core.records import (
    PHASES,
    CaseRecord,
    EnvRecord,
    LedgerRecord,
    Sample,
    Samples,
    SkipRecord,
)

RECORD_TYPES: dict[str, type] = {"sample": Sample, "samples": Samples, "case": CaseRecord,
                                  "env": EnvRecord, "skip": SkipRecord, "ledger": LedgerRecord}
_TYPE_OF = {cls: name for name, cls in RECORD_TYPES.items()}
_FIELDS = {cls: tuple(f.name for f in fields(cls)) for cls in RECORD_TYPES.values()}


def to_dict(record: Any) -> dict:
    """A record as the plain dict its JSON line holds (with its ``type``); shallow:
    records hold JSON values, no nested records."""
    cls = type(record)
    return {"type": _TYPE_OF[cls], **{name: getattr(record, name) for name in _FIELDS[cls]}}


def to_line(record: Any) -> str:
    return json.dumps(to_dict(record), sort_keys=True)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _parse(path: Path, lines: list[str], numbers: Iterable[int],
           problems: list[str] | None = None) -> list[Any]:
    """Records of the given (0-based) lines, one by one. Without ``problems``, a torn last
    line (a killed writer) is dropped and any other bad line is an error naming the file
    and line; with it, every bad line is left out and described there (file:line: why)."""
    out = []
    for i in numbers:
        line = lines[i]
        if not line.strip():
            continue
        try:
            out.append(from_dict(json.loads(line)))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            torn = i == len(lines) - 1 and not line.rstrip().endswith("}")
            if problems is not None:
                why = "cut off (its writer was stopped mid-line)" if torn else \
                    f"not a podscale record ({type(exc).__name__}: {str(exc)[:80]})"
                problems.append(f"{path}:{i + 1}: {why}")
                continue
            if torn:
                break  # partially written final line of a killed process
            raise UsageError(f"{path}:{i + 1}: not a podscale record ({exc})") from None
    return out


def read_records(path: Path, problems: list[str] | None = None) -> list[Any]:
    """Every record of one JSON Lines file, as objects (see :func:`_parse`)."""
    lines = _lines(path)
    return _parse(path, lines, range(len(lines)), problems)


def read_columns(path: Path, problems: list[str] | None = None
                 ) -> tuple[dict[str, np.ndarray], list[Any]]:
    """One JSON Lines file as (sample columns, the other records as objects). The file is
    parsed in one go; samples — nearly every line of a run — are validated column by column
    with :class:`Sample`'s rules, the other records as objects. A file that does not parse
    or validate whole is read line by line as :func:`read_records` does (``problems``:
    where the lines left out are described, instead of an error)."""
    text = path.read_text(encoding="utf-8")
    try:
        objs = json.loads("[" + ",".join(text.splitlines()) + "]")
        if all(isinstance(o, dict) for o in objs):
            return _columns_of(objs)
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    records = read_records(path, problems)  # strict: names the first bad line
    return _columns_of([to_dict(r) for r in records])


def _columns_of(objs: list[dict]) -> tuple[dict[str, np.ndarray], list[Any]]:
    other = [from_dict(o) for o in objs if o.get("type") not in ("sample", "samples")]
    blocks = [o for o in objs if o.get("type") == "samples"]
    single = [o for o in objs if o.get("type") == "sample"]
    return _sample_columns(blocks, single), other


def from_dict(obj: dict) -> Any:
    """A record from :func:`to_dict`'s form, validated (unknown keys are ignored)."""
    cls = RECORD_TYPES[obj["type"]]
    return cls(**{k: v for k, v in obj.items() if k in _FIELDS[cls]})


def _sample_columns(blocks: list[dict], single: list[dict]) -> dict[str, np.ndarray]:
    """Sample blocks (and single samples, as runs before blocks wrote them) as columns,
    validated with :class:`Sample`'s rules (ValueError or TypeError when one breaks them);
    ``device`` is -1 where a time is the whole process's; ``case_code`` and ``phase_code``
    are codes into ``case_names`` and PHASES, for readers of many files."""
    singles = [{**o, "iterations": [o.get("iteration")], "seconds": [o.get("seconds")]}
               for o in single]
    blocks = blocks + singles
    n = np.array([len(o["seconds"]) for o in blocks], dtype=np.int64)
    if len(blocks) and (n < 1).any() or any(
            len(o["iterations"]) != len(o["seconds"]) for o in blocks):
        raise ValueError("a sample block needs as many iterations as seconds")

    def each(name: str, dtype: type, default: object = None) -> np.ndarray:
        values = [o.get(name, default) for o in blocks]
        if default is not None:
            values = [default if v is None else v for v in values]
        return np.repeat(np.array(values, dtype=dtype), n)

    names = list(dict.fromkeys(o.get("case_id") for o in blocks))
    where = {name: i for i, name in enumerate(names)}
    phase_of: dict[Any, int] = {name: i for i, name in enumerate(PHASES)}
    out = {"case_id": each("case_id", object), "process": each("process", np.int64),
           "case_code": np.repeat(np.array([where[o.get("case_id")] for o in blocks],
                                           dtype=np.int64), n),
           "case_names": np.array(names, dtype=object),
           "phase": each("phase", object),
           "phase_code": np.repeat(np.array([phase_of.get(o.get("phase"), -1) for o in blocks],
                                            dtype=np.int8), n),
           "iteration": np.fromiter(itertools.chain.from_iterable(
               o["iterations"] for o in blocks), dtype=np.int64, count=int(n.sum())),
           "seconds": np.fromiter(itertools.chain.from_iterable(
               o["seconds"] for o in blocks), dtype=np.float64, count=int(n.sum())),
           "device": each("device", np.int64, -1),  # -1: the whole process
           "round": each("round", np.int64, 0)}
    ok = (out["phase_code"] >= 0) & (out["process"] >= 0) & (out["iteration"] >= 0) & (
        out["round"] >= 0) & np.isfinite(out["seconds"]) & (out["seconds"] >= 0)
    ok &= np.repeat(np.fromiter((isinstance(o.get("case_id"), str) for o in blocks),
                                dtype=bool, count=len(blocks)), n)
    if not ok.all():
        i = int(np.argmin(ok))
        raise ValueError(f"bad sample: case {out['case_id'][i]!r}, phase {out['phase'][i]!r}, "
                         f"process {out['process'][i]}, iteration {out['iteration'][i]}, "
                         f"seconds {out['seconds'][i]}")
    return out
