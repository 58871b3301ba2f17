"""``podscale digest``: what an agent or a script needs of a run, as one small JSON
document (``podscale.digest/1``, its JSON Schema :data:`SCHEMA_FILE`, shipped): the command
that reproduces the run, commit, versions, machine and platform; per case its figures with
units and the rounds' range, correctness and reproduce command; against another run each
case's verdict; every Finding with its stable code, severity, numbers and the next command.
A large run's cases are bounded (:data:`MOST_CASES`, the wrong and the regressed first):
the rest are counted in ``cases_left_out``, never dropped unsaid."""

from __future__ import annotations

import shlex
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from podscale.analysis.export.rows import Row, rows, with_verdicts
from podscale.analysis.run import Run, as_run

SCHEMA = "podscale.digest/1"
SCHEMA_FILE = Path(__file__).with_name("digest.schema.json")
MOST_CASES = 100


def _case(row: Row) -> dict:
    out = {"name": row.name, "labels": row.labels, "wrong": row.wrong,
           "checked": row.checked, "reproduce": row.command,
           "figures": [asdict(f) for f in row.figures]}
    if row.verdict is not None:
        out["verdict"] = {"verdict": row.verdict, "ratio": row.ratio,
                          "interval": list(row.interval) if row.interval else None}
    return out


def _order(found: list[Row]) -> list[Row]:
    """The wrong first, then the slower, then the rest in case-id order."""
    return sorted(found, key=lambda r: (r.wrong == 0, r.verdict != "slower", r.name))


def digest(run_dir: str | Path | Run, against: Run | None = None,
           table: pd.DataFrame | None = None,
           most: int = MOST_CASES) -> dict:
    """The digest of a run (``table``: ``podscale compare``'s table against
    ``against``)."""
    from podscale.analysis.render.analysed import analyse

    run = as_run(run_dir)
    found, facts = rows(run)
    if table is not None:
        found = with_verdicts(found, table)
    coded = analyse(run).findings()
    kept = _order(found)[:most]
    return {
        "schema": SCHEMA, "run": {"id": facts.run_id, "path": str(run.path),
                                  "status": facts.status, "created": facts.created,
                                  "error": run.manifest.error},
        "reproduce": shlex.join(["podscale", *run.manifest.command[1:]]),
        "commit": facts.commit, "dirty": facts.dirty, "versions": facts.versions,
        "machine": facts.machine, "platform": facts.platform,
        "device_kind": facts.device_kind, "method": facts.method,
        "against": str(against.path) if against is not None else None,
        "findings": [{"code": c.code, "severity": c.severity, "text": c.text,
                      "numbers": c.numbers, "next": c.next_command(str(run.path))}
                     for c in coded],
        "cases": [_case(r) for r in kept], "cases_left_out": len(found) - len(kept),
    }
