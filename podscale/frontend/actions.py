"""What several commands do alike: prepare and execute a grid, print a run's table, write
its report (comparisons: :mod:`.comparing`; traces: :mod:`.tracing`). Each takes a loaded
:class:`Run` where it reads results, so one command loads a run once."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from podscale.core.errors import WrongResults
from podscale.core.lines import commented
from podscale.launch.options import LaunchOptions

if TYPE_CHECKING:
    from podscale.analysis.run import Run
    from podscale.core.grid import Grid


def show(run: Run, fmt: str = "text") -> int:
    """Print the run's tables (``fmt``: text, csv or json); return how many output
    elements were wrong."""
    from podscale.analysis.models.ceilings import peak_of, with_ceilings
    from podscale.analysis.render.table import export, render

    table = run.table()
    if peak_of(run.device_kind, run.envs) is not None and not table.empty:
        # % of the device's peaks
        table = table.of(with_ceilings(table.frame, run.device_kind, run.envs))
    if fmt != "text":
        print(export(table, fmt))
        if run.cases.empty:  # the data stays parseable; the reason goes beside it
            print(f"podscale: note: {run.run_id}: no case completed ({run.status_text})",
                  file=sys.stderr)
        return run.wrong
    env = run.manifest.environment
    versions = env.get("versions", {})
    commit = (env.get("git_commit") or "")[:9]
    print(commented(f"podscale run {run.run_id} ({run.status_text})"))
    if run.problems:
        print(commented(run.problems_text() or ""))
    print(f"# jax {versions.get('jax', '?')}, podscale {versions.get('podscale', '?')}"
          + (f", commit {commit}{'+dirty' if env.get('git_dirty') else ''}" if commit else "")
          + f", {env.get('hostname', '?')}")
    print(commented(platform_line(run)))
    skipped: dict[tuple[str, str], int] = {}  # (workload, reason) -> cases
    for case_id, reason in run.skipped.items():
        key = (case_id.split("@")[0], reason)
        skipped[key] = skipped.get(key, 0) + 1
    for (workload, reason), n in skipped.items():
        print(commented(f"skipped {n} {workload} case(s): {reason}"))
    if run.cases.empty:
        print("# no case completed")
        return 0
    print(render(table))
    from podscale.analysis.models.links import summary_lines

    for line in summary_lines(run.summary(), run.process_medians()):  # ring-shift sweeps
        print(commented(line))
    from podscale.analysis.models.skew import late_arrivals
    from podscale.analysis.units import time_h

    for r in late_arrivals(run.participants(), run.summary()).itertuples():
        print(commented(f"{r.case_id}: process {r.process} arrives last at the collective in "
                        f"{r.last_in} of {r.executions} executions: the others wait "
                        f"{time_h(r.others_wait_s)} for it (device time "
                        f"{time_h(r.its_device_s)} against {time_h(r.others_device_s)})"))
    return run.wrong


def platform_line(run: Run) -> str:
    """What the run measured: this machine's chips, or hosts simulated on the CPU (and
    the note said when chips sat beside a simulation)."""
    envs = run.envs
    if envs.empty:
        said = f"platform {run.manifest.spec.get('platform', '?')}"
    else:
        kind = ", ".join(sorted(set(map(str, envs["device_kind"]))))
        platform = ", ".join(sorted(set(map(str, envs["platform"]))))
        devices = int(envs["local_device_count"].max())
        said = (f"platform cpu: hosts simulated on this machine's CPU ({kind})"
                if platform == "cpu" else
                f"platform {platform}: {kind}, {devices} per process")
    note = run.manifest.spec.get("platform_note")
    return said + (f"; note: {note}" if note else "")


def wrong_results(run: Run) -> WrongResults:
    cases = run.cases
    bad = cases[cases["wrong"] > 0]
    return WrongResults(f"{int(bad['wrong'].sum())} wrong output element(s) in "
                        f"{bad['case_id'].nunique()} case(s), e.g. {bad['case_id'].iloc[0]} on "
                        f"process {int(bad['process'].iloc[0])}; results kept in {run.path}")


class Prepared(NamedTuple):
    """A run ready to start (:func:`prepare`): its grids, cases, rounds and launch options,
    every case and option validated."""

    grids: list
    cases: list
    rounds: int
    options: LaunchOptions
    spec: dict
    reuse: bool

    def execute(self, out: Path, name: str, cases: list | None = None, *,
                spec: dict | None = None, progress: Callable[[str], None] | None = print,
                **changes: Any) -> Path:
        """Run it (or ``cases``, with ``spec`` for the manifest) as ``name`` under ``out``;
        ``changes``: to its launch options (e.g. ``hlo=True``)."""
        from dataclasses import replace

        from podscale.launch.runner import execute

        return execute(self.cases if cases is None else cases, out, name,
                       replace(self.options, **changes), spec=spec or self.spec,
                       reuse=self.reuse, rounds=self.rounds, progress=progress)


def prepare(grids: list[Grid], rounds: int, options: LaunchOptions, *, force: bool = False,
            reuse: bool = True, name: str | None = None) -> Prepared:
    """The grids' cases with their rounds and launch options, every case, the run's
    ``name`` and (locally) the memory its processes need checked before any process
    starts."""
    from podscale.core.grid import expand_all, spec_of
    from podscale.launch.runner import check_name

    if name:
        check_name(name)
    cases = expand_all(grids)
    from podscale.launch.fitting import check_cases

    check_cases(cases, options, force=force)  # will they fit where they start?
    return Prepared(grids, cases, rounds, options, spec_of(grids), reuse)


def run_grid(prepared: Prepared, out: Path, name: str | None = None, *, fmt: str = "text",
             trace_dir: str | None = None, report: bool = False) -> int:
    """Execute the prepared grid as ``name`` (default: its workloads) under ``out``, print
    its table (``fmt``), parse its traces (from ``trace_dir``, where they were written
    elsewhere), write its report (optional) and fail on wrong results: ``podscale run``
    and ``podscale study``."""
    from podscale.analysis import load_run
    from podscale.launch.runner import default_name

    name = name or default_name(c.workload for c in prepared.cases)
    run = load_run(prepared.execute(out, name,
                                    progress=print if fmt == "text" else _to_stderr))
    wrong = show(run, fmt)
    from podscale.analysis.verdicts.history import write_summary

    write_summary(run.path, run=run)  # what podscale history reads
    if any(g.settings.traced_iters for g in prepared.grids):
        if trace_dir and "://" in trace_dir:
            print(f"# traces written under {trace_dir}; copy them here and run: podscale "
                  f"trace {run.path} --traces <copy>")
        else:
            from podscale.frontend.tracing import trace

            trace(run.path, Path(trace_dir) if trace_dir else None)
    if report:
        write_report(run)
    (print if fmt == "text" else _to_stderr)(f"# results: {run.path}")  # csv/json: data only
    if wrong:
        raise wrong_results(run)
    return 0


def _to_stderr(message: str) -> None:
    import sys

    print(message, file=sys.stderr, flush=True)


def show_profile(run_dir: Path, fmt: str = "text", step: str | None = None) -> None:
    """Print a profiled run's step table, goodput ledger and Findings (``fmt``: text, csv,
    json)."""
    from podscale.analysis.profile.summary import summarize_profile
    from podscale.analysis.render.profiletext import export, render
    from podscale.analysis.verdicts import interference

    s = summarize_profile(run_dir, step)
    print(render(s) if fmt == "text" else export(s, fmt))
    alone = interference.interference(run_dir, s)
    if fmt == "text" and len(alone):
        print(interference.render(alone))
        for line in interference.sentences(alone):
            print(f"- {line}")


def write_report(run: Run | Path, out: Path | None = None, across: str = "max",
                 asv: Path | None = None) -> int:
    """Write the HTML report and Markdown summary of a run and say where."""
    from podscale.analysis.render.report import write_report as write
    from podscale.core.manifest import run_kind

    if isinstance(run, Path) and run_kind(run) == "profile":  # a profiled program
        from podscale.analysis.render.profiled import write_profile_report

        html_path, md_path = write_profile_report(run, out)
        print(f"# report: {html_path}")
        print(f"# summary: {md_path}")
        return 0
    sections = []
    if asv is not None:
        from podscale.analysis.render.asvresults import history_section

        sections.append(history_section(asv))
    html_path, md_path = write(run, out, across, sections)
    print(f"# report: {html_path}")
    print(f"# summary: {md_path}")
    return 0
