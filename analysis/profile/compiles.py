"""Every compile of a profiled program, as a table: by computation, of what kind, when,
how long, and what changed in its arguments.

JAX reports each compile as up to three duration events (``jax.monitoring``): the trace,
the lowering to MLIR and the backend compile. A compile is the events of one function up
to and including its backend compile, within one recorded call (``seq``) or outside any:

- **ahead of time**: inside ``Lowered.compile`` (``jax.jit(f).lower(...).compile()``);
- **first call** / **re-compile**: inside a recorded call, its computation's first call
  or a later one (a new shape, a changed static argument);
- **eager**: outside any call and not ahead of time (an operation run op by op).

Events with no backend compile (a program answered from a cache) are no compile: the
table has no 0 µs rows. A computation compiled both ahead of time and again at its first
call is a **double compile** (MaxText compiles ``train_step`` ahead of time for memory
statistics, then again when it calls the jitted function).
"""

from __future__ import annotations

import re

import pandas as pd

from podscale.analysis.profile.load import Profile
from podscale.analysis.profile.steps import steps_at

COLUMNS = ["process", "name", "kind", "step", "seconds", "backend_s", "shapes", "changed"]


def _base(fun: object) -> str:
    """``jit(train_step)`` -> ``train_step``."""
    text = str(fun or "?")
    m = re.fullmatch(r"(?:jit|pmap|pjit|xla_pmap)\((.*)\)", text)
    return m[1] if m else text


def table(profile: Profile, led: pd.DataFrame) -> pd.DataFrame:
    """One row per compile (:data:`COLUMNS`): ``step`` the step in progress or last
    finished on that process (None before the first), ``changed`` the arguments that
    differ from the computation's previous compile."""
    ev = profile.compiles
    if ev.empty:
        return pd.DataFrame(columns=COLUMNS)
    names = profile.calls.set_index(["process", "seq"])["name"] if len(profile.calls) \
        else pd.Series(dtype=object)
    comp = profile.compiled
    rows = []
    for p, mine in ev.sort_values("end", kind="stable").groupby("process"):
        open_: dict[tuple, float] = {}
        for r in mine.itertuples(index=False):
            seq = None if pd.isna(r.seq) else int(r.seq)
            key = (_base(r.fun), seq)
            open_[key] = open_.get(key, 0.0) + float(r.seconds)
            if r.event != "backend_compile_duration":
                continue
            total = open_.pop(key)
            name = names.get((p, seq), key[0]) if seq is not None else key[0]
            kind = "ahead of time" if bool(getattr(r, "ahead", False)) else \
                "eager" if seq is None else "call"
            rows.append({"process": int(p), "name": name, "kind": kind, "seq": seq,
                         "seconds": total, "backend_s": float(r.seconds)})
    out = pd.DataFrame(rows)
    if out.empty:
        return pd.DataFrame(columns=COLUMNS)
    out["step"] = steps_at(led, out["process"], out["seq"])
    out[["kind", "shapes", "changed"]] = [_what(comp, p, s, k) for p, s, k in
                                          zip(out["process"], out["seq"], out["kind"])]
    return out[COLUMNS]


def _what(comp: pd.DataFrame, process: int, seq: int | None,
          kind: str) -> tuple[str, str, str]:
    """The kind (a call's: first call or re-compile), the shapes, and what changed from
    the computation's previous compile on that process."""
    if seq is None or comp.empty:
        return kind, "", ""
    mine = comp[(comp["process"] == process)]
    at = mine[mine["seq"] == seq]
    if at.empty:
        return ("re-compile" if kind == "call" else kind), "", ""
    row = at.iloc[0]
    kind = "first call" if int(row["call"]) == 0 else "re-compile"
    before = mine[(mine["id"] == row["id"]) & (mine["seq"] < seq)]
    if before.empty or not isinstance(row.get("leaves"), list):
        return kind, str(row["shapes"]), ""
    was, now = before.iloc[-1].get("leaves"), row["leaves"]
    return kind, str(row["shapes"]), changed(was if isinstance(was, list) else [], now)


def changed(was: list[str], now: list[str]) -> str:
    """What differs between two compiles' argument leaves: ``argument 2: float32[128, 32]
    -> float32[64, 32]`` (the first three), or the count where their number changed."""
    if len(was) != len(now):
        return f"{len(was)} -> {len(now)} arguments"
    diffs = [f"argument {i}: {a} -> {b}" for i, (a, b) in enumerate(zip(was, now)) if a != b]
    if not diffs:
        return "same shapes (a static argument, or a sharding)"
    return "; ".join(diffs[:3]) + (f"; {len(diffs) - 3} more" if len(diffs) > 3 else "")


def doubles(t: pd.DataFrame) -> pd.DataFrame:
    """Computations compiled both ahead of time and at their first call, per process:
    process, name, ahead_s, first_s."""
    ahead = t[t["kind"] == "ahead of time"].groupby(["process", "name"])["seconds"].sum()
    first = t[t["kind"] == "first call"].groupby(["process", "name"])["seconds"].sum()
    both = pd.concat([ahead.rename("ahead_s"), first.rename("first_s")], axis=1).dropna()
    return both.reset_index()


def findings(t: pd.DataFrame, cache: pd.DataFrame, total: int) -> list[str]:
    """Double compiles, and the persistent cache's hits and misses."""
    out = []
    for name, g in doubles(t).groupby("name"):
        r = g.iloc[0]
        who = "every process" if len(g) == total and total > 1 else \
            "process " + ", ".join(map(str, g["process"]))
        out.append(f"{name} was compiled twice on {who}: ahead of time "
                   f"({_s(r['ahead_s'])}) and again at its first call ({_s(r['first_s'])}; "
                   f"process {int(r['process'])}): compile the jitted function once, or call "
                   "the compiled one")
    if len(cache):
        hits = int(cache["hit"].astype(bool).sum())
        out.append(f"persistent compilation cache: {hits} hit(s), {len(cache) - hits} "
                   "miss(es) over all processes")
    return out


def _s(seconds: float) -> str:
    from podscale.analysis.units import time_h

    return time_h(float(seconds))
