"""``podscale replay``'s analysis: what share of a step is communication, and at pod scale?

From a run made with ``hlo`` (each case's optimized HLO under ``RUN/hlo``, with the logical
device order), the inventory of its collectives (:mod:`analysis.data.hlo`) in global device
indices (process-major), the distinct ones to replay (kind, dtype, bytes, groups), and —
after the replay run (``RUN/<stamp>-replay``) — per collective: count per step x its
replayed time, their sum, and its share of the measured step. The replay run also measures
each collective in smaller groups (every (n/g)-th member of its groups: g = 2, 4, ...) at
two sizes, so ``analysis/models/scalemodel.py`` predicts it at larger n; the step's predicted
communication is the sum over its collectives at the same bytes per device (model output).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from podscale.analysis.data.hlo import DTYPE, ITEMSIZE, inventory
from podscale.analysis.data.traces import read_steps
from podscale.core import runfolder as rf
from podscale.core.errors import UsageError

REPLAYABLE = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all",
              "collective_permute")


def _global(groups: list[list[int]], order: list[int]) -> list[list[int]]:
    return [[order[i] for i in g] for g in groups]


def load_inventory(run_dir: Path) -> pd.DataFrame:
    """One row per collective instruction of every case saved under ``RUN/hlo``."""
    rows = []
    for text_path in sorted(Path(run_dir).glob(rf.hlo_glob())):
        info = json.loads(Path(str(text_path).removesuffix(".hlo.txt") + ".json").read_text())
        case_devices = info["case_devices"]
        logical = info.get("logical_devices")
        if logical is None:
            raise UsageError(f"{text_path}: the program's device order is unknown (this "
                             "JAX did not say it); its replica groups cannot be replayed")
        order = [case_devices.index(d) for d in logical]  # logical id -> global index
        for c in inventory(text_path.read_text(), len(order)):
            groups = _global(c.groups, order) if c.groups else []
            pairs = [(order[s], order[t]) for s, t in c.pairs]
            rows.append({"case_id": info["case_id"], "name": c.name, "kind": c.kind,
                         "opcode": c.opcode, "computation": c.computation, "count": c.count,
                         "dtype": c.dtype, "shapes": c.shapes, "send_bytes": c.send_bytes,
                         "participants": c.participants, "groups": len(groups),
                         "group_list": groups, "pairs": pairs, "op": c.op,
                         "reason": c.reason})
    return pd.DataFrame(rows)


def _groups_text(groups: Iterable[Iterable[int]]) -> str:
    return "|".join(".".join(map(str, g)) for g in groups)


def specs(inv: pd.DataFrame) -> list[dict]:
    """The distinct replayable collectives: replay parameters, dtype and count per step."""
    out: dict[tuple, dict] = {}
    for r in inv[inv.kind.isin(REPLAYABLE) & (inv.send_bytes > 0)].itertuples():
        dtype = DTYPE.get(r.dtype, "float32")
        n = r.participants
        unit = 4 if dtype == "float32" else 2
        chunk = unit * (n if r.kind in ("reduce_scatter", "all_to_all") else 1)
        size = -(-int(r.send_bytes) // chunk) * chunk  # whole elements (and chunks)
        ranks = {d: i for i, d in enumerate(r.group_list[0])}
        pairs = "|".join(f"{ranks[s]}>{ranks[t]}" for s, t in r.pairs)
        params = {"kind": r.kind, "size": size, "groups": _groups_text(r.group_list),
                  "op": r.op if r.op in ("sum", "max", "min") else "sum", "pairs": pairs}
        key = (r.case_id, dtype, *params.values())
        if key in out:
            seen = out[key]
            seen["count"] = None if seen["count"] is None or pd.isna(r.count) else \
                seen["count"] + int(r.count)
            seen["names"].append(r.name)
            continue
        out[key] = {"case_id": r.case_id, "dtype": dtype, "params": params,
                    "count": None if pd.isna(r.count) else int(r.count), "names": [r.name],
                    "hlo_dtype": r.dtype, "bytes": int(r.send_bytes), "n": n,
                    # replayed as other elements than the module's (s32 as float32, ...)
                    # or with its bytes rounded up to whole elements or chunks
                    "rounded": size != int(r.send_bytes) or r.dtype not in DTYPE
                    or ITEMSIZE.get(r.dtype) != unit}
    for s in out.values():
        s["params"]["of"] = s["names"][0] + (f"+{len(s['names']) - 1}" if len(s["names"]) > 1
                                             else "")
    return list(out.values())


def scaling_params(spec: dict) -> list[dict]:
    """The same collective in smaller groups (every (n/g)-th member of each group, so a
    group that spans hosts still does) for g = 2, 4, ... < n, and every group size at a
    second size, for the scaling model. Permutes are not scaled (their pairs are fixed)."""
    p = spec["params"]
    if p["kind"] == "collective_permute":
        return []
    groups = [[int(x) for x in g.split(".")] for g in p["groups"].split("|")]
    n = len(groups[0])
    unit = 4 if spec["dtype"] == "float32" else 2
    other = p["size"] // 8 if p["size"] // 8 >= unit * n * 2 else p["size"] * 8
    out = []
    g = 2
    sizes_of = [(n, groups)]
    while g < n:
        if n % g == 0:
            sub = [grp[i::n // g] for grp in groups for i in range(n // g)]
            sizes_of.append((g, sub))
        g *= 2
    chunked = p["kind"] in ("reduce_scatter", "all_to_all")
    for g, sub in sizes_of:
        for size in (p["size"], other):
            size = -(-size // (unit * (g if chunked else 1))) * unit * (g if chunked else 1)
            if g == n and size == p["size"]:
                continue  # the replay itself
            out.append({**p, "groups": _groups_text(sub), "size": size})
    return out


UNSTABLE_CV = 0.1  # a step varying more between rounds makes its share uncertain


def replay_run(run_dir: Path) -> Path | None:
    """The replay run made inside ``run_dir`` (the newest), if any."""
    found = sorted(p.parent for p in Path(run_dir).glob("*-replay/run.json"))
    return found[-1] if found else None


def replayed(table: pd.DataFrame, params: dict) -> pd.Series | None:
    """The replay run's summary row of the case with these replay parameters, if any."""
    rows = table
    for key in ("of", "groups", "size", "kind", "pairs"):
        rows = rows[rows[key].astype(str) == str(params[key])]
    return rows.iloc[0] if len(rows) else None


def _replayed_row(s: dict, t2: pd.DataFrame | None, preds: pd.DataFrame | None,
                  predict_n: Sequence[int]) -> dict:
    """One distinct collective of the step: its replayed time, count and predictions."""
    hit = replayed(t2, s["params"]) if t2 is not None else None
    t = float(hit.time_s) if hit is not None else float("nan")
    count = s["count"]
    row = {"case_id": s["case_id"], "collective": s["params"]["of"],
           "kind": s["params"]["kind"], "dtype": s["hlo_dtype"], "bytes": s["bytes"],
           "participants": s["n"], "groups": s["params"]["groups"].count("|") + 1,
           "count": count, "time_s": t, "total_s": t * (count or 1),
           "busbw": float(hit.busbw) if hit is not None else float("nan"),
           "replay_case": hit.case_id if hit is not None else None,
           "replayed_as": f"{s['dtype']} x {s['params']['size']} B" +
                          (" (rounded)" if s["rounded"] else ""), "note": ""}
    if count is None:
        row["note"] = "inside a loop of unknown trip count: counted once"
    for n in predict_n:
        p = preds[(preds["of"] == s["params"]["of"]) & (preds["n"] == n) &
                  (preds["size"] == s["params"]["size"])] if preds is not None and len(
            preds) and "of" in preds else pd.DataFrame()
        for col, src in (("pred", "predicted_us"), ("lo", "lo_us"), ("hi", "hi_us")):
            row[f"{col}_{n}_s"] = float(p[src].iloc[0]) * 1e-6 * (count or 1) \
                if len(p) else float("nan")
    return row


def results(run_dir: Path, predict_n: Sequence[int] = (64, 256)) -> dict:
    """``collectives`` (one row per distinct collective and per one not replayed),
    ``steps`` (per case: step time, communication sum and share) and ``predictions``
    (per case and n: the step's predicted communication, model output)."""
    from podscale.analysis import load_run
    from podscale.analysis.models.scalemodel import scaling_models

    inv = load_inventory(run_dir)
    run = load_run(run_dir)
    step = run.summary().set_index("case_id")["time_s"] if len(run.cases) else pd.Series()
    rep = replay_run(run_dir)
    t2 = preds = rm2 = None
    if rep is not None:
        replayed = load_run(rep)
        if len(replayed.cases):
            table2 = replayed.table()
            t2 = table2.frame
            rm2 = replayed.round_medians().set_index(["case_id", "round"])["median"]
            preds = scaling_models(replayed.samples, table2, predict_n=predict_n,
                                   rm=replayed.round_medians())["predictions"]
    rows = [_replayed_row(s, t2, preds, predict_n) for s in (specs(inv) if len(inv) else [])]
    for r in inv[~inv.kind.isin(REPLAYABLE)].itertuples() if len(inv) else ():
        rows.append({"case_id": r.case_id, "collective": r.name, "kind": r.kind,
                     "dtype": r.dtype, "bytes": r.send_bytes, "participants": r.participants,
                     "count": r.count, "note": f"not replayed: {r.reason}"})
    table = pd.DataFrame(rows)
    traced = Path(run_dir) / rf.TRACES / "steps.csv"
    seen = read_steps(traced).groupby("case_id")[["collective_us", "hidden_us"]].median() \
        if traced.exists() else pd.DataFrame(columns=["collective_us", "hidden_us"])
    steps = []
    rm1 = run.round_medians().set_index(["case_id", "round"])["median"] \
        if len(run.cases) else pd.Series(dtype=float)
    for case_id, t in step.items():
        part = table[table.case_id == case_id] if len(table) else table
        comm = float(part["total_s"].sum()) if len(part) and "total_s" in part else 0.0
        trace = seen.loc[case_id] if case_id in seen.index else None
        steps.append({"case_id": case_id, "step_s": float(t), "collectives_s": comm,
                      "share": comm / t if t > 0 else float("nan"), "overlaps": comm > t,
                      **round_shares(rm1.xs(case_id, level="case_id")
                                     if case_id in rm1.index.get_level_values(0)
                                     else pd.Series(dtype=float), part, rm2),
                      "trace_collective_s": trace.collective_us * 1e-6 if trace is not None
                      else float("nan"),
                      "trace_hidden_s": trace.hidden_us * 1e-6 if trace is not None
                      else float("nan"),
                      **{f"{c}_{n}_s": float(part[f"{c}_{n}_s"].sum(min_count=1))
                         if len(part) and f"{c}_{n}_s" in part else float("nan")
                         for n in predict_n for c in ("pred", "lo", "hi")}})
    return {"collectives": table, "steps": pd.DataFrame(steps), "predict_n": tuple(predict_n)}


def round_shares(step_rounds: pd.Series, part: pd.DataFrame, rm2: pd.Series | None) -> dict:
    """The share of the step per round (round r of the step beside round r of the replay:
    each a separate launch), its range, and the step's own spread between rounds."""
    out = {"share_lo": float("nan"), "share_hi": float("nan"), "share_rounds": 0,
           "step_cv": float("nan")}
    if len(step_rounds) > 1:
        out["step_cv"] = float(step_rounds.std() / step_rounds.mean())
    if rm2 is None or not len(part) or "replay_case" not in part or \
            part["replay_case"].isna().any():
        return out
    shares = []
    counts = part["count"].fillna(1).to_numpy(float)
    for r, t in step_rounds.items():
        keys = [(c, r) for c in part["replay_case"]]
        if t > 0 and all(k in rm2.index for k in keys):
            shares.append(float((rm2.loc[keys].to_numpy(float) * counts).sum()) / t)
    if shares:
        out.update(share_lo=min(shares), share_hi=max(shares), share_rounds=len(shares))
    return out


def sentences(res: dict) -> list[str]:
    """What the replay says, per step."""
    from podscale.analysis.units import time_h

    out = []
    for s in res["steps"].itertuples():
        line = (f"{s.case_id}: replayed collectives {time_h(s.collectives_s)} per step = "
                f"{s.share:.0%} of the measured step ({time_h(s.step_s)})")
        if s.share_rounds > 1:
            line += (f"; {s.share_lo:.0%} to {s.share_hi:.0%} over {s.share_rounds} rounds "
                     "(round r of the step beside round r of the replay)")
        if s.step_cv > UNSTABLE_CV:
            line += (f". WARNING: the step itself varies {s.step_cv:.0%} between rounds, so "
                     "its share is uncertain; measure with more --rounds or on a quieter "
                     "machine")
        if s.overlaps:
            line += ("; more than the step itself: the step overlaps its collectives with "
                     "compute (or runs them faster than alone)")
        out.append(line)
        if s.trace_collective_s == s.trace_collective_s:
            out.append(f"{s.case_id}: in the profiler trace, collectives take "
                       f"{time_h(s.trace_collective_s)} of a step, "
                       f"{time_h(s.trace_hidden_s)} of it hidden under other ops")
        missing = [n for n in res["predict_n"] if getattr(s, f"pred_{n}_s") !=
                   getattr(s, f"pred_{n}_s")]
        if missing:
            out.append(f"{s.case_id}: no prediction at n={', '.join(map(str, missing))}: a "
                       "scaling model needs each replayed collective at 3 or more group "
                       "sizes, which this layout's devices did not give every one of them")
        for n in res["predict_n"]:
            pred = getattr(s, f"pred_{n}_s")
            if pred == pred:
                out.append(f"{s.case_id}: at n={n}, communication per step predicted "
                           f"{time_h(pred)} (95% {time_h(getattr(s, f'lo_{n}_s'))} to "
                           f"{time_h(getattr(s, f'hi_{n}_s'))}; model output, same bytes "
                           "per device)")
    return out
