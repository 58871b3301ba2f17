"""Report sections that stand on their own: pair matrices, links sweeps, the wall-time
ledger, the compiled programs and a collective replay, each left out where the run has
nothing for it; and the document they are written into (HTML and Markdown at once)."""

from __future__ import annotations

import base64
import html
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import pandas as pd

from podscale.analysis.render import plots
from podscale.analysis.render.formats import markdown_table, readable
from podscale.analysis.units import cell, time_h

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from podscale.analysis.render.analysed import Analysis


#: an extra report section: called with the report's document, it adds to it
Section: TypeAlias = "Callable[[Doc], None]"


class Doc:
    """Collects HTML and Markdown side by side; every string is escaped once, here."""

    def __init__(self, title: str) -> None:
        self.title, self.md = title, [f"# {title}", ""]
        self.html: list[str] = []

    def heading(self, text: str, note: str = "") -> None:
        self.html.append(f"<h2>{html.escape(text)}</h2>")
        self.md += [f"## {text}", ""]
        if note:
            self.html.append(f"<p class='note'>{html.escape(note)}</p>")
            self.md += [note, ""]

    def table(self, df: pd.DataFrame, md: bool = True, collapsed: str = "") -> None:
        """A table; ``collapsed``: folded away under that summary line (HTML)."""
        df = df.map(readable)
        body = df.to_html(index=False, escape=True, border=0, classes="tbl")
        self.html.append(f"<details><summary>{html.escape(collapsed)}</summary>{body}"
                         "</details>" if collapsed else body)
        if md:
            self.md += [markdown_table(df), ""]

    def bullets(self, items: list[str]) -> None:
        self.html.append("<ul class='findings'>" + "".join(
            f"<li>{html.escape(i)}</li>" for i in items) + "</ul>")
        self.md += [f"- {i}" for i in items] + [""]

    def figure(self, fig: Figure | None, alt: str) -> None:
        if fig is None:
            return
        data = base64.b64encode(plots.png(fig)).decode()
        self.html.append(f"<figure><img alt='{html.escape(alt, quote=True)}' "
                         f"src='data:image/png;base64,{data}'/></figure>")

    def render(self) -> str:
        style = ("body{font-family:sans-serif;margin:2em;max-width:1400px}"
                 ".tbl{border-collapse:collapse;font-size:12px}.tbl td,.tbl th{padding:2px 8px;"
                 "border-bottom:1px solid #ddd;text-align:right}.note{color:#555}"
                 "img{max-width:100%}.findings li{margin:4px 0;font-size:15px}"
                 "summary{cursor:pointer;color:#245}")
        return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>"
                f"{html.escape(self.title)}</title><style>{style}</style></head><body>"
                f"<h1>{html.escape(self.title)}</h1>" + "\n".join(self.html) + "</body></html>")


def _slices(key: dict) -> int:
    """The slice count of a matrix's layout (1 where its summary has none)."""
    slices = key.get("slices", 1)
    return 1 if pd.isna(slices) else int(slices)


def _per_slice(key: dict) -> int:
    """Processes per slice of a multi-slice matrix's layout; 0 for one slice."""
    return int(key["hosts"]) // _slices(key) if _slices(key) > 1 else 0


def _on(key: dict) -> str:
    layout = f"{key['hosts']}x{key['devices_per_host']}"
    per = _per_slice(key)
    return f"{layout} ({_slices(key)} slices of {per})" if per else layout


def _edges(key: dict) -> str:
    return "; the blue lines are the slice boundaries (a pair across them crosses the " \
        "DCN)" if _per_slice(key) else ""


def pair_sections(doc: Doc, a: Analysis) -> None:
    """Each pair matrix as a heatmap and a table, then the pair outliers."""
    from podscale.analysis.models.pairs import matrices, pair_table

    for key, m in matrices(a.summary, a.samples):
        title = f"{key['workload']} {key.get('mode', '')} size {key.get('size')} on {_on(key)}"
        doc.heading(f"Pair matrix: {title}", "time per transfer (us): median over "
                    "iterations of the max over the two processes; rows: source, columns: "
                    "destination" + _edges(key))
        doc.figure(plots.pair_heatmap(m, title, _per_slice(key)), f"pair matrix {title}")
        doc.table(pair_table(m), collapsed="the matrix")
    if not a.named.empty:
        doc.heading("Pair outliers", "per matrix: the process whose pairs are slowest, named "
                                     "when its median is >= 1.3x the other processes'")
        doc.table(a.named)
    link_sections(doc, a)


def link_sections(doc: Doc, a: Analysis) -> None:
    """Each links sweep: the matrix as a heatmap (up to 64 processes), the slowest
    processes and links."""
    from podscale.analysis.models.links import outliers

    for key, m, own in a.links:
        title = f"{key['workload']} size {key['size']} on {_on(key)}"
        doc.heading(f"Links: {title}", "every ordered pair from P-1 ring shifts; a link "
                    "i -> i+k: the faster end's median at shift k (us); a process or link "
                    ">= 1.3x the median is named" + _edges(key))
        if len(m) <= 64:
            doc.figure(plots.pair_heatmap(m * 1e6, title, _per_slice(key)), f"links {title}")
        procs, links = outliers(m, own)
        doc.table(procs.head(8).map(cell))
        doc.table(links.map(cell))


def ledger_section(doc: Doc, ledger: pd.DataFrame) -> None:
    """Where each launch's wall time went, per phase, its slowest process named."""
    from podscale.analysis.models import ledger as wall

    per = wall.launches(ledger)
    if per.empty:
        return
    doc.heading("Where the wall time went", "per launch, each phase's slowest process "
                "(podscale/startup/ledger.py): the interpreter starting, imports, joining the "
                "job (waiting there for the slowest process), then per case preparing "
                "inputs and reference, compiling, warm-up, barriers, timed iterations, "
                "checks, writing records")
    doc.figure(wall.stacked(ledger), "wall time per launch and phase")
    table = per.assign(slowest=per["max_s"].map(time_h), median=per["median_s"].map(time_h))
    doc.table(table[["launch", "phase", "slowest", "process", "median"]],
              collapsed=f"{len(per)} row(s)")
    mem = wall.memory(ledger)
    if not mem.empty:
        doc.table(mem.round(1), collapsed=f"podscale's own footprint: per launch, the "
                  f"process with the largest peak resident memory and the phase that raised "
                  f"it most (MB), {len(mem)} row(s)")


def program_section(doc: Doc, summary: pd.DataFrame) -> None:
    """Each case's compiled collectives (the inventory the worker recorded)."""
    from podscale.analysis.verdicts.programs import describe

    if "program" not in summary:
        return
    progs = summary[summary["program"].map(lambda p: isinstance(p, dict))]
    if progs.empty:
        return
    doc.heading("Compiled programs", "per case, the collectives of its optimized HLO (kind, "
                "count per step, bytes; podscale/worker/program.py) and a hash of them "
                "with the XLA flags and versions; podscale compare and ab name what "
                "changes")
    doc.table(pd.DataFrame({"case": progs["case_id"],
                            "collectives per step": progs["program"].map(describe),
                            "hash": progs["program"].map(lambda p: p.get("hash", ""))}),
              collapsed=f"{len(progs)} case(s)")


def replay_section(doc: Doc, run_dir: Path) -> None:
    """The report's section on a run made by ``podscale replay``."""
    from podscale.analysis.units import bytes_h, cell, time_h
    from podscale.analysis.verdicts.replay import results, sentences

    res = results(run_dir)
    doc.heading("Collective replay", "each distinct collective of the step's optimized HLO "
                "(analysis/data/hlo.py), replayed alone with its bytes, dtype and groups on "
                "the same layout (analysis/verdicts/replay.py); predictions are model output "
                "at the same bytes per device (analysis/models/scalemodel.py)")
    doc.bullets(sentences(res))
    t = res["collectives"]
    if len(t):
        shown = pd.DataFrame({
            "collective": t["collective"], "kind": t["kind"], "dtype": t["dtype"],
            "bytes/device": t["bytes"].map(bytes_h), "n": t["participants"],
            "count/step": t["count"].map(cell),
            "time": t.get("time_s", pd.Series(float("nan"), index=t.index)).map(time_h),
            "count x time": t.get("total_s", pd.Series(float("nan"), index=t.index)).map(time_h),
            "note": t["note"].fillna("")})
        doc.table(shown)


def scaling_section(doc: Doc, scaled: dict) -> None:
    """The scaling models' figure, held-out table and the sweeps that predict nothing."""
    from podscale.analysis.render import modelplots
    from podscale.analysis.render.formats import heldout_table

    if scaled["models"].empty:
        return
    doc.heading("Scaling with participants: models and predictions",
                "per collective sweep, t(S, n) = a0 + a1 g(n) + B(S, n) (c0 + c1 h(n)) over "
                "every size and participant count n (B: bus bytes, nccl-tests' algebra; g, h: "
                "none, log2, n-1 or (n-1)^2, chosen by AICc; analysis/models/scalefit.py); "
                "held out: the largest n predicted from the smaller ones; beyond what ran: "
                "model output, from 3 or more n only, with 95% prediction intervals that "
                "redo the choice of g and h")
    doc.figure(modelplots.scaling_predictions(scaled), "scaling predictions")
    if not scaled["heldout"].empty:
        doc.table(heldout_table(scaled["heldout"]))
    if not scaled["notes"].empty:
        doc.table(scaled["notes"].map(cell), collapsed=f"{len(scaled['notes'])} sweep(s) "
                  "with no prediction (fewer than 3 n), and what to run")


def scaling_tables(doc: Doc, scaled: dict) -> None:
    """The model output and the fitted models, in full."""
    from podscale.analysis.render.formats import predictions_table

    if scaled["models"].empty:
        return
    pred = scaled["predictions"]
    doc.heading("Scaling models", "model output, labelled so, and the fitted models")
    if len(pred):
        doc.table(predictions_table(pred), collapsed=f"model output at n = "
                  f"{', '.join(map(str, sorted(pred.n.unique())))}")
    doc.table(scaled["models"].map(cell), collapsed="fitted models")
