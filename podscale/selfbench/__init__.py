"""``podscale bench-self``: podscale measuring itself on the path users run.

Stages (:mod:`podscale.selfbench.stages`): harness overhead against a hand-written
multi-process script (:mod:`.baseline`, :mod:`.minimal_script`), sweep turnaround, memory
ceiling, scale, the checks' footprint and the default study's ledger (:mod:`.footprint`),
report load at pod scale (:mod:`.reportstage` on :mod:`.synthetic` runs),
``podscale history`` over 1,000 runs (:mod:`.historystage`),
verdict calibration (:mod:`.verdicts`), what ``podscale attach`` costs a program's step
(:mod:`.attachstage`) and asv's (:mod:`.asvstage`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TypeAlias

from podscale.core import defaults
from podscale.core.errors import UsageError
from podscale.core.lines import commented

#: where a stage writes its progress lines (``print`` by default)
Log: TypeAlias = Callable[[str], None]

STAGE_NAMES = ("harness", "methods", "turnaround", "memory", "scale", "footprint", "study",
               "report", "history", "links", "verdicts", "gate", "attach", "asv", "asv-detect")


def main(out: Path | None, max_processes: int, only: str | None,
         platform: str = "auto") -> int:
    """Run the chosen stages and write their figures as JSON; ``platform`` (``--platform``)
    chooses whether the stages that can measure this machine's chips do."""
    from podscale.launch.platform import choose
    from podscale.selfbench.stages import run_all

    names = ",".join(STAGE_NAMES) if only is None else only
    chosen = tuple(w.strip() for w in names.split(",") if w.strip())
    bad = [w for w in chosen if w not in STAGE_NAMES]
    if bad or not chosen:
        what = f"unknown bench-self stage {bad[0]!r}" if bad else "--only names no stage"
        raise UsageError(f"{what} (known: {', '.join(STAGE_NAMES)})")
    if max_processes < 1:
        raise UsageError(f"--max-processes must be >= 1, got {max_processes}")
    choice = choose(platform, "local")  # before any process starts
    if choice.note:
        print(commented(f"note: {choice.note}"))
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    run_all(out or defaults.OUT / f"bench-self-{stamp}.json", max_processes=max_processes,
            only=chosen, chips=choice.chips)
    return 0
