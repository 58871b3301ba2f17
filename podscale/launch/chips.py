"""The machine's own accelerator chips: what this machine has, and how N processes on one
machine split its chips.

Finding them opens no device in the front end (one program at a time holds a TPU): the
device nodes and the runtime installed for them are read from the file system
(:mod:`podscale.core.machine`); where JAX can use them, a short child process asks JAX for
the devices' kind, count and memory and exits, freeing them for the workers.
``PODSCALE_ACCELERATORS`` plants a machine's chips (``tpu:TPU v5 lite:4``), chips without
their runtime (``tpu:no-runtime``) or none (``none``) for tests. The platform a run takes
is decided in :mod:`podscale.launch.platform`.

Processes on one accelerator machine: one process sees every chip (``--hosts 1``), its
layouts the first ``--devices-per-host`` of them; N processes each get a disjoint block of
chips through the runtime's documented variables (TPU: ``TPU_VISIBLE_CHIPS``,
``TPU_CHIPS_PER_PROCESS_BOUNDS``, ``TPU_PROCESS_BOUNDS``, ``TPU_PROCESS_ADDRESSES``,
``TPU_PROCESS_PORT``, ``CLOUD_TPU_TASK_ID``; NVIDIA: ``CUDA_VISIBLE_DEVICES``; AMD:
``ROCR_VISIBLE_DEVICES``) and join over loopback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from podscale.core import envnames, machine
from podscale.core.errors import UsageError

if TYPE_CHECKING:
    from podscale.core.grid import Grid

#: TPU chips of one host by count, as x,y,z (v4-8/v5e-4: 2x2; v5e-8/v6e-8: 2x4), where
#: TPU_CHIPS_PER_HOST_BOUNDS does not say it
HOST_GRIDS = {1: (1, 1, 1), 2: (2, 1, 1), 4: (2, 2, 1), 8: (2, 4, 1)}

PROBE = """
import json, jax
devs = jax.local_devices()
stats = devs[0].memory_stats() or {}
print(json.dumps({"platform": devs[0].platform, "kind": devs[0].device_kind,
                  "count": len(devs), "memory": int(stats.get("bytes_limit", 0))}))
"""


@dataclass(frozen=True)
class Chips:
    """This machine's accelerator chips as one process sees them all: ``platform`` (tpu or
    gpu), JAX's ``kind``, ``count``, each one's ``memory`` in bytes (0: unknown) and
    ``runtime`` (the JAX_PLATFORMS name: tpu, cuda or rocm)."""

    platform: str
    kind: str
    count: int
    runtime: str
    memory: int = 0

    def __post_init__(self) -> None:
        if self.platform not in ("tpu", "gpu") or self.count < 1:
            raise UsageError(f"bad accelerator description: {self}")

    def describe(self) -> str:
        return f"{self.count} {self.kind} chip" + ("" if self.count == 1 else "s")


def planted_chips(text: str) -> Chips | None:
    """The usable chips a planted ``PODSCALE_ACCELERATORS`` says (None: none, or device
    nodes without a runtime)."""
    try:
        if not machine.planted(text).usable:
            return None
        platform, kind, count = text.split(":")
        runtime = "tpu" if platform == "tpu" else "cuda"
        return Chips(platform, kind, int(count), runtime)
    except (ValueError, UsageError):
        raise UsageError(f"bad {envnames.ACCELERATORS} {text!r}: use PLATFORM:KIND:COUNT "
                         "(tpu:TPU v5 lite:4), PLATFORM:no-runtime or none") from None


def nodes() -> machine.Nodes:
    """This machine's device nodes and runtime (:mod:`podscale.core.machine`; a planted
    ``PODSCALE_ACCELERATORS`` refused in one line where malformed)."""
    text = os.environ.get(envnames.ACCELERATORS)
    if text is not None:
        planted_chips(text)
    return machine.read()


def runtime() -> str | None:
    """The JAX runtime of this machine's chips where JAX can use them (the planted ones'
    where ``PODSCALE_ACCELERATORS`` plants some), or None; no device is opened."""
    found = nodes()
    return found.runtime if found.usable else None


def detect() -> Chips | None:
    """This machine's accelerator chips JAX can use, or None (a CPU machine, or chips
    whose runtime is not installed: :func:`nodes` tells which)."""
    planted = os.environ.get(envnames.ACCELERATORS)
    if planted is not None:
        return planted_chips(planted)
    runtime = machine.read()
    if not runtime.usable:
        return None
    env = {**os.environ, "JAX_PLATFORMS": runtime.runtime or ""}
    try:
        res = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                             timeout=300, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise UsageError(f"this machine has {runtime.runtime} devices, but JAX did not list "
                         "them within 300 s; --platform cpu simulates hosts on the CPU") from None
    if res.returncode != 0:
        said = [line for line in res.stderr.splitlines() if line.strip()] or ["no output"]
        raise UsageError(f"this machine has {runtime.runtime} devices, but JAX could not open "
                         f"them ({said[-1].strip()[:200]}); another program may hold them; "
                         "--platform cpu simulates hosts on the CPU")
    found = json.loads(res.stdout.strip().splitlines()[-1])
    platform = "tpu" if found["platform"] == "tpu" else "gpu"
    return Chips(platform, found["kind"], int(found["count"]), runtime.runtime or "",
                 found["memory"])


def host_grid(chips: Chips) -> tuple[int, int, int] | None:
    """The TPU host's chips as x,y,z (TPU_CHIPS_PER_HOST_BOUNDS, else by count)."""
    said = os.environ.get("TPU_CHIPS_PER_HOST_BOUNDS", "")
    try:
        x, y, z = (int(v) for v in said.split(","))
        if x * y * z == chips.count:
            return x, y, z
    except ValueError:
        pass
    return HOST_GRIDS.get(chips.count)


def block(chips: Chips, processes: int) -> tuple[tuple[int, int, int], tuple[int, int, int]] | None:
    """(chips per process, processes) bounds when ``processes`` split a TPU host's chips
    into equal blocks (y first, as the Cloud TPU documentation's examples do), or None."""
    grid = host_grid(chips)
    if grid is None or chips.count % processes:
        return None
    x, y, z = grid
    each = chips.count // processes
    if z != 1:
        return None
    if y % each == 0:
        per = (1, each, 1)
    elif each % y == 0 and x % (each // y) == 0:
        per = (each // y, y, 1)
    else:
        return None
    return per, (x // per[0], y // per[1], 1)


def fits(chips: Chips, hosts: int, devices_per_host: int) -> bool:
    """Whether ``hosts`` processes of ``devices_per_host`` devices each fit these chips."""
    if hosts < 1 or devices_per_host < 1 or hosts * devices_per_host > chips.count:
        return False
    if hosts == 1:
        return True
    if chips.count % hosts or devices_per_host > chips.count // hosts:
        return False
    return chips.platform != "tpu" or block(chips, hosts) is not None


def fitting(chips: Chips) -> str:
    """The layouts these chips hold, as options."""
    out = []
    for hosts in range(1, chips.count + 1):
        ds = [d for d in range(1, chips.count + 1) if fits(chips, hosts, d)]
        if ds:
            out.append(f"--hosts {hosts} --devices-per-host {','.join(map(str, ds))}")
    return "; ".join(out)


def check_layouts(chips: Chips, layouts: list[tuple[int, int]],
                  sockets: bool | None = None) -> None:
    """Refuse, in one line naming the layouts that fit, any (hosts, devices per host) these
    chips cannot hold, or several processes where no socket can open (they join over
    loopback; ``sockets``: whether one opens, found out where not given)."""
    if sockets is None and any(hosts > 1 for hosts, _ in layouts):
        sockets = loopback_opens()
    for hosts, dph in layouts:
        if not fits(chips, hosts, dph):
            raise UsageError(f"--hosts {hosts} --devices-per-host {dph} does not fit this "
                             f"machine's {chips.describe()}; what fits: {fitting(chips)}")
        if hosts > 1 and not sockets:
            raise UsageError(f"--hosts {hosts}: several processes join over loopback, and "
                             "this machine opens no socket; --hosts 1 measures its chips "
                             "in one process")


def loopback_opens() -> bool:
    """Whether a socket can listen on 127.0.0.1 here (sandboxes may refuse any)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
        return True
    except OSError:
        return False


def process_env(chips: Chips, hosts: int, index: int, ports: list[int]) -> dict[str, str]:
    """Process ``index``'s variables when ``hosts`` processes split these chips (one
    process: JAX_PLATFORMS alone; it sees every chip)."""
    env = {"JAX_PLATFORMS": chips.runtime}
    if hosts == 1:
        return env
    each = chips.count // hosts
    mine = ",".join(str(c) for c in range(index * each, (index + 1) * each))
    if chips.runtime == "cuda":
        return {**env, "CUDA_VISIBLE_DEVICES": mine}
    if chips.runtime == "rocm":
        return {**env, "ROCR_VISIBLE_DEVICES": mine}
    bounds = block(chips, hosts)
    if bounds is None:
        raise UsageError(f"--hosts {hosts} cannot split {chips.describe()}: {fitting(chips)}")
    per, processes = bounds
    return {**env, "TPU_VISIBLE_CHIPS": mine,
            "TPU_CHIPS_PER_PROCESS_BOUNDS": ",".join(map(str, per)),
            "TPU_PROCESS_BOUNDS": ",".join(map(str, processes)),
            "TPU_PROCESS_ADDRESSES": ",".join(f"localhost:{p}" for p in ports),
            "TPU_PROCESS_PORT": str(ports[index]), "CLOUD_TPU_TASK_ID": str(index),
            "ALLOW_MULTIPLE_LIBTPU_LOAD": "1"}


def fit_layouts(gs: list[Grid], chips: Chips, hosts_given: bool, devices_given: bool
                ) -> tuple[list[Grid], str | None]:
    """The grids on this machine's chips: of the host counts and devices per host the
    command line did not give, those the chips hold (a grid left with none is dropped: a
    one-chip machine has no collective to measure), and a sentence saying what was left
    out (None: nothing). What the command line gave is refused later, if it does not fit."""
    from dataclasses import replace

    out, dropped = [], set()
    for g in gs:
        hosts = g.hosts if hosts_given else tuple(h for h in g.hosts if fits(chips, h, 1))
        dph = g.devices_per_host if devices_given else tuple(
            d for d in g.devices_per_host if all(fits(chips, h, d) for h in hosts))
        if not (hosts and dph) and (hosts_given or devices_given):
            out.append(g)  # what was given is refused later, naming what fits
            continue
        dropped |= {f"--hosts {h}" for h in set(g.hosts) - set(hosts)}
        dropped |= {f"--devices-per-host {d}" for d in set(g.devices_per_host) - set(dph)}
        if hosts and dph:
            out.append(replace(g, hosts=hosts, devices_per_host=dph))
    if not out:  # nothing of the grid fits: refused, naming what fits
        return list(gs), None
    said = (f"left out what this machine's {chips.describe()} cannot hold: "
            f"{', '.join(sorted(dropped))}") if dropped else None
    return out, said
