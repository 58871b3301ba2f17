"""What the compiler did differently: each case's compiled-program record (by the worker,
:mod:`podscale.worker.program`) described in a line, and two runs' programs of the same
case compared: the same only where their fingerprints are equal; else what changed —
"parameters f32[1024] → f32[1044]", "FLOPs 2,048 → 2,088 (+2.0%)", "ops: fusion 1 → 2",
"precision ...", "temp memory ...", "all-reduce ×1 of 6,148 B → ×3 of 4,096 + 2,048 + 4 B",
"all-gather became async", "XLA_FLAGS ... → ...".
"""

from __future__ import annotations

from collections import defaultdict

import pandas as pd


def _by_kind(prog: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for c in prog.get("collectives", []):
        out[c["kind"]].append(c)
    return out


def _count_bytes(entries: list[dict]) -> str:
    """"×3 of 4,096 + 2,048 + 4 B": instructions per step and each one's bytes; an
    instruction that combines several operands lists each one's."""
    parts, combined = [], 0
    for e in entries:
        sizes = e.get("shape_bytes", [e["bytes"]])  # as the worker measured each operand
        each = " + ".join(f"{b:,}" for b in sizes)
        combined = max(combined, len(sizes))
        parts += [each] * e["count"]
    text = f"×{len(parts)} of " + " + ".join(parts) + " B"
    return text + (f" ({combined} operands combined in one)" if combined > 1 else "")


def describe(prog: dict | None) -> str:
    """One line: every kind of collective with its count and bytes per step."""
    if not isinstance(prog, dict):
        return "no program recorded (pmap's first call, or an older run)"
    kinds = _by_kind(prog)
    if not kinds:
        return "no collectives"
    parts = []
    for kind, entries in kinds.items():
        asyn = " async" if all(e["async"] for e in entries) else ""
        parts.append(f"{kind}{asyn} {_count_bytes(entries)}")
    return "; ".join(parts)


def _pct(x: float, y: float) -> str:
    return f" ({100 * (y / x - 1):+.1f}%)" if x else ""


def identity_changes(a: dict, b: dict) -> list[str]:
    """What differs in two programs' identities (:mod:`podscale.core.hloidentity`) and
    XLA's analyses: signature, FLOPs and bytes, ops by kind, precision, memory."""
    out = []
    for key, what in (("parameters", "parameters"), ("results", "results")):
        if a.get(key) != b.get(key):
            was, now = (", ".join(x) if isinstance(x, list) else str(x)
                        for x in (a.get(key), b.get(key)))
            out.append(f"{what} {was} → {now}")
    ca, cb = a.get("cost") or {}, b.get("cost") or {}
    for key, unit in (("flops", "FLOPs"), ("bytes", "bytes accessed")):
        x, y = ca.get(key), cb.get(key)
        if x is not None and y is not None and x != y:
            out.append(f"{unit} {x:,.0f} → {y:,.0f}{_pct(x, y)}")
    oa, ob = a.get("ops") or {}, b.get("ops") or {}
    moved = [f"{k} {oa.get(k, 0)} → {ob.get(k, 0)}" for k in dict.fromkeys([*oa, *ob])
             if oa.get(k, 0) != ob.get(k, 0)]
    if moved:
        out.append("ops: " + ", ".join(moved))
    if a.get("precision", []) != b.get("precision", []):
        out.append(f"precision {a.get('precision') or 'default'} → "
                   f"{b.get('precision') or 'default'}")
    ma, mb = a.get("memory") or {}, b.get("memory") or {}
    out += [f"{k} memory {ma[k]:,} → {mb[k]:,} B" for k in ("argument", "output", "temp")
            if k in ma and k in mb and ma[k] != mb[k]]
    return out


def changes(a: dict | None, b: dict | None) -> list[str]:
    """What differs between two programs of one case, as phrases (empty: the same). Where
    both say their fingerprint, the same program is one of equal fingerprints."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return [] if a is b else ["program recorded in one run only"]
    if "fingerprint" in a and "fingerprint" in b:
        if a["fingerprint"] == b["fingerprint"]:
            return []
    elif a.get("hash") == b.get("hash"):
        return []
    out = []
    ka, kb = _by_kind(a), _by_kind(b)
    for kind in dict.fromkeys([*ka, *kb]):
        ea, eb = ka.get(kind, []), kb.get(kind, [])
        if not ea or not eb:
            out.append(f"{kind} {'appeared' if eb else 'disappeared'}: "
                       f"{_count_bytes(eb or ea)}")
            continue
        if _count_bytes(ea) != _count_bytes(eb):
            out.append(f"{kind} {_count_bytes(ea)} → {_count_bytes(eb)}")
        sa, sb = any(e["async"] for e in ea), any(e["async"] for e in eb)
        if sa != sb:
            out.append(f"{kind} became {'async' if sb else 'synchronous'}")
        if {e["groups"] for e in ea} != {e["groups"] for e in eb}:
            out.append(f"{kind} groups changed: {', '.join(sorted({e['groups'] for e in ea}))}"
                       f" → {', '.join(sorted({e['groups'] for e in eb}))}")
        if sorted(s for e in ea for s in e["shapes"]) != sorted(
                s for e in eb for s in e["shapes"]) and _count_bytes(ea) == _count_bytes(eb):
            out.append(f"{kind} shapes changed")
    out += identity_changes(a, b)
    for key in ("xla_flags", "libtpu_init_args"):
        if a.get(key, "") != b.get(key, ""):
            out.append(f"{key.upper()} {a.get(key, '')!r} → {b.get(key, '')!r}")
    va, vb = a.get("versions", {}), b.get("versions", {})
    out += [f"{k} {va.get(k)} → {vb.get(k)}" for k in sorted({*va, *vb}) if va.get(k) != vb.get(k)]
    return out or ["compiled program changed (same signature, ops by kind and collectives: "
                   "fusion or layout decisions)"]


def program_changes(summary_a: pd.DataFrame, summary_b: pd.DataFrame) -> pd.DataFrame:
    """Per case both runs have: what changed in its compiled program ("" where nothing)."""
    pa = summary_a.set_index("case_id").get("program", pd.Series(dtype=object))
    pb = summary_b.set_index("case_id").get("program", pd.Series(dtype=object))
    rows = [{"case_id": c, "program_change": "; ".join(changes(pa.get(c), pb.get(c)))}
            for c in sorted(set(pa.index) & set(pb.index))]
    return pd.DataFrame(rows, columns=["case_id", "program_change"])
