"""A multi-slice TPU job on GKE, as xpk makes one: a JobSet (``jobset.x-k8s.io/v1alpha2``)
of one replicated job of ``slices`` replicas, each an Indexed Job of ``hosts`` pods on one
TPU slice (GKE's TPU node selectors, the slice's topology, one slice per node pool by the
exclusive-placement annotation), and the ``xpk workload create`` command that makes the
same.

Every pod runs ``podscale worker`` (or ``podscale attach`` of a program): JAX's TPU cluster
detection joins the job from what GKE gives each TPU pod and from the ``MEGASCALE_*``
variables, which the JobSet fills from its own labels and names (the slice: the job's
index; the slices: the replicas; the coordinator: pod 0 of slice 0 under the JobSet's
headless service). The run comes home as a Kubernetes job's does: on a claim, or at the
end of process 0's log for ``podscale collect``. Every word taken from the user is quoted.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from podscale.core.errors import UsageError
from podscale.launch.generators import k8s_results

#: per TPU generation: GKE's accelerator node label, chips per host VM, the topology's
#: dimensions, and TensorCores per chip (a v4, v5p or TPU7x type counts TensorCores, v5e
#: and v6e chips: v5p-16 is 8 chips; TPU7x: GKE's ``tpu7x`` label, 4-chip VMs)
GENERATIONS = {"v4": ("tpu-v4-podslice", 4, 3, 2), "v5p": ("tpu-v5p-slice", 4, 3, 2),
               "v5litepod": ("tpu-v5-lite-podslice", 4, 2, 1),
               "v5e": ("tpu-v5-lite-podslice", 4, 2, 1), "v6e": ("tpu-v6e-slice", 4, 2, 1),
               "tpu7x": ("tpu7x", 4, 3, 2)}
#: the usual topology of a slice of N chips, by the topology's dimensions
TOPOLOGIES = {3: {4: "2x2x1", 8: "2x2x2", 16: "2x2x4", 32: "2x4x4", 64: "4x4x4",
                  128: "4x4x8", 256: "4x8x8", 512: "8x8x8"},
              2: {1: "1x1", 4: "2x2", 8: "2x4", 16: "4x4", 32: "4x8", 64: "8x8",
                  128: "8x16", 256: "16x16"}}
#: the JobSet's one replicated job (a slice each): podscale's, and the one xpk writes
JOB, XPK_JOB = "slice", "slice-job"
PORTS = (8471, 8080, 8476)  # the TPU runtime's, megascale's, podscale's own


@dataclass(frozen=True)
class Slice:
    """One TPU slice of a type (``v5p-16``): its chips, hosts (pods), topology, GKE's
    accelerator label and chips per host."""

    tpu_type: str
    chips: int
    hosts: int
    topology: str
    accelerator: str
    chips_per_host: int


def tpu_slice(tpu_type: str, topology: str | None = None) -> Slice:
    """A TPU type's slice (``v5p-16``, ``v5litepod-16``, ``v6e-8``); ``topology``: the
    slice's, where the usual one for its chips is not it."""
    m = re.fullmatch(r"(v4|v5p|v5litepod|v5e|v6e|tpu7x)-(\d+)", tpu_type)
    if m is None:
        raise UsageError(f"bad --tpu-type {tpu_type!r}: use GENERATION-COUNT, e.g. v5p-16, "
                         f"v5litepod-16, v6e-8, v4-16, tpu7x-128 (generations: "
                         f"{', '.join(GENERATIONS)})")
    accelerator, per_host, dims, cores = GENERATIONS[m[1]]
    count = int(m[2])
    if count < cores or count % cores:
        unit = "chips" if cores == 1 else f"TensorCores, {cores} a chip ({m[1]}-16 is 8 chips)"
        raise UsageError(f"bad --tpu-type {tpu_type}: a {m[1]} type counts {unit}: want a "
                         f"multiple of {cores}, at least {cores}" if cores > 1 else
                         f"bad --tpu-type {tpu_type}: a {m[1]} type counts {unit}: want 1 or "
                         "more")
    chips = count // cores
    shape = topology or TOPOLOGIES[dims].get(chips)
    if shape is None:
        raise UsageError(f"--tpu-type {tpu_type}: no usual topology for {chips} chips; give "
                         "--topology (e.g. 4x4x8)")
    sizes = shape.split("x")
    if len(sizes) != dims or not all(s.isdigit() for s in sizes) or \
            _product(sizes) != chips:
        raise UsageError(f"--topology {shape}: a {m[1]} slice of {chips} chips has a "
                         f"{dims}-D topology of {chips} chips")
    return Slice(tpu_type, chips, max(1, chips // per_host), shape, accelerator,
                 min(chips, per_host))


def _product(sizes: Sequence[str]) -> int:
    out = 1
    for s in sizes:
        out *= int(s)
    return out


def _env(name: str) -> str:
    """The MEGASCALE_* variables from the JobSet's labels and names (xpk's way)."""
    q = json.dumps

    def field(var: str, path: str) -> str:
        return (f"                    - name: {q(var)}\n                      valueFrom:\n"
                f"                        fieldRef:\n"
                f"                          fieldPath: {q(path)}\n")
    return (field("JOBSET_NAME", "metadata.annotations['jobset.sigs.k8s.io/jobset-name']")
            + field("MEGASCALE_NUM_SLICES",
                    "metadata.labels['jobset.sigs.k8s.io/replicatedjob-replicas']")
            + field("MEGASCALE_SLICE_ID", "metadata.labels['jobset.sigs.k8s.io/job-index']")
            + f"                    - name: \"MEGASCALE_COORDINATOR_ADDRESS\"\n"
              f"                      value: {q(f'$(JOBSET_NAME)-{JOB}-0-0.$(JOBSET_NAME)')}\n")


def jobset_manifest(name: str, image: str, slices: int, tpu: Slice, words: Sequence[str], *,
                    namespace: str = "default", results_pvc: str | None = None,
                    run_dir: str | None = None) -> str:
    """The JobSet (module doc) running ``words`` (:func:`pod_words`) on every pod."""
    q = json.dumps
    command = "".join(f"                    - {q(w)}\n" for w in words)
    # without a claim, process 0's log: pod 0 of slice 0, by the JobSet's labels
    how, mount, volume = k8s_results(name, namespace, run_dir or "", results_pvc,
                                     f"jobset.sigs.k8s.io/jobset-name={name},"
                                     "jobset.sigs.k8s.io/job-index=0")
    # the claim's lines as an Indexed Job's pod has them, moved under the JobSet's
    mount, volume = ("".join(" " * 8 + line + "\n" for line in part.splitlines())
                     for part in (mount, volume))
    ports = "".join(f"                    - containerPort: {p}\n" for p in PORTS)
    return f"""{how}apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {q(name)}
  namespace: {q(namespace)}
  annotations:
    alpha.jobset.sigs.k8s.io/exclusive-topology: "cloud.google.com/gke-nodepool"
spec:
  failurePolicy:
    maxRestarts: 0
  replicatedJobs:
    - name: {q(JOB)}
      replicas: {slices}
      template:
        spec:
          completionMode: Indexed
          parallelism: {tpu.hosts}
          completions: {tpu.hosts}
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              hostNetwork: true
              dnsPolicy: ClusterFirstWithHostNet
              nodeSelector:
                cloud.google.com/gke-tpu-accelerator: {q(tpu.accelerator)}
                cloud.google.com/gke-tpu-topology: {q(tpu.topology)}
{volume}              containers:
                - name: "podscale"
                  image: {q(image)}
                  securityContext:
                    privileged: true
                  ports:
{ports}                  env:
{_env(name)}                  command:
{command}                  resources:
                    limits:
                      google.com/tpu: {q(str(tpu.chips_per_host))}
{mount}"""


def xpk_command(name: str, image: str, slices: int, tpu: Slice, words: Sequence[str], *,
                cluster: str, project: str | None = None, zone: str | None = None) -> str:
    """``xpk workload create`` making the same job (xpk writes the JobSet itself), after a
    comment saying how the run comes home (process 0's log: xpk mounts no claim)."""
    argv = ["xpk", "workload", "create", "--cluster", cluster, "--workload", name,
            "--docker-image", image, "--tpu-type", tpu.tpu_type, "--num-slices", str(slices),
            *(["--project", project] if project else []),
            *(["--zone", zone] if zone else []), "--command", shlex.join(words)]
    how, _, _ = k8s_results(name, "default", "", None, f"jobset.sigs.k8s.io/jobset-name={name},"
                            "jobset.sigs.k8s.io/job-index=0")
    return how + shlex.join(argv) + "\n"
