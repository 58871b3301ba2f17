"""Job definitions for clusters podscale does not drive itself.

Each runs ``podscale worker`` (or, for a user's own program, ``podscale attach``) on every
host: the same program everywhere, joining with ``jax.distributed.initialize()``
(auto-detected on TPU VMs and under Slurm; explicit coordinator variables on Kubernetes).
Every word taken from the user is quoted.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import PurePosixPath

from podscale.core import envnames
from podscale.core.errors import UsageError


def worker_words(run_dir: str, args: Sequence[str], *, gather: bool = True,
                 print_run: bool = False) -> list[str]:
    """``podscale worker`` as every host runs it: records gathered to process 0 (hosts
    share no filesystem), and with ``print_run`` also printed at the end of its log."""
    words = ["podscale", "worker", "--run-dir", run_dir]
    words += ["--print-run"] if print_run else ["--gather"] if gather else []
    return [*words, *args]


def attach_words(run_dir: str, program: str, args: Sequence[str],
                 options: Sequence[str] = ()) -> list[str]:
    """``podscale attach`` as every host runs it (with its own ``options``): the program's
    records batched through the coordination service to process 0, which keeps them under
    ``run_dir``."""
    return ["podscale", "attach", "--run-dir", run_dir, *options, program, *args]


def pod_words(name: str, words: Sequence[str], results_pvc: str | None,
              run_dir: str | None, program: Sequence[str] = ()) -> tuple[list[str], str]:
    """What every pod runs, and the run directory: ``podscale worker`` (records gathered
    to process 0: on the claim, or printed at the end of its log), or ``podscale attach``
    of ``program`` (its options, then its path in the image; the claim required)."""
    run_dir = run_dir or (f"/results/{name}" if results_pvc else f"/tmp/podscale/{name}")
    if program:
        if not results_pvc:
            raise UsageError("--program needs --results-pvc: a profiled program's records "
                             "come home on the claim, not through the log")
        return attach_words(run_dir, program[-1], words, program[:-1]), run_dir
    return worker_words(run_dir, words, print_run=not results_pvc), run_dir


def tpu_commands(name: str, zone: str, project: str | None, run_dir: str,
                 words: Sequence[str], out: str, setup: str | None = None) -> list[list[str]]:
    """The three steps of a TPU pod study, as argv: run ``words`` (``podscale worker`` or
    ``podscale attach``) on every VM (``gcloud ... ssh --worker=all``), copy process 0's
    run directory back (``gcloud ... scp --recurse --worker=0``) into ``out``, and write its
    report here."""
    where = [f"--zone={zone}", *([f"--project={project}"] if project else [])]
    remote = shlex.join(words)
    if setup:
        remote = f"{setup} && {remote}"
    vm = ["gcloud", "compute", "tpus", "tpu-vm"]
    return [[*vm, "ssh", name, *where, "--worker=all", f"--command={remote}"],
            [*vm, "scp", "--recurse", f"{name}:{run_dir}", out, *where, "--worker=0"],
            ["podscale", "report", str(PurePosixPath(out) / PurePosixPath(run_dir).name)]]


def sbatch_script(hosts: int, run_args: Sequence[str], *, job_name: str = "podscale",
                  time_limit: str = "01:00:00", partition: str | None = None,
                  devices_per_host: int | None = None,
                  program: tuple[str, str] | None = None,
                  attach_options: Sequence[str] = (), replay: bool = False) -> str:
    """An sbatch script: one task per node; ``podscale run --launcher srun --report``
    inside the allocation supervises one ``srun`` per layout (host counts up to ``hosts``)
    on the cluster's shared filesystem, then writes the report next to the run. With
    ``program`` (its path and the run directory's base), ``srun podscale attach`` runs that
    program with ``run_args`` on every node into ``BASE-$SLURM_JOB_ID``, then (``replay``)
    ``podscale replay`` of its saved step inside the allocation, then its report."""
    lines = ["#!/bin/bash", f"#SBATCH --job-name={shlex.quote(job_name)}",
             f"#SBATCH --nodes={hosts}", "#SBATCH --ntasks-per-node=1",
             f"#SBATCH --time={shlex.quote(time_limit)}", "#SBATCH --output=podscale-%j.out"]
    if partition:
        lines.append(f"#SBATCH --partition={shlex.quote(partition)}")
    if devices_per_host:
        lines.append(f"#SBATCH --gpus-per-node={devices_per_host}")
    lines.append("set -euo pipefail")
    if program is not None:
        script, base = program
        attach = attach_words("RUNDIR", script, run_args, attach_options)
        lines += [f'RUN={shlex.quote(base)}-"$SLURM_JOB_ID"',
                  'srun ' + shlex.join(attach).replace("RUNDIR", '"$RUN"', 1),
                  # a step window that never opened (too few steps): said, the report runs
                  *(['podscale replay "$RUN" --launcher srun || true'] if replay else []),
                  'podscale report "$RUN"', ""]
        return "\n".join(lines)
    run = ["podscale", "run", *run_args, "--launcher", "srun", "--report"]
    lines += [shlex.join(run), ""]
    return "\n".join(lines)


def k8s_results(name: str, namespace: str, run_dir: str, results_pvc: str | None,
                job: str | None = None) -> tuple[str, str, str]:
    """Where a Kubernetes job's run lands: the comment saying how to get it, and the
    claim's volume mount and volume (empty without a claim: process 0's log holds it;
    ``job``: the labels of process 0's job, default the Indexed Job ``name``)."""
    q = json.dumps
    if results_pvc:
        return (f"# results: process 0 writes the gathered run to {run_dir} on the claim "
                f"{results_pvc}; copy it out and run: podscale report <copy>\n",
                '          volumeMounts:\n            - name: "results"\n'
                '              mountPath: "/results"\n',
                '      volumes:\n        - name: "results"\n          persistentVolumeClaim:\n'
                f"            claimName: {q(results_pvc)}\n")
    pod0 = (f"kubectl logs -n {namespace} $(kubectl get pods -n {namespace} -l "
            f"{job or f'job-name={name}'},batch.kubernetes.io/job-completion-index=0 -o name)")
    return (f"# results: process 0 prints the gathered run at the end of its log; after the "
            f"job:\n#   {pod0} > podscale.log && podscale collect podscale.log\n", "", "")


def k8s_manifest(name: str, image: str, hosts: int, args: Sequence[str], *,
                 run_dir: str | None = None, results_pvc: str | None = None,
                 port: int = 8476, namespace: str = "default",
                 resources: dict | None = None, program: Sequence[str] = ()) -> str:
    """A headless Service and an Indexed Job of ``hosts`` pods; pod 0 is the coordinator.
    With ``results_pvc`` the claim is mounted at /results and process 0 writes the
    gathered run there; without, process 0 prints it at the end of its log (collect it
    with ``podscale collect``). With ``program`` (``podscale attach``'s options, then a
    path in the image), every pod runs it under ``podscale attach`` with ``args`` (the
    claim is then required). Rendered as YAML whose every scalar is a JSON string."""
    q = json.dumps
    words, run_dir = pod_words(name, args, results_pvc, run_dir, program)
    env = {
        envnames.COORDINATOR: f"{name}-0.{name}.{namespace}.svc:{port}",
        envnames.NUM_PROCESSES: str(hosts),
    }
    env_lines = "".join(f"            - name: {q(k)}\n              value: {q(v)}\n"
                        for k, v in env.items())
    command = "".join(f"            - {q(w)}\n" for w in words)
    limits = "".join(f"              {q(k)}: {q(str(v))}\n" for k, v in (resources or {}).items())
    res = f"          resources:\n            limits:\n{limits}" if limits else ""
    how, mount, volume = k8s_results(name, namespace, run_dir, results_pvc)
    return f"""{how}apiVersion: v1
kind: Service
metadata:
  name: {q(name)}
  namespace: {q(namespace)}
spec:
  clusterIP: None
  selector:
    job-name: {q(name)}
  ports:
    - port: {port}
      name: coordinator
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {q(name)}
  namespace: {q(namespace)}
spec:
  completionMode: Indexed
  completions: {hosts}
  parallelism: {hosts}
  backoffLimit: 0
  template:
    spec:
      subdomain: {q(name)}
      restartPolicy: Never
{volume}      containers:
        - name: podscale
          image: {q(image)}
          ports:
            - containerPort: {port}
          env:
{env_lines}            - name: {q(envnames.PROCESS_ID)}
              valueFrom:
                fieldRef:
                  fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"
          command:
{command}{mount}{res}"""
