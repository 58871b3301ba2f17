"""``--launcher ray``: the same command on one Ray actor per host, as mpirun or srun start it.

Run by :func:`podscale.launch.cluster.run_external` as the launcher process::

    python -m podscale.launch.raydriver --processes N [--address A] [--home RUN_DIR]
        [--cpus-per-process C] [--tpus-per-process T] [--gpus-per-process G]
        -- python -m podscale.worker PLAN

It joins the Ray cluster at ``--address`` (else ``RAY_ADDRESS``; with neither it starts a
local one and stops it after), refuses a cluster whose resources cannot hold N processes
(one line, exit 2, before any actor starts), reserves a placement group of N bundles spread
over the nodes, and starts one actor per bundle. Each actor runs the command with the
variables a local launch gives (the coordinator on actor 0's node, the process index and
count, its own pid as the lifeline) and its output tagged ``I: `` as srun's ``--label``
does. The first process to fail, or an actor that dies, is named (``ray: process I ...``)
and every other process is stopped; SIGTERM or SIGINT stops them all. An actor on a node
that does not share the run folder (``--home``) runs in its own copy of it, shipped in
and back through Ray's object store (:mod:`.rayhost`)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from podscale.core import envnames
from podscale.core.errors import UsageError
from podscale.core.lines import say

#: seconds between the driver's looks at its actors
POLL_S = 0.2
#: seconds to wait for the placement group (the cluster said it has room)
PLACE_TIMEOUT_S = 120.0
#: variables of the driver's a process gets (others are its node's own)
FORWARDED = ("PODSCALE_", "JAX_", "XLA_", "TPU_", "MEGASCALE_", "NCCL_", "PYTHON")
#: ``1``: every actor runs in its own copy of the run folder, shipped both ways through
#: Ray's object store, as on a node that does not share the folder (tests, on one machine)
SHIP = envnames.RAY_SHIP


#: the driver's options (``--name value``, before ``--``) and their defaults
OPTIONS: dict[str, float | str | None] = {
    "processes": None, "address": None, "cpus-per-process": 1.0, "tpus-per-process": 0.0,
    "gpus-per-process": 0.0, "home": None}
#: the options that are words, not numbers
WORDS = ("address", "home")


def parse(argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The options (:data:`OPTIONS`; ``address`` defaults to ``RAY_ADDRESS``) and the
    command after ``--``; a bad one is a :class:`UsageError` naming it."""
    words, command = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) \
        if "--" in argv else (argv, [])
    got: dict[str, Any] = {**OPTIONS, "address": os.environ.get("RAY_ADDRESS")}
    if len(words) % 2:
        raise UsageError(f"ray launcher: options come in pairs, got {' '.join(words)!r}")
    for name, value in zip(words[::2], words[1::2]):
        key = name.removeprefix("--")
        if not name.startswith("--") or key not in OPTIONS:
            raise UsageError(f"ray launcher: unknown option {name!r} (known: "
                             f"{', '.join('--' + k for k in OPTIONS)})")
        try:
            got[key] = value if key in WORDS else float(value)
        except ValueError:
            raise UsageError(f"ray launcher: {name} {value!r} is not a number") from None
    if got["processes"] is None or got["processes"] < 1 or not command:
        raise UsageError("ray launcher: --processes N (>= 1) and a command after -- needed")
    got["processes"] = int(got["processes"])
    return got, command


def _bundle(opts: dict[str, Any]) -> dict[str, float]:
    bundle = {"CPU": float(opts["cpus-per-process"])}
    for key, resource in (("tpus-per-process", "TPU"), ("gpus-per-process", "GPU")):
        if opts[key]:
            bundle[resource] = float(opts[key])
    return bundle


def room(total: dict[str, float], bundle: dict[str, float], processes: int,
         where: str) -> str | None:
    """Why a cluster with ``total`` resources cannot hold ``processes`` bundles, or None."""
    short = [f"{k} {total.get(k, 0):g} (needs {v * processes:g}: {v:g} per process)"
             for k, v in bundle.items() if total.get(k, 0) + 1e-9 < v * processes]
    return None if not short else (f"the Ray cluster {where} cannot hold {processes} "
                                   f"processes: {', '.join(short)}")


def _env(index: int, processes: int, coordinator: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED)}
    env.update({envnames.NUM_PROCESSES: str(processes), envnames.PROCESS_ID: str(index)})
    if processes > 1:
        env[envnames.COORDINATOR] = coordinator
    return env


def _watch(ray: Any, actors: list, processes: int) -> int:
    """Print each process's output as it comes; the first failure named, 1; else 0."""
    done: set[int] = set()
    while len(done) < processes:
        for i, actor in enumerate(actors):
            if i in done:
                continue
            try:
                text, code = ray.get(actor.poll.remote(), timeout=60)
            except Exception as exc:  # noqa: BLE001 - the actor died, or its node
                say(f"ray: process {i}'s actor died ({type(exc).__name__}: "
                    f"{str(exc).splitlines()[0][:200] if str(exc) else ''})")
                return 1
            if text:
                say("\n".join(f"{i}: {line}" for line in text.splitlines()))
            if code is not None:
                if code:
                    from podscale.launch.exits import describe_exit

                    say(f"ray: process {i} {describe_exit(code)}")
                    return 1
                done.add(i)
        time.sleep(POLL_S)
    return 0


def _stop(ray: Any, actors: list, home: str | None) -> None:
    """Stop every process; bring home what those in a copy of the run folder wrote."""
    try:
        ray.get([a.stop.remote() for a in actors], timeout=10)
    except Exception:  # noqa: BLE001 - a dead actor's process went with it
        pass
    for i, actor in enumerate(actors):
        try:
            data = ray.get(actor.collect.remote(), timeout=120)
        except Exception:  # noqa: BLE001 - a dead actor's copy is lost with its node
            continue
        if data is not None and home:
            from podscale.launch.rayhost import unpack

            say(f"ray: process {i}'s copy of the run folder came home: "
                f"{unpack(data, Path(home))} file(s)")


def _start(ray: Any, actors: list, command: list[str], home: str | None) -> None:
    """Start each actor's process: in the shared run folder, or (an actor on another node
    than this driver's, or :data:`SHIP`) in its own copy of it, shipped in."""
    from podscale.launch.rayhost import KEPT, pack

    ip, port = ray.get(actors[0].address.remote())
    here = ray.get_runtime_context().get_node_id()
    forced = os.environ.get(SHIP) == "1"
    apart = [forced or node != here for node in ray.get([a.node.remote() for a in actors])]
    shipped = pack(Path(home), leave=tuple(n for n in os.listdir(home) if n not in KEPT)) \
        if home and Path(home).is_dir() and any(apart) else None
    ray.get([a.start.remote(command, _env(i, len(actors), f"{ip}:{port}"), home,
                            shipped if away else None)
             for i, (a, away) in enumerate(zip(actors, apart))])


def main(argv: list[str] | None = None) -> int:
    try:
        opts, command = parse(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        say(f"podscale: error: {exc}")
        return 2
    import logging

    import ray

    def ended(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, ended)
    signal.signal(signal.SIGINT, ended)
    processes, address, home = opts["processes"], opts["address"], opts["home"]
    where = f"at {address}" if address else "started here"
    ray.init(address=address or None, include_dashboard=False, log_to_driver=False,
             logging_level=logging.ERROR, configure_logging=False)
    actors: list = []
    try:
        bundle = _bundle(opts)
        refused = room(ray.cluster_resources(), bundle, processes, where)
        if refused:
            say(f"podscale: error: {refused}")
            return 2
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        from podscale.launch.rayhost import Host

        group = placement_group([bundle] * processes, strategy="SPREAD")
        try:
            ray.get(group.ready(), timeout=PLACE_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:  # room in total, none left per node
            say(f"podscale: error: the Ray cluster {where} placed no {processes} bundles of "
                f"{bundle} within {PLACE_TIMEOUT_S:g} s (its resources are in use, or "
                "split across nodes)")
            return 2
        remote = ray.remote(Host)
        actors = [remote.options(num_cpus=0, scheduling_strategy=PlacementGroupSchedulingStrategy(
            group, placement_group_bundle_index=i)).remote(i) for i in range(processes)]
        _start(ray, actors, command, home)
        return _watch(ray, actors, processes)
    finally:
        _stop(ray, actors, home)
        ray.shutdown()


if __name__ == "__main__":
    sys.exit(main())
