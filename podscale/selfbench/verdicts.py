"""bench-self's verdict stage: do comparison verdicts hold on this machine?

The grid users run (``dot,psum --hosts 1,2 --devices-per-host 1,2 --sizes 4K,64K,1M``,
20 iterations), through the real CLI, two ways side by side:

- **sequential runs** (``podscale run``, 3 rounds): A, B with every psum step stretched
  1.5x (``PODSCALE_FAULT=stretch=1.5@*:psum``), then A again, compared with
  ``podscale compare``;
- **interleaved arms** (``podscale ab``, its default rounds): an A/A run, and an A/B run
  with the same fault in arm B; Welch verdicts (the default) and, for the record, paired.

Measured per method: A/A false alarms (cases called slower or faster; target <= 5%);
detection (psum cases called slower; target >= 90%), while the unslowed dot cases should
not be flagged; and, for contrast, the previous method (Mann-Whitney U over per-iteration
samples of one launch, no correction) on the sequential A/A pair.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from podscale.core import defaults, envnames
from podscale.core.errors import PodscaleError
from podscale.selfbench import Log

if TYPE_CHECKING:
    import pandas as pd

GRID = ["dot,psum", "--hosts", "1,2", "--devices-per-host", "1,2", "--sizes", "4K,64K,1M",
        "--platform", "cpu"]  # hosts simulated on the CPU, wherever it runs
SLOWED = "psum"
FAULT = f"stretch=1.5@*:{SLOWED}"
TARGETS = {"aa_flagged": 0.05, "detected": 0.90}


def cli_run(out: Path, name: str, fault: str | None = None,
            extra: tuple[str, ...] = ()) -> Path:
    """``podscale run`` as a user runs it; the run directory it printed."""
    env = {k: v for k, v in os.environ.items() if k != envnames.FAULT}
    if fault:
        env[envnames.FAULT] = fault
    res = subprocess.run([sys.executable, "-m", "podscale", "run", *GRID, *extra, "--out",
                          str(out), "--name", name], capture_output=True, text=True, env=env)
    if res.returncode:
        raise PodscaleError(f"bench run {name} failed: {res.stderr.strip()[-300:]}")
    line = [w for w in res.stdout.splitlines() if w.startswith("# results: ")][-1]
    return Path(line.removeprefix("# results: ").strip())


def cli_ab(out: Path, name: str, env_b: str | None = None) -> tuple[Path, Path]:
    """``podscale ab`` as a user runs it (its default rounds); the two run directories."""
    env = {k: v for k, v in os.environ.items() if k != envnames.FAULT}
    more = ["--env-b", f"{envnames.FAULT}={env_b}"] if env_b else []
    res = subprocess.run([sys.executable, "-m", "podscale", "ab", *GRID, *more, "--out",
                          str(out), "--name", name], capture_output=True, text=True, env=env)
    if res.returncode:
        raise PodscaleError(f"bench ab {name} failed: {res.stderr.strip()[-300:]}")
    found = {w[2]: Path(w[5:].split()[0]) for w in res.stdout.splitlines()
             if w.startswith(("# A: ", "# B: "))}
    return found["A"], found["B"]


def iteration_test_flags(run_a: Path, run_b: Path, alpha: float = defaults.ALPHA,
                         threshold: float = defaults.THRESHOLD) -> float:
    """Share of cases the previous method flagged: Mann-Whitney U over the pooled
    per-iteration times (iterations treated as independent), no multiple-test correction."""
    import numpy as np
    from scipy.stats import mannwhitneyu

    from podscale.analysis import load_run
    from podscale.analysis.models.stats import per_iteration

    ia, ib = (per_iteration(load_run(r).samples) for r in (run_a, run_b))
    flags, cases = 0, sorted(set(ia["case_id"]) & set(ib["case_id"]))
    for case_id in cases:
        x = ia.loc[ia.case_id == case_id, "t_max"].to_numpy()
        y = ib.loc[ib.case_id == case_id, "t_max"].to_numpy()
        ratio = np.median(y) / np.median(x)
        p = mannwhitneyu(x, y).pvalue
        flags += bool(p < alpha and abs(np.log(ratio)) > np.log1p(threshold))
    return flags / len(cases)


def rates(table: pd.DataFrame, slowed: str = SLOWED) -> dict:
    hit = table["case_id"].str.startswith(f"{slowed}@")
    flagged = table["verdict"].isin(["slower", "faster"])
    return {"cases": len(table), "flagged": float(flagged.mean()),
            "noisy": float((table["verdict"] == "noisy").mean()),
            "detected": float((table.loc[hit, "verdict"] == "slower").mean()) if hit.any()
            else float("nan"),
            "collateral": float(flagged[~hit].mean()) if (~hit).any() else float("nan"),
            "median_ratio_slowed": float(table.loc[hit, "ratio"].median()) if hit.any()
            else float("nan")}


def verdicts(out: Path, log: Log = print, extra: tuple[str, ...] = ()) -> dict:
    from podscale.analysis.verdicts.compare import compare

    started = time.monotonic()
    runs = {}
    for name, fault in (("A", None), ("B", FAULT), ("A2", None)):
        runs[name] = cli_run(out, f"verdict-{name}", fault, extra)
        log(f"  run {name}{' (' + fault + ')' if fault else ''}: "
            f"{time.monotonic() - started:.0f}s elapsed")
    aa, _ = compare(runs["A"], runs["A2"])
    ab, _ = compare(runs["A"], runs["B"])
    a2b, _ = compare(runs["A2"], runs["B"])
    sequential_s = time.monotonic() - started
    arms = {}
    for name, fault in (("AA", None), ("AB", FAULT)):
        arms[name] = cli_ab(out, f"verdict-{name}", fault)
        log(f"  ab {name}{' (B: ' + fault + ')' if fault else ''}: "
            f"{time.monotonic() - started:.0f}s elapsed")
    inter = {f"{k.lower()}{'_paired' if p else ''}": rates(compare(*arms[k], paired=p)[0])
             for k in arms for p in (False, True)}
    result = {"grid": " ".join(GRID), "fault": FAULT, "aa": rates(aa), "ab": rates(ab),
              "a2b": rates(a2b), "aa_iteration_test_flagged":
                  iteration_test_flags(runs["A"], runs["A2"]),
              "sequential_wall_s": sequential_s, "interleaved": inter,
              "interleaved_wall_s": time.monotonic() - started - sequential_s,
              "wall_s": time.monotonic() - started, "targets": TARGETS}
    result["aa_flagged"] = inter["aa"]["flagged"]  # the recommended path: podscale ab
    result["detected"] = inter["ab"]["detected"]
    return result


def summary_lines(r: dict) -> list[str]:
    aa, ab, a2b = r["aa"], r["ab"], r["a2b"]
    lines = [
        f"  sequential runs (3 rounds each, {r['sequential_wall_s']:.0f}s): A/A "
        f"{aa['flagged']:.1%} of {aa['cases']} cases flagged, {aa['noisy']:.0%} noisy; the "
        f"per-iteration test flags {r['aa_iteration_test_flagged']:.0%}; planted "
        f"{r['fault']} detected in {ab['detected']:.0%} (A vs B) and {a2b['detected']:.0%} "
        f"(A' vs B) of psum cases, median ratio {ab['median_ratio_slowed']:.2f}",
    ]
    inter = r.get("interleaved")
    if inter:
        for test in ("", "_paired"):
            x, y = inter[f"aa{test}"], inter[f"ab{test}"]
            lines.append(
                f"  podscale ab ({'paired' if test else 'Welch, the default'}): A/A "
                f"{x['flagged']:.1%} flagged (target <= 5%), {x['noisy']:.0%} noisy; planted "
                f"fault detected in {y['detected']:.0%} of psum cases (target >= 90%), "
                f"median ratio {y['median_ratio_slowed']:.2f}; dot flagged "
                f"{y['collateral']:.0%}")
        lines.append(f"  podscale ab wall time: {r['interleaved_wall_s']:.0f}s for both")
    return lines
