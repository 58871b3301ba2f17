"""This process's clock, and its offset from process 0's through the coordination service.

Timestamps are microseconds of the wall clock (``time.time_ns() // 1000``), comparable
across hosts only once each process's offset from process 0 is known. The offset is
estimated as NTP does, through the key-value store: the process writes its clock reading,
process 0 answers with its own, and the round with the shortest round trip gives
``offset = (t_sent + t_back) / 2 - t_process0`` within ± half that round trip (the stated
residual). Process 0 answers in a background thread, so neither side's program waits;
a peer spaces its ``ROUNDS`` rounds by ``SPACING_S``. Both threads wait on the store in
short polls and stop when asked: a thread still inside a blocking call as the interpreter
exits is killed in C++ and aborts the process (``FATAL: exception not rethrown``).

``PODSCALE_CLOCK_SKEW=P:SECONDS,...`` (tests) plants an offset into process P's clock.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from podscale.core import envnames
from podscale.startup.jaxapi import CoordinationClient

ROUNDS = 16
#: between a peer's rounds: the rounds sample different moments of a busy start-up (the
#: shortest round trip is the one kept)
SPACING_S = 0.005
TIMEOUT_MS = 60_000
#: one blocking wait on the store, between looks at the stop event
POLL_MS = 200


def planted(spec: str | None = None) -> dict[int, int]:
    """The planted skews, microseconds per process (``P:SECONDS,...``)."""
    spec = os.environ.get(envnames.CLOCK_SKEW, "") if spec is None else spec
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


def _wait_for(client: CoordinationClient, key: str, stop: threading.Event) -> str:
    """The key's value once set; raises once ``TIMEOUT_MS`` pass, the store fails or
    ``stop`` is set."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not stop.is_set():
        try:
            return client.blocking_key_value_get(key, POLL_MS)
        except Exception as exc:  # noqa: BLE001 - JAX's runtime error: a timeout or worse
            if "DEADLINE_EXCEEDED" not in str(exc) or time.monotonic() > deadline:
                raise
    raise TimeoutError(key)


def answer(client: CoordinationClient, processes: int, now: Callable[[], int],
           stop: threading.Event) -> threading.Thread:
    """Process 0: answer every peer's rounds, peer by peer, in a background thread (a peer
    that stops asking is passed over: its offset stays unknown, the next peer's is not)."""

    def serve() -> None:
        for peer in range(1, processes):
            try:
                for r in range(ROUNDS):
                    _wait_for(client, _key(peer, r, "ask"), stop)
                    client.key_value_set(_key(peer, r, "answer"), str(now()))
            except Exception:  # noqa: BLE001 - a peer gone, or the end
                if stop.is_set():
                    return

    thread = threading.Thread(target=serve, name="podscale-clock", daemon=True)
    thread.start()
    return thread


def measure(client: CoordinationClient, process: int, now: Callable[[], int],
            done: Callable[[int, int], None], stop: threading.Event) -> threading.Thread:
    """A peer: estimate the offset in a background thread; ``done(offset_us, rtt_us)``."""

    def rounds() -> None:
        best: tuple[int, int] | None = None
        try:
            for r in range(ROUNDS):
                sent = now()
                client.key_value_set(_key(process, r, "ask"), str(sent))
                theirs = int(_wait_for(client, _key(process, r, "answer"), stop))
                back = now()
                rtt, offset = back - sent, (sent + back) // 2 - theirs
                if best is None or rtt < best[1]:
                    best = (offset, rtt)
                if stop.wait(SPACING_S):
                    break
        except Exception:  # noqa: BLE001 - process 0 gone: keep the best round so far
            pass
        if best is not None:
            done(*best)

    thread = threading.Thread(target=rounds, name="podscale-clock", daemon=True)
    thread.start()
    return thread
