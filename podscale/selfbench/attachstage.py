"""bench-self ``attach``: what recording costs a program's step. The same self-timing loop
(:mod:`podscale.selfbench.loop_script`: a jitted step whose loss is waited for every step,
the worst case for a recorder, whose watcher waits on the same result) runs plainly as
``python loop_script.py`` and under ``podscale attach``, alternating in each round so
drift falls on both; each run's median step time is its own measure; with the loop's
state one array, then 500 (a model's many parameters). On a machine with chips it runs
on them. Target: the attached median within max(2%, 50 µs) of the plain one."""

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


#: the states measured: the weights alone, and a model's state of many small arrays (what
#: attach reads of a call's outputs must not grow with their number)
ARRAYS = (1, 500)


def _run(argv: list[str], cwd: Path, platform: str) -> float:
    env = {**os.environ, SUPERVISED: "1"}  # attach: no manifest of its own
    if platform == "cpu":
        env.update(JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES="2")
    res = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=cwd,
                         env=env, timeout=300)
    if res.returncode:
        raise PodscaleError(f"attach stage: {' '.join(argv[:3])} failed: "
                            f"{res.stderr.strip().splitlines()[-1:]}")
    times = json.loads(res.stdout.strip().splitlines()[-1])["step_s"]
    return statistics.median(times)


def attach_overhead(work: Path, rounds: int = 5, steps: int = 400, warmup: int = 50,
                    log: Log = print, platform: str = "cpu") -> dict:
    """Each state of :data:`ARRAYS` (keyed ``arrays=N``), measured by :func:`one_state`."""
    return {f"arrays={n}": one_state(work, n, rounds, steps, warmup, log, platform)
            for n in ARRAYS}


def one_state(work: Path, arrays: int, rounds: int, steps: int, warmup: int, log: Log,
              platform: str) -> dict:
    """Per round, the plain and attached median step times (seconds) of a loop whose state
    is ``arrays`` arrays, the ratio and the difference; their medians and ranges."""
    plain: list[float] = []
    attached: list[float] = []
    loop = [str(SCRIPT), str(steps), str(warmup), "128", str(arrays)]
    for r in range(rounds):
        pair = [("plain", loop),
                ("attached", ["-m", "podscale", "attach", "--run-dir",
                              str(work / f"attach-{arrays}-{r}"), *loop])]
        for name, argv in pair if r % 2 == 0 else pair[::-1]:
            (plain if name == "plain" else attached).append(_run(argv, work, platform))
        log(f"  {arrays} arrays, round {r + 1}: plain {plain[-1] * 1e6:.0f} µs, attached "
            f"{attached[-1] * 1e6:.0f} µs")
    ratio = [a / p for a, p in zip(attached, plain)]
    diff = [a - p for a, p in zip(attached, plain)]
    ratio_median, diff_median = statistics.median(ratio), statistics.median(diff)
    target = max(0.02 * statistics.median(plain), 50e-6)
    met = diff_median <= target
    log(f"  {arrays} arrays: attached vs plain median step: {ratio_median:.3f}x (rounds "
        f"{min(ratio):.3f}-{max(ratio):.3f}), +{diff_median * 1e6:.0f} µs (rounds "
        f"{min(diff) * 1e6:.0f} to {max(diff) * 1e6:.0f}); target <= "
        f"{target * 1e6:.0f} µs: {'met' if met else 'NOT met'}")
    return {"platform": platform, "arrays": arrays, "plain_s": plain, "attached_s": attached,
            "ratio": ratio, "diff_s": diff, "ratio_median": ratio_median,
            "diff_median_s": diff_median, "plain_median_s": statistics.median(plain),
            "target_s": target, "met": met}
