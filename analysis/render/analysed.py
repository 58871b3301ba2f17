"""What a report shows, derived once from a run: its frames, fits, scaling models, skew,
links and ledger (:func:`analyse`), read by the report, its sections and the digest."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from podscale.analysis.data.summary import Summary
from podscale.analysis.models.efficiency import scaling
from podscale.analysis.run import Run
from podscale.core.manifest import Manifest

if TYPE_CHECKING:
    from podscale.analysis.models.fits import Fitted
    from podscale.analysis.verdicts.coded import Finding


@dataclass
class Analysis:
    """Everything a report shows, derived once from the run."""

    manifest: Manifest
    samples: pd.DataFrame
    table: Summary  # the summary with ceilings and regimes, and its facts
    envs: pd.DataFrame
    skipped: dict
    eff: pd.DataFrame
    named: pd.DataFrame
    skew: pd.DataFrame
    slow: pd.DataFrame
    fits: Fitted
    scaled: dict
    status: str = "complete"
    links: list = field(default_factory=list)
    ledger: pd.DataFrame = field(default_factory=pd.DataFrame)
    late: pd.DataFrame = field(default_factory=pd.DataFrame)
    device: bool = True  # the run's device time is a device's (not the CPU client's)
    slow_slice: dict | None = None  # the slowest slice of multi-slice cases, if any

    @property
    def summary(self) -> pd.DataFrame:
        """One row per case (:attr:`table`'s frame)."""
        return self.table.frame

    @property
    def fitted(self) -> pd.DataFrame:
        """The latency-bandwidth fits, one row per size sweep."""
        return self.fits.table

    def findings(self) -> list[Finding]:
        """The run's Findings with their codes, most important first (the report shows
        their text; ``podscale digest`` all of them)."""
        from podscale.analysis.verdicts.coded import coded_findings

        return coded_findings(self.summary, self.eff, self.named, self.scaled, self.slow,
                              self.fits, self.late, self.device, self.slow_slice)


def analyse(run: Run, across: str = "max") -> Analysis:
    """Everything a report shows, derived once from ``run`` (``across``: how processes
    are combined: max, the default, or median)."""
    from podscale.analysis.models.ceilings import (
        least_time,
        peak_of,
        with_ceilings,
        with_half_peak,
    )
    from podscale.analysis.models.fits import fit_sweeps, regimes
    from podscale.analysis.models.links import matrices as link_matrices
    from podscale.analysis.models.pairs import outliers
    from podscale.analysis.models.scalemodel import scaling_models
    from podscale.analysis.models.skew import late_arrivals, relative, slowest, slowest_slice

    samples = run.samples
    base = run.table(across)
    table = base.of(with_ceilings(base.frame, run.device_kind, run.envs))
    summary = table.frame
    rm = run.round_medians()
    found = fit_sweeps(samples, table, rm=rm)
    fitted = found._replace(table=with_half_peak(found.table, peak_of(run.device_kind,
                                                                       run.envs)))
    reg = regimes(table, fitted.table)
    summary[list(reg.columns)] = reg
    skew = relative(samples, summary, run.process_medians())
    return Analysis(run.manifest, samples, table, run.envs, dict(run.skipped),
                    scaling(table), outliers(summary, samples), skew, slowest(skew),
                    fitted, scaling_models(samples, table, rm=rm,
                                           floor=least_time(run.device_kind)),
                    run.status_text,
                    link_matrices(summary, run.process_medians()), run.ledger,
                    late_arrivals(run.participants(), summary),
                    "device" in run.prefer and not run.simulated,
                    slowest_slice(skew, summary))  # a slow slice, named like a host
