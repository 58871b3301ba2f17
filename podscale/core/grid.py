"""The grid a user asks for, and the cases it expands to.

Layout axes (hosts, devices per host, the local mesh split), dtypes, variants and
measurement settings are common to every workload; every other parameter belongs to the
workloads that declare it (``size`` for most; ``--param op=sum,max``). A value given for a
parameter no selected workload declares is an error, never silently ignored.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from podscale.core.case import Case, Layout, Settings
from podscale.core.errors import UsageError
from podscale.core.registry import Found, resolve


@dataclass(frozen=True)
class Grid:
    workloads: tuple[str, ...]  # references: built-in names, file.py:NAME, pkg.module:NAME
    hosts: tuple[int, ...] = (1, 2)  # per slice
    devices_per_host: tuple[int, ...] = (1, 2)
    local_axes: tuple[tuple[str, int], ...] = ()  # () = one "local" axis
    dtypes: tuple[str, ...] = ("float32",)
    variants: tuple[str, ...] = ()  # () = every variant each workload supports
    params: tuple[tuple[str, tuple], ...] = ()  # name -> raw values, parsed per workload
    settings: Settings = field(default_factory=Settings)
    slices: tuple[int, ...] = (1,)

    def __post_init__(self) -> None:
        for name in ("workloads", "hosts", "devices_per_host", "dtypes", "slices"):
            if not getattr(self, name):
                raise UsageError(f"{name.replace('_', ' ')} must not be empty")
        for name in ("hosts", "devices_per_host", "slices"):
            bad = [n for n in getattr(self, name) if n < 1]
            if bad:
                flag = name.replace("_", "-")
                raise UsageError(f"--{flag} {','.join(map(str, getattr(self, name)))}: want "
                                 f"counts >= 1, got {bad[0]} (a suite file's {name} likewise)")
        object.__setattr__(self, "params", tuple(sorted((k, tuple(v)) for k, v in self.params)))

    def to_dict(self) -> dict:
        return {"workloads": list(self.workloads), "hosts": list(self.hosts),
                "devices_per_host": list(self.devices_per_host),
                "local_axes": [list(a) for a in self.local_axes], "dtypes": list(self.dtypes),
                "variants": list(self.variants), "params": {k: list(v) for k, v in self.params},
                "settings": self.settings.to_dict(),
                **({"slices": list(self.slices)} if self.slices != (1,) else {})}


def _values(found: Found, given: dict[str, tuple]) -> dict[str, list]:
    out = {}
    for p in found.workload.params:
        raw = given.get(p.name)
        out[p.name] = [p.parse(v) for v in raw] if raw else [p.default]
    return out


def expand(grid: Grid) -> list[Case]:
    """Every case of the grid, validated, in layout order (each layout's cases together)."""
    found = list({f.source: f for f in map(resolve, dict.fromkeys(grid.workloads))}.values())
    _one_source_per_name(found)
    given = dict(grid.params)
    declared = {p.name for f in found for p in f.workload.params}
    for name in given:
        if name not in declared:
            listing = "; ".join(f"{f.workload.name}: "
                                f"{', '.join(p.name for p in f.workload.params) or 'none'}"
                                for f in found)
            raise UsageError(f"no selected workload has a parameter {name!r} ({listing})")
    cases: list[Case] = []
    skipped: dict[str, str] = {}
    for f in found:
        wl = f.workload
        variants = [v for v in (grid.variants or wl.variants) if v in wl.variants]
        if not variants:
            raise UsageError(f"workload {wl.name} supports variants {', '.join(wl.variants)}, "
                             f"not {', '.join(grid.variants)}")
        bad = [d for d in grid.dtypes if d not in wl.dtypes]
        if bad:
            raise UsageError(f"workload {wl.name} does not support dtype {bad[0]} "
                             f"(supported: {', '.join(wl.dtypes)})")
        values = _values(f, given)
        names = list(values)
        for slices, hosts, dph in itertools.product(grid.slices, grid.hosts,
                                                    grid.devices_per_host):
            layout = Layout(slices * hosts, dph, grid.local_axes, slices)
            points = [Case(wl.name, str(wl.version), f.source, variant, dtype, layout,
                           tuple(zip(names, combo)), grid.settings)
                      for variant, dtype, combo in itertools.product(
                          variants, grid.dtypes, itertools.product(*values.values()))]
            for case in (c for point in points for c in wl.cases(point)):
                reason = wl.unsupported(case)
                if reason:  # e.g. pmap and a subset of the mesh axes: left out
                    skipped.setdefault(wl.name, reason)
                    continue
                wl.validate(case)
                cases.append(case)
    missing = [f.workload.name for f in found if not any(c.workload == f.workload.name
                                                          for c in cases)]
    if missing:
        why = skipped.get(missing[0], "")
        raise UsageError(f"workload {missing[0]}: no case of this grid can run"
                         + (f" ({why})" if why else ""))
    order = {f.workload.name: i for i, f in enumerate(found)}
    cases.sort(key=lambda c: (c.layout, order[c.workload]))
    return list({c.id: c for c in cases}.values())  # --hosts 2,2: each case once


def _one_source_per_name(found: Sequence[Found]) -> None:
    """A workload is its source: two different ones may not share a name (their cases,
    tables and comparisons would merge)."""
    first: dict[str, str] = {}
    for f in found:
        other = first.setdefault(f.workload.name, f.source)
        if other != f.source:
            raise UsageError(f"two selected workloads are named {f.workload.name!r}: {other} "
                             f"and {f.source}; rename one")


def expand_all(grids: Sequence[Grid]) -> list[Case]:
    """The cases of several grids (a suite file's sweeps) in layout order; a case two
    sweeps both ask for runs once."""
    seen: dict[str, Case] = {}
    for g in grids:
        for c in expand(g):
            seen.setdefault(c.id, c)
    cases = list(seen.values())
    cases.sort(key=lambda c: c.layout)
    return cases


def spec_of(grids: Sequence[Grid]) -> dict:
    """The manifest's record of what was asked: the grid, or every sweep's grid."""
    return grids[0].to_dict() if len(grids) == 1 else {"sweeps": [g.to_dict() for g in grids]}
