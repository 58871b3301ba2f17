#!/usr/bin/env python3
"""The prepared accelerator check: one short script for a machine with one GPU or TPU.

From a checkout (no install: only JAX, numpy, pandas and matplotlib needed), in one
process on the first device::

    python tools/accel_check.py --out accel-check            # the accelerator JAX finds
    python tools/accel_check.py --out /tmp/ac --platform cpu  # the same on the CPU (tests)

1. times ``dot``, ``stream`` (read, copy, scale, add, triad at 512 MiB), ``psum`` and
   ``matmul`` (8192 cubed: bf16 into float32 and into bf16, int8 into int32) with
   podscale's own worker path (prepared inputs,
   ahead-of-time compile, warm-up, the three timing methods each, chain and device, the
   correctness and exact checks);
2. times the same ops with hand-written loops of each method in the same process
   (:mod:`podscale.selfbench.handloops`: ``block_until_ready`` per call; back-to-back calls
   and one wait; device time from ``jax.profiler`` read with ``ProfileData``): per method
   the ratio of podscale's median over the hand loop's (1.0: no overhead), and the
   per-call host cost (each - device) both ways;
3. holds each figure against the device's peaks (read with ``get_tpu_info()`` on TPU,
   else the documented table) and the targets of the hardware-time issue;
4. traces one case with the JAX profiler (an XProf trace under ``trace/``);
5. profiles a one-process training loop (``podscale/selfbench/loop_script.py``) under
   ``podscale attach`` in a process of its own, before this one opens the device (one
   program at a time may hold a TPU), and keeps its step table (``profile.txt``);

and writes a bundle to ``--out``: ``records.jsonl`` (every raw sample, both ways),
``figures.json``, ``summary.md`` and ``figures.png``. Within 5 minutes on one accelerator.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIB = 1 << 20
STREAM = ("read", "copy", "scale", "add", "triad")
CASES = (("dot", {"size": 1 << 22}, "float32"),
         *(("stream", {"size": 1 << 27, "op": op}, "float32") for op in STREAM),
         ("psum", {"size": 1 << 24}, "float32"),
         ("matmul", {"size": 8192}, "bfloat16"),
         ("matmul", {"size": 8192, "out_dtype": "input"}, "bfloat16"),
         ("matmul", {"size": 8192}, "int8"))
QUICK = {"dot": 1 << 14, "stream": 1 << 18, "psum": 1 << 14, "matmul": 256}  # --platform cpu
METHODS = ("each", "chain", "device")
#: the issue's targets on a TPU v5e: (case prefix, figure, at least)
TARGETS = (("stream@1/shard_map/float32/op=read", "gbps", 740),
           ("stream@1/shard_map/float32/op=copy", "gbps", 640),
           ("stream@1/shard_map/float32/op=triad", "gbps", 670),
           ("matmul@2/shard_map/bfloat16", "tflops", 178))


def _cases(quick: bool, iters: int):
    from podscale.core.case import Settings
    from podscale.core.grid import Grid, expand

    out = []
    for name, params, dtype in CASES:
        params = {**params, "size": QUICK[name]} if quick else params
        grid = Grid((name,), hosts=(1,), devices_per_host=(1,), variants=("shard_map",),
                    dtypes=(dtype,), params=tuple((k, (v,)) for k, v in params.items()),
                    settings=Settings(iters=iters, warmup=3))
        out += expand(grid)
    return out


def _podscale(case, rt):
    """podscale's worker path for one case: (seconds per method, checks, work, the step)."""
    from podscale.core.registry import load_source
    from podscale.core.timing import chain, depth_for, measure
    from podscale.worker.checks import run_checks
    from podscale.worker.compiling import compile_workload
    from podscale.worker.devicetime import device_pass
    from podscale.worker.main import context

    wl = load_source(case.source)
    ctx = context(case, rt)
    local = wl.inputs(ctx)
    expected = wl.reference(ctx, local)
    c = compile_workload(wl, ctx, wl.place(ctx, local))
    del local
    iters, depth = case.settings.iters, depth_for(wl.work(case).bytes_per_device)
    clock, meet = time.perf_counter, (lambda: None)
    each = [t.seconds for t in measure(c.run, clock=clock, barrier=meet,
                                       warmup=case.settings.warmup, iters=iters)
            if t.phase == "timed"]
    chained = [t.seconds for t in chain(c.launch, c.wait, clock=clock, barrier=meet,
                                        length=iters, depth=depth)]
    dev = device_pass(case.id, 0, c.launch, c.wait, meet, iters, [d.id for d in ctx.devices],
                      c.module, depth=depth)
    checks = run_checks(case, 0, wl, ctx, expected, c, rt, None)
    times = {"each": each, "chain": chained, "device": [s.seconds for s in dev.samples]}
    return times, checks, wl.work(case), c.run, dev.note


def _hand_times(case) -> dict[str, list[float]]:
    import jax

    from podscale.selfbench import handloops

    fn, args = handloops.op_for(case)
    jitted = jax.jit(fn)
    iters = case.settings.iters
    return {"each": handloops.each(jitted, args, iters),
            "chain": handloops.chain(jitted, args, iters),
            "device": handloops.device(jitted, args, iters, f"jit_{fn.__name__}")}


def _figure(case, times, hand, checks, work, peak, note) -> dict:
    med = {f"{side}_{m}": statistics.median(v) if v else None
           for side, d in (("podscale", times), ("hand", hand)) for m, v in d.items()}
    best = med["podscale_device"] or med["podscale_chain"]
    f = {"case": case.id, **{f"{k}_us": (v * 1e6 if v else None) for k, v in med.items()},
         "gbps": work.bytes_per_process / best / 1e9,
         "tflops": work.flops_per_process / best / 1e12,
         "wrong": checks["wrong"], "checked": checks["checked"], "note": note}
    for m in METHODS:
        p, h = med[f"podscale_{m}"], med[f"hand_{m}"]
        f[f"ratio_{m}"] = p / h if p and h else None
    for side in ("podscale", "hand"):
        e, d = med[f"{side}_each"], med[f"{side}_device"]
        f[f"host_{side}_us"] = (e - d) * 1e6 if e and d else None
    local = case.workload != "psum"
    f["pct_hbm"] = 100 * f["gbps"] / peak["hbm_gbps"] if local and peak.get("hbm_gbps") \
        else None
    flops_peak = peak.get("int8_tops" if case.dtype == "int8" else "bf16_tflops")
    f["pct_flops"] = 100 * f["tflops"] / flops_peak if work.flops_per_process and \
        flops_peak else None
    return f


def _peaks(device_kind: str) -> dict:
    """The device's peaks as the worker reads them, else the documented row."""
    from podscale.analysis.models.ceilings import peak_for
    from podscale.startup.peaks import device_peaks

    read = device_peaks()
    if read.get("hbm_gbps"):
        return read
    doc = peak_for(device_kind)
    return {"hbm_gbps": doc.hbm_gbps, "bf16_tflops": doc.bf16_tflops,
            "int8_tops": doc.int8_tops, "source": doc.source} if doc else \
        {"source": read.get("source", "none")}


def _targets(figures: list[dict]) -> list[str]:
    rows = []
    for prefix, what, least in TARGETS:
        f = next((x for x in figures if x["case"].startswith(prefix)), None)
        if f is None:
            continue
        got, ratio = f[what], f["ratio_device"]
        shown = "n/a" if ratio is None else f"{ratio:.3f}"
        rows.append(f"| {prefix} | {what} >= {least} | {got:.4g} | "
                    f"{'met' if got >= least else 'MISSED'} | {shown} |")
    return rows


def _summary(figures: list[dict], meta: dict, out: Path, profiled: str = "") -> str:
    def us(v):
        return "N/A" if v is None else f"{v:.1f}"

    def pct(v):
        return "N/A" if v is None else f"{v:.1f}"

    lines = [f"# accel_check: {meta['device_kind']} ({meta['platform']}), jax {meta['jax']}",
             "", "Median µs per call: podscale / hand-written loop, per method; GB/s and "
             "TFLOP/s from podscale's device time (else chain).", "",
             "| case | each | chain | device | host (each − device) | GB/s | % HBM | TFLOP/s "
             "| % peak (bf16; int8) | wrong |", "|---|---|---|---|---|---|---|---|---|---|"]
    for f in figures:
        cells = [f"{us(f[f'podscale_{m}_us'])} / {us(f[f'hand_{m}_us'])}" for m in METHODS]
        host = f"{us(f['host_podscale_us'])} / {us(f['host_hand_us'])}"
        lines.append(f"| {f['case']} | {' | '.join(cells)} | {host} | {f['gbps']:.4g} | "
                     f"{pct(f['pct_hbm'])} | {f['tflops']:.4g} | {pct(f['pct_flops'])} | "
                     f"{f['wrong']} |")
    lines += ["", "Ratios podscale / hand (median), per method:", "",
              "| case | each | chain | device |", "|---|---|---|---|"]
    for f in figures:
        lines.append(f"| {f['case']} | " + " | ".join(
            "N/A" if f[f"ratio_{m}"] is None else f"{f[f'ratio_{m}']:.3f}" for m in METHODS)
            + " |")
    targets = _targets(figures)
    if targets and meta["platform"] != "cpu":
        lines += ["", "Targets (the hardware-time issue, TPU v5e):", "",
                  "| case | target | got | | device ratio |", "|---|---|---|---|---|", *targets]
    notes = [f"{f['case']}: {f['note']}" for f in figures if f.get("note")]
    import podscale

    lines += ["", f"Peaks: {meta['peaks']}", *notes, f"trace files: {meta['traced']} (trace/)",
              f"podscale from: {Path(podscale.__file__).parent}",
              "Reproduce: python tools/accel_check.py --out DIR"]
    if profiled:
        lines += ["", "## podscale attach of a one-process training loop", "", "```",
                  profiled, "```"]
    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text)
    return text


def _trace(step, out: Path) -> int:
    import jax

    from podscale.core import xprof

    with jax.profiler.trace(str(out / "trace")):
        for _ in range(3):
            step()
    return len(xprof.session_files(out / "trace"))


def _profile(out: Path, quick: bool) -> str:
    """``podscale attach`` of a one-process training loop in its own process; its step
    table and goodput ledger as text ('' with the reason if it failed)."""
    import os
    import subprocess

    loop = ROOT / "podscale" / "selfbench" / "loop_script.py"
    steps, width = ("60", "128") if quick else ("300", "4096")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    if quick:
        env["JAX_PLATFORMS"] = "cpu"
    run_dir = out / "profile"
    res = subprocess.run([sys.executable, "-m", "podscale", "attach", "--run-dir",
                          str(run_dir), "--profile-steps", "10:13", str(loop), steps, "10",
                          width], capture_output=True, text=True, env=env, timeout=600,
                         cwd=out)
    if res.returncode:
        return f"podscale attach failed ({res.returncode}): {res.stderr.strip()[-500:]}"
    from podscale.analysis.profile.summary import summarize_profile
    from podscale.analysis.render.profiletext import render

    text = render(summarize_profile(run_dir))
    (out / "profile.txt").write_text(text + "\n")
    return text


def _plot(figures: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(8, 0.4 * len(figures) + 1.5))
    y = np.arange(len(figures))
    for i, m in enumerate(METHODS):
        ax.barh(y + (i - 1) * 0.27, [f[f"ratio_{m}"] or 0 for f in figures], height=0.27,
                label=m)
    ax.set_yticks(y, [f["case"].split("/shard_map/")[-1][:40] for f in figures], fontsize=7)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlabel("podscale / hand-written loop (median), per timing method")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "figures.png", dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder for the bundle")
    p.add_argument("--platform", default=None, help="cpu: run on the CPU (the tests)")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--only", default=None, help="workloads to run (default: all)")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    args.out.mkdir(parents=True, exist_ok=True)
    quick = args.platform == "cpu"
    profiled = "" if args.only else _profile(args.out.resolve(), quick)  # before we hold it
    import jax

    if args.platform:
        jax.config.update("jax_platforms", args.platform)
    from podscale.startup import runtime

    rt = runtime.start()
    dev = jax.devices()[0]
    peak = _peaks(dev.device_kind)
    figures, traced = [], 0
    with (args.out / "records.jsonl").open("w") as records:
        for case in _cases(quick, args.iters):
            if args.only and case.workload not in args.only.split(","):
                continue
            times, checks, work, step, note = _podscale(case, rt)
            if not traced and case.workload == "dot":
                traced = _trace(step, args.out)
            del step
            hand = _hand_times(case)
            figures.append(_figure(case, times, hand, checks, work, peak, note))
            records.write(json.dumps({"case_id": case.id, "podscale_s": times,
                                      "hand_s": hand}) + "\n")
            print(f"# {case.id}: " + ", ".join(
                f"{m} {statistics.median(times[m]) * 1e6:.1f} us" for m in METHODS
                if times[m]), flush=True)
    (args.out / "figures.json").write_text(json.dumps(figures, indent=1))
    _plot(figures, args.out)
    meta = {"device_kind": dev.device_kind, "platform": dev.platform, "jax": jax.__version__,
            "peaks": peak, "traced": traced}
    print(_summary(figures, meta, args.out, profiled), end="")
    return 1 if any(f["wrong"] for f in figures) else 0


if __name__ == "__main__":
    sys.exit(main())
