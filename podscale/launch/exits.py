"""What a worker left behind: the last meaningful line of its output (a traceback's error, the
C++ runtime's fatal message), the processes that never joined, and its exit in words."""

from __future__ import annotations

import re
import signal
from collections.abc import Sequence
from pathlib import Path

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
    index = {p: int(p.stem.rsplit("-", 1)[1]) for p in watched if p.stem.startswith("process-")}
    joined = {i for p, i in index.items() if p.exists()}
    return sorted(set(index.values()) - joined)


#: the first words of the verdict every process of an attached program prints when its
#: hang roll-call ends the job (:mod:`podscale.attach.hang`)
HANG = "podscale: hang: "


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
            return f"killed by {name}" + (" (the kernel's out-of-memory killer sends SIGKILL: "
                                          "see dmesg)" if name == "SIGKILL" else "")
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"
