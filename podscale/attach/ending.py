"""How a program's own end is shown: its exception as ``python script.py`` would print it
(without podscale's frames), its exit code, and the wait of a main thread whose error is
the consequence of the job's end."""

from __future__ import annotations

import os
import threading
import time
import traceback
from typing import Any

from podscale.core import lines

#: how long a process waits at the end for the others to finish their records
END_WAIT_S = 60.0
#: where each process says it is done, with its exit code
DONE = "podscale/attach/done/"

#: podscale's frames a program's traceback leaves out: the script's start and the
#: wrappers every recorded call passes through (a failure in podscale's own code keeps its)
PASS_THROUGH = {"run", "__call__", "call", "call_compiled", "make", "initialize"}


def print_as_python(exc: BaseException) -> None:
    """The script's exception as ``python script.py`` would print it: without runpy's
    frames and podscale's pass-through ones (of every exception in the chain)."""
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep

    def ours(f: traceback.FrameSummary) -> bool:
        return f.filename == "<frozen runpy>" or \
            f.filename.startswith(here) and f.name in PASS_THROUGH
    te = traceback.TracebackException.from_exception(exc)
    seen: set[int] = set()
    todo = [te]
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        t.stack = traceback.StackSummary.from_list(
            [f for f in t.stack if not ours(f)])
        todo += [x for x in (t.__cause__, t.__context__, *(t.exceptions or ())) if x]
    lines.say("".join(te.format()), err=True)


def unless_ending() -> None:
    """Once the hang roll-call ends the job, the main thread's error is its consequence:
    wait for the roll-call to exit the process with its verdict."""
    from podscale.attach.hang import ENDING

    if ENDING.is_set():
        time.sleep(60)


def exit_code(code: Any) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    lines.say(str(code), err=True)
    return 1


def note_sigint(signalled: threading.Event) -> None:
    """Tell a SIGINT from the script raising KeyboardInterrupt itself: Python's own
    handler, setting ``signalled`` first (a script's own handler is left alone)."""
    import signal

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return

    def noted(signum: int, frame: Any) -> None:
        signalled.set()
        signal.default_int_handler(signum, frame)
    signal.signal(signal.SIGINT, noted)


def meet(client: Any, process: int | None, processes: int, code: int) -> None:
    """Say this process is done (with its exit code) and wait, at most END_WAIT_S, for
    every other to say so, or for one to say it failed: then nobody waits on for a peer
    that will never come, and JAX's own shutdown at exit finds every process there."""
    try:
        client.key_value_set(f"{DONE}{process}", str(code))
        if code:
            if process == 0:  # the others read the failure from its service
                from podscale.attach.hang import wait_for_the_others

                wait_for_the_others(client, processes)
            return
        deadline = time.monotonic() + END_WAIT_S
        while time.monotonic() < deadline:
            done = client.key_value_dir_get(DONE)
            if len(done) >= processes or any(v != "0" for _, v in done):
                return
            time.sleep(0.05)
    except Exception:  # noqa: BLE001 - the service gone: the records are written
        return
