"""Planted faults, for testing podscale itself: ``PODSCALE_FAULT=KIND[=ARG]@PROCESS:CASE``.

CASE is a case index within the launch or ``*`` (every case). KIND is one of:

- ``raise``, ``exit``, ``kill``, ``hang`` — at the start of the case (the supervisor's tests);
- ``slow[=SECONDS]`` — process PROCESS sleeps SECONDS (default 0.002) before its part of
  every step, warm-up and timed alike: a straggler its peers wait for at the collective;
- ``corrupt`` — process PROCESS's outputs are changed before the correctness check.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

KINDS = ("raise", "exit", "kill", "hang", "slow", "corrupt")


@dataclass(frozen=True)
class Fault:
    kind: str
    process: int
    case: int | None  # None: every case
    arg: float | None = None

    def applies(self, process: int, index: int) -> bool:
        return process == self.process and self.case in (None, index)


def parse(spec: str) -> Fault | None:
    if not spec:
        return None
    what, _, where = spec.partition("@")
    kind, _, arg = what.partition("=")
    process, _, case = where.partition(":")
    if kind not in KINDS or not process.isdigit() or not (case in ("", "*") or case.isdigit()):
        raise ValueError(f"bad PODSCALE_FAULT {spec!r}: KIND[=ARG]@PROCESS:CASE with KIND of "
                         f"{', '.join(KINDS)} and CASE an index or *")
    return Fault(kind, int(process), None if case == "*" else int(case or 0),
                 float(arg) if arg else None)


def from_env() -> Fault | None:
    return parse(os.environ.get("PODSCALE_FAULT", ""))


def at_case_start(fault: Fault | None, process: int, index: int, say: Callable) -> None:
    if fault is None or not fault.applies(process, index) or fault.kind in ("slow", "corrupt"):
        return
    say(f"injected fault: {fault.kind}")
    if fault.kind == "raise":
        raise RuntimeError(f"injected failure in process {process}")
    if fault.kind == "exit":
        os._exit(7)
    if fault.kind == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    while True:  # hang
        time.sleep(3600)


def wrap_step(fault: Fault | None, process: int, index: int,
              step: Callable[[], Any]) -> Callable[[], Any]:
    if fault is None or fault.kind != "slow" or not fault.applies(process, index):
        return step
    delay = 0.002 if fault.arg is None else fault.arg

    def slowed():
        time.sleep(delay)
        return step()

    return slowed


def corrupt(fault: Fault | None, process: int, index: int, got: np.ndarray) -> np.ndarray:
    """Outputs moved far outside any rounding bound (and the first made NaN)."""
    if fault is None or fault.kind != "corrupt" or not fault.applies(process, index):
        return got
    bad = np.array(got, dtype=np.float64, copy=True)
    bad += 1.0 + 1e3 * np.maximum(np.abs(bad), 1.0)
    if bad.size:
        bad.flat[0] = np.nan
    return bad
