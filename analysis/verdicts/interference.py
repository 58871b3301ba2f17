"""A profiled program's collectives in its step against alone: the interference factor.

``podscale profile --replay`` saves the captured step's optimized program (process 0, at
its first capture) and replays each distinct collective in it alone on the same layout
(``RUN/<stamp>-replay``, the ``replay`` workload: same kind, dtype, bytes and groups).
Per collective, the **in-step time** is its duration on the process that arrived last in
each captured instance (it waited for nobody: :func:`podscale.analysis.profile.inside.
collective_table`'s own time), its median over the instances; the **alone time** is the
replay's (median over iterations of the slowest process); the **factor** is in-step over
alone, once per replay round (each a fresh launch) for its spread. Above 1 the step slows
the collective down (contention with the compute it overlaps, or another algorithm in the
step's context); below 1 it runs faster than alone. The in-step bus bandwidth is the
replay's (nccl-tests' factors, the same bytes; GB/s) scaled by alone over in-step time.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from podscale.analysis.profile.inside import last_arrivals
from podscale.analysis.profile.summary import ProfileSummary
from podscale.analysis.units import gbps_h, time_h
from podscale.analysis.verdicts.replay import load_inventory, replay_run, replayed, specs

#: a factor whose every round is at least this is a Finding
SLOWER = 1.5
COLUMNS = ["collective", "kind", "dtype", "bytes", "participants", "per_step", "in_step",
           "alone", "factor", "factor_lo", "factor_hi", "rounds", "busbw_alone",
           "busbw_in_step"]


def own_times(s: ProfileSummary) -> pd.DataFrame:
    """Per captured collective instance (step, op, k): its duration on the process that
    arrived last (:func:`~podscale.analysis.profile.inside.last_arrivals`; with one
    process, its only one)."""
    c = last_arrivals(s.waits) if len(s.waits) else s.profile.collectives
    return c[["step", "op", "k", "dur"]].reset_index(drop=True)


def interference(run_dir: Path | str, s: ProfileSummary) -> pd.DataFrame:
    """One row per distinct replayed collective of the step (``COLUMNS``), in the order of
    the step's program; empty without a replay run."""
    rep = replay_run(Path(run_dir))
    inv = load_inventory(Path(run_dir))
    if rep is None or inv.empty:
        return pd.DataFrame(columns=COLUMNS)
    from podscale.analysis import load_run

    alone_run = load_run(rep)
    t2 = alone_run.summary()
    rm = alone_run.round_medians().set_index(["case_id", "round"])["median"]
    own = own_times(s)
    steps = max(1, own["step"].nunique())
    rows = []
    for spec in specs(inv):
        hit = replayed(t2, spec["params"]) if len(t2) else None
        mine = own[own["op"].isin(spec["names"])]
        in_step = float(mine["dur"].median()) if len(mine) else float("nan")
        alone = float(hit["time_s"]) if hit is not None else float("nan")
        per_round = (in_step / rm.xs(hit["case_id"], level="case_id")) if hit is not None \
            else pd.Series(dtype=float)
        bw = float(hit["busbw"]) if hit is not None else float("nan")
        rows.append({"collective": spec["params"]["of"], "kind": spec["params"]["kind"],
                     "dtype": spec["hlo_dtype"], "bytes": spec["bytes"],
                     "participants": spec["n"], "per_step": len(mine) / steps,
                     "in_step": in_step, "alone": alone, "factor": in_step / alone,
                     "factor_lo": float(per_round.min()), "factor_hi": float(per_round.max()),
                     "rounds": int(per_round.notna().sum()), "busbw_alone": bw,
                     "busbw_in_step": bw * alone / in_step})
    return pd.DataFrame(rows, columns=COLUMNS)


def sentences(t: pd.DataFrame) -> list[str]:
    """The collectives the step slows down by ``SLOWER`` or more in every round."""
    out = []
    for r in t.itertuples():
        if r.rounds and r.factor_lo >= SLOWER:
            out.append(f"in the captured steps {r.collective} ({r.kind}, {r.bytes} B per "
                       f"device over {r.participants}) takes {r.factor:.1f}x its time alone "
                       f"({time_h(r.in_step)} against {time_h(r.alone)}; {r.factor_lo:.1f}x "
                       f"to {r.factor_hi:.1f}x over {r.rounds} replay rounds): the step "
                       "slows it down")
    return out


def render(t: pd.DataFrame) -> str:
    """The table for the terminal (seconds as people read them)."""
    if t.empty:
        return ""
    lines = ["# in the step vs alone: each collective's time in the captured steps (on the "
             "process that arrived last) against the replay of it alone",
             f"# {'collective':<24} {'kind':<18} {'bytes':>9} {'n':>3} {'/step':>5} "
             f"{'in step':>9} {'alone':>9} {'factor':>7} {'rounds':>12} {'busbw in step':>13}"]
    for r in t.itertuples():
        spread = f"{r.factor_lo:.2f}-{r.factor_hi:.2f}" if r.rounds else "-"
        lines.append(f"  {r.collective[:24]:<24} {r.kind:<18} {r.bytes:>9} "
                     f"{r.participants:>3} {r.per_step:>5.1f} {time_h(r.in_step):>9} "
                     f"{time_h(r.alone):>9} {r.factor:>7.2f} {spread:>12} "
                     f"{gbps_h(r.busbw_in_step):>13}")
    return "\n".join(lines)
