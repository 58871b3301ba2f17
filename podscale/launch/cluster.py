"""Launchers beyond the local one — all start the same worker on every host.

- ``mpirun`` (Open MPI) and ``srun`` (inside a Slurm allocation): podscale runs the
  launcher per layout and supervises it; workers join with ``jax.distributed.initialize()``
  auto-detecting the cluster from the launcher's environment.
- Generators for clusters podscale does not drive itself: an sbatch script, the
  ``gcloud compute tpus tpu-vm ssh --worker=all`` command for TPU VM pods, and a
  Kubernetes Indexed Job. They run ``podscale worker`` on every host.

No shell strings are built from user input except where a remote shell is the interface
(gcloud's ``--command``, the sbatch script), and there every word is ``shlex``-quoted.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from podscale.core import envnames
from podscale.core.case import Layout
from podscale.core.environment import OWNED_ENV
from podscale.core.errors import UsageError
from podscale.core.lines import MPI_TAG, rejoin_mpirun
from podscale.launch.exits import NOISE, describe_exit
from podscale.launch.local import _SOURCE_ROOT, Worker, supervise, terminate
from podscale.launch.options import LAUNCHERS, LaunchOptions

_SRUN_TAG = re.compile(r"^\s*(\d+): ?(.*)$")
_MPI_FIRST = re.compile(r"Process name: \[\[\d+,\d+\],(\d+)\]")
_SRUN_FIRST = re.compile(r"task (\d+): (?:Exited|Killed|Terminated|Segmentation)")
_RAY_FIRST = re.compile(r"^ray: process (\d+)\b", re.M)
_ERROR = re.compile(r"^\s*(?:[\w.]+(?:Error|Exception|Interrupt)|podscale: error)\b")


class LauncherProcess(Worker):
    """mpirun/srun as one supervised child; its output is tagged with the rank."""

    kind: str = "mpirun"

    def failure(self, code: int) -> str:
        return f"failed ({self.kind} {describe_exit(code)})"

    def culprit(self) -> tuple[str, str]:
        """The failing rank (from the launcher's own report) and its error line: stdout and
        stderr are forwarded separately, so an exception line is preferred to the last."""
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return self.kind, "(no output)"
        first = {"mpirun": _MPI_FIRST, "ray": _RAY_FIRST}.get(self.kind, _SRUN_FIRST)
        by_rank = split_by_rank(text, self.kind)
        m = first.search(text)
        rank = int(m.group(1)) if m else None
        if self.kind == "ray" and m is not None:  # an actor that died said nothing of it
            said = text[m.start():].splitlines()[0].strip()[:300]
            if "actor died" in said:
                return f"process {rank}", said
        if rank not in by_rank:
            rank = max(by_rank, key=lambda r: len(by_rank[r]), default=None)
        if rank is None:  # no rank ever ran: the launcher's own refusal says why
            return self.kind, _launcher_says(text)
        # srun tags its own step-cancellation notice with the rank: not the worker's output
        lines = [line for line in by_rank[rank] if not line.lstrip().startswith("slurmstepd")] \
            or by_rank[rank]
        errors = [line for line in lines if _ERROR.search(line)]
        return f"process {rank}", (errors or lines)[-1].strip()[:300]


#: launchers' multi-line refusals whose last line says nothing, by a line they hold
KNOWN_REFUSALS = {
    "mpirun has detected an attempt to run as root":
        "mpirun refuses to run as root: set OMPI_ALLOW_RUN_AS_ROOT=1 and "
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, or pass --launcher-args=--allow-run-as-root",
}


def _launcher_says(text: str) -> str:
    """The launcher's own last error line (untagged, not our ``#`` header or its rules);
    a known refusal (:data:`KNOWN_REFUSALS`) in words that say it."""
    for sign, meaning in KNOWN_REFUSALS.items():
        if sign in text:
            return meaning
    own = [line.strip() for line in text.splitlines() if line.strip()
           and not line.startswith("#") and not MPI_TAG.match(line)
           and not _SRUN_TAG.match(line) and line.strip("-= ")]
    errors = [line for line in own if "rror" in line or "fatal" in line.lower()]
    return (errors or own or ["(no output)"])[-1][:300]


def split_by_rank(text: str, kind: str) -> dict[int, list[str]]:
    """A launcher's combined log, as each rank's own lines (noise dropped; mpirun's
    fragments joined, :func:`~podscale.core.lines.rejoin_mpirun`)."""
    if kind == "mpirun":
        lines = rejoin_mpirun(text)
    else:
        lines = [(int(t.group(1)), t.group(2)) for t in map(_SRUN_TAG.match, text.splitlines())
                 if t]
    out: dict[int, list[str]] = {}
    for rank, line in lines:
        if line.strip() and not line.startswith(NOISE):
            out.setdefault(rank, []).append(line)
    return out


def launcher_argv(launcher: str, hosts: int, extra: Sequence[str]) -> list[str]:
    """The launcher's own words: start ``hosts`` copies of what follows."""
    if launcher == "mpirun":
        return ["mpirun", "-np", str(hosts), "--tag-output", *extra]
    if launcher == "srun":
        return ["srun", "-n", str(hosts), "--kill-on-bad-exit=1", "--label", *extra]
    if launcher == "ray":  # podscale's own driver: one Ray actor per host
        return [sys.executable, "-m", "podscale.launch.raydriver", "--processes", str(hosts),
                *extra, "--"]
    raise UsageError(f"unknown launcher {launcher!r} (known: {', '.join(LAUNCHERS)})")


def worker_env(layout: Layout, simulate_cpu: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in OWNED_ENV}  # the job sets its own
    env.update({envnames.CLUSTER: "auto", "PYTHONUNBUFFERED": "1",
                "PYTHONPATH": os.pathsep.join(p for p in (_SOURCE_ROOT, env.get("PYTHONPATH"))
                                              if p)})
    if simulate_cpu:
        env[envnames.CPU_DEVICES] = str(layout.devices_per_host)
    return env


def run_external(
    layout: Layout,
    plan: Path,
    logs: Path,
    options: LaunchOptions,
    *,
    watched: Sequence[Path] = (),
    label: str | None = None,
    on_poll: Callable[[], None] | None = None,
    command: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> list[Path]:
    """Run ``plan`` on ``layout.processes`` processes started by ``options.launcher``;
    ``command`` (after the interpreter): what each runs instead of the worker on ``plan``
    (``podscale profile``'s attach), with ``env`` on top of the launcher's environment;
    ``home``: the run folder (Ray ships it to an actor whose node does not share it)."""
    launcher = options.launcher
    if launcher == "ray":
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            raise UsageError("--launcher ray needs Ray installed: pip install 'podscale[ray]'")
    elif shutil.which(launcher) is None:
        raise UsageError(f"launcher {launcher!r} not found on PATH")
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{launcher}.log"
    extra = (*options.launcher_args,
             *(("--home", str(home.resolve())) if launcher == "ray" and home else ()))
    argv = [*launcher_argv(launcher, layout.processes, extra), sys.executable,
            *(command or ("-m", "podscale.worker", str(plan.resolve())))]
    with log.open("w", encoding="utf-8") as fh:
        fh.write(f"# {shlex.join(argv)}\n")
        fh.flush()
        popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fh,
                                 stderr=subprocess.STDOUT, start_new_session=True,
                                 env={**worker_env(layout, options.simulate_cpu),
                                      **(env or {})})
    proc = LauncherProcess(0, popen, log)
    proc.kind = launcher
    try:
        supervise([proc], f"{label or 'layout ' + layout.key} ({launcher})",
                  options.case_timeout, watched, on_poll)
    finally:
        terminate([proc])
    return [log]
