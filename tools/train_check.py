"""The training figures of ``podscale attach`` on the machine it runs on: a one-process
flax NNX training loop (examples/nnx_train.py) under ``podscale attach``, twice — a small
model whose step the host's dispatch fills (as flax's toy examples are) and a large one
the device fills — and, for each, the step time, throughput, FLOPs and MFU against the
device's peak, the step program's memory and the device's busy share, as a Markdown table.

    python3 tools/train_check.py --out DIR [--steps N] [--large BATCHxWIDTH]

Needs flax and optax (on the lent TPU: from its package index). Written for the
accelerator check of docs/profiling-programs.md; on a CPU it runs the same (no MFU)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: (label, batch, width): a host-bound step and a device-bound one
CONFIGS = (("small (host-bound)", 64, 256), ("large (device-bound)", 2048, 4096))


def _attach(run_dir: Path, steps: int, batch: int, width: int) -> None:
    cmd = [sys.executable, "-m", "podscale", "attach", "--run-dir", str(run_dir),
           "--profile-steps", f"{steps // 2}:{steps // 2 + 3}",
           str(ROOT / "examples" / "nnx_train.py"), str(steps), str(batch), str(width)]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
    print(res.stdout[-2000:], res.stderr[-3000:], sep="\n")
    if res.returncode:
        raise SystemExit(f"attach exited {res.returncode}")


def _row(label: str, run_dir: Path) -> str:
    from podscale.analysis.profile.figures import figures
    from podscale.analysis.profile.summary import summarize_profile
    from podscale.analysis.units import time_h
    from podscale.analysis.verdicts.profilefindings import findings

    s = summarize_profile(run_dir)
    f = figures(s)
    for line in findings(s):
        print("-", line)
    mem = f["memory"] or {}
    held = sum(mem.get(k, 0) for k in ("argument", "output", "temp")) / 2**20
    mfu = f"{100 * f['mfu']:.1f}%" if f["mfu"] is not None else "n/a"
    tflops = f"{f['tflops']:.3g}" if f["tflops"] is not None else "n/a"
    peak = f"{f['device_peak_bytes'] / 2**20:.0f}" if f["device_peak_bytes"] else "n/a"
    return (f"| {label} | {s.step} | {time_h(f['step_s'])} | {f['per_s']:,.0f} | {tflops} | "
            f"{mfu} | {held:.1f} | {peak} | {100 * f['busy_share']:.1f}% | "
            f"{'yes' if f['host_bound'] else 'no'} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--large", default="2048x4096", metavar="BATCHxWIDTH",
                   help="the device-bound model (smaller on a CPU)")
    args = p.parse_args(argv)
    batch, width = (int(v) for v in args.large.split("x"))
    configs = (CONFIGS[0], (CONFIGS[1][0], batch, width))
    args.out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))
    # this process never opens the device: one program at a time may hold a TPU
    rows = []
    for i, (label, batch, width) in enumerate(configs):
        run_dir = args.out / f"run{i}"
        _attach(run_dir, args.steps, batch, width)
        rows.append(_row(f"{label}: batch {batch}, width {width}", run_dir))
    from podscale.analysis.profile.load import load_profile

    marks = load_profile(args.out / "run0").processes.iloc[0]
    table = "\n".join([
        f"{marks['device_kind']} ({marks['platform']}), {args.steps} steps, a bf16 MLP of 3 "
        "layers, under podscale attach",
        "", "| model | step | step time | samples/s | TFLOP/s | MFU | program MiB | "
        "device peak MiB | device busy | host-bound |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |", *rows])
    (args.out / "train.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
