"""The Run: one run directory loaded once, passed to every command that reads results.

``Run.load(path)`` (or :func:`podscale.load_run`) reads the manifest, every process's
records (through the columnar cache, :mod:`podscale.analysis.data.cache`) and derives nothing
but tidy frames; statistics are computed on demand and kept (:meth:`Run.summary`), so
``podscale run`` prints its table, writes its report and checks its results from one load.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from podscale.analysis.data.frames import (
    IDENTITY,
    SAMPLE_COLUMNS,
    SETTINGS,
    case_params,
    read_parts,
)
from podscale.core.manifest import abandoned_because
from podscale.core.records import Manifest

if TYPE_CHECKING:
    import pandas as pd

    from podscale.analysis.data.summary import Summary




@dataclass(frozen=True)
class Run:
    """A run directory's manifest, raw samples, cases, environments and skipped cases.

    ``samples``: one row per raw sample (process, phase, iteration, round); ``cases``: one
    row per case and process (identity, parameters, settings, work, check); ``envs``: one
    row per process and launch; ``skipped``: case id -> the backend's reason; ``units``:
    workload -> parameter column -> unit, as the workloads declared them."""

    path: Path
    manifest: Manifest
    samples: pd.DataFrame
    cases: pd.DataFrame
    envs: pd.DataFrame
    skipped: Mapping[str, str] = field(default_factory=dict)
    #: record lines that could not be read and were left out, each "file:line: why"
    problems: tuple[str, ...] = ()
    #: where each process's wall time went, per layout of a launch (startup.ledger)
    ledger: pd.DataFrame = field(default_factory=lambda: _empty())
    #: the timing method tables, models and verdicts read: ``auto`` (per case, the best
    #: it has: :meth:`prefer`) or one of each, chain, device (:meth:`using`)
    method: str = "auto"
    units: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    _derived: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        missing = [c for c in SAMPLE_COLUMNS if c not in self.samples.columns]
        if missing:
            raise ValueError(f"samples lack column(s) {', '.join(missing)}")
        if not self.cases.empty and "case_id" not in self.cases.columns:
            raise ValueError("cases lack the case_id column")
        object.__setattr__(self, "path", Path(self.path))
        object.__setattr__(self, "skipped", MappingProxyType(dict(self.skipped)))
        from podscale.core.timing import METHODS

        if self.method not in ("auto", *METHODS):
            raise ValueError(f"method must be auto or one of {', '.join(METHODS)}, "
                             f"got {self.method!r}")

    def using(self, method: str) -> Run:
        """This run read with another timing method (``auto``, each, chain, device): the
        same frames, statistics derived anew."""
        import dataclasses

        return self if method == self.method else dataclasses.replace(
            self, method=method, _derived={})

    @property
    def prefer(self) -> tuple[str, ...]:
        """The methods ``time_s`` may take, best first: the one asked for, or for ``auto``
        device, chain, each — on CPU device last, where there is no device: its "device
        time" is the CPU client's op events under a profiler that slows its collectives
        (a psum over two CPU devices: 0.29 ms waited on, 0.7-1.0 ms per execution traced)."""
        from podscale.core.timing import HEADLINE

        if self.method != "auto":
            return (self.method,)
        return (*(m for m in HEADLINE if m != "device"), "device") if self.simulated \
            else HEADLINE

    @property
    def simulated(self) -> bool:
        """Every process ran on the CPU: its device time is the CPU client's, and no case
        is marked dispatch-bound (``!``), a mark kept for accelerators."""
        return not self.envs.empty and "platform" in self.envs.columns and \
            bool((self.envs["platform"] == "cpu").all())

    def methods(self) -> tuple[str, ...]:
        """The timing methods this run's samples hold."""
        from podscale.core.timing import METHODS, PHASE_OF

        have = set(self.samples["phase"].astype(str).unique())
        return tuple(m for m in METHODS if PHASE_OF[m] in have)

    @classmethod
    def load(cls, path: str | Path) -> Run:
        """Read one run directory (a one-line UsageError where it is not one, or where
        it holds a profiled program: :func:`podscale.load_profile` reads that)."""
        from podscale.core.errors import UsageError
        from podscale.core.manifest import run_kind

        if run_kind(Path(path)) == "profile":
            raise UsageError(f"{path}: a profiled program's run (podscale profile or "
                             "attach), not workloads: read it with podscale.load_profile")
        p = read_parts(Path(path))
        return cls(Path(path), p.manifest, p.samples, p.cases, p.envs, p.skipped, p.problems,
                   p.ledger, units=p.units)

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def status(self) -> str:
        """``complete``, ``failed`` or ``interrupted`` (the manifest's), ``running``, or
        ``abandoned``: marked running, but whoever kept the manifest is gone."""
        return "abandoned" if self.abandoned_because() else self.manifest.status

    @property
    def status_text(self) -> str:
        """The status with why, for show and report (``abandoned: ...``)."""
        why = self.abandoned_because()
        return f"abandoned: {why}" if why else self.manifest.status

    def abandoned_because(self) -> str | None:
        """Why a run marked ``running`` is not (its front end is not alive on this host,
        or its heartbeat stopped), or None."""
        return abandoned_because(self.path, self.manifest)

    @property
    def device_kind(self) -> str | None:
        """The devices' kind as the processes saw it (None where no process reported)."""
        if self.envs.empty or "device_kind" not in self.envs.columns:
            return None
        return str(self.envs["device_kind"].iloc[0])

    def problems_text(self, most: int = 3) -> str | None:
        """One line on the record lines left out (how many, in how many files, the first
        few), or None."""
        if not self.problems:
            return None
        files = {p.split(": ", 1)[0].rsplit(":", 1)[0] for p in self.problems}
        shown = "; ".join(self.problems[:most])
        more = f"; and {len(self.problems) - most} more" if len(self.problems) > most else ""
        return (f"{len(self.problems)} unreadable record line(s) in {len(files)} file(s) "
                f"left out: {shown}{more}")

    @property
    def wrong(self) -> int:
        """Output elements outside their bound, summed over cases and processes."""
        return 0 if self.cases.empty else int(self.cases["wrong"].sum())

    def _kept(self, key: Any, make: Callable[[], Any]) -> Any:
        """``make()``'s result, computed once per run and key (the derived frames)."""
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]

    def summary(self, across: str = "max") -> pd.DataFrame:
        """One row per case with labelled statistics (:func:`podscale.analysis.summarize`),
        computed once per ``across`` and kept; callers get a copy they may change."""
        from podscale.analysis.models import stats

        def make() -> pd.DataFrame:
            return stats.summarize(self.samples, self.cases, across=across,
                                   it=self.per_iteration(), medians=self.process_medians(),
                                   phases=self.phase_iterations(), prefer=self.prefer)

        return self._kept(("summary", across), make).copy()

    @property
    def params(self) -> tuple[str, ...]:
        """The workloads' parameter columns, in order (``size``, ``op``, ...)."""
        return tuple(case_params(self.cases))

    def table(self, across: str = "max") -> Summary:
        """:meth:`summary` with what its columns mean (the parameters, their units) and
        whether the run was the CPU simulation: what tables, reports and models take."""
        from podscale.analysis.data.summary import Summary

        return Summary(self.summary(across), self.params, self.units, self.simulated)

    def process_medians(self) -> pd.Series:
        """Each process's median ``each`` iteration per case (kept): its own wall time per
        call, what skew and links compare across processes. (Device time would invert
        them: a process that arrives last at a collective waits least there.)"""
        from podscale.analysis.models import stats

        return self._kept("process_medians",
                          lambda: stats.process_medians(self.participants()))

    def round_medians(self) -> pd.DataFrame:
        """Per case and round, the median iteration of the max over processes, of the
        method ``time_s`` takes (kept: fits, scaling models and comparisons all start
        from it)."""
        from podscale.analysis.models import stats

        return self._kept("round_medians", lambda: stats.round_medians(self.per_iteration()))

    def per_iteration(self) -> pd.DataFrame:
        """Samples of each case's headline method (:attr:`prefer`) aggregated over
        processes per iteration, with their ``method`` (kept)."""
        from podscale.analysis.models import stats

        return self._kept("per_iteration", lambda: stats.method_iterations(
            self.phase_iterations(), self.prefer))

    def phase_iterations(self) -> dict[str, pd.DataFrame]:
        """Every timing method's samples aggregated over processes per iteration (kept)."""
        from podscale.analysis.models import stats

        return self._kept("phase_iterations",
                          lambda: stats.phase_iterations(self.participants()))

    def participants(self) -> pd.DataFrame:
        """The samples of the processes that take part in each case (every process, but
        for cases such as one pair of ``pairs``): what times and spreads are over."""
        cases = self.cases
        if cases.empty or "takes_part" not in cases or cases["takes_part"].all():
            return self.samples
        return self._kept("participants", self._participants)

    def _participants(self) -> pd.DataFrame:
        import numpy as np

        s, cases = self.samples, self.cases
        out = np.zeros(len(s), dtype=bool)
        for case_id, g in cases[~cases["takes_part"].astype(bool)].groupby("case_id"):
            out |= (s["case_id"] == case_id).to_numpy() & \
                s["process"].isin(g["process"]).to_numpy()
        return s[~out].reset_index(drop=True)


def _empty() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame()


def as_run(run: Run | str | Path) -> Run:
    """A Run as it is, or loaded from its path."""
    return run if isinstance(run, Run) else Run.load(run)


def load_run(run_dir: str | Path) -> Run:
    """One run directory, loaded once: manifest, samples, cases, environments."""
    return Run.load(run_dir)


def load(run_dir: str | Path) -> pd.DataFrame:
    """One row per raw sample, joined with its case parameters and the run id."""
    run = load_run(run_dir)
    keep = ["case_id", *IDENTITY, *run.params, *SETTINGS, "bytes_per_process",
            "flops_per_process", "bytes_per_device", "collective", "participants"]
    df = run.samples.merge(run.cases.drop_duplicates("case_id")[keep], on="case_id",
                           how="left")
    df.insert(0, "run_id", run.run_id)
    return df
