"""A compiled program's fingerprint: the inventory of the collectives in its optimized HLO
(kind, operands' dtypes and shapes, bytes, groups, async start/done, how many per step),
with the XLA flags and versions it was compiled with. Small enough to keep with every
case; ``podscale compare``/``ab`` say what changed in it next to the time verdict.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from typing import Any

#: communicating HLO instructions (an async pair counts once, at its ``-start``): the
#: result shape(s) and the kind
OP = re.compile(r"^\s*(?:ROOT\s+)?\S+\s*=\s*(.+?)\s(all-reduce|all-gather|reduce-scatter|"
                r"all-to-all|collective-permute|ragged-all-to-all|collective-broadcast)"
                r"(-start)?\(", re.M)
SHAPE = re.compile(r"\b(pred|bf16|[sufc]\d+|f8e\w+)\[([\d,]*)\]")
GROUP_KEYS = ("replica_groups=", "source_target_pairs=")
OPEN, CLOSE = "([{", ")]}"


def _itemsize(dtype: str) -> int:
    if dtype in ("pred",) or dtype.startswith("f8"):
        return 1
    return max(int(re.sub(r"\D", "", dtype) or 8) // 8, 1)


def _attr(line: str, key: str) -> str:
    """The value of ``key=`` in an HLO instruction line, up to the next top-level comma."""
    at = line.find(key)
    if at < 0:
        return ""
    depth, quoted, i = 0, False, at + len(key)
    while i < len(line):
        c = line[i]
        quoted ^= c == "'"
        if not quoted:
            depth += (c in OPEN) - (c in CLOSE)
            if depth < 0 or (depth == 0 and c == ","):
                break
        i += 1
    return line[at + len(key):i].strip()


def inventory(hlo_text: str) -> list[dict[str, Any]]:
    """Each distinct collective of the module, in order of first appearance: kind,
    ``async`` (a start/done pair), its result shapes (a combined collective has several)
    and each one's bytes (``shape_bytes``; ``bytes`` their sum), its groups, and ``count``
    (instructions alike per step; one inside a loop counts once)."""
    found: dict[str, dict[str, Any]] = {}
    for m in OP.finditer(hlo_text):
        end = hlo_text.find("\n", m.end())
        line = hlo_text[m.end():end if end >= 0 else None]
        shapes = SHAPE.findall(m.group(1))
        groups = next((v for v in (_attr(line, k) for k in GROUP_KEYS) if v), "")
        each = [_itemsize(d) * math.prod(int(n) for n in s.split(",") if n) for d, s in shapes]
        entry = {"kind": m.group(2), "async": bool(m.group(3)),
                 "shapes": [f"{d}[{s}]" for d, s in shapes], "shape_bytes": each,
                 "bytes": sum(each), "groups": groups}
        key = json.dumps(entry, sort_keys=True)
        found.setdefault(key, {**entry, "count": 0})["count"] += 1
    return list(found.values())


def program(hlo_text: str, compiled: Any = None) -> dict[str, Any]:
    """The case's program record: its identity (:func:`podscale.core.hloidentity.identity`:
    fingerprint, signature, ops by kind, precision), XLA's ``cost`` (FLOPs, bytes
    accessed) and ``memory`` (arguments, outputs, temporaries) per device where the
    ``compiled`` program says them, ``collectives`` (:func:`inventory`), ``xla_flags``,
    ``versions`` and ``hash`` (of all of it)."""
    import jax
    import jaxlib

    from podscale.core.hloidentity import identity

    out: dict[str, Any] = {
        **identity(hlo_text), **_analyses(compiled),
        "collectives": inventory(hlo_text),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "libtpu_init_args": os.environ.get("LIBTPU_INIT_ARGS", ""),
        "versions": {"jax": jax.__version__, "jaxlib": jaxlib.__version__}}
    out["hash"] = hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest()[:16]
    return out


def _analyses(compiled: Any) -> dict[str, Any]:
    """XLA's cost and memory analyses of a compiled program ({} where it gives none)."""
    out: dict[str, Any] = {}
    try:
        cost = compiled.cost_analysis()
        cost = cost[0] if isinstance(cost, list) else cost
        out["cost"] = {"flops": float(cost.get("flops", 0.0)),
                       "bytes": float(cost.get("bytes accessed", 0.0))}
    except Exception:  # noqa: BLE001 - none on this platform, or no compiled program
        pass
    try:
        m = compiled.memory_analysis()
        out["memory"] = {k: int(getattr(m, f"{k}_size_in_bytes"))
                         for k in ("argument", "output", "temp")}
    except Exception:  # noqa: BLE001
        pass
    return out


def collectives_hash(prog: dict[str, Any]) -> str:
    """What every process of a job must agree on: the collectives alone (kinds, shapes,
    groups), as a short hash and their count."""
    coll = prog["collectives"]
    digest = hashlib.sha256(json.dumps(coll, sort_keys=True).encode()).hexdigest()[:16]
    return f"{digest}:{sum(c['count'] for c in coll)}"
