"""What a report shows, derived once from a run: its frames, fits, scaling models, skew,
links and ledger (:func:`analyse`), read by the report, its sections and the digest."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from podscale.analysis.models.efficiency import scaling
from podscale.analysis.run import Run
from podscale.core.manifest import Manifest

if TYPE_CHECKING:
    from podscale.analysis.verdicts.coded import Finding


@dataclass
class Analysis:
    """Everything a report shows, derived once from the run."""

    manifest: Manifest
    samples: pd.DataFrame
    summary: pd.DataFrame
    envs: pd.DataFrame
    skipped: dict
    eff: pd.DataFrame
    named: pd.DataFrame
    skew: pd.DataFrame
    slow: pd.DataFrame
    fitted: pd.DataFrame
    scaled: dict
    status: str = "complete"
    links: list = field(default_factory=list)
    ledger: pd.DataFrame = field(default_factory=pd.DataFrame)
    late: pd.DataFrame = field(default_factory=pd.DataFrame)
    device: bool = True  # the run's device time is a device's (not the CPU client's)

    def findings(self) -> list[Finding]:
        """The run's Findings with their codes, most important first (the report shows
        their text; ``podscale digest`` all of them)."""
        from podscale.analysis.verdicts.coded import coded_findings

        return coded_findings(self.summary, self.eff, self.named, self.scaled, self.slow,
                              self.fitted, self.late, self.device)


def analyse(run: Run, across: str = "max") -> Analysis:
    """Everything a report shows, derived once from ``run`` (``across``: how processes
    are combined: max, the default, or median)."""
    from podscale.analysis.models.ceilings import (
        least_time,
        peak_of,
        with_ceilings,
        with_half_peak,
    )
    from podscale.analysis.models.fits import fits, regimes
    from podscale.analysis.models.links import matrices as link_matrices
    from podscale.analysis.models.pairs import outliers
    from podscale.analysis.models.scalemodel import scaling_models
    from podscale.analysis.models.skew import late_arrivals, relative, slowest, slowest_slice

    samples = run.samples
    summary = with_ceilings(run.summary(across), run.device_kind, run.envs)
    rm = run.round_medians()
    fitted = with_half_peak(fits(samples, summary, rm=rm),
                            peak_of(run.device_kind, run.envs))
    reg = regimes(summary, fitted)
    summary[list(reg.columns)] = reg
    skew = relative(samples, summary, run.process_medians())
    slow = slowest(skew)
    slow.attrs["slice"] = slowest_slice(skew, summary)  # a slow slice, named like a host
    return Analysis(run.manifest, samples, summary, run.envs, dict(run.skipped),
                     scaling(summary), outliers(summary, samples), skew, slow,
                     fitted, scaling_models(samples, summary, rm=rm,
                                            floor=least_time(run.device_kind)),
                     run.status_text,
                     link_matrices(summary, run.process_medians()), run.ledger,
                     late_arrivals(run.participants(), summary),
                     "device" in run.prefer and not run.simulated)
