"""JAX's monitoring events a profiled process records: each compile's trace, lowering and
backend durations (``compile``) and the persistent compilation cache's answers
(``cache``), each with the recorded call it happened in (None: outside one, or on
another thread than the main one, whose calls are not the steps)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podscale.attach.calls import CallLog
from podscale.core.profilerecord import record
from podscale.startup.jaxapi import BACKEND_COMPILE, CACHE_HIT, CACHE_MISS, COMPILE_EVENTS


class Events:
    """The listeners, registered with ``jax.monitoring`` before the script runs."""

    def __init__(self, log: CallLog, emit: Callable[[dict], None],
                 clock: Callable[[], int]) -> None:
        self.log, self.emit, self.clock = log, emit, clock

    def compile(self, event: str, duration_secs: float, **kw: Any) -> None:
        if not event.startswith(COMPILE_EVENTS):
            return
        seq = self.log.main_call()
        if seq is not None:  # traced or lowered: compiling until the backend is done
            self.log.compiling = not event.endswith(BACKEND_COMPILE)
        self.emit(record({"kind": "compile", "event": event.rsplit("/", 1)[1],
                          "fun": kw.get("fun_name"), "end": self.clock(),
                          "seconds": duration_secs, "seq": seq,
                          "ahead": self.log.ahead > 0}))

    def cache(self, event: str, **kw: Any) -> None:
        if event in (CACHE_HIT, CACHE_MISS):
            self.emit(record({"kind": "cache", "hit": event == CACHE_HIT, "end": self.clock(),
                              "seq": self.log.main_call()}))
