"""``--dry-run``: each launch of a run and each of its processes' environment, as the local
launcher would start them (podscale's own variables and a process's share of this
machine's chips), printed instead of started."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from podscale.core import envnames
from podscale.core.case import Case
from podscale.core.lines import commented
from podscale.core.plan import launches
from podscale.launch.options import LaunchOptions

#: variables every process gets that say nothing of its layout
_QUIET = ("PYTHONPATH", "PYTHONUNBUFFERED", envnames.PARENT_PID)


def process_envs(cases: Sequence[Case], options: LaunchOptions, reuse: bool = True
                 ) -> list[tuple[str, list[dict[str, str]]]]:
    """Per launch (its heading), each process's variables that differ from this one's."""
    from podscale.launch.local import TPU_PORT, worker_env

    out = []
    for launched, group in launches(cases, reuse):
        ports = [TPU_PORT + i for i in range(launched.processes)]
        heading = (f"{launched.key}: {launched.processes} process(es) x "
                   f"{launched.devices_per_host} device(s), "
                   f"{sum(len(lp.cases) for lp in group)} case(s)")
        envs = []
        for i in range(launched.processes):
            env = worker_env(launched, i, options.port or 0, chips=options.chips,
                             chip_ports=ports)
            envs.append({k: v for k, v in sorted(env.items())
                         if os.environ.get(k) != v and k not in _QUIET})
        out.append((heading, envs))
    return out


def print_dry_run(cases: Sequence[Case], options: LaunchOptions, reuse: bool = True) -> int:
    """Print what :func:`process_envs` finds; start nothing."""
    print(f"# platform: {options.platform}"
          + (f" ({options.chips.describe()})" if options.chips else ""))
    if options.note:
        print(commented(f"note: {options.note}"))
    for heading, envs in process_envs(cases, options, reuse):
        print(f"# {heading}")
        for i, env in enumerate(envs):
            words = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
            print(f"process {i}: {words}")
    print("# dry run: nothing was started")
    return 0
