"""Pre-flight consistency: before the first case, every process of a job compares what
makes its program what it is — versions, the environment that changes compiled programs,
and the plan — with every other's, through the coordination service's key-value store. A
difference stops the job at once, in one line naming the differing processes and what
differs, before any collective can hang on mismatched programs.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from importlib import metadata
from typing import TYPE_CHECKING

from podscale.core import envnames
from podscale.startup.jaxapi import CoordinationClient

if TYPE_CHECKING:
    from podscale.startup.runtime import Runtime


PREFIX = "podscale/preflight/"
#: environment variables that change the programs XLA compiles or how they communicate
PROGRAM_ENV = ("XLA_FLAGS", "LIBTPU_INIT_ARGS", "TPU_", "NCCL_", "JAX_", "CUDA_VISIBLE_DEVICES")
#: what podscale itself sets differently per process (not a mismatch)
PER_PROCESS = ("JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES",
               "TPU_WORKER_ID", "TPU_VISIBLE_CHIPS", "CUDA_VISIBLE_DEVICES", "NCCL_COMM_ID")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "none"


def fingerprint(plan_dict: dict) -> dict[str, str]:
    """What must be the same on every process of a job."""
    import jax
    import jaxlib

    out = {"python": platform.python_version(), "jax": jax.__version__,
           "jaxlib": jaxlib.__version__, "podscale": _version("podscale"),
           "plan": hashlib.sha256(json.dumps(plan_dict, sort_keys=True).encode())
           .hexdigest()[:16]}
    for name in sorted(os.environ):
        if name.startswith(PROGRAM_ENV) and name not in PER_PROCESS:
            out[f"env {name}"] = os.environ[name]
    for name in ("XLA_FLAGS", "LIBTPU_INIT_ARGS"):
        out.setdefault(f"env {name}", "")
    return out


def differences(prints: dict[int, dict[str, str]]) -> list[str]:
    """One phrase per differing key: which processes have which value (the minority
    named first)."""
    out = []
    for key in sorted({k for p in prints.values() for k in p}):
        groups: dict[str, list[int]] = {}
        for proc, fp in sorted(prints.items()):
            groups.setdefault(fp.get(key, "(unset)"), []).append(proc)
        if len(groups) > 1:
            parts = [f"process{'es' if len(ps) > 1 else ''} {_span(ps)} {value!r}"
                     for value, ps in sorted(groups.items(), key=lambda g: len(g[1]))]
            out.append(f"{key}: " + " vs ".join(parts))
    return out


def _span(ps: list[int]) -> str:
    """Process indices with runs shortened: 0-4,6-15."""
    runs: list[list[int]] = []
    for p in ps:
        if runs and p == runs[-1][-1] + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ",".join(map(str, r)) for r in runs)


def _compare(rt: Runtime, client: CoordinationClient, prefix: str,
             mine: dict[str, str]) -> list[str]:
    """Publish ``mine`` under ``prefix``, meet every process, and return what differs
    between everyone's (see :func:`differences`)."""
    client.key_value_set(f"{prefix}{rt.process}", json.dumps(mine), allow_overwrite=True)
    rt.barrier(f"podscale {prefix}")
    return differences({int(k.rsplit("/", 1)[1]): json.loads(v)
                        for k, v in client.key_value_dir_get(prefix)})


def check(rt: Runtime, client: CoordinationClient, plan_dict: dict) -> None:
    """Publish this process's fingerprint, meet, compare every process's (UsageError on
    every process when any differs)."""
    from podscale.core.errors import UsageError

    found = _compare(rt, client, PREFIX, fingerprint(plan_dict))
    if found:
        raise UsageError(f"the {rt.process_count} processes of this job differ, so they "
                         f"would run different programs; nothing was measured: "
                         f"{'; '.join(found)}")


def plant_env() -> None:
    """``PODSCALE_FAULT_ENV=P:NAME=VALUE`` (for testing podscale itself): process P sets
    NAME=VALUE before JAX starts, as a host with another environment would."""
    spec = os.environ.get(envnames.FAULT_ENV, "")
    if not spec:
        return
    process, _, assignment = spec.partition(":")
    name, _, value = assignment.partition("=")
    me = next((os.environ[v] for v in (envnames.PROCESS_ID, "OMPI_COMM_WORLD_RANK",
                                       "SLURM_PROCID") if v in os.environ), None)
    if me is not None and me == process and name:
        os.environ[name] = value


def check_program(rt: Runtime, client: CoordinationClient, index: int, case_id: str,
                  program: str) -> None:
    """Every process's fingerprint of case ``index``'s compiled collectives must agree."""
    from podscale.core.errors import UsageError

    found = _compare(rt, client, f"podscale/program/{index}/", {"collectives": program})
    if found:
        raise UsageError(f"case {case_id}: the processes compiled different collectives "
                         f"(kind, shape or groups), so they would hang or measure different "
                         f"programs; stopped before it ran: {'; '.join(found)}")
