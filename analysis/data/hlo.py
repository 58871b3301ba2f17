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
from dataclasses import dataclass, field

import numpy as np

from podscale.core.hlotext import (
    balanced,
    computations,
    counts,
    instructions,
    parse_instruction,
)

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


_ARRAY = re.compile(r"([a-z]\w*)\[([\d,]*)\]")


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
        end = balanced(attrs, start)
        if attrs[start] == "[" and attrs[end:end + 2] == "<=":  # iota: [2,2]<=[4]T(1,0)
            end = balanced(attrs, end + 2)
            if attrs[end:end + 2] == "T(":
                end = balanced(attrs, end + 1)
        return attrs[start:end]
    if attrs.startswith("mesh", start):
        end = balanced(attrs, attrs.index("{", start))
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
