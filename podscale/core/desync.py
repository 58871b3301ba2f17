"""Where processes' launch sequences part: a desync.

A multi-controller program is correct only if every process launches the same compiled
programs in the same order; one that launches another (an extra eval step, a branch on its
own data) leaves its collectives matched with the wrong peers: a hang, or silently wrong
results where the mismatched collectives happen to agree in size. podscale numbers each
process's launches (every top-level ``jit``, ``pmap`` or AOT call it records, counted from
0: the ledger's ``seq``) and compares the processes launch by launch: the first launch
number at which processes launched different computations is the desync, named with who
launched what. A launch may carry its compiled program (a fingerprint of its optimized HLO
and the arguments' shapes): processes that launched one computation compiled differently
(process 1 on float32[16] where process 0 on float32[8]) are a desync too, named with
both programs' shapes. A launch number only some processes reached (the others stopped, or their
window of recent launches no longer holds it) is not compared.

Used by the hang roll-call (on each process's ring of recent launches) and by the analysis
of a finished run (on its whole ledger)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Desync:
    """At ``launch``, each computation with the processes that launched it there."""

    launch: int
    groups: tuple[tuple[str, tuple[int, ...]], ...]

    def __post_init__(self) -> None:
        if len(self.groups) < 2:
            raise ValueError("a desync needs two computations at one launch")

    @property
    def odd(self) -> tuple[int, ...]:
        """The processes outside the largest group (ties: the one with the lowest process)."""
        return tuple(sorted(p for _, ps in self.groups[1:] for p in ps))

    def text(self) -> str:
        """``desync at launch #41: process 1 launched eval_step where processes 0, 2, 3
        launched local_step``."""
        (common, where), *rest = self.groups
        odd = ", ".join(f"{_who(ps)} launched {name}" for name, ps in rest)
        return f"desync at launch #{self.launch}: {odd} where {_who(where)} launched {common}"


def _who(ps: tuple[int, ...]) -> str:
    return ("process " if len(ps) == 1 else "processes ") + ", ".join(map(str, ps))


#: what a process launched: a computation's name, or (name, program fingerprint, shapes)
Launched = str | tuple[str, str, str]


def at(launch: int, names: Mapping[int, Launched]) -> Desync | None:
    """The desync at one launch number, given what each process launched there (programs
    compared only where every process's is known)."""
    full = {p: (n, "", "") if isinstance(n, str) else tuple(n) for p, n in names.items()}
    if not all(prog for _, prog, _ in full.values()):
        full = {p: (n[0], "", "") for p, n in full.items()}
    if len(set(full.values())) < 2:
        return None
    by: dict[tuple, list[int]] = {}
    for p in sorted(full):
        by.setdefault(full[p], []).append(p)
    sizes = Counter({n: len(ps) for n, ps in by.items()})
    order = sorted(by, key=lambda n: (-sizes[n], by[n][0]))
    one_name = len({n for n, _, _ in by}) == 1

    def shown(key: tuple) -> str:
        return f"{key[0]} ({key[2] or 'program ' + key[1]})" if one_name else key[0]
    return Desync(launch, tuple((shown(n), tuple(by[n])) for n in order))


def first(launches: Mapping[int, Iterable[Sequence]]) -> Desync | None:
    """The first desync among processes' windows of launches: process -> (launch number,
    computation[, program, shapes]). Only launch numbers every window holds are
    compared."""
    by_launch: dict[int, dict[int, Launched]] = {}
    for p, items in launches.items():
        for launch, *what in items:
            by_launch.setdefault(int(launch), {})[p] = \
                what[0] if len(what) == 1 else (str(what[0]), str(what[1]), str(what[2]))
    everyone = len(launches)
    for launch in sorted(by_launch):
        names = by_launch[launch]
        if len(names) == everyone and (found := at(launch, names)) is not None:
            return found
    return None
