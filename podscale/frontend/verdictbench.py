"""bench-self's verdict stage: do ``podscale compare`` verdicts hold on this machine?

Runs the grid users run (``podscale run dot,psum --hosts 1,2 --devices-per-host 1,2
--sizes 4K,64K,1M`` with the defaults: 20 iterations, 3 rounds) through the real CLI three
times — A, B with every psum step stretched 1.5x (``PODSCALE_FAULT=stretch=1.5@*:psum``),
then A again — and compares them with the defaults:

- A/A false alarms: cases of A vs A' called slower or faster (target <= 5%);
- detection: psum cases of A vs B (and A' vs B) called slower (target >= 90%), while dot
  cases, which were not slowed, should not be flagged;
- for contrast, the previous method (Mann-Whitney U over per-iteration samples of one
  launch, no correction) on the same A/A pair.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from podscale.core.errors import PodscaleError

GRID = ["dot,psum", "--hosts", "1,2", "--devices-per-host", "1,2", "--sizes", "4K,64K,1M"]
SLOWED = "psum"
FAULT = f"stretch=1.5@*:{SLOWED}"
TARGETS = {"aa_flagged": 0.05, "detected": 0.90}


def cli_run(out: Path, name: str, fault: str | None = None, extra=()) -> Path:
    """``podscale run`` as a user runs it; the run directory it printed."""
    env = {k: v for k, v in os.environ.items() if k != "PODSCALE_FAULT"}
    if fault:
        env["PODSCALE_FAULT"] = fault
    res = subprocess.run([sys.executable, "-m", "podscale", "run", *GRID, *extra, "--out",
                          str(out), "--name", name], capture_output=True, text=True, env=env)
    if res.returncode:
        raise PodscaleError(f"bench run {name} failed: {res.stderr.strip()[-300:]}")
    line = [w for w in res.stdout.splitlines() if w.startswith("# results: ")][-1]
    return Path(line.removeprefix("# results: ").strip())


def iteration_test_flags(run_a: Path, run_b: Path, alpha: float = 0.05,
                         threshold: float = 0.05) -> float:
    """Share of cases the previous method flagged: Mann-Whitney U over the pooled
    per-iteration times (iterations treated as independent), no multiple-test correction."""
    import numpy as np
    from scipy.stats import mannwhitneyu

    from analysis import load_run
    from analysis.stats import per_iteration

    ia, ib = (per_iteration(load_run(r)[1]) for r in (run_a, run_b))
    flags, cases = 0, sorted(set(ia["case_id"]) & set(ib["case_id"]))
    for case_id in cases:
        x = ia.loc[ia.case_id == case_id, "t_max"].to_numpy()
        y = ib.loc[ib.case_id == case_id, "t_max"].to_numpy()
        ratio = np.median(y) / np.median(x)
        p = mannwhitneyu(x, y).pvalue
        flags += bool(p < alpha and abs(np.log(ratio)) > np.log1p(threshold))
    return flags / len(cases)


def rates(table, slowed: str = SLOWED) -> dict:
    hit = table["case_id"].str.startswith(f"{slowed}@")
    flagged = table["verdict"].isin(["slower", "faster"])
    return {"cases": len(table), "flagged": float(flagged.mean()),
            "noisy": float((table["verdict"] == "noisy").mean()),
            "detected": float((table.loc[hit, "verdict"] == "slower").mean()) if hit.any()
            else float("nan"),
            "collateral": float(flagged[~hit].mean()) if (~hit).any() else float("nan"),
            "median_ratio_slowed": float(table.loc[hit, "ratio"].median()) if hit.any()
            else float("nan")}


def verdicts(out: Path, log: Callable[[str], None] = print, extra=()) -> dict:
    from analysis.compare import compare

    started = time.monotonic()
    runs = {}
    for name, fault in (("A", None), ("B", FAULT), ("A2", None)):
        runs[name] = cli_run(out, f"verdict-{name}", fault, extra)
        log(f"  run {name}{' (' + fault + ')' if fault else ''}: "
            f"{time.monotonic() - started:.0f}s elapsed")
    aa, _ = compare(runs["A"], runs["A2"])
    ab, _ = compare(runs["A"], runs["B"])
    a2b, _ = compare(runs["A2"], runs["B"])
    result = {"grid": " ".join(GRID), "fault": FAULT, "aa": rates(aa), "ab": rates(ab),
              "a2b": rates(a2b), "aa_iteration_test_flagged":
                  iteration_test_flags(runs["A"], runs["A2"]),
              "wall_s": time.monotonic() - started, "targets": TARGETS}
    result["aa_flagged"] = result["aa"]["flagged"]
    result["detected"] = min(result["ab"]["detected"], result["a2b"]["detected"])
    return result


def summary_lines(r: dict) -> list[str]:
    aa, ab, a2b = r["aa"], r["ab"], r["a2b"]
    return [
        f"  A/A: {aa['flagged']:.1%} of {aa['cases']} cases flagged (target <= 5%), "
        f"{aa['noisy']:.0%} noisy; the per-iteration test flags "
        f"{r['aa_iteration_test_flagged']:.0%}",
        f"  planted {r['fault']}: detected in {ab['detected']:.0%} (A vs B) and "
        f"{a2b['detected']:.0%} (A' vs B) of psum cases (target >= 90%), median ratio "
        f"{ab['median_ratio_slowed']:.2f}; unslowed dot cases flagged: {ab['collateral']:.0%}"
        f" / {a2b['collateral']:.0%}",
    ]
