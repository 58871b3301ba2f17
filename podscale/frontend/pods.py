"""Studies on clusters podscale does not drive itself, and their results coming home.

- ``podscale tpu``: ``podscale worker --gather`` on every TPU VM (gcloud ssh), process 0's
  run directory copied back (gcloud scp --recurse --worker=0), the report written here;
  ``--dry-run`` prints every command, quoted.
- ``podscale k8s``: an Indexed Job; the gathered run goes to a mounted claim
  (``--results-pvc``), or is printed at the end of process 0's log for ``podscale collect``.
- ``podscale sbatch``: a batch script; the cluster's shared filesystem holds the run and
  ``podscale run --report`` writes the report at the end.
- ``podscale collect LOG``: the run directory back from a log (:mod:`podscale.core.runblock`).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from podscale.core import defaults
from podscale.core.errors import UsageError, WorkerFailed


def _rest(words: list[str]) -> list[str]:
    return words[1:] if words[:1] == ["--"] else words


def validated(command: str, words: list[str], hosts: int | None = None,
              nodes: int | None = None) -> list[str]:
    """The words a generated job passes to ``podscale run`` or ``podscale worker``,
    checked as that command would check them — workloads, grid values, every case of the
    grid at ``hosts`` processes where the job's size is known, no layout wider than the
    ``nodes`` allocated — before anything is printed or started (one-line error, exit 2)."""
    from dataclasses import replace

    from podscale.core.grid import expand_all
    from podscale.frontend.cli import build_parser
    from podscale.frontend.gridargs import grids_from_args

    words = _rest(words)
    extra = ["--run-dir", "/tmp/podscale-check"] if command == "worker" else []
    args = build_parser().parse_args([command, *extra, *words])
    if args.workloads is None and args.suite_file is None:
        raise UsageError(f"name the workloads after -- (e.g. -- psum --sizes 1M): podscale "
                         f"{command} needs them")
    grids, _ = grids_from_args(args)
    if hosts is not None:
        asked = sorted({h for g in grids for h in g.hosts})
        if args.hosts and asked != [hosts]:
            raise UsageError(f"--hosts {args.hosts} after -- contradicts the job's {hosts} "
                             "process(es): podscale worker runs the job's own process count "
                             "(leave --hosts out)")
        grids = [replace(g, hosts=(hosts,)) for g in grids]
    widest = max(h for g in grids for h in g.hosts)
    if nodes is not None and widest > nodes:
        raise UsageError(f"the grid runs {widest} hosts but the job allocates {nodes} "
                         f"node(s), one process each: pass --nodes {widest} or --hosts "
                         f"up to {nodes} after --")
    expand_all(grids)
    return words


def sbatch(nodes: int, run_args: list[str], *, time_limit: str = "01:00:00",
           partition: str | None = None, gpus_per_node: int | None = None,
           program: str | None = None, run_dir: str | None = None,
           attach_args: str = "") -> int:
    """Print the batch script for ``podscale run RUN_ARGS`` on ``nodes`` nodes, or with
    ``program`` for ``podscale attach [ATTACH_ARGS] PROGRAM RUN_ARGS`` on every node (and
    ``podscale replay`` of the step it saves, when ATTACH_ARGS ask for a step window)."""
    from podscale.frontend.profiling import attach_options, check_script
    from podscale.launch.generators import sbatch_script

    if nodes < 1:
        raise UsageError("--nodes must be >= 1")
    if gpus_per_node is not None and gpus_per_node < 0:
        raise UsageError("--gpus-per-node must be >= 0")
    options, window = attach_options(attach_args, program)
    if program is not None:
        check_script(Path(program))  # the batch script runs where it is submitted from
        base = run_dir or str(defaults.OUT / f"{Path(program).stem}-slurm")
        print(sbatch_script(nodes, _rest(run_args), time_limit=time_limit,
                            partition=partition, devices_per_host=gpus_per_node,
                            program=(program, base), attach_options=options,
                            replay=window), end="")
        return 0
    words = validated("run", run_args, nodes=nodes)
    print(sbatch_script(nodes, words, time_limit=time_limit, partition=partition,
                        devices_per_host=gpus_per_node), end="")
    return 0


def k8s(name: str, image: str, hosts: int, worker_args: list[str], *,
        namespace: str = "default", run_dir: str | None = None,
        results_pvc: str | None = None, gpus_per_host: int = 0,
        program: str | None = None, attach_args: str = "") -> int:
    """Print the Service and Indexed Job running ``podscale worker WORKER_ARGS``, or with
    ``program`` (a path in the image) ``podscale attach [ATTACH_ARGS] PROGRAM
    WORKER_ARGS``."""
    from podscale.frontend.profiling import attach_options
    from podscale.launch.generators import k8s_manifest

    if hosts < 1:
        raise UsageError("--hosts must be >= 1")
    if gpus_per_host < 0:
        raise UsageError("--gpus-per-host must be >= 0")
    if program is not None and not results_pvc:
        raise UsageError("--program needs --results-pvc: a profiled program's records come "
                         "home on the claim, not through the log")
    options, _ = attach_options(attach_args, program)
    words = _rest(worker_args) if program else validated("worker", worker_args, hosts=hosts)
    res = {"nvidia.com/gpu": gpus_per_host} if gpus_per_host else None
    print(k8s_manifest(name, image, hosts, words, run_dir=run_dir, results_pvc=results_pvc,
                       namespace=namespace, resources=res,
                       program=[*options, program] if program else ()), end="")
    return 0


def tpu(name: str, zone: str, worker_args: list[str], *, project: str | None = None,
        run_dir: str | None = None, out: str = str(defaults.OUT), setup: str | None = None,
        dry_run: bool = False, program: str | None = None, attach_args: str = "") -> int:
    """Run, copy back, report; a failed step stops the rest (exit 3), but a failed run is
    still copied back: the records it kept come home too. With ``program`` (a path on the
    VMs), every VM runs it under ``podscale attach`` with ``worker_args``."""
    from podscale.frontend.actions import write_report
    from podscale.frontend.profiling import attach_options
    from podscale.launch.generators import attach_words, tpu_commands, worker_words

    options, _ = attach_options(attach_args, program)
    run_dir = run_dir or f"/tmp/podscale/{datetime.now():%Y%m%d-%H%M%S}-tpu"
    words = attach_words(run_dir, program, _rest(worker_args), options) if program else \
        worker_words(run_dir, validated("worker", worker_args))
    ssh, scp, report = tpu_commands(name, zone, project, run_dir, words, out, setup)
    if dry_run:
        for argv in (ssh, ["mkdir", "-p", out], scp, report):
            print(shlex.join(argv))
        return 0
    if shutil.which("gcloud") is None:
        raise UsageError("gcloud not found on PATH (use --dry-run to print the commands)")
    ran = subprocess.call(ssh)
    Path(out).mkdir(parents=True, exist_ok=True)
    copied = subprocess.call(scp)  # even after a failed run: its records come home
    local = Path(report[-1])
    if ran:  # the first step that failed is the one named
        back = f"the records they kept were copied to {local}" if not copied else \
            f"copying them back failed too ({shlex.join(scp)})"
        raise WorkerFailed(f"step 1 of 3 ({words[0]} {words[1]} on every VM, gcloud ssh) "
                           f"failed with exit code {ran}; {back}")
    if copied:
        raise WorkerFailed(f"step 2 of 3 (copying {name}:{run_dir} back, gcloud scp) "
                           f"failed with exit code {copied}: {shlex.join(scp)}")
    return write_report(local)


def collect(log: str, out: Path, report: bool = True) -> int:
    """The run printed in ``log`` (a path, or ``-``: stdin) as a run directory under
    ``out``, with its report."""
    from podscale.analysis import load_run
    from podscale.core.runblock import extract
    from podscale.frontend.actions import write_report

    if log == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(log).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise UsageError(f"cannot read {log}: {exc.strerror}") from None
    out.mkdir(parents=True, exist_ok=True)
    run = extract(text, out)
    loaded = load_run(run)
    print(f"# run {loaded.run_id} ({loaded.status_text}) collected: {run}")
    if report:
        write_report(loaded)
    return 0
