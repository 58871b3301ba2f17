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
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from podscale.core import defaults
from podscale.core.errors import UsageError, WorkerFailed


def sbatch(nodes: int, words: list[str], *, time_limit: str = "01:00:00",
           partition: str | None = None, gpus_per_node: int | None = None,
           program: str | None = None, run_dir: str | None = None,
           attach: Sequence[str] = (), replay: bool = False) -> int:
    """Print the batch script for ``podscale run WORDS`` (checked: :func:`podscale.frontend
    .commands.jobwords.job_words`) on ``nodes`` nodes, or with ``program`` for ``podscale
    attach [ATTACH] PROGRAM WORDS`` (the program's own) on every node (``attach``:
    its options, checked; with ``replay``, a step window among them, then ``podscale
    replay`` of the step it saves)."""
    from podscale.frontend.profiling import check_script
    from podscale.launch.generators import sbatch_script

    if nodes < 1:
        raise UsageError("--nodes must be >= 1")
    if gpus_per_node is not None and gpus_per_node < 0:
        raise UsageError("--gpus-per-node must be >= 0")
    if program is not None:
        check_script(Path(program))  # the batch script runs where it is submitted from
        base = run_dir or str(defaults.OUT / f"{Path(program).stem}-slurm")
        print(sbatch_script(nodes, words, time_limit=time_limit,
                            partition=partition, devices_per_host=gpus_per_node,
                            program=(program, base), attach_options=attach,
                            replay=replay), end="")
        return 0
    print(sbatch_script(nodes, words, time_limit=time_limit, partition=partition,
                        devices_per_host=gpus_per_node), end="")
    return 0


def k8s(name: str, image: str, hosts: int, words: list[str], *,
        namespace: str = "default", run_dir: str | None = None,
        results_pvc: str | None = None, gpus_per_host: int = 0,
        program: str | None = None, attach: Sequence[str] = ()) -> int:
    """Print the Service and Indexed Job running ``podscale worker WORDS`` (checked), or
    with ``program`` (a path in the image) ``podscale attach [ATTACH] PROGRAM WORDS``
    (``attach``: its options, checked; ``words``: the program's own)."""
    from podscale.launch.generators import k8s_manifest

    if hosts < 1:
        raise UsageError("--hosts must be >= 1")
    if gpus_per_host < 0:
        raise UsageError("--gpus-per-host must be >= 0")
    from podscale.launch.k8snames import check_indexed_job

    check_indexed_job(name, namespace, image, hosts, results_pvc)
    res = {"nvidia.com/gpu": gpus_per_host} if gpus_per_host else None
    print(k8s_manifest(name, image, hosts, words, run_dir=run_dir, results_pvc=results_pvc,
                       namespace=namespace, resources=res,
                       program=[*attach, program] if program else ()), end="")
    return 0


def tpu(name: str, zone: str, words: list[str], *, project: str | None = None,
        run_dir: str | None = None, out: str = str(defaults.OUT), setup: str | None = None,
        dry_run: bool = False, program: str | None = None, attach: Sequence[str] = ()) -> int:
    """Run, copy back, report; a failed step stops the rest (exit 3), but a failed run is
    still copied back: the records it kept come home too. With ``program`` (a path on the
    VMs), every VM runs it under ``podscale attach`` (with ``attach``, its options,
    checked) with ``words``, its own; else ``podscale worker WORDS`` (checked)."""
    from podscale.frontend.actions import write_report
    from podscale.launch.generators import attach_words, tpu_commands, worker_words

    run_dir = run_dir or f"/tmp/podscale/{datetime.now():%Y%m%d-%H%M%S}-tpu"
    words = attach_words(run_dir, program, words, attach) if program else \
        worker_words(run_dir, words)
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
