"""What a worker left behind: the last meaningful line of its output (a traceback's error, the
C++ runtime's fatal message), the processes that never joined or have finished, its exit in
words, and why a launch without progress is stopped."""

from __future__ import annotations

import re
import signal
from collections.abc import Sequence
from pathlib import Path

from podscale.core import defaults, envnames
from podscale.core import runfolder as rf
from podscale.core.environment import init_timeout

NOISE = ("[Gloo]",
         # JAX's traceback-filtering footer, printed after the exception it explains
         "For simplicity, JAX has removed its internal frames", "--------------------")


#: a fatal log line of JAX's C++ runtime (absl): "F1204 09:06:03.55 6675 client.h:80] ..."
FATAL = re.compile(r"^F\d{4} [\d:.]+\s+\d+ \S+\] (.*)")


#: lines of a C++ stack trace, after the fatal line
FRAMES = re.compile(r"^\s*(@\s+0x|\*\*\* Check failure|RPC: )")


def last_line(path: Path) -> str:
    """The last meaningful line a worker printed (the error, for a traceback; the fatal
    message, for the C++ runtime's abort)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(no output)"
    for line in reversed(lines):
        fatal = FATAL.match(line)
        if fatal:  # the status it carries says most: "absl::Status: DEADLINE_EXCEEDED: ..."
            text = fatal.group(1).strip()
            status = text.find("absl::Status:")
            return ("the JAX runtime aborted: " + text[status:] if status >= 0 else text)[:300]
    for line in reversed(lines):
        if line.strip() and not line.startswith(NOISE) and not FRAMES.match(line):
            return line.strip()[:300]
    return "(no output)"


def never_joined(watched: Sequence[Path]) -> list[int]:
    """Processes with no record file yet: they never joined the job (a worker writes its
    environment record right after jax.distributed.initialize)."""
    index = {p: i for p in watched if (i := rf.process_of(p)) is not None}
    joined = {i for p, i in index.items() if p.exists()}
    return sorted(set(index.values()) - joined)


#: the first words of the verdict every process of an attached program prints when its
#: hang roll-call ends the job (:mod:`podscale.attach.hang`)
HANG = "podscale: hang: "


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
            if name == "SIGTERM":
                return "received SIGTERM (a preemption, or a scheduler stopping it?)"
            return f"killed by {name}" + (" (the kernel's out-of-memory killer sends SIGKILL: "
                                          "see dmesg)" if name == "SIGKILL" else "")
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


def finished(watched: Sequence[Path], start: dict[Path, int]) -> bool:
    """Whether every process has finished its cases in this launch: each watched record
    file has grown since ``start`` (its size when the launch began) and its last line is
    the layout's ledger record, the last a worker writes before the job's end."""
    for path in watched:
        try:
            with path.open("rb") as fh:
                size = fh.seek(0, 2)
                if size <= start.get(path, 0):
                    return False
                fh.seek(max(start.get(path, 0), size - 4096))
                tail = fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        except OSError:
            return False
        if not tail.endswith(b'"type": "ledger"}'):
            return False
    return bool(watched)


def timed_out(quiet: float, case_timeout: float, watched: Sequence[Path],
               start: dict[Path, int]) -> str | None:
    """Why ``quiet`` seconds without progress end the launch, or None: the case timeout
    once every process has joined; the start-up (imports, a join that waits for the
    slowest process) and the end after every process finished its cases (the job's
    shutdown) are no case: the join's own timeout (``PODSCALE_INIT_TIMEOUT``, which each
    worker holds itself to) comes on top of it there."""
    waiting = never_joined(watched)
    ended = not waiting and finished(watched, start)
    if not (waiting or ended):
        return f"no progress for {case_timeout:g}s (case timeout)"
    join = init_timeout(defaults.JOIN_TIMEOUT_DETECTED)
    if quiet <= case_timeout + join:
        return None
    when = "after every process finished its cases" if ended else \
        f"before process(es) {','.join(map(str, waiting))} joined the job"
    return (f"no progress for {case_timeout + join:g}s {when} (case timeout "
            f"{case_timeout:g}s + {envnames.INIT_TIMEOUT} {join:g}s)")
