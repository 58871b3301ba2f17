"""``podscale bench-self``: measure podscale itself, side by side in one run.

- harness overhead: podscale's measured step vs a minimal hand-written script timing the
  same op on the same layout (:mod:`podscale.selfbench.baseline`; target <= 1.02);
- methods: podscale's ``chain`` and ``device`` against hand-written loops of the same
  method, interleaved rounds in one process (:mod:`podscale.selfbench.methodstage`;
  target: within 3%);
- sweep turnaround: a standard sweep's wall time vs one process start per host count plus
  the measured time (target <= 1.5x), and vs one minimal-script launch per case, measured
  on several cases per host count (target >= 5x faster);
- memory: the stream (read) ceiling and dot's bandwidth per layout, buffers >= 4x LLC;
- scale: the largest simulated psum job that completes (up to 128 processes, and why it
  stopped), with startup and psum latency per process count;
- footprint: the checks' peak RSS at 2 and 8 processes (target <= 1.25x) and their CPU
  seconds per process at 16 vs 2 (target <= 2x); study: the default study's wall-time
  ledger, prepare + check against the timed iterations (:mod:`podscale.selfbench.footprint`);
- comparison verdicts: A/A false alarms and a planted 1.5x slowdown's detection, for
  sequential runs and for ``podscale ab`` (:mod:`podscale.selfbench.verdicts`).
- attach: a program's median step time under ``podscale attach`` against the same loop
  run plainly, alternating (:mod:`podscale.selfbench.attachstage`; target within
  max(2%, 50 µs)).

- reports at pod scale: ``podscale report`` of synthetic 256-, 1024- and 4096-process runs
  (:mod:`podscale.selfbench.reportstage`; targets at 4096 processes: <= 10 s warm, <= 30 s cold).

- asv: ``asv continuous`` between two commits with no code change
  (:mod:`podscale.selfbench.asvstage`; target: <= 5% of benchmarks flagged); asv-detect:
  the same with a 1.5x psum slowdown planted in the second commit (target: >= 90% of the
  psum benchmarks flagged).

``--only STAGE,...`` runs some of them (:data:`podscale.selfbench.STAGE_NAMES`). On a
machine with accelerator chips (``--platform``), ``methods``, ``study`` and ``attach`` measure
them; the rest simulate hosts on the CPU, as each stage's heading says.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from podscale.core.errors import PodscaleError
from podscale.launch.admission import PROCESS_MB, available_mb
from podscale.launch.options import LaunchOptions
from podscale.launch.runner import execute
from podscale.selfbench import STAGE_NAMES, Log
from podscale.selfbench.baseline import harness_overhead
from podscale.selfbench.baseline import one_case as _one
from podscale.selfbench.historystage import history_stage
from podscale.selfbench.memorystage import memory_ceiling
from podscale.selfbench.turnaround import measured_seconds, turnaround

if TYPE_CHECKING:
    from podscale.launch.chips import Chips


def scale(out: Path, counts: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128)) -> dict:
    """psum on 1, 2, 4, ... single-device processes until one fails, the next would not
    fit in memory, or the last count completes: startup and latency per count, and why
    it stopped."""
    from podscale.analysis import load_run, summarize

    curve, largest = [], 0
    stopped = f"reached {counts[-1]} processes"
    for n in counts:
        need, have = n * PROCESS_MB, available_mb()
        if need > 0.8 * have:
            stopped = (f"{n} processes would need ~{need / 1024:.1f} GiB ({PROCESS_MB} MB "
                       f"each), more than 80% of the {have / 1024:.1f} GiB available")
            break
        t0 = time.monotonic()
        try:
            run = execute(_one("psum", 1024, n, 1), out, f"scale-h{n}",
                          LaunchOptions(case_timeout=300), progress=None)
        except PodscaleError as exc:
            curve.append({"processes": n, "error": str(exc)})
            stopped = f"{n} processes failed: {str(exc)[:200]}"
            break
        wall = time.monotonic() - t0
        loaded = load_run(run)
        samples, cases = loaded.samples, loaded.cases
        t = summarize(samples, cases)["time_s"].iloc[0]
        curve.append({"processes": n, "wall_s": wall,
                      "startup_s": wall - measured_seconds(run), "psum_us": t * 1e6})
        largest = n
    return {"largest": largest, "target": 32, "curve": curve, "stopped": stopped}


STAGES = STAGE_NAMES


def _harness(work: Path, log: Log, _: int) -> dict:
    h = harness_overhead(work)
    for op in ("dot", "psum"):
        r = h[op]["ratio"]
        log(f"  {op}: podscale {h[op]['podscale']['median']:.1f} us vs script "
            f"{h[op]['script']['median']:.1f} us (medians over rounds); ratio median "
            f"{r['median']:.3f}, IQR {r['q1']:.3f}-{r['q3']:.3f} (target <= 1.02)")
    return h


def _turnaround(work: Path, log: Log, _: int) -> dict:
    t = turnaround(work, log=log)
    log(f"  {t['cases']} cases in {t['sweep_s']:.1f}s; floor (process starts "
        f"{sum(t['startup_s'].values()):.1f}s + measured {t['measured_s']:.1f}s) = "
        f"{t['floor_s']:.1f}s: {t['vs_floor']:.2f}x (target <= 1.5)")
    log(f"  one minimal-script launch per case (extrapolated): "
        f"{t['per_case_launch_s']:.0f}s (IQR {t['per_case_launch_iqr_s'][0]:.0f}-"
        f"{t['per_case_launch_iqr_s'][1]:.0f}s): sweep "
        f"is {t['speedup_vs_per_case']:.1f}x faster (target >= 5)")
    log("  minimal-script launch wall time per case: " + ", ".join(
        f"{h} host(s) {q['median']:.1f}s ({q['min']:.1f}-{q['max']:.1f})"
        for h, q in t["per_case_launch_wall_s"].items()))
    total = sum(t["ledger_s"].values()) or 1.0
    log("  wall-time ledger (slowest process per phase, summed over launches): " + ", ".join(
        f"{p} {s:.1f}s ({s / total:.0%})" for p, s in
        sorted(t["ledger_s"].items(), key=lambda kv: -kv[1])))
    return t


def _gate(work: Path, log: Log) -> dict:
    from podscale.selfbench.gatestage import gate_stage

    return gate_stage(work, log)


def _memory(work: Path, log: Log, _: int) -> dict:
    m = memory_ceiling(work)
    log(f"  LLC {m['llc_bytes'] >> 20} MiB; stream {m['stream_bytes'] >> 20} MiB and "
        f"dot {m['dot_bytes'] >> 20} MiB per process"
        + (" (halved to fit in memory: under 4x the LLC)" if m["capped_by_memory"] else ""))
    for row in m["layouts"]:
        log(f"  {row['layout']}: stream {row['stream_gbps']:.1f} GB/s, dot "
            f"{row['dot_gbps']:.1f} GB/s per process = {row['fraction']:.0%}")
    return m


def _scale(work: Path, log: Log, max_processes: int) -> dict:
    s = scale(work, tuple(n for n in (1, 2, 4, 8, 16, 32, 64, 128) if n <= max_processes))
    log("  processes  wall(s)  startup(s)  psum(us)")
    for row in s["curve"]:
        if "error" in row:
            log(f"  {row['processes']:9d}  failed: {row['error'][:100]}")
        else:
            log(f"  {row['processes']:9d}  {row['wall_s']:7.1f}  "
                f"{row['startup_s']:10.1f}  {row['psum_us']:8.0f}")
    log(f"  largest completed: {s['largest']} processes (target 32); stopped: {s['stopped']}")
    return s


def _report(work: Path, log: Log, _: int) -> dict:
    from podscale.selfbench import reportstage

    r = reportstage.report_scale(work, log=log)
    for line in reportstage.summary_lines(r):
        log(line)
    return r


def _footprint(work: Path, log: Log, _: int) -> dict:
    from podscale.selfbench.footprint import footprint

    f = footprint(work, log=log)
    log(f"  peak RSS 8 vs 2 processes: {f.get('rss_8_vs_2', float('nan')):.2f}x (target <= "
        f"1.25); prepare+check CPU per process 16 vs 2: "
        f"{f.get('work_16_vs_2', float('nan')):.2f}x (target <= 2)")
    return f


def _study(work: Path, log: Log, _: int, chips: Chips | None = None) -> dict:
    from podscale.selfbench.footprint import study_ledger

    return study_ledger(work, log=log, platform=chips.platform if chips else "cpu")


def _links(work: Path, log: Log, _: int) -> dict:
    from podscale.selfbench.linkstage import links_scale

    return links_scale(work, log=log)


def _verdicts(work: Path, log: Log, _: int) -> dict:
    from podscale.selfbench.verdicts import summary_lines, verdicts

    v = verdicts(work, log)
    for line in summary_lines(v):
        log(line)
    return v


def _attach(work: Path, log: Log, chips: Chips | None = None) -> dict:
    from podscale.selfbench.attachstage import attach_overhead

    return attach_overhead(work, log=log, platform=chips.platform if chips else "cpu")


def _methods(log: Log, chips: Chips | None) -> dict:
    from podscale.selfbench.methodstage import methods_overhead

    return methods_overhead(log=log, chips=chips)


def _asv(work: Path, log: Log, _: int, plant: bool = False) -> dict:
    from podscale.selfbench import asvstage

    if plant:
        (work / "detect").mkdir(exist_ok=True)
        a = asvstage.asv_aa(work / "detect", log=log, plant=asvstage.DETECT_PLANT,
                            bench=asvstage.DETECT_BENCH)
    else:
        a = asvstage.asv_aa(work, log=log)
    for line in asvstage.summary_lines(a):
        log(line)
    return a


#: the stages that measure this machine's chips where it has them (``chips=``)
ON_CHIPS = ("methods", "study", "attach")

#: stage -> (key in the result, what it measures, the function)
RUNNERS: dict[str, tuple[str, str, Callable[..., dict]]] = {
    "harness": ("harness", "harness overhead: podscale vs a minimal hand-written script, dot "
                           "and psum 4K on 2 processes x 2 devices, 5 rounds", _harness),
    "methods": ("methods", "timing methods: podscale's chain and device vs hand-written "
                           "loops of each, stream read and bf16 matmul, 9 interleaved rounds",
                lambda w, log, n, chips=None: _methods(log, chips)),
    "turnaround": ("turnaround", "sweep turnaround (dot+psum, 4 sizes x devices 1,2,4 x "
                                 "hosts 1,2,4)", _turnaround),
    "memory": ("memory", "memory ceiling: stream (read) and dot with buffers >= 4x LLC, per "
                         "layout", _memory),
    "scale": ("scale", "scale: psum over 1..N simulated processes", _scale),
    "footprint": ("footprint", "the checks' footprint: all_reduce 16 MiB per device at 2, "
                               "8, 16 processes, peak RSS and prepare+check CPU seconds",
                  _footprint),
    "study": ("study", "podscale study through the CLI: its wall-time ledger", _study),
    "report": ("report", "reports at pod scale: synthetic runs, podscale report through the "
                         "CLI", _report),
    "history": ("history", "podscale history over 1,000 synthetic runs x 200 cases (one "
                           "planted change), through the CLI",
                lambda w, log, n: history_stage(w, log)),
    "links": ("links", "bad hosts and links: podscale run links at 8, 16, 32 processes and "
                       "pairs at 8, wall time", _links),
    "verdicts": ("verdicts", "compare verdicts: sequential runs A, B (psum stretched 1.5x), "
                             "A'; podscale ab A/A and A/B (defaults)", _verdicts),
    "gate": ("gate", "a quiet CI gate: false alarms over 5 A/A runs at --threshold and with "
                     "noise floors (--noise-from), and a 1.5x psum caught",
             lambda w, log, n: _gate(w, log)),
    "attach": ("attach", "podscale attach's cost: a self-timing loop, plain and attached, "
                         "alternating, 5 rounds, states of 1 and 500 arrays",
               lambda w, log, n, chips=None: _attach(w, log, chips)),
    "asv": ("asv", "asv continuous between two commits with no code change (asv-made "
                   "virtualenvs, every benchmark)", _asv),
    "asv-detect": ("asv_detect", "asv continuous between two commits, the second planting a "
                                 "1.5x slowdown of psum (a subset of benchmarks)",
                   lambda w, log, n: _asv(w, log, n, plant=True)),
}


def run_all(out: Path | None, log: Log = print, max_processes: int = 32,
            only: tuple[str, ...] = STAGES, chips: Chips | None = None) -> dict:
    """Run the chosen stages in their order, logging each, and write the figures;
    ``chips``: this machine's, measured by the stages that can (:data:`ON_CHIPS`)."""
    result: dict = {"platform": {"chips": chips.describe() if chips else None,
                                 "on_chips": [s for s in ON_CHIPS if chips]}}
    chosen = [s for s in STAGES if s in only]
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for i, name in enumerate(chosen):
            key, what, fn = RUNNERS[name]
            where = (f" on {chips.describe()}" if name in ON_CHIPS else
                     " (simulated hosts on the CPU)") if chips else ""
            log(f"# [stage {i + 1}/{len(chosen)}, elapsed {time.monotonic() - started:.0f}s] "
                f"{what}{where} ...")
            more = {"chips": chips} if chips and name in ON_CHIPS else {}
            result[key] = fn(Path(tmp), log, max_processes, **more)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1))
        log(f"# written: {out}")
    return result
