"""A worker dies with the process that started it.

The local launcher starts each worker in its own session (so that it can stop the whole
process group), which also means a worker would outlive a front end killed with SIGKILL
or by the out-of-memory killer. With ``PODSCALE_PARENT_PID`` set (the launcher's pid),
the worker asks Linux to kill it when its parent dies (``PR_SET_PDEATHSIG``), and a
daemon thread checks its parent every half second wherever that is unavailable. Under
mpirun, srun or a pod the variable is absent: their own daemons end the processes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import threading
import time

PR_SET_PDEATHSIG = 1
POLL_S = 0.5


def _pdeathsig(sig: int) -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _orphaned(parent: int) -> None:
    print(f"podscale: the process that started this worker (pid {parent}) is gone; "
          "exiting", flush=True)
    os._exit(1)


def hold(parent: int | None = None) -> None:
    """Die with ``parent`` (default: ``PODSCALE_PARENT_PID``); nothing when unset."""
    if parent is None:
        value = os.environ.get("PODSCALE_PARENT_PID", "")
        if not value.isdigit():
            return
        parent = int(value)
    _pdeathsig(signal.SIGKILL)
    if os.getppid() != parent:  # it died before the request took effect
        _orphaned(parent)

    def watch() -> None:
        while True:
            time.sleep(POLL_S)
            if os.getppid() != parent:
                _orphaned(parent)

    threading.Thread(target=watch, name="podscale-lifeline", daemon=True).start()
