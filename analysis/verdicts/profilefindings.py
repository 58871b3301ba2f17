"""What a reader of a profiled program's summary should know first: the Findings, in
sentences with their figures, from :class:`podscale.analysis.profile.summary.ProfileSummary`
(the hang, failures, desync, cut captures, what is apart, stragglers, the step's figures,
slow steps, compiles, time between steps)."""

from __future__ import annotations

import re

import pandas as pd

from podscale.analysis.profile import badput, figures, inside, phases, stalls, steps
from podscale.analysis.profile import compiles as compiling
from podscale.analysis.profile.summary import ProfileSummary
from podscale.analysis.units import time_h
from podscale.analysis.verdicts.findings import hooks_lacked

#: re-compiles within the first steps are warm-up (a step's outputs change its inputs'
#: sharding or layout); later ones are Findings
WARMUP_STEPS = steps.WARMUP
#: a cache entry added without compiling (a new signature of a compiled program) is none
MIN_COMPILE_S = 1e-3
#: a host frame is named when it takes at least this share of the median step
FRAME_SHARE = 0.1


def _processes(ps: list[int], total: int) -> str:
    if len(ps) == total and total > 1:
        return "every process"
    return ("process " if len(ps) == 1 else "processes ") + ", ".join(map(str, ps))


def _hang(marks: pd.DataFrame) -> list[str]:
    """The hang roll-call's verdict, first: the job ended there (every process says it)."""
    errors = marks["error"].dropna() if "error" in marks else pd.Series(dtype=object)
    hung = [e for e in errors if isinstance(e, str) and e.startswith("hang: ")]
    return [f"the job hung and was ended: {hung[0][len('hang: '):]}"] if hung else []


#: the front end's verdict on a process a signal ended (``launch.exits``), as the run's
#: manifest keeps it
KILLED = re.compile(r"process (\d+) killed by (SIG[A-Z0-9]+)")


def _killed(error: str | None) -> tuple[list[str], int | None]:
    """The process a signal ended, said first, from the manifest's error (a killed process
    writes no end of its own; the others' failures that follow are its consequences)."""
    error = error or ""
    m = KILLED.search(error)
    if m is None:
        return [], None
    why = error[m.end():].split("; last output", 1)[0].strip(" ()")
    return [f"process {m[1]} was killed by {m[2]}" + (f" ({why})" if why else "") +
            ": the failures after it are its consequence"], int(m[1])


def _failed(marks: pd.DataFrame, killed: int | None = None) -> list[str]:
    """Processes whose script failed (an exit code other than 0, not the roll-call's), and
    records with lines cut short; ``killed``: the process a signal ended first."""
    out = []
    after = "" if killed is None else f" (after process {killed} was killed)"
    for p, m in marks.iterrows():
        code, error = m.get("exit_code"), m.get("error")
        followed = str(error or "").startswith(("hang: ", "stopped: "))  # the job's end
        if pd.notna(code) and code and not followed:
            said = f": {error}" if isinstance(error, str) and error else ""
            if said.startswith(f": process {p} "):  # podscale ended it, and says why
                out.append(f"{error} (exit code {int(code)})")
            else:
                out.append(f"process {p}'s program exited with code {int(code)}{said}"
                           f"{after if p != killed else ''}")
        if m.get("cut_lines"):
            out.append(f"process {p}'s record has {int(m['cut_lines'])} line(s) cut short "
                       "(written as the process was killed): left out, the rest read")
    return out


def _unended(s: ProfileSummary) -> list[str]:
    """Processes whose record has no end (killed: a process writes its calls in batches,
    so its last ones are missing), and processes with no row in the step table."""
    marks = s.profile.processes
    ended = marks["exit_code"].notna() if "exit_code" in marks else \
        pd.Series(False, index=marks.index)  # no process wrote an end
    out = [f"process {int(p)}'s record has no end: it was killed, or ended without "
           "closing it; its last calls (up to one batch) are not in the tables"
           for p in marks.loc[~ended, "process"]]
    if s.step is not None and len(s.table):
        absent = sorted(set(marks["process"]) - set(s.table["process"]))
        if absent:
            out.append(f"{_processes(absent, len(marks))} recorded no call of {s.step}: "
                       f"the step table leaves {'it' if len(absent) == 1 else 'them'} out")
    return out


def _impossible(s: ProfileSummary) -> list[str]:
    """The ledgers' invariants, said where broken (a defect of podscale's, never printed as
    a figure to believe): time lost to a process within the job's wall time, no negative
    part of a goodput ledger."""
    out = []
    wall = float(s.goodput["wall"].max()) if len(s.goodput) else float("inf")
    lost = float(s.table["lost"].sum()) if len(s.table) else 0.0
    if lost > wall:
        out.append(f"defect: {time_h(lost)} lost to stragglers in a {time_h(wall)} job; the "
                   "straggler table cannot be right (please report it)")
    parts = s.goodput.drop(columns=["process", "wall"], errors="ignore")
    for p, row in zip(s.goodput.get("process", []), parts.itertuples(index=False)):
        negative = [k for k, v in zip(parts.columns, row) if v < -1e-3]
        if negative:
            out.append(f"defect: process {p}'s goodput ledger has negative parts "
                       f"({', '.join(negative)}); it does not sum (please report it)")
    return out


def _apart(blame: pd.DataFrame) -> list[str]:
    """Steps kept out of the straggler blame: start-up skew (a process compiling) and
    podscale's own captures, each with what the last arrival cost there."""
    out: list[str] = []
    if "apart" not in blame:
        return out
    for why, g in blame[blame["apart"] != ""].groupby("apart"):
        if float(g["skew"].sum()) <= 0:
            continue
        worst = g.loc[g["skew"].idxmax()]
        steps_ = ", ".join(map(str, g["step"].head(6))) + (", ..." if len(g) > 6 else "")
        what = "start-up skew: a process compiled" if why == "compile" else \
            "podscale started or stopped a capture"
        out.append(f"{what} at step(s) {steps_}: kept out of the time lost (the last "
                   f"arrival cost {time_h(float(g['skew'].sum()))} there, at most "
                   f"{time_h(float(worst['skew']))}, process {int(worst['last'])} at step "
                   f"{int(worst['step'])})")
    return out


def _skipped(skipped: pd.DataFrame, total: int) -> list[str]:
    """Captures asked for that did not happen, once per reason and window."""
    out = []
    for (_, reason), g in skipped.groupby(
            [skipped["steps"].map(str), skipped["reason"]], sort=False):
        trig = g["trigger"].iloc[0]
        what = f"the capture after step {trig[0]}" if isinstance(trig, list) else \
            "a capture"
        out.append(f"{what} was skipped on {_processes(sorted(g['process']), total)}: "
                   f"{reason}")
    return out


def _other_threads(marks: pd.DataFrame) -> list[str]:
    """Calls made from threads other than the main one: run, counted, not in the tables."""
    out = []
    for p, calls in marks.get("other_threads", pd.Series(dtype=object)).items():
        if isinstance(calls, dict) and calls:
            named = ", ".join(f"{n} ({c})" for n, c in sorted(calls.items()))
            out.append(f"process {p} called {named} from threads other than the main one: "
                       "counted apart, not in the step tables (their launches interleave "
                       "with the main thread's in no order a ledger could read)")
    return out


def _no_step(s: ProfileSummary) -> str:
    """Why there is no step table: a ``--step`` no computation or annotation is called
    (with what ran), or nothing recurred."""
    named = s.named
    if named is None:
        return "no computation recurred (at least 3 calls on every process): no step to " \
            "tabulate"
    calls = s.profile.calls.groupby("name").size() // max(1, s.profile.calls["process"]
                                                             .nunique())
    ran = ", ".join(f"{n} ({c} call(s) per process)" for n, c in
                    calls.sort_values(ascending=False).head(5).items()) or "none"
    marked = sorted(set(s.profile.annotations["name"]))
    return f"--step {named}: no computation or step annotation of that name ran; " \
        f"computations: {ran}" + (f"; annotations: {', '.join(marked)}" if marked else "")


def findings(s: ProfileSummary) -> list[str]:
    """What a reader should know first, in sentences with their figures."""
    killed, who = _killed(s.profile.manifest.error)
    out = _hang(s.profile.processes) + killed + _failed(s.profile.processes, who)
    if s.desync is not None:
        out.append(f"{s.desync.text()}: every launch from there on may pair collectives "
                   "with the wrong peers (a multi-controller program must launch the same "
                   "computations in the same order on every process)")
    out += _unended(s) + hooks_lacked(s.profile.processes.get("degraded", []))
    if s.step is None:
        return [*out, _no_step(s)]
    total = int(s.profile.processes["process"].nunique())
    w = s.profile.windows
    for _, r in (w[w["cut"].astype(bool)] if len(w) else w).iterrows():
        stop = "" if r["stop"] != r["stop"] or r["stop"] is None else int(r["stop"]) - 1
        out.append(f"process {r['process']}'s capture of steps {int(r['first'])}-{stop} was "
                   f"cut short: its trace holds {int(r['held'])} step execution(s), not one "
                   "per step (a session stopped early, or the profiler's event limit)")
    out += _skipped(s.profile.skipped, total) + _unsaved(s.profile.programs)
    out += inside.findings(s.inside, s.waits, s.op_diff)
    out += inside.top_sentence(inside.top_ops(s.profile))
    if s.peers is False and total > 1:
        out.append(f"{s.step} has no collective across processes (its compiled program): "
                   "no process waits on another, so no time is lost to a straggler; each "
                   "process's step time stands alone")
    return out + _timing(s, total) + _between(s, total)


def _unsaved(programs: pd.DataFrame) -> list[str]:
    """Steps' programs a capture could not save (the window's trace stands)."""
    failed = programs.dropna(subset=["error"]) if len(programs) else programs
    return [f"process {int(r.process)} could not save {r.name}'s optimized program at its "
            f"capture: {r.error}" for r in failed.itertuples(index=False)]


def names(s: ProfileSummary) -> dict[int, str]:
    """Each process as the findings name it: ``process 4``, or in a multi-slice job
    ``slice 1, host 0 (process 4)`` (its slice as its record says it)."""
    procs = s.profile.processes
    plain = {int(p): f"process {int(p)}" for p in procs["process"]}
    if "slice" not in procs or procs["slice"].nunique() < 2:
        return plain
    out = {}
    for sl, g in procs.dropna(subset=["slice"]).groupby("slice"):
        for host, p in enumerate(sorted(int(x) for x in g["process"])):
            out[p] = f"slice {int(sl)}, host {host} (process {p})"
    return {**plain, **out}


def _timing(s: ProfileSummary, total: int) -> list[str]:
    """Stragglers, the step's figures, slow steps, steps kept apart and compiles."""
    out = _impossible(s)
    who = names(s)
    for _, r in s.table.sort_values("lost", ascending=False).iterrows():
        if r["straggler"] == "chronic":
            since = f" from step {int(r['since'])}" if r["since"] else ""
            out.append(f"{who.get(int(r['process']), r['process'])} was last in {r['late']} "
                       f"of {s.steps} steps{since}, costing the job {time_h(r['lost'])}")
    out += figures.findings(s, figures.figures(s))
    good = badput.sentence(badput.badput(s))
    out += [good] if good else []
    out += stalls.findings(s.slow, who)
    out += _apart(s.blame)
    c = s.compiles
    late = c[(c["kind"] == "re-compile") & (c["step"].fillna(-1) >= WARMUP_STEPS)
             & (c["backend_s"] >= MIN_COMPILE_S)]
    for (name, step), g in late.groupby(["name", "step"]):
        what = g["changed"].iloc[0] or f"arguments {g['shapes'].iloc[0]}"
        out.append(f"recompiled {name} at step {int(step)} on "
                   f"{_processes(sorted(g['process']), total)}: {time_h(g['seconds'].max())}"
                   f" ({what})")
    return out + compiling.findings(c, s.profile.cache, total)


def _between(s: ProfileSummary, total: int) -> list[str]:
    """What happens between steps: periodic work, host frames, other threads and other
    computations."""
    med = float(s.ledger["period"].median())
    last = s.steps - 1 if s.steps else None
    out = phases.findings(s.phases, total, last)
    periodic = set(s.phases["what"]) if len(s.phases) else set()
    for _, r in s.frames.iterrows():
        if r["per_step"] >= FRAME_SHARE * med and r["frame"] not in periodic:
            out.append(f"between steps process {r['process']} spent "
                       f"{time_h(r['per_step'])} per step in {r['frame']}")
    out += _other_threads(s.profile.processes)
    for _, r in s.others.iterrows():
        who = r.get("processes")
        where = "per process" if not isinstance(who, list) or len(who) == total else \
            f"on {_processes(who, total)} only"
        label = phases.known(str(r["name"]))
        at = r.get("steps")
        when = f", {phases.after_steps(at, last)}" if isinstance(at, list) and at else ""
        out.append(f"{r['name']}{f' ({label})' if label else ''} ran {r['calls_min']} "
                   f"time(s) {where} apart from the step ({time_h(r['busy_median'])} each"
                   f"{when})")
    return out
