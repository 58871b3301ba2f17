"""A run's summary with what its columns mean: the result type the tables, the report and
the exports take (:meth:`podscale.analysis.run.Run.table`).

The frame is ``Run.summary()`` (one row per case, labelled statistics); beside it, which
of its columns are the workloads' parameters, each workload's units for them, and
whether the run was the CPU simulation (whose device time is the CPU client's own).
These facts travel as fields, never in ``DataFrame.attrs`` (an experimental pandas
feature that some operations drop without a word)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import pandas as pd


@dataclass(frozen=True)
class Summary:
    """One row per case (``frame``), its parameter columns in order (``params``), each
    workload's units of them (``units``: workload -> column -> unit) and ``simulated``."""

    frame: pd.DataFrame
    params: tuple[str, ...] = ()
    units: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    simulated: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", tuple(self.params))
        object.__setattr__(self, "units", MappingProxyType(
            {w: MappingProxyType(dict(u)) for w, u in self.units.items()}))

    @property
    def param_columns(self) -> list[str]:
        """The parameter columns the frame holds, in order."""
        return [c for c in self.params if c in self.frame.columns]

    def units_of(self, workload: str) -> dict[str, str]:
        """Parameter column -> unit, as ``workload`` declared them."""
        return dict(self.units.get(workload, {}))

    def plain_units(self) -> dict[str, dict[str, str]]:
        """Every workload's units as plain dicts (for JSON)."""
        return {w: dict(u) for w, u in self.units.items()}

    def of(self, frame: pd.DataFrame) -> Summary:
        """Another frame (a part or a derivation of this one) with the same facts."""
        return replace(self, frame=frame)

    @property
    def empty(self) -> bool:
        return self.frame.empty
