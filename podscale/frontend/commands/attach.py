"""``podscale attach [--run-dir DIR] SCRIPT [ARGS...]``: run a program unmodified in this
process, recorded (what every rank runs under mpirun, srun, TPU VMs or Kubernetes, and
what ``podscale profile`` starts locally). Options go before SCRIPT; everything after it
is the script's own. The exit code is the script's."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("attach", help="run a program unmodified on this rank, recording "
                                      "its steps (under a cluster launcher)",
                       description=__doc__)
    p.add_argument("--run-dir", type=Path, default=None,
                   help="the run directory, the same on every rank (default: "
                        "results/attach-<script>[-<job id>])")
    from podscale.frontend.commands.captureargs import add_capture_args

    add_capture_args(p)
    p.add_argument("script", type=Path, help="the program (a Python file)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the program's own arguments")
    p.set_defaults(func=run)


def _job_id() -> str:
    for var in ("SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid", "JOB_COMPLETION_INDEX",
                "PMIX_NAMESPACE"):
        if os.environ.get(var):
            return "-" + "".join(c for c in os.environ[var] if c.isalnum())[:24]
    return ""


def run(args: argparse.Namespace) -> int:
    from podscale.frontend.commands.captureargs import capture_of
    from podscale.frontend.profiling import SUPERVISED, check_script, run_name, script_spec

    check_script(args.script)
    capture = capture_of(args)
    run_dir = args.run_dir or Path("results") / f"attach-{run_name(args.script)}{_job_id()}"
    if run_dir.exists() and not run_dir.is_dir():
        from podscale.core.errors import UsageError

        raise UsageError(f"--run-dir {run_dir} is a file, not a directory")
    from podscale.attach.joining import env_process
    from podscale.attach.session import attach

    if not os.environ.get(SUPERVISED) and env_process() == 0:
        capture.check_port()  # podscale profile checked it before any process started

    def body() -> int:
        return attach(run_dir, args.script, args.args, capture.windows(), capture.step,
                      capture.hang_timeout, capture.feed())

    if os.environ.get(SUPERVISED):
        return _leave(body())
    return _leave(_kept(run_dir, {**script_spec(args.script, args.args, capture.step,
                                                 "attach"), **capture.figures}, body))


def _leave(code: int) -> int:
    """The script's exit code; where it failed in a job of several processes, leave at
    once: JAX's shutdown at exit would wait for the peers, which wait for this process in
    a collective until they read its failure (:func:`podscale.attach.hang.failed`)."""
    from podscale.startup.jaxapi import coordination_client

    if code and "jax" in sys.modules and coordination_client() is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _kept(run_dir: Path, spec: dict, body: Callable[[], int]) -> int:
    """Under a cluster launcher: rank 0 (by the launcher's variables) keeps the manifest,
    ``failed`` when the script's exit code is not 0."""
    from podscale.attach.joining import env_process
    from podscale.core.records import Manifest, lifecycle

    if env_process() != 0:
        return body()
    from podscale.core.errors import WorkerFailed

    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        with lifecycle(run_dir, Manifest.new(run_dir.name, spec, [])):
            code = body()
            if code:
                raise WorkerFailed(f"process 0: the script exited with code {code}", code)
    except WorkerFailed as exc:
        print(f"podscale: {exc}", file=sys.stderr)
        return exc.code or 1
    return code
