"""The verdicts and fits as plain text, as the terminal shows them (``podscale fit``,
``compare``, ``history``): the modules that compute them return frames."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from podscale.analysis.units import bytes_h, gbps_h, time_h
from podscale.core.case import key_of


def fits_text(table: pd.DataFrame) -> str:
    """The fits as a plain-text table (human units)."""
    head = (f"{'workload':<16} {'variant':<9} {'dtype':<8} {'axes':<6} {'layout':<7} "
            f"{'n':>4} {'alpha':>22} {'beta (GB/s)':>24} {'S_half':>9} {'r2':>6}")
    lines = ["# fits: t(S) = alpha + S/beta over round medians (robust, relative; 95% "
             "bootstrap intervals; beta is a bus bandwidth for collectives)", head]
    for r in table.itertuples():
        alpha = f"{time_h(r.alpha_us / 1e6)} ({time_h(r.alpha_lo / 1e6)}-" \
                f"{time_h(r.alpha_hi / 1e6)})"
        beta = f"{gbps_h(r.beta_gbps)} ({gbps_h(r.beta_lo)}-{gbps_h(r.beta_hi)})"
        lay = key_of(r.hosts, r.devices_per_host, getattr(r, "slices", 1))
        lines.append(f"{r.workload:<16} {r.variant:<9} {r.dtype:<8} {str(r.axes):<6} "
                     f"{lay:<7} {r.n:>4} {alpha:>22} "
                     f"{beta:>24} {bytes_h(r.s_half_bytes):>9} {r.r2:>6.2f}")
    return "\n".join(lines)


def comparison_text(table: pd.DataFrame, notes: list[str], name_a: str, name_b: str,
           threshold: float, correction: str = "bh", paired: bool = False) -> str:
    test = "paired t-test (round i of A with round i of B)" if paired else "Welch t-test"
    lines = [f"# compare A={name_a} B={name_b}: A, B: each run's time as podscale show "
             "gives it (median over timed iterations of the max over processes); B/A: "
             "ratio of the geometric means over rounds of each round's median (what the "
             f"test compares); {test} on log round medians, p adjusted ({correction}) over "
             f"{len(table)} cases; threshold {threshold:.0%}"]
    lines += [f"# note: {n}" for n in notes]
    width = max(len(c) for c in table["case_id"])
    lines.append(f"# {'case':<{width}}  {'A (us)':>10}  {'B (us)':>10}  {'B/A':>6}  "
                 f"{'95% CI':>13}  {'rounds':>6}  {'p adj':>8}  verdict")
    for r in table.itertuples():
        ci = f"{r.ci_lo:.3f}-{r.ci_hi:.3f}" if not np.isnan(r.ci_lo) else "N/A"
        lines.append(f"  {r.case_id:<{width}}  {r.time_a_us:10.1f}  {r.time_b_us:10.1f}  "
                     f"{r.ratio:6.3f}  {ci:>13}  {r.rounds_a:>2d}/{r.rounds_b:<3d}  "
                     f"{r.p_adj:8.2g}  {r.verdict}" + (
                         f"  [program: {r.program_change}]"
                         if getattr(r, "program_change", "") else ""))
    counts = table["verdict"].value_counts()
    lines.append(f"# {counts.get('slower', 0)} slower, {counts.get('faster', 0)} faster, "
                 f"{counts.get('~', 0)} unchanged, {counts.get('noisy', 0)} noisy")
    return "\n".join(lines)


def fit_changes_text(table: pd.DataFrame) -> str:
    lines = ["# fits: alpha and beta of A vs B per size sweep (t = alpha + S/beta over round "
             "medians, 95% bootstrap intervals; changed: the intervals do not overlap)"]
    if table.empty:
        return lines[0] + "\n# no size sweep (3+ sizes) in both runs"
    for r in table.itertuples():
        lay = key_of(r.hosts, r.devices_per_host, getattr(r, "slices", 1))
        what = f"{r.workload} {r.variant} {r.dtype} {r.axes} {lay}"
        lines.append(
            f"  {what:<44} alpha {time_h(r.alpha_a / 1e6)} -> {time_h(r.alpha_b / 1e6)} "
            f"({r.alpha_ratio:.2f}x, {r.alpha_verdict}); beta {gbps_h(r.beta_a)} -> "
            f"{gbps_h(r.beta_b)} ({r.beta_ratio:.2f}x, {r.beta_verdict})")
    return "\n".join(lines)


def history_text(df: pd.DataFrame, found: dict, skipped: Sequence[str] = ()) -> str:
    """The history as text: what was compared (``skipped``: the runs left out, each with
    why), run-wide drift, then each case's changes."""
    runs = df.drop_duplicates("run_id")
    lines = [f"# history: {len(runs)} runs ({runs['created'].min()} to "
             f"{runs['created'].max()}), {df['case_id'].nunique()} cases, "
             f"{df['hardware'].nunique()} hardware group(s) kept apart: "
             f"{', '.join(sorted(df['hardware'].unique()))}",
             "# change points: binary segmentation of log times (analysis/models/changepoints.py); "
             "drift: the median over cases of each run's deviation, removed before each "
             "case is searched"]
    lines += [f"# left out: {s}" for s in skipped]
    drift = found["drift"]
    if drift.empty:
        lines.append("# drift of the whole run: none")
    for r in drift.itertuples():
        lines.append(f"# DRIFT from run {r.at} ({r.run_id}): every case x{r.ratio:.2f} "
                     f"({r.cases} cases, {r.hardware})")
    ch = found["changes"]
    lines.append(f"# changes of one case (beyond the drift): {len(ch)}")
    if len(ch):
        width = max(len(c) for c in ch["case_id"])
        lines.append(f"# {'case':<{width}}  {'from run':>8}  {'before':>9}  {'after':>9}  "
                     f"{'ratio':>6}  run")
        for r in ch.sort_values(["at", "case_id"]).itertuples():
            lines.append(f"  {r.case_id:<{width}}  {r.at:>8}  {time_h(r.before_s):>9}  "
                         f"{time_h(r.after_s):>9}  {r.ratio:>6.2f}  {r.run_id}")
    return "\n".join(lines)


def program_changes_text(changed: pd.DataFrame) -> str:
    """The compare text's section: cases whose program changed, or that none did."""
    moved = changed[changed["program_change"] != ""] if len(changed) else changed
    if moved.empty:
        return f"# compiled programs: the same in all {len(changed)} case(s)"
    lines = [f"# compiled programs changed in {len(moved)} of {len(changed)} case(s):"]
    lines += [f"#   {r.case_id}: {r.program_change}" for r in moved.itertuples()]
    return "\n".join(lines)


def _signed(us: float) -> str:
    return ("+" if us >= 0 else "-") + time_h(abs(us) / 1e6)


def op_changes_text(ops: pd.DataFrame, held: bool, most: int = 3,
                    source: str = "per execution from every round's device pass") -> str:
    """The compare text's ops section: per case, the ops that moved (or are new or gone),
    the largest first, with their interval and share; or that none did, or none beyond
    the noise (the largest undecided named); or that the runs hold no op times (``held``:
    both do)."""
    head = (f"# ops: each op's device time {source}, matched by name (else kind), judged "
            "as the cases are")
    if not held:
        return ("# ops: A or B holds no op times (the device pass records them: a run of "
                "--timing with device, by this podscale or later)")
    from podscale.analysis.verdicts.opdiff import moved

    found = moved(ops)
    if found.empty:
        noisy = ops[ops["verdict"] == "noisy"] if len(ops) else ops
        if noisy.empty:
            return (f"{head}\n# ops: none moved in {ops['case_id'].nunique()} case(s) "
                    f"({len(ops)} ops compared)")
        top = noisy.loc[noisy["delta_us"].abs().idxmax()]
        return (f"{head}\n# ops: none moved beyond the noise; {len(noisy)} undecided "
                f"(noisy: more launches, --rounds, decide them), the largest {top['op']} "
                f"{_signed(top['delta_us'])} ({top['case_id']})")
    lines = [head]
    for case_id, g in found.groupby("case_id", sort=False):
        said = []
        for r in g.head(most).itertuples():
            name = r.op if r.op == r.op_b else f"{r.op} (B: {r.op_b})"
            what = f" {r.status}" if r.status in ("new in B", "gone in B") else ""
            share = f"; {100 * r.share:.0f}% of the case's {_signed(r.case_delta_us)}" \
                if r.share == r.share else ""
            said.append(f"{name}{what} {_signed(r.delta_us)} ({100 * r.pct_of_case:+.1f}% of "
                        f"the case, 95% CI {_signed(r.delta_lo)}..{_signed(r.delta_hi)}"
                        f"{share})")
        more = f"; and {len(g) - most} more" if len(g) > most else ""
        lines.append(f"#   {case_id}: " + "; ".join(said) + more)
    return "\n".join(lines)
