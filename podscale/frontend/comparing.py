"""How compare and ab judge a change (:class:`Verdict`), and the comparison they print and
write."""

from __future__ import annotations

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
                       correction=self.correction, paired=self.paired, method=self.method)


def write_compare(table: pd.DataFrame, notes: list[str], run_a: Run, run_b: Run, verdict: Verdict,
                  out: Path | None = None) -> int:
    """Print and write the comparison (default: RUN_B/compare-<A>.csv/.txt); the exit code
    (1 if a case is slower and the verdict fails on regression)."""
    from podscale.analysis.render.text import (
        comparison_text,
        fit_changes_text,
        program_changes_text,
    )
    from podscale.analysis.verdicts import fitcompare, programs
    from podscale.analysis.verdicts.compare import judged

    run_a, run_b, _ = judged(run_a, run_b, verdict.method)
    name_a, name_b = run_a.path.name, run_b.path.name
    changed = programs.program_changes(run_a.summary(), run_b.summary())
    attrs = dict(table.attrs)
    table = table.merge(changed, on="case_id", how="left")
    table.attrs.update(attrs)  # the test it ran (paired or not)
    table["program_change"] = table["program_change"].fillna("")
    text = comparison_text(table, notes, name_a, name_b, verdict.threshold,
                           verdict.correction)
    text += "\n" + program_changes_text(changed)
    changes = fitcompare.compare_fits(run_a, run_b)
    text += "\n" + fit_changes_text(changes)
    print(text)
    out = out or run_b.path / f"compare-{name_a}"
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out.with_suffix(".csv"), index=False)
    changes.to_csv(out.with_name(out.name + "-fits.csv"), index=False)
    out.with_suffix(".txt").write_text(text + "\n")
    print(f"# written: {out.with_suffix('.csv')} and {out.name}-fits.csv")
    slower = (table["verdict"] == "slower").any()
    return 1 if slower and verdict.fail_on_regression else 0
