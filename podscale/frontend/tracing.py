"""podscale trace: a run's profiler traces parsed into a per-step table, stragglers and
merged timelines, or a profiled program's capture windows, each one merged timeline."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from podscale.core import runfolder as rf
from podscale.core import xprof
from podscale.core.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd


def trace(run_dir: Path, traces: Path | None = None) -> None:
    """Parse a run's profiler traces: per-step table, stragglers, merged timelines (one
    per capture window of a profiled program)."""
    from podscale.analysis.data.timeline import layout_archives
    from podscale.analysis.data.traces import (
        cut_short,
        load_traces,
        read_traces,
        step_table,
        stragglers,
        write_merged,
    )
    from podscale.analysis.data.traces import summary as trace_summary
    from podscale.analysis.render.profiletext import viewer
    from podscale.core.manifest import run_kind

    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: no such run directory")
    if not (run_dir / "run.json").is_file():
        raise UsageError(f"{run_dir}: not a run directory (no run.json): name one of "
                         "podscale run --profile, profile or attach")
    local = traces is not None and "://" not in str(traces)
    if local and not Path(str(traces)).is_dir():
        raise UsageError(f"--traces {traces}: no such folder")
    if local and not any(Path(str(traces)).rglob(f"*{xprof.SUFFIX}")):
        raise UsageError(f"--traces {traces}: no XSpace files (*{xprof.SUFFIX}) in it: name "
                         "the folder --trace-dir wrote, or its copy")
    if run_kind(run_dir) == "profile":
        if traces is not None:
            raise UsageError(f"--traces {traces}: a profiled program's capture windows are "
                             f"read from {run_dir / rf.TRACES} (leave --traces out)")
        return _trace_profiled(run_dir)
    read = read_traces(run_dir, traces)
    loaded = load_traces(run_dir, read=read)
    if not loaded:
        raise UsageError(f"{run_dir}: no traces (run with --profile)")
    table = step_table(loaded)
    table.to_csv(run_dir / rf.TRACES / "steps.csv", index=False)
    lag = stragglers(table)
    lag.to_csv(run_dir / rf.TRACES / "stragglers.csv", index=False)
    print(trace_summary(table, lag))
    for line in cut_short(table, _samples(run_dir)):
        print(f"# note: {line}")
    for path in write_merged(run_dir, loaded):
        print(f"# merged timeline (chrome://tracing, ui.perfetto.dev): {path}")
    for path in layout_archives(run_dir, read):
        print(f"# merged timeline (Perfetto archive, ui.perfetto.dev): {path}")
    print(f"# XProf: {viewer(run_dir / rf.TRACES)}")


def _trace_profiled(run_dir: Path) -> None:
    """A profiled program's capture windows, each as one merged timeline."""
    from podscale.analysis.data.timeline import window_archives
    from podscale.analysis.profile.load import load_profile
    from podscale.analysis.render.profiletext import viewer

    profile = load_profile(run_dir)
    if profile.windows.empty:
        raise UsageError(f"{run_dir}: no capture window (profile with --profile-steps, "
                         "--profile-every or --profile-anomalies)")
    paths, left = window_archives(run_dir, profile.windows, profile.clock_residual_s)
    for line in left:
        print(f"# note: {line}")
    for path in paths:
        print(f"# merged timeline (Perfetto archive, ui.perfetto.dev): {path}")
    print(f"# XProf: {viewer(run_dir / rf.TRACES)}")


def _samples(run_dir: Path) -> pd.DataFrame:
    """The run's samples, or none where its records cannot be read (traces of a copy)."""
    import pandas as pd

    from podscale.analysis import load_run
    from podscale.core.errors import PodscaleError

    try:
        return load_run(run_dir).samples
    except (PodscaleError, OSError):
        return pd.DataFrame(columns=["process", "case_id", "phase"])
