"""Which steps a profiled program's captures hold, and which computation is the step.

Windows are step indices (``--profile-steps A:B``, ``--profile-every N``): step *k* is every
process's *k*-th call of the step computation. The step is the computation whose repeated
work is the largest: (calls - 1) x its program's work (XLA's cost analysis, the same on every
process), so an initialisation run once never outweighs a step run from its second call on,
and a helper called three times a step does not outweigh the step. Until one computation has
run twice nothing is settled: a window that starts then is armed on any computation's call
(:meth:`StepChoice.arming`) and counted once the step is known."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podscale.core.steprule import repeated_work, weight


@dataclass(frozen=True)
class Windows:
    """Which steps to capture: ``start:stop`` once, or every ``every`` steps for
    ``length`` steps (starting at step ``every``)."""

    start: int | None = None
    stop: int | None = None
    every: int | None = None
    length: int = 2
    #: steps captured after an anomalous step (:mod:`.anomaly`); 0: none
    anomalies: int = 0

    def __post_init__(self) -> None:
        from podscale.core.errors import UsageError

        if self.anomalies < 0:
            raise UsageError(f"--profile-anomalies {self.anomalies}: want K >= 1 steps "
                             "to capture after an anomalous step")

        if self.start is not None and (self.stop is None or not 0 <= self.start < self.stop):
            raise UsageError(f"--profile-steps {self.start}:{self.stop}: want A:B with "
                             "0 <= A < B (steps A to B-1)")
        if self.every is not None and (self.every < 1 or not 1 <= self.length <= self.every):
            raise UsageError(f"--profile-every {self.every}: want N >= 1 and a capture "
                             f"length 1..N (got {self.length})")

    @classmethod
    def parse(cls, steps: str | None, every: int | None, length: int = 2,
              anomalies: int = 0) -> Windows | None:
        if steps is None and every is None and not anomalies:
            return None
        if steps is None and every is None:
            return cls(anomalies=anomalies)
        if steps is not None:
            a, _, b = steps.partition(":")
            if not (a.isascii() and a.isdigit() and b.isascii() and b.isdigit()):
                from podscale.core.errors import UsageError

                raise UsageError(f"--profile-steps {steps!r}: want A:B (steps A to B-1)")
            return cls(int(a), int(b), every, length, anomalies)
        return cls(every=every, length=length, anomalies=anomalies)

    def opens(self, k: int) -> int | None:
        """The window's end (exclusive) if a capture starts at step ``k``."""
        if self.start is not None and k == self.start:
            return self.stop
        if self.every is not None and k and k % self.every == 0:
            return k + self.length
        return None


class StepChoice:
    """The step among a process's computations: the one named ``--step`` (``name``), else
    the one with the most repeated work."""

    def __init__(self, name: str | None) -> None:
        self.name = name

    def is_step(self, comp: Any, computations: list) -> bool:
        """Whether ``comp`` is the step now (every computation ties before any repeats)."""
        if self.name is not None:
            return bool(comp.name == self.name)
        return _score(comp) >= max(_score(c) for c in computations)

    def settled(self, computations: list) -> bool:
        """Whether the step is known: named, or some computation has run twice."""
        return self.name is not None or any(c.calls >= 2 for c in computations)

    def best(self, computations: list) -> Any:
        """The step now (None before any call, or where ``--step`` names none)."""
        found = [c for c in computations if self.is_step(c, computations) and c.calls]
        return max(found, key=lambda c: (_score(c), c.calls), default=None)

    def weigh(self, facts: dict[str, Any]) -> float:
        """A computation's weight: its compiled program's flops (its loops' bodies times
        their trips) + bytes accessed, at least 1; 1 where ``--step`` names the step or XLA
        says nothing (calls alone decide)."""
        if self.name is not None:
            return 1.0
        flops = facts.get("flops")
        if flops is not None and facts.get("loop_flops"):
            flops += facts["loop_flops"]
        return weight(flops, facts.get("bytes"))


def _score(comp: Any) -> float:
    return repeated_work(comp.calls, comp.weight)
