"""Record types of a run: frozen, validated dataclasses stored as JSON Lines.

One file per process (``records/<layout>/process-<i>.jsonl``) holds that process's
``env``, ``case``, ``samples`` and ``ledger`` records (the file's form:
:mod:`podscale.core.recordfile`); ``run.json`` holds the manifest
(:mod:`podscale.core.manifest`). Workers write them with :mod:`podscale.worker.writers`;
analysis reads them with :mod:`podscale.core.recordfile`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from podscale.core.manifest import (  # noqa: F401 (the run's manifest, re-exported)
    OLD_SCHEMAS,
    READABLE,
    SCHEMA,
    Manifest,
    _require,
    lifecycle,
    now,
    read_manifest,
    write_manifest,
)

#: a sample's phase; ``timed``, ``chain`` and ``device`` are the three timing methods
#: (:data:`podscale.core.timing.METHODS`: each, chain, device)
PHASES = ("compile", "warmup", "timed", "traced", "chain", "device")
#: a launch's wall-time phases (LedgerRecord), in the order a launch goes through them
LEDGER_PHASES = ("interpreter", "import", "join", "prepare", "compile", "warmup", "barrier",
                 "timed", "chain", "device", "check", "write", "traced")
#: name of the profiler annotation taken right after a barrier, to align traces
SYNC_MARK = "podscale_sync"
#: name of the profiler annotation that stamps each trace with what made it (versions of
#: jax, jaxlib and podscale, the run, the process)
STAMP_MARK = "podscale_session"


@dataclass(frozen=True)
class Sample:
    """One raw timing of one iteration of one phase of a case: a process's wall time
    (``timed``: one call waited on; ``chain``: the mean of a chain of back-to-back calls,
    its ``iteration`` the chain's number) or, in phase ``device``, one execution's time on
    ``device`` read from a profiler trace."""

    case_id: str
    process: int
    phase: str
    iteration: int
    seconds: float
    device: int | None = None  # device id where the time is per device; None = whole process
    round: int = 0  # the repetition (a separate launch of the case's processes, see --rounds)

    def __post_init__(self) -> None:
        _require(self.phase in PHASES, f"unknown phase {self.phase!r}")
        _require(self.process >= 0 and self.iteration >= 0 and self.round >= 0,
                 "negative process, iteration or round")
        _require(math.isfinite(self.seconds) and self.seconds >= 0, "bad seconds value")


@dataclass(frozen=True)
class Samples:
    """A run of raw timings of one process, case, phase and round: iteration ``i`` took
    ``seconds[k]`` where ``iterations[k] == i``. The form workers write (one JSON line per
    block, not per iteration: a pod's records parse in seconds); it holds exactly the
    :class:`Sample` records :meth:`expand` gives back."""

    case_id: str
    process: int
    phase: str
    iterations: tuple[int, ...]
    seconds: tuple[float, ...]
    device: int | None = None
    round: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "iterations", tuple(int(i) for i in self.iterations))
        object.__setattr__(self, "seconds", tuple(float(x) for x in self.seconds))
        _require(self.phase in PHASES, f"unknown phase {self.phase!r}")
        _require(len(self.iterations) == len(self.seconds) > 0,
                 "a sample block needs as many iterations as seconds, and at least one")
        _require(self.process >= 0 and self.round >= 0 and min(self.iterations) >= 0,
                 "negative process, iteration or round")
        _require(all(math.isfinite(x) and x >= 0 for x in self.seconds), "bad seconds value")

    def expand(self) -> list[Sample]:
        return [Sample(self.case_id, self.process, self.phase, i, x, self.device, self.round)
                for i, x in zip(self.iterations, self.seconds)]


def pack(samples: Iterable[Sample]) -> list[Samples]:
    """Consecutive samples of the same process, case, phase, device and round as blocks."""
    blocks = []
    for (case_id, process, phase, device, round_), group in itertools.groupby(
            samples, key=lambda s: (s.case_id, s.process, s.phase, s.device, s.round)):
        run = list(group)
        blocks.append(Samples(case_id, process, phase, tuple(x.iteration for x in run),
                              tuple(x.seconds for x in run), device, round_))
    return blocks


@dataclass(frozen=True)
class CaseRecord:
    """What one process knows about a case: the case itself (``Case.to_dict()``: workload,
    version, variant, dtype, layout, parameters, settings), its work and correctness check."""

    case_id: str
    process: int
    case: dict
    bytes_per_process: int
    flops_per_process: int
    bytes_per_device: int
    checked: int
    wrong: int
    max_error: float
    result: float | None = None
    collective: str | None = None
    participants: int = 1
    compile_kind: str = "lower+compile"  # or "first call (incl. execution)"
    round: int = 0
    hosts_per_group: int = 1  # processes one group of participants spans
    unchecked: int = 0  # elements no check could verify (bound too loose, no exact check)
    exact_checked: int = 0  # of ``checked``: elements checked exactly on integer inputs
    group_members: str | None = None  # the groups' global device indices (spell_groups), process 0
    units: dict | None = None  # parameter -> what its values count (Param.unit)
    takes_part: bool = True  # False: this process only looks on (one pair of ``pairs``)
    program: dict | None = None  # the compiled program's inventory (process 0; worker.program)
    unsampled: int = 0  # timed-output elements outside the float check's sample
    lowered: int = 0  # of ``checked``: elements equal to the product at a lowered precision
    #: the device pass's ops: per op name [count, µs] per execution of the case's module
    ops: dict | None = None

    def __post_init__(self) -> None:
        _require(0 <= self.wrong <= self.checked, "wrong must be within [0, checked]")
        _require(0 <= self.unchecked <= self.checked and 0 <= self.exact_checked <=
                 self.checked, "unchecked and exact_checked must be within [0, checked]")
        _require(self.unsampled >= 0 and 0 <= self.lowered <= self.checked,
                 "unsampled must be >= 0 and lowered within [0, checked]")
        _require(self.bytes_per_process >= 0 and self.flops_per_process >= 0, "negative work")
        _require(self.participants >= 1 and self.hosts_per_group >= 1,
                 "participants and hosts per group must be >= 1")


@dataclass(frozen=True)
class SkipRecord:
    """A case this process could not run on its backend (e.g. an op XLA:CPU does not
    implement), with the backend's reason; it has no samples and no check."""

    case_id: str
    process: int
    case: dict
    reason: str

    def __post_init__(self) -> None:
        _require(bool(self.reason.strip()), "a skip needs a reason")


@dataclass(frozen=True)
class EnvRecord:
    """Environment seen by one worker process after ``jax.distributed.initialize``."""

    process: int
    process_count: int
    local_device_count: int
    global_device_count: int
    platform: str
    device_kind: str
    jax: str
    jaxlib: str
    hostname: str
    pid: int
    xla_flags: str
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class LedgerRecord:
    """Where one process's wall time went in one layout of a launch (startup.ledger):
    ``phases``: seconds per phase; ``marks``: wall-clock boundaries of the launch (first
    layout only): process_start, worker, imported, init_start, joined."""

    process: int
    layout: str
    round: int
    phases: dict
    marks: dict = field(default_factory=dict)
    #: MB each phase raised the process's peak RSS by, and ``peak`` (MB) at the end
    rss_mb: dict = field(default_factory=dict)
    #: CPU seconds (all threads) per phase: the work, apart from waiting for shared cores
    cpu_s: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        _require(all(v >= 0 for v in self.phases.values()), "negative phase seconds")
        _require(all(v >= 0 for v in self.cpu_s.values()), "negative CPU seconds")
