"""The plan: what every process of one launch runs. Frozen, typed, versioned, JSON.

The same :class:`Plan` serves the local launcher, mpirun/srun (written to
``plans/<layout>.json``, read by ``python -m podscale.worker PLAN``) and
``podscale worker`` on cluster hosts (built in memory from the grid).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from podscale.core.case import Case, Layout
from podscale.core.errors import UsageError

#: what a launcher hands its workers; 1: the only one so far (fields added with defaults)
PLAN_SCHEMA = "podscale.plan/1"
MODES = ("bench", "seed")


@dataclass(frozen=True)
class LayoutPlan:
    """The cases of one layout, run in order on (a device subset of) the launched processes."""

    layout: Layout
    cases: tuple[Case, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "cases", tuple(self.cases))
        for case in self.cases:
            if case.layout != self.layout:
                raise ValueError(f"case {case.id} is not of layout {self.layout.key}")


@dataclass(frozen=True)
class Plan:
    run_dir: str
    launched: Layout  # the processes started: hosts x the largest devices per host
    layouts: tuple[LayoutPlan, ...] = ()
    mode: str = "bench"
    gather: bool = False  # process 0 gathers every process's records (no shared filesystem)
    trace_dir: str | None = None  # traces straight to a shared path or gs:// (real hosts)
    round: int = 0  # the first round this launch runs (local: one launch per round)
    rounds: int = 1  # rounds run in this launch, one after another (cluster jobs)
    #: environment variables every process sets before it imports JAX (an A/B arm's
    #: XLA_FLAGS, LIBTPU_INIT_ARGS, NCCL_* ...)
    env: tuple[tuple[str, str], ...] = ()
    #: process 0 saves each case's optimized HLO and device order (``podscale replay``)
    hlo: bool = False
    #: ``module:function`` every process runs instead of cases (``podscale seed``'s
    #: reference listing), called with the runtime and the run directory
    program: str | None = None
    schema: str = PLAN_SCHEMA

    def __post_init__(self) -> None:
        object.__setattr__(self, "layouts", tuple(self.layouts))
        object.__setattr__(self, "env", tuple((str(k), str(v)) for k, v in self.env))
        bad = [k for k, _ in self.env if not (k.isidentifier() and k.isascii())]
        if bad:
            raise UsageError(f"bad environment variable name(s) in plan: {', '.join(bad)}")
        if self.schema != PLAN_SCHEMA:
            raise UsageError(f"plan schema {self.schema!r} is not {PLAN_SCHEMA!r}")
        if self.round < 0 or self.rounds < 1:
            raise UsageError(f"bad plan rounds: round {self.round}, rounds {self.rounds}")
        if self.mode not in MODES:
            raise UsageError(f"plan mode {self.mode!r} is not one of {', '.join(MODES)}")
        for lp in self.layouts:
            if lp.layout.processes != self.launched.processes or \
                    lp.layout.devices_per_host > self.launched.devices_per_host:
                raise ValueError(f"layout {lp.layout.key} does not fit the launched "
                                 f"{self.launched.key}")

    @property
    def cases(self) -> list[Case]:
        return [c for lp in self.layouts for c in lp.cases]

    def to_dict(self) -> dict:
        return {"schema": self.schema, "run_dir": self.run_dir, "mode": self.mode,
                "gather": self.gather, "trace_dir": self.trace_dir,
                "round": self.round, "rounds": self.rounds, "env": dict(self.env),
                "hlo": self.hlo, "program": self.program,
                "launched": self.launched.to_dict(),
                "layouts": [{"layout": lp.layout.to_dict(),
                             "cases": [c.to_dict() for c in lp.cases]} for lp in self.layouts]}

    @classmethod
    def from_dict(cls, d: dict) -> Plan:
        if not isinstance(d, dict) or d.get("schema") != PLAN_SCHEMA:
            found = d.get("schema") if isinstance(d, dict) else type(d).__name__
            raise UsageError(f"plan schema {found!r} is not {PLAN_SCHEMA!r}")
        return cls(
            run_dir=d["run_dir"], launched=Layout.from_dict(d["launched"]),
            layouts=tuple(LayoutPlan(Layout.from_dict(lp["layout"]),
                                     tuple(Case.from_dict(c) for c in lp["cases"]))
                          for lp in d["layouts"]),
            mode=d.get("mode", "bench"), gather=bool(d.get("gather")),
            trace_dir=d.get("trace_dir"), round=int(d.get("round", 0)),
            rounds=int(d.get("rounds", 1)), env=tuple(d.get("env", {}).items()),
            hlo=bool(d.get("hlo", False)), program=d.get("program"))

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")
        return path

    @classmethod
    def read(cls, path: Path) -> Plan:
        try:
            return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise UsageError(f"{path}: not a podscale plan ({exc})") from None


def group_by_layout(cases: Iterable[Case]) -> dict[Layout, list[Case]]:
    groups: dict[Layout, list[Case]] = {}
    for case in cases:
        groups.setdefault(case.layout, []).append(case)
    return groups


def launches(cases: Iterable[Case], reuse: bool = True) -> list[tuple[Layout, list[LayoutPlan]]]:
    """Group cases into process launches. With ``reuse``, one launch per host count and
    local mesh split with the largest devices-per-host; smaller layouts run on device
    subsets of the same processes."""
    layouts = group_by_layout(cases)
    if not reuse:
        return [(k, [LayoutPlan(k, tuple(v))]) for k, v in layouts.items()]
    by_hosts: dict[int, list[LayoutPlan]] = {}
    for k, v in layouts.items():
        by_hosts.setdefault(k.processes, []).append(LayoutPlan(k, tuple(v)))
    return [(max((lp.layout for lp in group), key=lambda k: k.devices_per_host), group)
            for _, group in sorted(by_hosts.items())]
