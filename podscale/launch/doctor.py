"""``podscale doctor``: what this machine gives a benchmark, on one screen — the JAX and
runtime packages installed, the device nodes, what JAX lists (asked in a child process,
which then frees the chips), the platform ``--platform auto`` takes, the cluster JAX
would join, the TPU runtime's known start-up costs — and each problem with its fix.

Where device nodes show chips JAX cannot use, the report has a problem and the command
exits 1 (``PODSCALE_ACCELERATORS=tpu:no-runtime`` plants that)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from podscale.core import envnames, machine
from podscale.core.version import __version__
from podscale.launch.chips import planted_chips

#: the packages JAX's runtimes come in, for the versions the report gives
RUNTIME_PACKAGES = ("libtpu", "libtpu-nightly", "jax-cuda12-plugin", "jax-cuda12-pjrt",
                    "jax-cuda13-plugin", "jax-cuda13-pjrt", "jax-rocm7-plugin",
                    "jax-rocm7-pjrt")
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
#: what the child process says: JAX's devices as the machine gives them, and how long
#: listing them took (the runtime's start, paid by every process that opens the chips)
PROBE = """
import json, time
t0 = time.monotonic()
import jax
out = {"import_s": time.monotonic() - t0}
t1 = time.monotonic()
try:
    devs = jax.devices()
    stats = devs[0].memory_stats() or {}
    out.update(platform=devs[0].platform, kind=devs[0].device_kind, count=len(devs),
               local=jax.local_device_count(), memory=int(stats.get("bytes_limit", 0)))
except Exception as exc:
    out["error"] = (type(exc).__name__ + ": " + str(exc)).splitlines()[0][:300]
out["devices_s"] = time.monotonic() - t1
from podscale.startup.jaxapi import detected_cluster
out["cluster"] = detected_cluster()
print("PODSCALE-DOCTOR " + json.dumps(out))
"""


@dataclass(frozen=True)
class Report:
    """The doctor's findings: ``rows`` (label, value) in order, ``problems`` each with its
    fix, and whether chips are there that JAX cannot use (``unusable``: exit 1)."""

    rows: tuple[tuple[str, str], ...]
    problems: tuple[str, ...] = ()
    unusable: bool = False
    facts: dict = field(default_factory=dict)

    def text(self, columns: int = 100) -> str:
        """The screen, wrapped to ``columns``."""
        import textwrap

        width = max(len(k) for k, _ in self.rows)
        out = ["podscale doctor: what this machine gives a benchmark", ""]
        for k, v in self.rows:
            out += textwrap.wrap(v, columns, initial_indent=f"  {k:<{width}}  ",
                                 subsequent_indent=" " * (width + 4))
        out += ["", "problems:" if self.problems else "no problems found"]
        for p in self.problems:
            out += textwrap.wrap(p, columns, initial_indent="  - ", subsequent_indent="    ")
        return "\n".join(out)


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _probe(nodes: machine.Nodes, timeout: float) -> dict:
    """JAX's view of this machine, from a child process (the chips freed when it ends)."""
    env = dict(os.environ)
    if nodes.usable:
        env["JAX_PLATFORMS"] = nodes.runtime or ""
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    began = time.monotonic()
    try:
        res = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                             timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"error": f"JAX did not list its devices within {timeout:.0f} s"}
    said = [ln for ln in res.stdout.splitlines() if ln.startswith("PODSCALE-DOCTOR ")]
    if not said:
        err = [ln.strip() for ln in res.stderr.splitlines() if ln.strip()] or ["no output"]
        return {"error": f"the probe exited {res.returncode}: {err[-1][:300]}"}
    found = json.loads(said[-1].split(" ", 1)[1])
    found["wall_s"] = time.monotonic() - began
    found["warnings"] = [ln.strip() for ln in res.stderr.splitlines() if "Warning" in ln]
    return found


def _thp() -> str | None:
    """The kernel's transparent hugepage mode ([always] madvise never), None if unread."""
    try:
        text = THP.read_text()
    except OSError:
        return None
    chosen = [w.strip("[]") for w in text.split() if w.startswith("[")]
    return chosen[0] if chosen else text.strip()


def _packages() -> str:
    found = [f"{n} {v}" for n in RUNTIME_PACKAGES if (v := _version(n))]
    return ", ".join(found) or "none (CPU only)"


def examine(timeout: float = 300) -> Report:
    """This machine, examined (one child process asks JAX; no device stays open)."""
    nodes = machine.read()
    planted = os.environ.get(envnames.ACCELERATORS) is not None
    rows: list[tuple[str, str]] = [
        ("podscale", f"{__version__} ({Path(__file__).resolve().parents[1]})"),
        ("python", f"{sys.version.split()[0]} ({sys.executable})"),
        ("jax, jaxlib", f"{_version('jax') or 'not installed'}, "
                        f"{_version('jaxlib') or 'not installed'}"),
        ("runtime packages", _packages()),
        ("device nodes", f"{nodes.platform}: {nodes.where()}" if nodes.runtime else "none")]
    problems: list[str] = []
    if nodes.runtime and not nodes.usable:
        problems.append(nodes.unusable())
    if planted and nodes.usable:
        chips = planted_chips(os.environ[envnames.ACCELERATORS])
        seen = {"platform": nodes.platform, "count": chips.count if chips else 0,
                "kind": f"{chips.kind if chips else ''} (planted)"}
    else:
        seen = _probe(nodes, timeout)
    rows += _jax_rows(seen, nodes, problems)
    rows += _startup_rows(seen, problems)
    return Report(tuple(rows), tuple(problems), unusable=bool(nodes.runtime) and (
        not nodes.usable or "error" in seen), facts={"nodes": nodes.paths, "jax": seen})


def _jax_rows(seen: dict, nodes: machine.Nodes,
              problems: list[str]) -> list[tuple[str, str]]:
    if "error" in seen:
        problems.append(f"JAX could not list its devices: {seen['error']} (another program "
                        "may hold the chips)")
        return [("JAX lists", f"nothing: {seen['error']}")]
    memory = f", {seen['memory'] / 2**30:.1f} GiB each" if seen.get("memory") else ""
    listed = f"{seen.get('count')} {seen.get('kind')} device(s), platform " \
             f"{seen.get('platform')}{memory}"
    took = f" in {seen['devices_s']:.1f} s" if "devices_s" in seen else ""
    if seen.get("platform") == "cpu":
        auto = "cpu: hosts simulated as processes on this machine's CPU"
        if nodes.runtime and not nodes.usable:
            auto += f", though it has {nodes.platform} device nodes (see problems)"
    else:
        auto = f"{seen.get('platform')}: this machine's chips, measured"
    cluster = seen.get("cluster")
    return [("JAX lists", listed + took), ("--platform auto", auto),
            ("cluster JAX detects", f"{cluster}: jax.distributed.initialize() joins it "
             "(podscale worker)" if cluster else "none: podscale worker runs a one-process "
             "job; podscale run simulates hosts or splits this machine's chips")]


def _startup_rows(seen: dict, problems: list[str]) -> list[tuple[str, str]]:
    if seen.get("platform") != "tpu" or "devices_s" not in seen:
        return []
    thp = _thp()
    rows = [("TPU runtime start", f"{seen.get('devices_s', 0):.1f} s to list the chips, "
             f"{seen.get('import_s', 0):.1f} s to import JAX: every process that opens "
             "them pays this")]
    if thp != "always":
        said = f"'{thp}'" if thp else f"not readable ({THP})"
        rows.append(("transparent hugepages", f"{said}: the TPU runtime starts and stops "
                     "slower on v5e and newer (it warns)"))
        problems.append("transparent hugepages are not enabled: sudo sh -c 'echo always > "
                        f"{THP}' (where the kernel lets you) shortens every TPU process's "
                        "start")
    return rows
