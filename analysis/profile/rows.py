"""The profile record's rows as frames: one kind's rows of every process, the computations,
the calls on one clock, and each call with the program its computation last compiled."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd


def frame(per_process: list[tuple[int, list]], columns: list[str],
           convert: Callable[[int, dict], dict] | None = None) -> pd.DataFrame:
    rows = [{"process": p, **{c: r.get(c) for c in columns},
             **({k: v for k, v in convert(p, r).items() if k in columns} if convert else {})}
            for p, got in per_process for r in got]
    return pd.DataFrame(rows, columns=["process", *columns])


def computations(per_process: list[tuple[int, list]]) -> pd.DataFrame:
    return frame(per_process, ["id", "name", "wrapper"])


def calls(per_process: list[tuple[int, list]], comps: list[tuple[int, list]],
           seconds: Callable[[float, int], float]) -> pd.DataFrame:
    names = {(p, c["id"]): c["name"] for p, got in comps for c in got}
    rows = []
    for p, got in per_process:
        for cid, seq, d0, d1, ready in got:
            rows.append((p, cid, names.get((p, cid), f"#{cid}"), seq, seconds(d0, p),
                         seconds(d1, p), seconds(ready, p) if ready >= 0 else float("nan")))
    df = pd.DataFrame(rows, columns=["process", "computation", "name", "seq", "dispatch",
                                     "returned", "ready"])
    return df.sort_values(["process", "seq"], kind="stable").reset_index(drop=True)


def programs(calls: pd.DataFrame, compiled: pd.DataFrame) -> pd.DataFrame:
    """Each call with the program its computation last compiled, at or before it."""
    cols = ["program", "shapes", "peers", "flops", "bytes"]
    if compiled.empty or calls.empty:
        return calls.assign(**{c: None for c in cols})
    c = compiled.rename(columns={"id": "computation"})[["process", "computation", "seq",
                                                        *cols]]
    out = pd.merge_asof(calls.sort_values("seq"), c.sort_values("seq").astype({"seq": "int64"}),
                        on="seq", by=["process", "computation"], direction="backward")
    return out.sort_values(["process", "seq"], kind="stable").reset_index(drop=True)


#: a captured step's parts, summed over the programs it runs
_SUMMED = ("busy_us", "collective_us", "ops", "compute_us", "callback_us", "exposed_us",
           "hidden_us")


def step_work(rows: pd.DataFrame) -> pd.DataFrame:
    """The captured rows (one per program a captured step runs: a train step, and beside
    it a one-op all-gather, as MaxText runs) as one row per step of each process and
    window: its parts summed over its programs, its span from the first program's start
    to the last one's end, idle what the span holds beyond its work, ``module`` every
    program's name. A step of one program keeps its row as it is."""
    if rows.empty:
        return rows
    key = ["process", "first", "step"]
    sizes = rows.groupby(key, dropna=False)["step"].transform("size")
    alone, shared = rows[sizes == 1], rows[sizes > 1]
    if shared.empty:
        return rows
    merged = []
    for _, g in shared.groupby(key, dropna=False, sort=False):
        r = g.iloc[0].to_dict()
        r.update({k: g[k].sum(min_count=1) for k in _SUMMED if k in g})
        r["module"] = "+".join(dict.fromkeys(map(str, g["module"])))
        r["cut"], r["devices"] = bool(g["cut"].any()), g["devices"].max()
        if g["start_ns"].notna().all() and g["end_ns"].notna().all():
            r["span_us"] = (g["end_ns"].max() - g["start_ns"].min()) / 1e3
        work = sum(r[k] or 0 for k in ("compute_us", "callback_us", "exposed_us"))
        r["idle_us"] = max(float(r["span_us"]) - work, 0.0)
        merged.append(r)
    out = pd.concat([alone, pd.DataFrame(merged, columns=rows.columns)], ignore_index=True)
    return out.sort_values(key, kind="stable").reset_index(drop=True)
