"""A run: its directory, manifest and per-layout plans, executed layout by layout.

Run directory::

    run.json                       manifest (schema podscale.run/1)
    plans/<layout>.json            what every process of a layout runs
    records/<layout>/process-<i>.jsonl
    logs/<layout>/process-<i>.log
"""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from podscale.cases import Case, Layout, SuiteSpec, expand, group_by_layout
from podscale.cluster import run_external
from podscale.errors import Interrupted, UsageError, WorkerFailed
from podscale.launch import run_local
from podscale.records import Manifest, write_manifest

SOURCE_ROOT = Path(__file__).resolve().parents[1]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(SOURCE_ROOT), *args], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def environment() -> dict:
    """Launcher-side metadata; device kind and counts come from each worker's env record."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(status) if status is not None else None,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "versions": {d: _version(d) for d in ("podscale", "jax", "jaxlib", "numpy", "pandas")},
    }


def new_run_dir(out: Path, name: str) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(out) / f"{stamp}-{name}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    path.mkdir(parents=True)
    return path


def launches(layouts: dict[Layout, list[Case]], reuse: bool) -> list[tuple[Layout, dict]]:
    """Group layouts into process launches. With ``reuse``, one launch per host count with
    the largest devices-per-host; smaller layouts run on device subsets of the same
    processes. Returns (launched layout, {layout: cases}) pairs."""
    if not reuse:
        return [(layout, {layout: cases}) for layout, cases in layouts.items()]
    by_hosts: dict[int, dict[Layout, list[Case]]] = {}
    for layout, cases in layouts.items():
        by_hosts.setdefault(layout.hosts, {})[layout] = cases
    return [(Layout(h, max(k.devices_per_host for k in group)), group)
            for h, group in sorted(by_hosts.items())]


def launch_label(group: dict[Layout, list[Case]]) -> str:
    keys = [k.key for k in group]
    return f"layout {keys[0]}" if len(keys) == 1 else f"layouts {'+'.join(keys)}"


def make_plan(run_dir: Path, launched: Layout, group: dict[Layout, list[Case]],
              spec: SuiteSpec, **extra) -> dict:
    """The plan every process of one launch runs: its layouts, in order."""
    return {
        "run_dir": str(run_dir.resolve()),
        "hosts": launched.hosts,
        "devices_per_host": launched.devices_per_host,
        "iters": spec.iters,
        "warmup": spec.warmup,
        "layouts": [{"layout": k.key, "devices_per_host": k.devices_per_host,
                     "cases": [c.to_dict() for c in cases]} for k, cases in group.items()],
        **spec.extra,
        **extra,
    }


def write_plan(run_dir: Path, launched: Layout, group: dict[Layout, list[Case]],
               spec: SuiteSpec, **extra) -> Path:
    plan = make_plan(run_dir, launched, group, spec, **extra)
    path = run_dir / "plans" / f"{launched.key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan, indent=1))
    return path


def execute(
    spec: SuiteSpec,
    out: Path,
    name: str,
    *,
    case_timeout: float = 300.0,
    mode: str = "bench",
    progress=print,
    port: int = 0,
    launcher: str = "local",
    launcher_args: Sequence[str] = (),
    simulate_cpu: bool = True,
    reuse: bool = True,
) -> Path:
    """Run every layout of ``spec``; the manifest records how the run ended."""
    cases = expand(spec) if mode == "bench" else []
    layouts = (
        group_by_layout(cases)
        if mode == "bench"
        else {Layout(h, d): [] for h in spec.hosts for d in spec.devices_per_host}
    )
    try:
        run_dir = new_run_dir(out, name)
    except OSError as exc:
        raise UsageError(f"cannot create run directory under {out}: {exc.strerror}") from None
    manifest = Manifest(
        run_id=run_dir.name,
        created=now(),
        command=list(sys.argv),
        spec={**asdict(spec), "mode": mode, "case_timeout": case_timeout,
              "launcher": launcher, "launcher_args": list(launcher_args)},
        layouts=[layout.key for layout in layouts],
        environment=environment(),
    )
    write_manifest(run_dir, manifest)
    status, error = "failed", None
    try:
        for launched, group in launches(layouts, reuse and mode == "bench"):
            started = time.monotonic()
            label = launch_label(group)
            progress(
                f"# {label}: {launched.hosts} process(es) x {launched.devices_per_host} "
                f"device(s), {sum(len(c) for c in group.values())} case(s)"
            )
            plan = write_plan(run_dir, launched, group, spec, mode=mode)
            watched = [run_dir / "records" / k.key / f"process-{i}.jsonl"
                       for k in group for i in range(k.hosts)]
            logs = run_dir / "logs" / launched.key
            if launcher == "local":
                run_local(launched, plan, logs, case_timeout=case_timeout, port=port,
                          watched=watched, label=label)
            else:
                run_external(launcher, launched, plan, logs, case_timeout=case_timeout,
                             launcher_args=launcher_args, simulate_cpu=simulate_cpu,
                             watched=watched, label=label)
            progress(f"#   done in {time.monotonic() - started:.1f}s")
        status = "complete"
    except WorkerFailed as exc:
        error = str(exc)
        raise WorkerFailed(f"{exc}; records so far kept in {run_dir}") from None
    except UsageError as exc:
        error = str(exc)
        raise UsageError(f"{exc}; records so far kept in {run_dir}") from None
    except KeyboardInterrupt:
        status, error = "interrupted", "interrupted by the user"
        raise Interrupted(f"interrupted; all workers stopped; records so far kept in {run_dir}") \
            from None
    finally:
        write_manifest(run_dir, replace(manifest, status=status, error=error, finished=now()))
    return run_dir
