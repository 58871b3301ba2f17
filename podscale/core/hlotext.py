"""An optimized HLO module's text (``compiled.as_text()``) as structure: its computations,
their instructions as (name, shape, opcode, attributes), and how many times one run of the
entry computation runs each (a ``while`` body its known trip count, else ``None``). Pure
text: no JAX, nothing beyond the standard library. The collective inventory
(:mod:`podscale.analysis.data.hlo`) and the FLOPs a program runs (:mod:`.hloflops`) read
modules through it."""

from __future__ import annotations

import re
from collections.abc import Iterator


def balanced(text: str, start: int) -> int:
    """Index just past the bracket group opening at ``text[start]``."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = []
    for i in range(start, len(text)):
        c = text[i]
        if c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
    raise ValueError("unbalanced brackets")


_HEAD = re.compile(r"^\s*(ENTRY\s+)?%?([\w.\-]+)\s*(\(.*\))?\s*->.*\{\s*$")
_INSTR = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+)\s*=\s*")


def parse_instruction(line: str) -> tuple[str, str, str, str] | None:
    """(name, shape, opcode, attributes) of an instruction line, or None."""
    m = _INSTR.match(line)
    if not m:
        return None
    rest = line[m.end():]
    end = balanced(rest, 0) if rest.startswith("(") else rest.find(" ")
    if end < 0:
        return None
    shape, rest = rest[:end], rest[end:].lstrip()
    op = re.match(r"([a-z][\w\-]*)\(", rest)
    if not op:
        return None
    close = balanced(rest, op.end() - 1)
    return m.group(2), shape, op.group(1), rest[close:]


def computations(text: str) -> tuple[dict[str, list[str]], str]:
    """Instruction lines per computation, and the name of the entry computation."""
    comps: dict[str, list[str]] = {}
    entry, current = "", None
    for line in text.splitlines():
        head = _HEAD.match(line)
        if head and "=" not in line.split("(")[0]:
            current = head.group(2)
            comps[current] = []
            entry = current if head.group(1) else entry
        elif line.strip() == "}":
            current = None
        elif current is not None and line.strip():
            comps[current].append(line)
    return comps, entry


def instructions(comps: dict[str, list[str]]) -> Iterator[tuple[str, str, str, str, str]]:
    """(computation, name, shape, opcode, attributes) of every instruction."""
    for comp, lines in comps.items():
        for line in lines:
            parsed = parse_instruction(line)
            if parsed is not None:
                yield (comp, *parsed)


_CALLS = re.compile(r"\b(body|condition|to_apply|calls|true_computation|false_computation)="
                    r"%?([\w.\-]+)")
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")
_TRIP = re.compile(r'"known_trip_count":\{"n":"(\d+)"')


def counts(comps: dict[str, list[str]], entry: str) -> dict[str, int | None]:
    """How many times one run of the entry computation runs each computation (None:
    inside a while loop whose trip count the module does not state)."""
    callers: dict[str, list[tuple[str, int | None]]] = {}
    for comp, _, _, opcode, attrs in instructions(comps):
        trip = _TRIP.search(attrs)
        for role, callee in _CALLS.findall(attrs):
            times = (int(trip.group(1)) if trip else None) if opcode == "while" and \
                role in ("body", "condition") else 1
            callers.setdefault(callee, []).append((comp, times))
        for group in _BRANCHES.findall(attrs):
            for callee in re.findall(r"%?([\w.\-]+)", group):
                callers.setdefault(callee, []).append((comp, 1))
    memo: dict[str, int | None] = {entry: 1}

    def count(comp: str, seen: frozenset = frozenset()) -> int | None:
        if comp in memo:
            return memo[comp]
        total: int | None = 0
        for caller, times in callers.get(comp, []):
            if caller in seen:
                continue
            c = count(caller, seen | {comp})
            total = None if total is None or c is None or times is None else total + c * times
        memo[comp] = total
        return total

    return {c: count(c) for c in comps}


#: the HLO text's debug sections: the Python stack each op came from, which differs by
#: process (process 0's call path is podscale's own: it keeps the manifest)
_SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def without_metadata(text: str) -> str:
    """An HLO module's text less what is not the program: its debug sections and each
    instruction's ``metadata={...}`` (op names and source lines)."""
    kept, skipping = [], False
    for line in text.splitlines():
        if line in _SECTIONS:
            skipping = True
        elif skipping and not line.strip():
            skipping = False
        elif not skipping:
            kept.append(re.sub(r",? metadata=\{[^}]*\}", "", line))
    return "\n".join(kept)
