#!/usr/bin/env python3
"""The prepared accelerator check: one short script for a machine with one GPU or TPU.

From a checkout (no install: only JAX, numpy, pandas and matplotlib needed), in one
process on the first device::

    python tools/accel_check.py --out accel-check            # the accelerator JAX finds
    python tools/accel_check.py --out /tmp/ac --platform cpu  # the same on the CPU (tests)

1. times the built-in ``dot``, ``stream`` (read and copy) and ``psum`` with podscale's
   own worker path (prepared inputs, ahead-of-time compile, warm-up, timed iterations,
   the correctness check and the exact check);
2. times the same ops with a minimal hand-written loop (jit, ``block_until_ready``,
   ``perf_counter``): the harness ratio, per op the median of podscale's time over the
   minimal script's (1.0: no overhead);
3. traces one case with the JAX profiler (an XProf trace under ``trace/``);
4. profiles a one-process training loop (``podscale/selfbench/loop_script.py``) under
   ``podscale attach`` in a process of its own, before this one opens the device (one
   program at a time may hold a TPU), and keeps its step table (``profile.txt``);

and writes a bundle to ``--out``: ``records.jsonl`` (every raw sample), ``figures.json``
(per case: time, GB/s, % of the HBM ceiling documented for the detected ``device_kind``,
harness ratio), ``summary.md`` and ``figures.png``. Within 5 minutes on one accelerator.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = (("dot", {"size": 1 << 22}), ("stream", {"size": 1 << 26, "op": "read"}),
         ("stream", {"size": 1 << 26, "op": "copy"}), ("psum", {"size": 1 << 24}))
QUICK = {"dot": 1 << 14, "stream": 1 << 16, "psum": 1 << 14}  # --platform cpu


def _cases(quick: bool, iters: int):
    from podscale.core.case import Settings
    from podscale.core.grid import Grid, expand

    out = []
    for name, params in CASES:
        params = {**params, "size": QUICK[name]} if quick else params
        grid = Grid((name,), hosts=(1,), devices_per_host=(1,), variants=("shard_map",),
                    params=tuple((k, (v,)) for k, v in params.items()),
                    settings=Settings(iters=iters, warmup=3))
        out += expand(grid)
    return out


def _podscale(case, rt):
    """podscale's path for one case: (step, timed seconds, the worker's checks, work)."""
    from podscale.core.registry import load_source
    from podscale.core.timing import measure
    from podscale.worker.checks import run_checks
    from podscale.worker.compiling import compile_workload
    from podscale.worker.main import context

    wl = load_source(case.source)
    ctx = context(case, rt)
    local = wl.inputs(ctx)
    expected = wl.reference(ctx, local)
    compiled = compile_workload(wl, ctx, wl.place(ctx, local))
    timed = [t.seconds for t in measure(compiled.run, clock=time.perf_counter,
                                        barrier=lambda: None, warmup=case.settings.warmup,
                                        iters=case.settings.iters, sync_each=True)
             if t.phase == "timed"]
    checks = run_checks(case, 0, wl, ctx, expected, compiled, rt, None)
    return compiled.run, timed, checks, wl.work(case)


def _minimal(case, iters: int) -> list[float]:
    """The same op as a user would time it by hand, with no podscale in the loop."""
    import jax
    import jax.numpy as jnp

    n = case.p["size"]
    if case.workload == "dot":
        a = jax.random.normal(jax.random.key(42), (2, n, 3))
        fn, args = jax.jit(jax.vmap(jnp.vdot)), (a[0], a[1])
    elif case.workload == "stream":
        x = jnp.ones((n,), jnp.float32)
        fn, args = (jax.jit(jnp.sum) if case.p["op"] == "read" else jax.jit(lambda v: 2 * v)), (x,)
    else:
        x = jnp.ones((1, n), jnp.float32)
        fn, args = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i"), (x,)
    for _ in range(3):
        jax.block_until_ready(fn(*args))
    out = []
    for _ in range(iters):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        out.append(time.perf_counter() - start)
    return out


def _trace(step, out: Path) -> int:
    import jax

    with jax.profiler.trace(str(out / "trace")):
        for _ in range(3):
            step()
    return len(list((out / "trace").rglob("*.xplane.pb")))


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
    from podscale.analysis.profile.render import render
    from podscale.analysis.profile.summary import summarize_profile

    text = render(summarize_profile(run_dir))
    (out / "profile.txt").write_text(text + "\n")
    return text


def _plot(figures: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3))
    labels = [f["case"] for f in figures]
    ax.barh(labels, [f["harness_ratio"] for f in figures])
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlabel("podscale time / minimal script time (median)")
    ax.set_title(f"accel_check on {figures[0]['device_kind']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "figures.png", dpi=100)
    plt.close(fig)


def _summary(figures: list[dict], traced: int, out: Path, profiled: str = "") -> str:
    lines = [f"# accel_check: {figures[0]['device_kind']} ({figures[0]['platform']}), "
             f"jax {figures[0]['jax']}", "",
             "| case | time (us) | GB/s | % of HBM ceiling | harness ratio | wrong |",
             "|---|---|---|---|---|---|"]
    for f in figures:
        pct = "N/A" if f["pct_hbm"] is None else f"{f['pct_hbm']:.1f}"
        lines.append(f"| {f['case']} | {f['time_us']:.1f} | {f['gbps']:.3g} | {pct} | "
                     f"{f['harness_ratio']:.3f} | {f['wrong']} |")
    import podscale

    lines += ["", f"HBM ceiling: {figures[0]['ceiling']}", f"trace files: {traced} (trace/)",
              f"podscale from: {Path(podscale.__file__).parent}",
              "Reproduce: python tools/accel_check.py --out DIR"]
    if profiled:
        lines += ["", "## podscale attach of a one-process training loop", "", "```",
                  profiled, "```"]
    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder for the bundle")
    p.add_argument("--platform", default=None, help="cpu: run on the CPU (the tests)")
    p.add_argument("--iters", type=int, default=50)
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    args.out.mkdir(parents=True, exist_ok=True)
    profiled = _profile(args.out.resolve(), args.platform == "cpu")  # before this one holds it
    import jax

    if args.platform:
        jax.config.update("jax_platforms", args.platform)
    from podscale.analysis.models.ceilings import peak_for
    from podscale.worker import runtime

    args.out.mkdir(parents=True, exist_ok=True)
    rt = runtime.start()
    dev = jax.devices()[0]
    peak = peak_for(dev.device_kind)
    figures, traced = [], 0
    with (args.out / "records.jsonl").open("w") as records:
        for case in _cases(args.platform == "cpu", args.iters):
            step, timed, checks, work = _podscale(case, rt)
            minimal = _minimal(case, args.iters)
            t = statistics.median(timed)
            gbps = work.bytes_per_process / t / 1e9
            figures.append({
                "case": case.id, "device_kind": dev.device_kind, "platform": dev.platform,
                "jax": jax.__version__, "time_us": t * 1e6, "gbps": gbps,
                "pct_hbm": 100 * gbps / peak.hbm_gbps if peak and case.workload != "psum"
                else None, "ceiling": f"{peak.name} HBM {peak.hbm_gbps} GB/s ({peak.source})"
                if peak else f"none documented for {dev.device_kind!r}",
                "harness_ratio": t / statistics.median(minimal), "wrong": checks["wrong"],
                "checked": checks["checked"]})
            records.write(json.dumps({"case_id": case.id, "podscale_s": timed,
                                      "minimal_s": minimal}) + "\n")
            if not traced and case.workload == "dot":
                traced = _trace(step, args.out)
    (args.out / "figures.json").write_text(json.dumps(figures, indent=1))
    _plot(figures, args.out)
    print(_summary(figures, traced, args.out, profiled), end="")
    return 1 if any(f["wrong"] for f in figures) else 0


if __name__ == "__main__":
    sys.exit(main())
