"""Whether a profiled program's processes wait on each other: the step's programs (a
collective over devices of several processes, by its compiled program) and the first launch
at which processes launched different computations that may wait on peers (a desync,
:mod:`podscale.core.desync`)."""

from __future__ import annotations

import pandas as pd

from podscale.core import desync as _desync


def waits_on_peers(calls: pd.DataFrame, annotations: pd.DataFrame, step: str) -> bool | None:
    """Whether the step waits on other processes: a program it runs (the step's
    computation, or every call inside the program's ``step`` annotations) has a collective
    over devices of several processes, by its compiled program; None where unknown."""
    if "peers" not in calls:
        return None
    marks = annotations[annotations["name"] == step].sort_values("first")
    if len(marks):
        c = calls.sort_values("seq")
        m = marks[["process", "first", "end"]].astype({"first": "int64"})
        found = pd.merge_asof(c, m, left_on="seq", right_on="first", by="process")
        rows = found[found["seq"] < found["end"]]
    else:
        rows = calls[calls["name"] == step]
    flags = rows["peers"]
    if flags.eq(True).any():
        return True
    return False if len(flags) and flags.notna().all() else None


def desync(calls: pd.DataFrame) -> _desync.Desync | None:
    """The first launch number every process reached at which they launched different
    computations (the recorded calls, before any annotation merges them), one of which
    waits on other processes (a program known to wait on none, launched differently by
    each process, pairs no collective with the wrong peers: no desync)."""
    if calls.empty or calls["process"].nunique() < 2:
        return None
    program = calls["program"].fillna("") if "program" in calls else ""
    keyed = calls.assign(key=calls["name"] + "\0" + program)
    keys = keyed.pivot(index="seq", columns="process", values="key").dropna()
    split = (keys.ne(keys.iloc[:, 0], axis=0)).any(axis=1)
    if "peers" in keyed:
        waits = keyed["peers"].map(_may_wait).groupby(keyed["seq"]).any()
        split &= waits.reindex(split.index, fill_value=True)
    if not split.any():
        return None
    seq = int(split.idxmax())
    at = keyed[keyed["seq"] == seq]
    return _desync.at(seq, {int(r.process): (str(r.name), str(r.program or ""),
                                             str(r.shapes or ""))
                            for r in at.itertuples(index=False)})


def _may_wait(peers: object) -> bool:
    """Whether a launched program may wait on other processes (``peers`` True, or not
    known)."""
    import numpy as np

    return not (isinstance(peers, bool | np.bool_) and not peers)
