"""``podscale replay WORKLOAD --hosts H --devices-per-host D``: what share of a real step is
communication, which collectives, and what that becomes on a bigger pod.

1. The workload's one case runs as every case does (timed, checked) with ``hlo``: process 0
   saves the optimized HLO and its logical device order (``RUN/hlo``).
2. Its collectives are listed (``analysis/data/hlo.py``) and each distinct one (kind, dtype,
   bytes, groups) is replayed by the ``replay`` workload on the same layout, with the same
   measurement settings, in a run inside the first (``RUN/<stamp>-replay``); each is also
   measured in smaller groups at two sizes, for the scaling model's predictions.
3. The table (count x time per collective, their sum, the share of the step, predictions)
   is printed, written to ``RUN/replay.csv`` (every instruction: ``RUN/replay-inventory.csv``)
   and is a section of the run's report.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from podscale.core.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

    from podscale.core.case import Case, Settings
    from podscale.frontend.actions import Prepared


def replay_cases(run: Path, case: Case) -> tuple[list[Case], pd.DataFrame]:
    """The replay run's cases (every distinct collective, and its scaling cases) and the
    step's collective inventory."""
    return collective_cases(run, case.processes, case.devices_per_host,
                            () if case.layout.default_split else case.layout.local_axes,
                            replace(case.settings, traced_iters=0))


def collective_cases(run: Path, hosts: int, devices_per_host: int,
                     local_axes: tuple[tuple[str, int], ...], settings: Settings,
                     scaling: bool = True) -> tuple[list[Case], pd.DataFrame]:
    """A ``replay`` case per distinct collective saved under ``RUN/hlo`` on this layout
    (with ``scaling``: also in smaller groups and at a second size), and the inventory."""
    from podscale.analysis.verdicts.replay import load_inventory, scaling_params, specs
    from podscale.core.grid import Grid, expand

    inv = load_inventory(run)
    out: dict[str, Case] = {}
    for s in specs(inv) if len(inv) else []:
        for params in [s["params"], *(scaling_params(s) if scaling else [])]:
            grid = Grid(("replay",), hosts=(hosts,), devices_per_host=(devices_per_host,),
                        local_axes=local_axes, dtypes=(s["dtype"],), variants=("shard_map",),
                        params=tuple((k, (v,)) for k, v in params.items()),
                        settings=settings)
            for c in expand(grid):
                out.setdefault(c.id, c)
    return list(out.values()), inv


def render(res: dict) -> str:
    from podscale.analysis.units import bytes_h, cell, time_h
    from podscale.analysis.verdicts.replay import sentences

    t = res["collectives"]
    lines = ["# replay: each distinct collective of the step, replayed alone on the same "
             "layout (time: median over iterations of the max over processes)"]
    if len(t):
        lines.append(f"# {'collective':<22} {'kind':<18} {'dtype':<5} {'bytes/dev':>10} "
                     f"{'n':>4} {'groups':>6} {'count':>5} {'time':>10} {'count x time':>12}")
        for r in t.itertuples():
            lines.append(
                f"  {r.collective:<22} {r.kind:<18} {r.dtype:<5} {bytes_h(r.bytes):>10} "
                f"{r.participants:>4} {cell(getattr(r, 'groups', float('nan'))):>6} "
                f"{cell(r.count if r.count == r.count else float('nan')):>5} "
                f"{time_h(getattr(r, 'time_s', float('nan'))):>10} "
                f"{time_h(getattr(r, 'total_s', float('nan'))):>12}"
                + (f"  ({r.note})" if isinstance(r.note, str) and r.note else ""))
    else:
        lines.append("# the step has no collectives")
    lines += [f"# {s}" for s in sentences(res)]
    return "\n".join(lines)


def check_predict(predict: list[int]) -> None:
    if min(predict) < 2:
        raise UsageError(f"--predict takes participant counts >= 2 (a step's communication "
                         f"needs two), got {min(predict)}")


def replay(prepared: Prepared, out: Path, name: str | None, predict: list[int]) -> int:
    """Run the one case of ``prepared`` (its HLO saved), replay each collective of its
    program alone and in smaller groups, and predict the step's communication at
    ``predict`` participants."""
    from podscale.analysis import load_run
    from podscale.analysis.verdicts.replay import results
    from podscale.frontend.actions import show, write_report, wrong_results
    from podscale.frontend.tracing import trace

    check_predict(predict)
    cases = prepared.cases
    if len(cases) != 1:
        raise UsageError(f"podscale replay takes one case; this grid has {len(cases)}, "
                         f"differing in {_differing(cases)} (give one value of each)")
    (case,) = cases
    run = prepared.execute(out, name or f"replay-{case.workload}", hlo=True)
    step = load_run(run)
    if show(step):
        raise wrong_results(step)
    if case.settings.traced_iters:
        trace(run)
    todo, inv = replay_cases(run, case)
    if len(inv):
        inv.drop(columns=["group_list"]).to_csv(run / "replay-inventory.csv", index=False)
    if todo:
        rep = load_run(prepared.execute(run, "replay", todo, spec={"replay_of": run.name}))
        if show(rep):
            raise wrong_results(rep)
    res = results(run, predict)
    print(render(res))
    res["collectives"].to_csv(run / "replay.csv", index=False)
    print(f"# written: {run / 'replay.csv'}")
    write_report(run)
    print(f"# results: {run}")
    return 0


def _differing(cases: list) -> str:
    """What the cases of a grid differ in, as the options that choose it."""
    what = {"the workload": lambda c: c.workload, "--variants": lambda c: c.variant,
            "--dtypes": lambda c: c.dtype,
            "--hosts/--devices-per-host": lambda c: c.layout.key}
    out = [name for name, of in what.items() if len({of(c) for c in cases}) > 1]
    names = sorted({k for c in cases for k, _ in c.params})
    out += [f"-p {k}" if k != "size" else "--sizes" for k in names
            if len({dict(c.params).get(k) for c in cases}) > 1]
    return ", ".join(out) or "settings"
