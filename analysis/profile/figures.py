"""The figures a training user reads, per step: throughput, FLOP/s, HFU and MFU, memory, and
how busy the device is.

- **Step time**: the job's median step time (the last process's ready to ready), the
  warm-up steps left out (:func:`.steps.job_periods`, as :func:`.compare.job_steps`).
- **The step's program**: the figures below are those of the program doing the step's
  work, named: of the programs a step runs (a step the program marks with an annotation
  may run several: a data generator, an update), the most FLOPs a step (XLA's count times
  its calls a step), else the most busy time.
- **Throughput**: what one step processes over the step time: ``--tokens-per-step``
  where given, else from that program's inputs less those it returns (parameters and
  optimizer state come back updated; the batch does not; their global shapes, named in
  the sentence): the largest integer input is the data (token ids [batch, sequence]:
  tokens; labels [batch]: samples), else the leading dimension of the largest input
  (samples); where it returns every input, no throughput, and ``--tokens-per-step`` named.
- **FLOP/s, HFU and MFU**: that program's FLOPs per device a step by the hardware's count
  (XLA's cost analysis of the compiled program, an SPMD program's one device's share, with
  each loop body times its trip count: XLA counts a loop's body once,
  :mod:`podscale.core.hloflops`; recompute included) over the step time, against the
  device's peak (read from the device on TPU, ``--peak-tflops``, else none): HFU; with
  ``--flops-per-step`` (the model's own count) the same for MFU, as the field names them.
- **Memory**: that program's memory analysis per device (arguments, outputs,
  temporaries) and, where the platform reports it, each device's peak in use.
- **Device busy share**: the step's device time over the step time: from the captured
  steps' traces where a window captured some (the device's own time), else its busy time
  from the host's side (ready minus arrival: dispatch included, an upper bound); under
  :data:`HOST_BOUND` the step is **host-bound**: the device waits on the host, and the host
  frames that fill the step are named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from podscale.analysis.profile.load import Profile
from podscale.analysis.profile.steps import job_periods
from podscale.analysis.units import time_h

if TYPE_CHECKING:
    from podscale.analysis.profile.summary import ProfileSummary

#: a step whose device is busy less than this share of it is host-bound
HOST_BOUND = 0.5


def step_calls(profile: Profile, step: str, process: int) -> pd.DataFrame:
    """``process``'s calls inside the steps: those inside each of the program's ``step``
    annotations, else the calls of the computation ``step``."""
    calls, marks = profile.calls, profile.annotations
    mine = calls[calls["process"] == process]
    marks = marks[(marks["process"] == process) & (marks["name"] == step)] \
        if len(marks) else marks
    if len(marks):
        inside = np.zeros(len(mine), bool)
        for m in marks.itertuples(index=False):
            inside |= mine["seq"].between(m.first, m.end - 1).to_numpy()
        return mine[inside]
    return mine[mine["name"] == step]


def step_programs(profile: Profile, step: str, led: pd.DataFrame) -> pd.DataFrame:
    """The programs a step runs (process 0's, else the first's): each computation's last
    compiled record, with ``name``, ``per_step`` (its calls a step) and ``busy_s`` (its
    ready minus dispatch a step), the one doing the step's work first: the most FLOPs a
    step, else the most busy time (a step of one program: one row)."""
    comp = profile.compiled
    if comp.empty or led.empty:
        return comp.iloc[0:0]
    p = int(led["process"].min())
    calls = step_calls(profile, step, p)
    steps = max(1, int(led.loc[led["process"] == p, "step"].nunique()))
    mine = comp[(comp["process"] == p) & comp["id"].isin(set(calls["computation"]))]
    last = mine.sort_values("seq").groupby("id").tail(1).set_index("id", drop=False)
    if last.empty:
        return last
    by = calls.groupby("computation")
    last = last.assign(
        name=[str(by.get_group(i)["name"].iloc[0]) for i in last.index],
        per_step=[len(by.get_group(i)) / steps for i in last.index],
        busy_s=[float((by.get_group(i)["ready"] - by.get_group(i)["dispatch"]).sum()) / steps
                for i in last.index])
    loops = pd.to_numeric(last.get("loop_flops", pd.Series(0.0, index=last.index)),
                          errors="coerce").fillna(0)
    work = (pd.to_numeric(last["flops"], errors="coerce").fillna(0) + loops) * last["per_step"]
    order = sorted(last.index, key=lambda i: (-work[i], -last.loc[i, "busy_s"]))
    return last.loc[order].assign(step_flops=work[order].to_numpy())


def _parsed(leaves: object) -> list[tuple[int, list[int], str]]:
    out = []
    for leaf in leaves if isinstance(leaves, list) else []:
        dims = [int(d) for d in leaf[leaf.find("[") + 1:-1].split(",") if d.strip()]
        out.append((int(np.prod(dims)) if dims else 1, dims, leaf))
    return out


def _samples(leaves: object, outputs: object = None) -> tuple[int, str, str] | None:
    """What one step processes, from its input leaves less those the step returns (its
    parameters and optimizer state come back updated; the batch does not): the largest
    integer leaf of rank >= 1 is the data (labels, token ids), its elements tokens where
    it has two dimensions or more, else its length samples; with none, the leading
    dimension of the largest leaf of rank >= 2 (samples). The count, the unit and the
    leaf; None where no input tells (every one returned)."""
    parsed, returned = _parsed(leaves), [p[2] for p in _parsed(outputs)]
    if isinstance(outputs, list):
        kept = []
        for p in parsed:  # an input the step returns, matched one for one, is state
            if p[2] in returned:
                returned.remove(p[2])
            else:
                kept.append(p)
        parsed = kept
    ints = [p for p in parsed if p[1] and p[2].startswith(("int", "uint"))]
    if ints:
        size, dims, leaf = max(ints, key=lambda p: p[0])
        return (size, "tokens", leaf) if len(dims) >= 2 else (dims[0], "samples", leaf)
    wide = [p for p in parsed if len(p[1]) >= 2]
    if wide:
        size, dims, leaf = max(wide, key=lambda p: (p[0], p[1][0]))
        return dims[0], "samples", leaf
    return None


def _throughput(rec: pd.Series | None, given: object, program: str | None) -> dict:
    """What one step processes: ``samples``, ``unit`` and where it is ``from``, or
    ``no_samples`` (why none is said)."""
    outputs = rec.get("outputs") if rec is not None else None
    if given:
        return {"samples": int(str(given)), "unit": "tokens",
                "from": "--tokens-per-step"}
    if rec is not None and (found := _samples(rec.get("leaves"), outputs)) is not None:
        how = "the elements" if found[1] == "tokens" else "the leading dimension"
        new = ", an input it does not return" if isinstance(outputs, list) else ""
        return {"samples": found[0], "unit": found[1],
                "from": f"{how} of {program}'s input {found[2]}{new}"}
    if rec is not None and isinstance(rec.get("leaves"), list) and rec.get("leaves"):
        return {"no_samples": f"{program} returns every input it takes (no batch among "
                              "them): --tokens-per-step gives the throughput"}
    return {}


def figures(s: ProfileSummary) -> dict:
    """The step's figures (see the module doc): every key present, None where unknown."""
    led, profile = s.ledger, s.profile
    out: dict = {k: None for k in ("step_s", "samples", "from", "per_s", "unit", "flops",
                                   "tflops", "peak_tflops", "peak_from", "hfu", "memory",
                                   "device_peak_bytes", "busy_share", "busy_from",
                                   "dispatch_s", "leaves", "host_bound", "program",
                                   "programs", "chosen_by", "no_samples", "flops_given",
                                   "tflops_given", "mfu", "loops")}
    if led.empty:
        return out
    job = job_periods(led)
    step_s = float(job.median()) if len(job) else float("nan")
    out["step_s"] = step_s
    spec = profile.manifest.spec
    progs = step_programs(profile, s.step or "", led)
    rec = progs.iloc[0] if len(progs) else None
    if rec is not None:
        out.update(program=str(rec["name"]), programs=[str(n) for n in progs["name"]],
                   chosen_by="FLOPs" if rec["step_flops"] > 0 else "busy time")
    out.update(_throughput(rec, spec.get("tokens_per_step"), out["program"]))
    if out["samples"] and step_s > 0:
        out["per_s"] = out["samples"] / step_s
    out.update(_rates(rec, spec, profile, step_s))
    if rec is not None and isinstance(rec.get("memory"), dict):
        out["memory"] = rec["memory"]
    mem = profile.processes.get("device_memory", pd.Series(dtype=object)).dropna()
    peaks_b = [d["peak_bytes"] for m in mem if isinstance(m, list) for d in m]
    out["device_peak_bytes"] = max(peaks_b) if peaks_b else None
    caps = profile.captures
    held = caps["busy_us"].dropna() if "busy_us" in caps else pd.Series(dtype=float)
    if len(held):  # the device's own time, from the captured steps' traces
        device_s, out["busy_from"] = float(held.median()) / 1e6, "the captured steps' trace"
    else:  # from the host's side: dispatch included, an upper bound
        own = (led["busy"] - led.get("profiler_busy", 0.0)).clip(lower=0)
        device_s, out["busy_from"] = float(own.median()), "ready minus arrival (an upper " \
            "bound: a capture window gives the device's own time)"
    out["dispatch_s"] = float((led["returned"] - led["dispatch"]).median())
    out["leaves"] = len(rec["leaves"]) if rec is not None and \
        isinstance(rec.get("leaves"), list) else None
    if step_s > 0:
        out["busy_share"] = min(1.0, device_s / step_s)
        out["host_bound"] = out["busy_share"] < HOST_BOUND
    return out


def _rates(rec: pd.Series | None, spec: dict, profile: Profile, step_s: float) -> dict:
    """FLOPs a step and their rates: the hardware's count (XLA's, loops times their
    trips) and HFU, the model's (``--flops-per-step``) and MFU, against the peak."""
    out: dict = {}
    if rec is not None and pd.notna(rec.get("flops")) and rec.get("flops"):
        out["flops"] = float(rec["step_flops"])
        out["tflops"] = out["flops"] / step_s / 1e12 if step_s > 0 else None
        loops = rec.get("loops")
        out["loops"] = list(loops) if isinstance(loops, list) and loops else None
    peaks = profile.processes["peaks"].dropna() if "peaks" in profile.processes else []
    read = next((p.get("bf16_tflops") for p in peaks if isinstance(p, dict)
                 and p.get("bf16_tflops")), None)
    if spec.get("peak_tflops"):
        out.update(peak_tflops=float(spec["peak_tflops"]), peak_from="--peak-tflops")
    elif read:
        out.update(peak_tflops=float(read), peak_from="read from the device (bf16)")
    if out.get("tflops") is not None and out.get("peak_tflops"):
        out["hfu"] = out["tflops"] / out["peak_tflops"]
    if spec.get("flops_per_step") and step_s > 0:
        out["flops_given"] = float(spec["flops_per_step"])
        out["tflops_given"] = out["flops_given"] / step_s / 1e12
        if out.get("peak_tflops"):
            out["mfu"] = out["tflops_given"] / out["peak_tflops"]
    return out


def _counted(loops: list | None) -> str:
    """How the hardware's count was made: XLA's, loop bodies times their trips."""
    if not loops:
        return "XLA's cost analysis, recompute included"
    known = [t for t in loops if t is not None]
    unknown = len(loops) - len(known)
    said = f"XLA's, with {len(known)} loop bod{'y' if len(known) == 1 else 'ies'} times " \
           f"{'its trip count' if len(known) == 1 else 'their trip counts'} " \
           f"({', '.join(map(str, known))})" if known else "XLA's"
    if unknown:
        said += f"; {unknown} loop(s) of unknown trip count counted once: --flops-per-step " \
                "gives the model's"
    return said + ", recompute included"


def _bytes(n: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


def findings(s: ProfileSummary, f: dict) -> list[str]:
    """The figures in sentences: throughput, FLOP/s and MFU, memory, host-bound."""
    step = s.step
    out: list[str] = []
    if f["step_s"] is None or not f["step_s"] == f["step_s"]:
        return out
    parts = [f"{time_h(f['step_s'])} per step"]
    if f["per_s"]:
        parts.append(f"{f['per_s']:,.0f} {f['unit']}/s ({f['samples']:,} {f['unit']} a step:"
                     f" {f['from']})")
    if f["tflops"] is not None:
        hfu = f", HFU {100 * f['hfu']:.1f}% of {f['peak_tflops']:g} TFLOP/s " \
              f"({f['peak_from']})" if f["hfu"] is not None else \
            " (no peak known for HFU: --peak-tflops)"
        parts.append(f"{f['flops'] / 1e9:.3g} GFLOP per device a step by the hardware's "
                     f"count ({_counted(f['loops'])}): {f['tflops']:.3g} TFLOP/s{hfu}")
    if f["flops_given"]:
        mfu = f", MFU {100 * f['mfu']:.1f}%" if f["mfu"] is not None else ""
        xla = f" (the hardware's count is {f['flops'] / 1e9:.3g}: the model's counts " \
              f"{100 * (f['flops_given'] / f['flops'] - 1):+.0f}%)" if f["flops"] else ""
        parts.append(f"--flops-per-step {f['flops_given'] / 1e9:.3g} GFLOP per device a "
                     f"step (the model's count): {f['tflops_given']:.3g} TFLOP/s{mfu}{xla}")
    if f["no_samples"]:
        parts.append(f["no_samples"])
    if f["programs"] and (len(f["programs"]) > 1 or f["program"] != step):
        others = [n for n in f["programs"] if n != f["program"]]
        parts.append(f"figures of {f['program']}, the program doing the step's work"
                     + (f" (the most {f['chosen_by']} of its {len(f['programs'])} programs; also "
                        f"{', '.join(others)})" if others else ""))
    out.append(f"{step}: " + "; ".join(parts))
    if f["hfu"] is not None and f["hfu"] > 1:  # no program runs above its chip's peak
        out.insert(0, f"defect: {step}'s HFU of {100 * f['hfu']:.3g}% exceeds 100%: the peak "
                      f"it is held against, {f['peak_tflops']:g} TFLOP/s ({f['peak_from']}), "
                      "is not this chip's, or the FLOPs counted are not the step's")
    if f["memory"]:
        m = f["memory"]
        peak = f"; the device's peak in use {_bytes(f['device_peak_bytes'])}" \
            if f["device_peak_bytes"] else ""
        out.append(f"{step}'s program holds {_bytes(m['argument'] + m['output'] + m['temp'])}"
                   f" per device (arguments {_bytes(m['argument'])}, outputs "
                   f"{_bytes(m['output'])}, temporaries {_bytes(m['temp'])}){peak}")
    if f["host_bound"]:
        top = s.frames.sort_values("per_step", ascending=False).head(3)
        named = ", ".join(f"{r.frame} {time_h(r.per_step)}" for r in top.itertuples()) \
            or "none sampled"
        leaves = f" of {f['leaves']} argument arrays" if f["leaves"] else ""
        out.append(f"{step} is host-bound: the device is busy {100 * f['busy_share']:.1f}% "
                   f"of the step ({time_h(f['busy_share'] * f['step_s'])} of "
                   f"{time_h(f['step_s'])}, from {f['busy_from']}); the host fills it: "
                   f"JAX's dispatch of the call{leaves} {time_h(f['dispatch_s'])}, Python "
                   f"between calls (the framework's and the program's) "
                   f"{time_h(max(0.0, f['step_s'] - f['dispatch_s']))}, by frame: {named}")
    return out
