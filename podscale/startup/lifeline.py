"""A worker dies with the process that started it.

The local launcher starts each worker in its own session (so that it can stop the whole
process group), which also means a worker would outlive a front end killed with SIGKILL
or by the out-of-memory killer. With ``PODSCALE_PARENT_PID`` set (the launcher's pid),
the worker asks Linux to kill it when its parent dies (``PR_SET_PDEATHSIG``), and a
daemon thread checks its parent every half second wherever that is unavailable. Under
mpirun, srun or a pod the variable is absent: their own daemons end the processes.

A profiled program's process (``group=True``) also takes its own children with it: the
program may start processes (a data loader's, ``subprocess``), which would outlive it
however it ends (the death signal, JAX aborting when the coordinator's process is gone).
A sentinel of a few MB, started in the process group this process leads (the launcher
made it its group's leader), waits for this process's death (its own death signal) and
kills the group; a child that left the group on purpose (``setsid``) is its own.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import threading
import time

from podscale.core import envnames, lines

PR_SET_PDEATHSIG = 1
POLL_S = 0.5


def _pdeathsig(sig: int) -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


#: the sentinel of a process group: kills the group once its leader is gone
SENTINEL = """import ctypes, os, signal, sys
leader = int(sys.argv[1])
def end(*_):
    os.killpg(leader, signal.SIGKILL)
signal.signal(signal.SIGTERM, end)
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
if os.getppid() != leader:
    end()
while True:
    signal.pause()
"""


def _sentinel() -> None:
    """Start the sentinel of the process group this process leads (none where it leads
    none: a cluster launcher's process)."""
    import subprocess
    import sys

    if os.getpgrp() != os.getpid():
        return
    subprocess.Popen([sys.executable, "-I", "-c", SENTINEL, str(os.getpid())],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, close_fds=True)


def _orphaned(parent: int, group: bool) -> None:
    lines.say(f"podscale: the process that started this worker (pid {parent}) is gone; "
              "exiting", err=True)
    if group and os.getpgrp() == os.getpid():  # this process's group: its own children
        os.killpg(os.getpid(), signal.SIGKILL)
    os._exit(1)


def hold(parent: int | None = None, group: bool = False) -> None:
    """Die with ``parent`` (default: ``PODSCALE_PARENT_PID``); nothing when unset.
    ``group``: and take the process group this process leads with it."""
    if parent is None:
        value = os.environ.get(envnames.PARENT_PID, "")
        if not value.isdigit():
            return
        parent = int(value)
    if group:
        _sentinel()
    else:
        _pdeathsig(signal.SIGKILL)
    if os.getppid() != parent:  # it died before the request took effect
        _orphaned(parent, group)

    def watch() -> None:
        while True:
            time.sleep(POLL_S)
            if os.getppid() != parent:
                _orphaned(parent, group)

    threading.Thread(target=watch, name="podscale-lifeline", daemon=True).start()
