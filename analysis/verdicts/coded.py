"""The Findings with a stable code each, a severity, the numbers behind them where the
finding has them, and the next command to run: what ``podscale digest`` gives an agent or
a script (the report shows their text, :func:`findings`). Codes never change
meaning; a new kind of finding gets a new code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from podscale.analysis.units import sig, time_h
from podscale.analysis.verdicts import findings as f

if TYPE_CHECKING:
    from podscale.analysis.models.fits import Fitted

#: code -> (severity, the next command: RUN is the run's directory)
CODES = {
    "wrong-results": ("error", "podscale show RUN  # then the case's reproduce command"),
    "unchecked": ("warning", "podscale show RUN"),
    "lowered-precision": ("info", "podscale run ... -p precision=highest"),
    "ceiling": ("info", "podscale report RUN  # the Ceilings table"),
    "slices": ("info", "podscale report RUN  # busbw per collective and mesh axes"),
    "onchip": ("warning", "podscale run stream --sizes 4x the on-chip memory or more"),
    "timing": ("info", "podscale report RUN  # timing methods"),
    "fit": ("warning", "podscale fit RUN"),
    "scaling-efficiency": ("info", "podscale report RUN  # scaling efficiency"),
    "slow-process-pairs": ("warning", "podscale run links --hosts N  # every link"),
    "scaling-model": ("info", "podscale report RUN  # scaling with participants"),
    "slowest-process": ("warning", "podscale report RUN  # per-process skew"),
    "spread": ("info", "podscale report RUN  # per-process skew"),
    "compile": ("info", "podscale report RUN  # compile times"),
    "noisy": ("warning", "podscale run ... --rounds 5  # more launches decide them"),
}


@dataclass(frozen=True)
class Finding:
    """One finding: its code (:data:`CODES`), severity, text, numbers and next command."""

    code: str
    text: str
    numbers: dict[str, float | int | str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown finding code {self.code!r}")

    @property
    def severity(self) -> str:
        return CODES[self.code][0]

    def next_command(self, run: str) -> str:
        return CODES[self.code][1].replace("RUN", run)


def _tagged(code: str, texts: list[str]) -> list[Finding]:
    return [Finding(code, t) for t in texts]


def _scaling_numbers(scaled: dict, text: str) -> dict[str, float | int | str]:
    """The numbers behind a scaling-model finding, from the models it states."""
    held = scaled.get("heldout", pd.DataFrame())
    if text.startswith("held-out:") and len(held):
        return {"inside": int(held["within_interval"].sum()), "of": len(held),
                "median_abs_error": float(held["error"].abs().median())}
    notes = scaled.get("notes", pd.DataFrame())
    if text.startswith("no prediction") and len(notes):
        return {"sweeps": len(notes)}
    pred = scaled.get("predictions", pd.DataFrame())
    if text.startswith("model output") and len(pred):
        top = pred[pred["n"] == pred["n"].max()].sort_values("predicted_us").iloc[-1]
        return {"n": int(top["n"]), "size": int(top["size"]),
                "predicted_s": float(top["predicted_us"]) / 1e6,
                "lo_s": float(top["lo_us"]) / 1e6, "hi_s": float(top["hi_us"]) / 1e6}
    return {}


def _checks(summary: pd.DataFrame) -> list[Finding]:
    out = []
    wrong = summary[summary["wrong"] > 0]
    if len(wrong):
        out.append(Finding("wrong-results", f"WRONG RESULTS in {len(wrong)} case(s): "
                           f"{f._names(wrong)}; {int(wrong['wrong'].sum())} output "
                           "element(s) outside the bound",
                           {"cases": len(wrong), "elements": int(wrong["wrong"].sum())}))
    if "unchecked" in summary and (summary["unchecked"] > 0).any():
        un = summary[summary["unchecked"] > 0]
        out.append(Finding("unchecked", f"{int(un['unchecked'].sum())} output element(s) in "
                           f"{len(un)} case(s) were not verified (rounding bound too loose "
                           f"to catch a zero): {f._names(un)}",
                           {"cases": len(un), "elements": int(un["unchecked"].sum())}))
    if "lowered" in summary and (summary["lowered"] > 0).any():
        low = summary[summary["lowered"] > 0]
        out.append(Finding("lowered-precision", f"lowered precision: "
                           f"{int(low['lowered'].sum())} checked output element(s) in "
                           f"{len(low)} case(s) are the product of float32 inputs rounded to "
                           f"bfloat16 or TF32, so their figures are that precision's: "
                           f"{f._names(low)} (a workload's precision=highest, where it has "
                           "one, asks for float32)", {"cases": len(low)}))
    return out


def _later(summary: pd.DataFrame, scaling: pd.DataFrame, outliers: pd.DataFrame
           ) -> list[Finding]:
    out = []
    if not scaling.empty:
        top = scaling[scaling["hosts"] == scaling["hosts"].max()]
        for kind, g in top.groupby("kind"):
            lo = g.loc[g["efficiency"].idxmin()]
            out.append(Finding("scaling-efficiency", f"{kind} scaling at {int(lo.hosts)} "
                               f"hosts: efficiency median {sig(g['efficiency'].median())} "
                               f"(lowest {sig(lo.efficiency)}: {lo.workload} {lo.variant} "
                               f"size {lo['size']})",
                               {"hosts": int(lo.hosts), "median": float(g["efficiency"]
                                                                        .median()),
                                "lowest": float(lo.efficiency)}))
    if not outliers.empty and outliers["outlier"].notna().any():
        o = outliers.dropna(subset=["outlier"]).sort_values("ratio").iloc[-1]
        out.append(Finding("slow-process-pairs", f"slow process in the pair matrices: process "
                           f"{int(o.outlier)} ({o.ratio:.2f}x the others' median pair time, "
                           f"{o.workload})", {"process": int(o.outlier),
                                              "ratio": float(o.ratio)}))
    return out


def _costs(summary: pd.DataFrame) -> list[Finding]:
    out = []
    if "compile_s" in summary and summary["compile_s"].notna().any():
        c = summary.loc[summary["compile_s"].idxmax()]
        out.append(Finding("compile", f"compile: median {time_h(summary['compile_s'].median())}"
                           f", largest {time_h(c.compile_s)} ({f._case(c)})",
                           {"median_s": float(summary["compile_s"].median()),
                            "largest_s": float(c.compile_s)}))
    if "round_cv" in summary:
        noisy = summary[summary["round_cv"] > f.NOISY_CV].sort_values("round_cv",
                                                                      ascending=False)
        if len(noisy):
            out.append(Finding("noisy", f"{len(noisy)} of {len(summary)} cases are noisy "
                               f"(their rounds' medians spread more than {f.NOISY_CV:.0%}; "
                               f"compare them with care): {f._names(noisy)}",
                               {"cases": len(noisy), "of": len(summary),
                                "round_cv_above": f.NOISY_CV}))
    return out


def coded_findings(summary: pd.DataFrame, scaling: pd.DataFrame, outliers: pd.DataFrame,
                   scaled: dict | None = None, slowest: pd.DataFrame | None = None,
                   fitted: Fitted | None = None, late: pd.DataFrame | None = None,
                   device: bool = True, slow_slice: dict | None = None) -> list[Finding]:
    """The Findings, most important first, each with its code (``slow_slice``: the
    slowest slice, :func:`podscale.analysis.models.skew.slowest_slice`)."""
    return [*_checks(summary), *_tagged("ceiling", f.ceiling_findings(summary)),
            *_tagged("slices", f.axis_findings(summary)),
            *_tagged("onchip", f.onchip_findings(summary)),
            *_tagged("timing", f.timing_findings(summary, late, device)),
            *_tagged("fit", f.fit_findings(fitted)),
            *_later(summary, scaling, outliers),
            *[Finding("scaling-model", t, _scaling_numbers(scaled or {}, t))
              for t in f._scaling_models(scaled or {})],
            *_tagged("slowest-process", f._slowest(slowest, slow_slice)),
            *_tagged("spread", f._spread(summary)), *_costs(summary)]


def findings(summary: pd.DataFrame, scaling: pd.DataFrame, outliers: pd.DataFrame,
             scaled: dict | None = None, slowest: pd.DataFrame | None = None,
             fitted: Fitted | None = None, late: pd.DataFrame | None = None,
             device: bool = True, slow_slice: dict | None = None) -> list[str]:
    """Sentences, most important first; each names the cases it is about (the text of
    :func:`coded_findings`)."""
    return [x.text for x in coded_findings(summary, scaling, outliers, scaled, slowest,
                                           fitted, late, device, slow_slice)]
