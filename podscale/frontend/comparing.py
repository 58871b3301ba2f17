"""How compare and ab judge a change (:class:`Verdict`), and the comparison they print and
write."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podscale.core import defaults
from podscale.core.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

    from podscale.analysis.run import Run


@dataclass(frozen=True)
class Verdict:
    """How ``compare`` and ``ab`` judge a change (``add_verdict_args``' options)."""

    threshold: float = defaults.THRESHOLD
    alpha: float = defaults.ALPHA
    correction: str = "bh"
    paired: bool = False
    fail_on_regression: bool = False
    #: the timing method judged (auto: the best both runs hold)
    method: str = "auto"
    #: text, or json: one document on stdout
    fmt: str = "text"
    #: a folder of A/A runs each case's noise floor is learnt from (:mod:`noise`)
    noise_from: Path | None = None

    def __post_init__(self) -> None:
        if self.threshold < 0 or not 0 < self.alpha < 1:
            raise UsageError("--threshold must be >= 0 and --alpha within (0, 1)")
        from podscale.core.timing import METHODS

        if self.method not in ("auto", *METHODS):
            raise UsageError(f"bad --judge {self.method!r}: auto or one of "
                             f"{', '.join(METHODS)}")

    def compare(self, run_a: Run, run_b: Run, force: bool = False) -> tuple[Any, list[str]]:
        """(table, notes) of :func:`podscale.analysis.verdicts.compare.compare` under this
        verdict."""
        from podscale.analysis.verdicts.compare import compare

        return compare(run_a, run_b, threshold=self.threshold, alpha=self.alpha, force=force,
                       correction=self.correction, paired=self.paired, method=self.method,
                       noise=self.floors(run_a, run_b))

    def floors(self, run_a: Run, run_b: Run) -> dict[str, float] | None:
        """Each case's noise floor from ``noise_from``'s runs, A and B left out."""
        if self.noise_from is None:
            return None
        from podscale.analysis.verdicts.noise import floors, series

        return floors(series([self.noise_from], self.method),
                      leave_out=(run_a.path.name, run_b.path.name))


def write_compare(table: pd.DataFrame, notes: list[str], run_a: Run, run_b: Run, verdict: Verdict,
                  out: Path | None = None) -> int:
    """Print and write the comparison (default: RUN_B/compare-<A>.csv/.txt/.json, the
    fits' and the ops' tables beside): text, or (``verdict.fmt`` json) one document; the
    exit code (1 if a case is slower and the verdict fails on regression)."""
    from podscale.analysis.render.text import (
        comparison_text,
        fit_changes_text,
        op_changes_text,
        program_changes_text,
    )
    from podscale.analysis.verdicts import fitcompare, opdiff, programs
    from podscale.analysis.verdicts.compare import judged

    run_a, run_b, _ = judged(run_a, run_b, verdict.method)
    name_a, name_b = run_a.path.name, run_b.path.name
    changed = programs.program_changes(run_a.summary(), run_b.summary())
    table = table.merge(changed, on="case_id", how="left")
    table["program_change"] = table["program_change"].fillna("")
    ops = opdiff.op_changes(run_a.cases, run_b.cases, threshold=verdict.threshold,
                            alpha=verdict.alpha, correction=verdict.correction,
                            noise=opdiff.case_noise(table))
    held = all("ops" in r.cases and r.cases["ops"].notna().any() for r in (run_a, run_b))
    changes = fitcompare.compare_fits(run_a, run_b)
    text = "\n".join([comparison_text(table, notes, name_a, name_b, verdict.threshold,
                                      verdict.correction, verdict.paired),
                      program_changes_text(changed),
                      op_changes_text(ops, held), fit_changes_text(changes)])
    doc = document(table, notes, run_a, run_b, verdict, ops, held, changes)
    out = out or run_b.path / f"compare-{name_a}"
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out.with_suffix(".csv"), index=False)
    changes.to_csv(out.with_name(out.name + "-fits.csv"), index=False)
    ops.to_csv(out.with_name(out.name + "-ops.csv"), index=False)
    out.with_suffix(".txt").write_text(text + "\n")
    out.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
    written = f"# written: {out.with_suffix('.csv')}, {out.name}.txt, .json, -fits.csv, -ops.csv"
    if verdict.fmt == "json":
        print(json.dumps(doc, indent=1))
        print(written, file=sys.stderr)
    elif verdict.fmt != "text":  # B's cases with their verdicts, as podscale export writes
        from podscale.analysis.export import document as exported
        from podscale.analysis.export.rows import rows, with_verdicts

        found, facts = rows(run_b)
        sys.stdout.write(exported(with_verdicts(found, table), facts, verdict.fmt,
                                  verdicts=True))
        print(written, file=sys.stderr)
    else:
        print(text)
        print(written)
    slower = (table["verdict"] == "slower").any()
    return 1 if slower and verdict.fail_on_regression else 0


def document(table: pd.DataFrame, notes: list[str], run_a: Run, run_b: Run,
             verdict: Verdict, ops: pd.DataFrame, held: bool, fits: pd.DataFrame) -> dict:
    """The comparison as one JSON document (``--format json``, and compare-<A>.json)."""
    def records(df: pd.DataFrame) -> list[dict]:
        return json.loads(df.to_json(orient="records"))

    return {"schema": "podscale.compare/1", "a": str(run_a.path), "b": str(run_b.path),
            "threshold": verdict.threshold, "alpha": verdict.alpha,
            "correction": verdict.correction, "paired": verdict.paired,
            "notes": notes, "cases": records(table), "ops_held": held,
            "ops": records(ops), "fits": records(fits)}
