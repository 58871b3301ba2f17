"""Job definitions for clusters podscale does not drive itself.

Each runs ``podscale worker`` on every host: the same program everywhere, joining with
``jax.distributed.initialize()`` (auto-detected on TPU VMs and under Slurm; explicit
coordinator variables on Kubernetes). Every word taken from the user is quoted.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence


def worker_words(run_dir: str, args: Sequence[str]) -> list[str]:
    return ["podscale", "worker", "--run-dir", run_dir, *args]


def tpu_command(name: str, zone: str, project: str | None, run_dir: str,
                args: Sequence[str], setup: str | None = None) -> list[str]:
    """argv of ``gcloud compute tpus tpu-vm ssh NAME --worker=all --command ...``."""
    remote = shlex.join(worker_words(run_dir, args))
    if setup:
        remote = f"{setup} && {remote}"
    argv = ["gcloud", "compute", "tpus", "tpu-vm", "ssh", name, f"--zone={zone}"]
    if project:
        argv.append(f"--project={project}")
    return [*argv, "--worker=all", f"--command={remote}"]


def sbatch_script(hosts: int, run_args: Sequence[str], *, job_name: str = "podscale",
                  time_limit: str = "01:00:00", partition: str | None = None,
                  devices_per_host: int | None = None) -> str:
    """An sbatch script: one task per node; ``podscale run --launcher srun`` inside the
    allocation supervises one ``srun`` per layout (host counts up to ``hosts``)."""
    lines = ["#!/bin/bash", f"#SBATCH --job-name={shlex.quote(job_name)}",
             f"#SBATCH --nodes={hosts}", "#SBATCH --ntasks-per-node=1",
             f"#SBATCH --time={shlex.quote(time_limit)}", "#SBATCH --output=podscale-%j.out"]
    if partition:
        lines.append(f"#SBATCH --partition={shlex.quote(partition)}")
    if devices_per_host:
        lines.append(f"#SBATCH --gpus-per-node={devices_per_host}")
    run = ["podscale", "run", *run_args, "--launcher", "srun"]
    lines += ["set -euo pipefail", shlex.join(run), ""]
    return "\n".join(lines)


def k8s_manifest(name: str, image: str, hosts: int, run_dir: str, args: Sequence[str], *,
                 port: int = 8476, namespace: str = "default",
                 resources: dict | None = None) -> str:
    """A headless Service and an Indexed Job of ``hosts`` pods; pod 0 is the coordinator.
    Rendered as YAML whose every scalar is a JSON string (valid YAML)."""
    q = json.dumps
    env = {
        "PODSCALE_COORDINATOR": f"{name}-0.{name}.{namespace}.svc:{port}",
        "PODSCALE_NUM_PROCESSES": str(hosts),
    }
    env_lines = "".join(f"            - name: {q(k)}\n              value: {q(v)}\n"
                        for k, v in env.items())
    command = "".join(f"            - {q(w)}\n" for w in worker_words(run_dir, args))
    limits = "".join(f"              {q(k)}: {q(str(v))}\n" for k, v in (resources or {}).items())
    res = f"          resources:\n            limits:\n{limits}" if limits else ""
    return f"""apiVersion: v1
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
      containers:
        - name: podscale
          image: {q(image)}
          ports:
            - containerPort: {port}
          env:
{env_lines}            - name: "PODSCALE_PROCESS_ID"
              valueFrom:
                fieldRef:
                  fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"
          command:
{command}{res}"""
