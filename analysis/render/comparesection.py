"""The report's comparison section: each ``podscale compare`` or ``ab`` of this run as B
(its ``compare-<A>.json``): the case verdicts, what changed in the compiled programs, and
the ops that explain a change, with their intervals (:mod:`podscale.analysis.verdicts.opdiff`)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from podscale.analysis.render.sections import Doc
from podscale.analysis.units import time_h


def _signed(us: float) -> str:
    return ("+" if us >= 0 else "-") + time_h(abs(us) / 1e6)


def compare_section(doc: Doc, run_dir: Path) -> None:
    """One sub-section per comparison written beside this run (none: nothing)."""
    for path in sorted(run_dir.glob("compare-*.json")):
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if found.get("schema") != "podscale.compare/1":
            continue
        cases = pd.DataFrame(found["cases"])
        counts = cases["verdict"].value_counts() if len(cases) else pd.Series(dtype=int)
        doc.heading(f"Compared with {Path(found['a']).name}",
                    f"this run as B; threshold {found['threshold']:.0%}, "
                    f"{counts.get('slower', 0)} slower, {counts.get('faster', 0)} faster, "
                    f"{counts.get('~', 0)} unchanged, {counts.get('noisy', 0)} noisy "
                    f"({path.name})")
        if len(cases):
            doc.table(pd.DataFrame({
                "case": cases["case_id"], "A": cases["time_a_us"].map(lambda v: time_h(v / 1e6)),
                "B": cases["time_b_us"].map(lambda v: time_h(v / 1e6)),
                "B/A": cases["ratio"].map("{:.3f}".format),
                "95% CI": [f"{lo:.3f}-{hi:.3f}" if lo == lo else "N/A"
                           for lo, hi in zip(cases["ci_lo"], cases["ci_hi"])],
                "verdict": cases["verdict"],
                "program": cases.get("program_change", pd.Series("", index=cases.index))}),
                collapsed=f"{len(cases)} case(s)")
        _ops(doc, found)


def _ops(doc: Doc, found: dict) -> None:
    if not found.get("ops_held"):
        doc.bullets(["ops: A or B holds no op times (the device pass records them)"])
        return
    ops = pd.DataFrame(found["ops"])
    moved = ops[ops["verdict"].isin(["slower", "faster"])] if len(ops) else ops
    if moved.empty:
        doc.bullets([f"ops: none moved ({len(ops)} compared; judged as the cases are)"])
        return
    doc.table(pd.DataFrame({
        "case": moved["case_id"],
        "op": [a if a == b else f"{a} (B: {b})" for a, b in zip(moved["op"], moved["op_b"])],
        "status": moved["status"], "change": moved["delta_us"].map(_signed),
        "95% CI": [f"{_signed(lo)}..{_signed(hi)}" for lo, hi in
                   zip(moved["delta_lo"], moved["delta_hi"])],
        "% of the case": moved["pct_of_case"].map(lambda v: f"{100 * v:+.1f}%"),
        "share of its change": moved["share"].map(
            lambda v: "N/A" if v != v else f"{100 * v:.0f}%")}),
        collapsed=f"the ops that moved: {len(moved)}")
