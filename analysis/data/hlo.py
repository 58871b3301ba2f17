"""The collectives of an optimized HLO module (``compiled.as_text()``), as an inventory.

Per collective instruction: its kind (all-reduce, all-gather, reduce-scatter, all-to-all,
collective-permute; the ``-start`` halves of asynchronous pairs count, their ``-done``
halves do not), element type, result shape(s), the bytes each device sends (nccl-tests'
send buffer: the operand), its groups as lists of logical device ids (every replica-group
form XLA prints: ``{{0,1},{2,3}}``, iota ``[2,2]<=[4]`` / ``[2,2]<=[2,2]T(1,0)``, and mesh
axes ``mesh['x'=4,'y'=2] {'x'}`` with sub-axes ``'x':(1)2`` and explicit ``device_ids``),
source-target pairs for permutes, the reduction (sum, max, min), the computation it is in
and how many times a step runs it (inside a ``while`` with a known trip count, that many
times; an unknown trip count is ``None``, not a guess). An instruction that looks like a
collective but cannot be read is listed with kind ``unknown`` and why — never dropped.
Pure text: no JAX.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

KINDS = {"all-reduce": "all_reduce", "all-gather": "all_gather",
         "reduce-scatter": "reduce_scatter", "all-to-all": "all_to_all",
         "collective-permute": "collective_permute"}
#: collectives podscale lists but cannot replay
OTHER = ("ragged-all-to-all", "collective-broadcast", "all-reduce-scatter", "send", "recv")
ITEMSIZE = {"f64": 8, "f32": 4, "bf16": 2, "f16": 2, "s64": 8, "u64": 8, "s32": 4, "u32": 4,
            "s16": 2, "u16": 2, "s8": 1, "u8": 1, "pred": 1, "f8e4m3fn": 1, "f8e5m2": 1,
            "c64": 8, "c128": 16}
DTYPE = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}
REDUCER = {"add": "sum", "maximum": "max", "minimum": "min", "multiply": "product",
           "and": "and", "or": "or"}


@dataclass
class Collective:
    name: str
    kind: str  # all_reduce, ..., or "unknown"
    opcode: str
    computation: str
    count: int | None  # times one step runs it; None: inside a loop of unknown trip count
    dtype: str = ""
    shapes: str = ""
    send_bytes: int = 0  # per device
    groups: list[list[int]] = field(default_factory=list)
    pairs: list[tuple[int, int]] = field(default_factory=list)
    op: str = ""  # the reduction of all-reduce / reduce-scatter
    reason: str = ""  # why it is unknown or not replayed

    @property
    def participants(self) -> int:
        return len(self.groups[0]) if self.groups else 0


def _balanced(text: str, start: int) -> int:
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
_ARRAY = re.compile(r"([a-z]\w*)\[([\d,]*)\]")


def parse_instruction(line: str) -> tuple[str, str, str, str] | None:
    """(name, shape, opcode, attributes) of an instruction line, or None."""
    m = _INSTR.match(line)
    if not m:
        return None
    rest = line[m.end():]
    end = _balanced(rest, 0) if rest.startswith("(") else rest.find(" ")
    if end < 0:
        return None
    shape, rest = rest[:end], rest[end:].lstrip()
    op = re.match(r"([a-z][\w\-]*)\(", rest)
    if not op:
        return None
    close = _balanced(rest, op.end() - 1)
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


def _mesh_groups(text: str) -> list[list[int]]:
    """``mesh['x'=4,'y'=2](, device_ids=(...))? {'x', 'y':(1)2}`` -> groups."""
    m = re.match(r"mesh\[([^\]]*)\](?:,\s*device_ids=\(([^)]*)\))?\s*\{([^}]*)\}", text)
    if not m:
        raise ValueError(f"unreadable mesh replica groups {text[:60]!r}")
    names: list[str] = []
    sizes: list[int] = []
    for part in m.group(1).split(","):
        name, _, size = part.partition("=")
        names.append(name.strip().strip("'\""))
        sizes.append(int(size))
    n = math.prod(sizes)
    ids = np.array([int(x) for x in re.findall(r"\d+", m.group(2))]) if m.group(2) else \
        np.arange(n)
    refs = []  # (dimension, pre-size, size) in the order given
    for ref in (r.strip() for r in m.group(3).split(",") if r.strip()):
        sub = re.match(r"'?([^':]+)'?(?::\((\d+)\)(\d+))?$", ref)
        if not sub:
            raise ValueError(f"unreadable mesh axis {ref!r}")
        d = names.index(sub.group(1))
        refs.append((d, int(sub.group(2)), int(sub.group(3))) if sub.group(2) else
                    (d, 1, sizes[d]))
    dims: list[int] = []
    axis_of: dict[tuple[int, int, int], int] = {}
    for d, full in enumerate(sizes):  # split each dimension around its sub-axes
        prefix = 1
        for r in sorted((r for r in refs if r[0] == d), key=lambda r: r[1]):
            if r[1] > prefix:
                dims.append(r[1] // prefix)
                prefix = r[1]
            axis_of[r] = len(dims)
            dims.append(r[2])
            prefix *= r[2]
        if prefix < full or not any(r[0] == d for r in refs):
            dims.append(full // prefix if any(r[0] == d for r in refs) else full)
    agg = [axis_of[r] for r in refs]
    order = [i for i in range(len(dims)) if i not in agg] + agg
    size = int(math.prod(dims[i] for i in agg))
    return ids.reshape(dims).transpose(order).reshape(-1, size).tolist()


def replica_groups(text: str, devices: int) -> list[list[int]]:
    """Groups of logical ids from a ``replica_groups=`` value (``{}``: all devices)."""
    text = text.strip()
    if text.startswith("mesh"):
        return _mesh_groups(text)
    if text.startswith("["):
        m = re.match(r"\[([\d,]+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?", text)
        if not m:
            raise ValueError(f"unreadable iota replica groups {text[:60]!r}")
        shape = [int(x) for x in m.group(1).split(",")]
        dims = [int(x) for x in m.group(2).split(",")]
        ids = np.arange(math.prod(dims)).reshape(dims)
        if m.group(3):
            ids = ids.transpose([int(x) for x in m.group(3).split(",")])
        return ids.reshape(shape[0], -1).tolist()
    groups = [[int(x) for x in g.split(",") if x.strip()]
              for g in re.findall(r"\{([\d,\s]*)\}", text[1:-1] if text.startswith("{") else "")]
    groups = [g for g in groups if g]
    if not groups:
        return [list(range(devices))]
    return groups


def _attr(attrs: str, key: str) -> str | None:
    at = attrs.find(f"{key}=")
    if at < 0:
        return None
    start = at + len(key) + 1
    if attrs[start] in "{[(":
        end = _balanced(attrs, start)
        if attrs[start] == "[" and attrs[end:end + 2] == "<=":  # iota: [2,2]<=[4]T(1,0)
            end = _balanced(attrs, end + 2)
            if attrs[end:end + 2] == "T(":
                end = _balanced(attrs, end + 1)
        return attrs[start:end]
    if attrs.startswith("mesh", start):
        end = _balanced(attrs, attrs.index("{", start))
        return attrs[start:end]
    plain = re.match(r"[^,\s]*", attrs[start:])
    return plain.group(0) if plain else ""


def _arrays(shape: str) -> list[tuple[str, int]]:
    """(element type, elements) of every array in a (tuple) shape."""
    return [(t, math.prod(int(d) for d in dims.split(",") if d) if dims else 1)
            for t, dims in _ARRAY.findall(shape)]


def _reducer(comps: dict[str, list[str]], name: str | None) -> str:
    for line in comps.get(name or "", []):
        if line.lstrip().startswith("ROOT"):
            parsed = parse_instruction(line)
            return REDUCER.get(parsed[2], parsed[2]) if parsed else "?"
    return "?"


def _send_bytes(kind: str, opcode: str, arrays: list[tuple[str, int]], n: int) -> int:
    if opcode.endswith("-start") and kind == "all_gather":
        arrays = arrays[len(arrays) // 2:]  # (operands..., results...)
    elif opcode.endswith("-start") and kind == "collective_permute":
        arrays = arrays[:1]  # (operand, result, contexts...)
    result = sum(ITEMSIZE.get(t, 4) * e for t, e in arrays)
    if kind == "all_gather":
        return result // max(n, 1)
    if kind == "reduce_scatter":
        return result * n
    return result


def inventory(text: str, devices: int) -> list[Collective]:
    """Every collective of the module; ``devices``: the module's logical device count."""
    comps, entry = computations(text)
    times = counts(comps, entry)
    out = []
    for comp, name, shape, opcode, attrs in instructions(comps):
        base = opcode.removesuffix("-start")
        if opcode.endswith("-done") or (base not in KINDS and base not in OTHER):
            continue
        c = Collective(name, KINDS.get(base, "unknown"), opcode, comp, times.get(comp),
                       shapes=shape)
        arrays = _arrays(shape)
        types = {t for t, _ in arrays}
        c.dtype = types.pop() if len(types) == 1 else "mixed"
        if base in OTHER:
            c.reason = f"{opcode}: not replayed (podscale has no workload for it)"
            out.append(c)
            continue
        try:
            if c.kind == "collective_permute":
                pairs = _attr(attrs, "source_target_pairs") or "{}"
                c.pairs = [(int(a), int(b)) for a, b in
                           re.findall(r"\{(\d+),(\d+)\}", pairs)]
                c.groups = [list(range(devices))]
            else:
                c.groups = replica_groups(_attr(attrs, "replica_groups") or "{}", devices)
            if c.kind in ("all_reduce", "reduce_scatter"):
                to_apply = _attr(attrs, "to_apply")
                c.op = _reducer(comps, to_apply.lstrip("%") if to_apply else None)
            c.send_bytes = _send_bytes(c.kind, opcode, arrays, c.participants)
            if not arrays or len({len(g) for g in c.groups}) != 1:
                raise ValueError("no array shape or groups of different sizes")
        except (ValueError, IndexError, AttributeError) as exc:
            c.kind, c.reason = "unknown", f"{opcode}: {exc}"
        out.append(c)
    return out
