"""This process's clock, and its offset from process 0's through the coordination service.

Timestamps are microseconds of the wall clock (``time.time_ns() // 1000``), comparable
across hosts only once each process's offset from process 0 is known. The offset is
estimated as NTP does, through the key-value store: the process writes its clock reading,
process 0 answers with its own, and the round with the shortest round trip gives
``offset = (t_sent + t_back) / 2 - t_process0`` within ± half that round trip (the stated
residual). Process 0 answers in a background thread, so neither side's program waits;
a peer spaces its ``ROUNDS`` rounds by ``SPACING_S``.

``PODSCALE_CLOCK_SKEW=P:SECONDS,...`` (tests) plants an offset into process P's clock.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

ROUNDS = 16
#: between a peer's rounds: the rounds sample different moments of a busy start-up (the
#: shortest round trip is the one kept)
SPACING_S = 0.005
TIMEOUT_MS = 60_000


def planted(spec: str | None = None) -> dict[int, int]:
    """The planted skews, microseconds per process (``P:SECONDS,...``)."""
    spec = os.environ.get("PODSCALE_CLOCK_SKEW", "") if spec is None else spec
    out: dict[int, int] = {}
    for part in filter(None, spec.split(",")):
        process, _, seconds = part.partition(":")
        try:
            out[int(process)] = round(float(seconds) * 1e6)
        except ValueError:
            from podscale.core.errors import UsageError

            raise UsageError(f"bad PODSCALE_CLOCK_SKEW {spec!r}: P:SECONDS,... with P a "
                             "process index") from None
    return out


class Clock:
    """``now()``: microseconds; ``skew_us`` is the planted skew once the process is known."""

    def __init__(self) -> None:
        self.skew_us = 0

    def now(self) -> int:
        return time.time_ns() // 1000 + self.skew_us


def _key(process: int, round_: int, what: str) -> str:
    return f"podscale/attach/clock/{process}/{round_}/{what}"


def answer(client: Any, processes: int, now: Callable[[], int]) -> threading.Thread:
    """Process 0: answer every peer's rounds, peer by peer, in a background thread."""

    def serve() -> None:
        try:
            for peer in range(1, processes):
                for r in range(ROUNDS):
                    client.blocking_key_value_get(_key(peer, r, "ask"), TIMEOUT_MS)
                    client.key_value_set(_key(peer, r, "answer"), str(now()))
        except Exception:  # noqa: BLE001 - a peer gone: its offset stays unknown
            return

    thread = threading.Thread(target=serve, name="podscale-clock", daemon=True)
    thread.start()
    return thread


def measure(client: Any, process: int, now: Callable[[], int],
            done: Callable[[int, int], None]) -> threading.Thread:
    """A peer: estimate the offset in a background thread; ``done(offset_us, rtt_us)``."""

    def rounds() -> None:
        best: tuple[int, int] | None = None
        try:
            for r in range(ROUNDS):
                sent = now()
                client.key_value_set(_key(process, r, "ask"), str(sent))
                theirs = int(client.blocking_key_value_get(_key(process, r, "answer"),
                                                           TIMEOUT_MS))
                back = now()
                rtt, offset = back - sent, (sent + back) // 2 - theirs
                if best is None or rtt < best[1]:
                    best = (offset, rtt)
                time.sleep(SPACING_S)
        except Exception:  # noqa: BLE001 - process 0 gone: keep the best round so far
            pass
        if best is not None:
            done(*best)

    thread = threading.Thread(target=rounds, name="podscale-clock", daemon=True)
    thread.start()
    return thread
