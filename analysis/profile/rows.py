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
