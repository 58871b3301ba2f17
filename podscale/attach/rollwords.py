"""The hang roll-call's words: where each process stands (its main thread in the program's
own code, its heartbeat's state) and the one-line verdict, the odd processes first."""

from __future__ import annotations

import linecache
import os
import sys
import threading
from collections import Counter
from datetime import datetime
from typing import Any

from podscale.core.desync import first
from podscale.core.groups import slice_words


def _where(s: dict) -> tuple[str, str]:
    if s["state"] == "python":
        return "python", f"in Python after {s['last']}" if s["last"] else "in Python"
    if s["state"] == "compiling":
        return "compiling", f"compiling {s['calling']}"
    if s["state"] == "dispatching":
        return "dispatching", f"inside {s['calling']} (dispatching)"
    return "waiting", f"waiting for {s['waiting_for']}"


def verdict_text(stacks: dict[int, dict], processes: int, timeout: float,
                 since: float, auto: bool = False, slices: int = 1) -> str:
    """The roll-call's one line: the odd processes first, with where they stand (and,
    in a job of several ``slices``, which slices they are)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for p in sorted(stacks):
        groups.setdefault(_where(stacks[p]), []).append(p)
    common = Counter({k: len(v) for k, v in groups.items()}).most_common(1)[0][0] \
        if groups else None
    parts = []
    for key, ps in sorted(groups.items(), key=lambda kv: (kv[0] == common, kv[1])):
        who = ("process " if len(ps) == 1 else "processes ") + ", ".join(map(str, ps)) + \
            (slice_words(ps, processes, slices) if key != common else "")
        at = f" at {stacks[ps[0]]['at']}" if key != common or len(groups) == 1 else ""
        parts.append(f"{who}{at} {key[1]}")
    missing = sorted(set(range(processes)) - set(stacks))
    if missing:
        parts.append(f"no answer from process(es) {', '.join(map(str, missing))}"
                     + slice_words(missing, processes, slices))
    desync = first({p: s.get("recent", ()) for p, s in stacks.items()})
    if desync is not None:
        parts.append(desync.text())
    when = datetime.fromtimestamp(since).strftime("%H:%M:%S")
    how = " (auto)" if auto else ""
    return f"no progress for {round(timeout, 1):g}s{how} (since {when}): " + "; ".join(parts)


def main_thread_at(user: Any) -> str:
    """Where the main thread stands in the program's own code: file:line (the line)."""
    frame = sys._current_frames().get(threading.main_thread().ident or 0)
    while frame is not None and not user(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return "(no frame of the program's own)"
    code = frame.f_code
    text = linecache.getline(code.co_filename, frame.f_lineno).strip()
    return f"{os.path.basename(code.co_filename)}:{frame.f_lineno} ({text})"
