"""Compare two runs case by case: ratio of medians, a rank test on the raw samples,
and a verdict beyond a threshold. Refuses runs whose environments make it meaningless."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from analysis.load import SETTINGS, load_run
from analysis.stats import per_iteration
from podscale.core.errors import UsageError

#: differences that make timings incomparable (unless forced)
HARD = ("platform", "device_kind", "cpu_count")
#: differences worth stating but that are often the point of the comparison
SOFT = ("jax", "jaxlib", "xla_flags", "hostname", "git_commit", "python")


def environment_key(manifest, envs: pd.DataFrame) -> dict[str, str]:
    env = manifest.environment
    key = {"cpu_count": str(env.get("cpu_count")), "git_commit": str(env.get("git_commit")),
           "python": str(env.get("python")), "hostname": str(env.get("hostname"))}
    for col in ("platform", "device_kind", "jax", "jaxlib", "xla_flags"):
        vals = sorted({str(v) for v in envs[col]}) if col in envs else []
        key[col] = ",".join(vals)
    if key["platform"] not in ("", "cpu"):
        key["cpu_count"] = "n/a"  # host cores do not decide accelerator timings
    return key


def differences(a: dict, b: dict, names) -> list[str]:
    return [f"{n}: {a.get(n)!r} vs {b.get(n)!r}" for n in names if a.get(n) != b.get(n)]


def setting_differences(ca: pd.DataFrame, cb: pd.DataFrame, common: list[str]) -> list[str]:
    """Measurement settings (iters, warmup, sync, traced iters) that differ between the
    runs' matched cases, each with how many cases it concerns."""
    a = ca.drop_duplicates("case_id").set_index("case_id").loc[common, SETTINGS]
    b = cb.drop_duplicates("case_id").set_index("case_id").loc[common, SETTINGS]
    out = []
    for col in SETTINGS:
        differ = a[col].astype(str) != b[col].astype(str)
        if differ.any():
            pairs = sorted({(str(x), str(y)) for x, y in zip(a[col][differ], b[col][differ])})
            shown = ", ".join(f"{x!r} vs {y!r}" for x, y in pairs)
            out.append(f"{col}: {shown} in {int(differ.sum())} case(s)")
    return out


def version_differences(ca: pd.DataFrame, cb: pd.DataFrame) -> list[str]:
    va = ca.groupby("workload")["version"].agg(lambda v: ",".join(sorted(set(map(str, v)))))
    vb = cb.groupby("workload")["version"].agg(lambda v: ",".join(sorted(set(map(str, v)))))
    return [f"workload {w}: version {va[w]} vs {vb[w]} (its cases are not matched)"
            for w in sorted(set(va.index) & set(vb.index)) if va[w] != vb[w]]


def compare(run_a: Path, run_b: Path, *, threshold: float = 0.05, alpha: float = 0.05,
            force: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """(table, notes). ``ratio`` is B/A of time_s; verdict 'slower'/'faster' when the
    ratio is beyond ``threshold`` and the Mann-Whitney U test gives p < ``alpha``."""
    ma, sa, ca, ea = load_run(run_a)
    mb, sb, cb, eb = load_run(run_b)
    ka, kb = environment_key(ma, ea), environment_key(mb, eb)
    hard = differences(ka, kb, HARD)
    if hard and not force:
        raise UsageError("runs are not comparable (" + "; ".join(hard) + "); use --force")
    notes = [f"environment differs: {d}" for d in hard + differences(ka, kb, SOFT)]
    notes += version_differences(ca, cb)
    ia, ib = per_iteration(sa), per_iteration(sb)
    common = sorted(set(ia["case_id"]) & set(ib["case_id"]))
    if not common:
        why = "; ".join(version_differences(ca, cb))
        raise UsageError(f"{run_a} and {run_b} have no case in common" + (f" ({why})"
                                                                           if why else ""))
    settings = setting_differences(ca, cb, common)
    if settings and not force:
        raise UsageError("measurement settings differ (" + "; ".join(settings) +
                         "); use --force")
    notes += [f"settings differ: {d}" for d in settings]
    only = len(set(ia["case_id"]) ^ set(ib["case_id"]))
    if only:
        notes.append(f"{only} case(s) are in only one run and were left out")
    rows = []
    for case_id in common:
        a = ia.loc[ia["case_id"] == case_id, "t_max"].to_numpy()
        b = ib.loc[ib["case_id"] == case_id, "t_max"].to_numpy()
        ratio = float(np.median(b) / np.median(a))
        p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue) if min(len(a), len(b)) > 1 \
            else float("nan")
        verdict = "~"
        if p < alpha and ratio > 1 + threshold:
            verdict = "slower"
        elif p < alpha and ratio < 1 / (1 + threshold):
            verdict = "faster"
        rows.append({"case_id": case_id, "time_a_us": np.median(a) * 1e6,
                     "time_b_us": np.median(b) * 1e6, "ratio": ratio, "p_value": p,
                     "n_a": len(a), "n_b": len(b), "verdict": verdict})
    return pd.DataFrame(rows), notes


def render(table: pd.DataFrame, notes: list[str], name_a: str, name_b: str,
           threshold: float) -> str:
    lines = [f"# compare A={name_a} B={name_b}: ratio = B/A of the median over iterations of "
             f"the max over processes; Mann-Whitney U on per-iteration times; threshold "
             f"{threshold:.0%}"]
    lines += [f"# note: {n}" for n in notes]
    width = max(len(c) for c in table["case_id"])
    lines.append(f"# {'case':<{width}}  {'A (us)':>10}  {'B (us)':>10}  {'B/A':>6}  "
                 f"{'p':>8}  verdict")
    for r in table.itertuples():
        lines.append(f"  {r.case_id:<{width}}  {r.time_a_us:10.1f}  {r.time_b_us:10.1f}  "
                     f"{r.ratio:6.3f}  {r.p_value:8.2g}  {r.verdict}")
    counts = table["verdict"].value_counts()
    lines.append(f"# {counts.get('slower', 0)} slower, {counts.get('faster', 0)} faster, "
                 f"{counts.get('~', 0)} unchanged")
    return "\n".join(lines)
