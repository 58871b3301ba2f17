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

import argparse
import shlex
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from podscale.core.errors import UsageError, WorkerFailed


def _rest(words: list[str]) -> list[str]:
    return words[1:] if words[:1] == ["--"] else words


def cmd_sbatch(args: argparse.Namespace) -> int:
    from podscale.launch.generators import sbatch_script

    if args.nodes < 1:
        raise UsageError("--nodes must be >= 1")
    print(sbatch_script(args.nodes, _rest(args.run_args), time_limit=args.time,
                        partition=args.partition, devices_per_host=args.gpus_per_node), end="")
    return 0


def cmd_k8s(args: argparse.Namespace) -> int:
    from podscale.launch.generators import k8s_manifest

    if args.hosts < 1:
        raise UsageError("--hosts must be >= 1")
    res = {"nvidia.com/gpu": args.gpus_per_host} if args.gpus_per_host else None
    print(k8s_manifest(args.name, args.image, args.hosts, _rest(args.worker_args),
                       run_dir=args.run_dir, results_pvc=args.results_pvc,
                       namespace=args.namespace, resources=res), end="")
    return 0


def cmd_tpu(args: argparse.Namespace) -> int:
    """Run, copy back, report; a failed step stops the rest (exit 3), but a failed run is
    still copied back: the records it kept come home too."""
    from podscale.frontend.actions import write_report
    from podscale.launch.generators import tpu_commands

    run_dir = args.run_dir or f"/tmp/podscale/{datetime.now():%Y%m%d-%H%M%S}-tpu"
    ssh, scp, report = tpu_commands(args.tpu, args.zone, args.project, run_dir,
                                    _rest(args.worker_args), args.out, args.setup)
    if args.dry_run:
        for argv in (ssh, ["mkdir", "-p", args.out], scp, report):
            print(shlex.join(argv))
        return 0
    if shutil.which("gcloud") is None:
        raise UsageError("gcloud not found on PATH (use --dry-run to print the commands)")
    ran = subprocess.call(ssh)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    if subprocess.call(scp):
        raise WorkerFailed(f"copying {args.tpu}:{run_dir} back failed (command: "
                           f"{shlex.join(scp)})")
    local = Path(report[-1])
    if ran:
        raise WorkerFailed(f"the workers failed (gcloud ssh exited with {ran}); the records "
                           f"they kept were copied to {local}")
    return write_report(local)


def cmd_collect(args: argparse.Namespace) -> int:
    from podscale.analysis import load_run
    from podscale.core.runblock import extract
    from podscale.frontend.actions import write_report

    if args.log == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(args.log).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise UsageError(f"cannot read {args.log}: {exc.strerror}") from None
    args.out.mkdir(parents=True, exist_ok=True)
    run = extract(text, args.out)
    loaded = load_run(run)
    print(f"# run {loaded.run_id} ({loaded.status}) collected: {run}")
    if args.report:
        write_report(loaded)
    return 0
