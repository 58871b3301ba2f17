"""bench-self ``attach``: what recording costs a program's step. The same self-timing loop
(:mod:`podscale.selfbench.loop_script`: a jitted step whose loss is waited for every step,
the worst case for a recorder, whose watcher waits on the same result) runs plainly as
``python loop_script.py`` and under ``podscale attach``, alternating in each round so
drift falls on both; each run's median step time is its own measure. Target: the
attached median within max(2%, 50 µs) of the plain one."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from podscale.attach import SUPERVISED
from podscale.core.errors import PodscaleError
from podscale.selfbench import Log

SCRIPT = Path(__file__).with_name("loop_script.py")


def _run(argv: list[str], cwd: Path) -> float:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "JAX_NUM_CPU_DEVICES": "2",
           SUPERVISED: "1"}  # attach: no manifest of its own
    res = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=cwd,
                         env=env, timeout=300)
    if res.returncode:
        raise PodscaleError(f"attach stage: {' '.join(argv[:3])} failed: "
                            f"{res.stderr.strip().splitlines()[-1:]}")
    times = json.loads(res.stdout.strip().splitlines()[-1])["step_s"]
    return statistics.median(times)


def attach_overhead(work: Path, rounds: int = 5, steps: int = 400, warmup: int = 50,
                    log: Log = print) -> dict:
    """Per round, the plain and attached median step times (seconds), the ratio and the
    difference; their medians and ranges over the rounds."""
    plain: list[float] = []
    attached: list[float] = []
    for r in range(rounds):
        pair = [("plain", [str(SCRIPT), str(steps), str(warmup)]),
                ("attached", ["-m", "podscale", "attach", "--run-dir",
                              str(work / f"attach-{r}"), str(SCRIPT), str(steps),
                              str(warmup)])]
        for name, argv in pair if r % 2 == 0 else pair[::-1]:
            (plain if name == "plain" else attached).append(_run(argv, work))
        log(f"  round {r + 1}: plain {plain[-1] * 1e6:.0f} µs, attached "
            f"{attached[-1] * 1e6:.0f} µs")
    ratio = [a / p for a, p in zip(attached, plain)]
    diff = [a - p for a, p in zip(attached, plain)]
    ratio_median, diff_median = statistics.median(ratio), statistics.median(diff)
    target = max(0.02 * statistics.median(plain), 50e-6)
    met = diff_median <= target
    log(f"  attached vs plain median step: {ratio_median:.3f}x (rounds "
        f"{min(ratio):.3f}-{max(ratio):.3f}), +{diff_median * 1e6:.0f} µs (rounds "
        f"{min(diff) * 1e6:.0f} to {max(diff) * 1e6:.0f}); target <= "
        f"{target * 1e6:.0f} µs: {'met' if met else 'NOT met'}")
    return {"plain_s": plain, "attached_s": attached, "ratio": ratio, "diff_s": diff,
            "ratio_median": ratio_median, "diff_median_s": diff_median,
            "plain_median_s": statistics.median(plain), "target_s": target, "met": met}
