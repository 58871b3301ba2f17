"""The run's manifest (``run.json``): what ran, where, with which schema, and how it ended;
its one lifecycle (running with a heartbeat, then complete, failed or interrupted)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from podscale.core import runfolder as rf
from podscale.core.errors import UsageError

#: the run directory's format. 1 (c47a09c, podscale 0.1): one JSON line per sample, no
#: workloads or mesh axes (refused with a note); 2 (857aec4): workloads and named mesh axes
#: (read); 3: timings as sample blocks, one line per case, phase and round. Fields added
#: with defaults keep the version (0.4: CaseRecord.unsampled, LedgerRecord.rss_mb, cpu_s);
#: 4 (0.5): samples of the phases chain and device (the timing methods), and the case's
#: ``settings.timing`` (a /3 run timed each call waited on, and is read as such)
SCHEMA = "podscale.run/4"
#: schemas this podscale reads (a /2 run's records hold one line per sample)
READABLE = ("podscale.run/2", "podscale.run/3", SCHEMA)
OLD_SCHEMAS = {"podscale.run/1": "podscale 0.1, before workloads and named mesh axes"}
STATUSES = ("running", "complete", "failed", "interrupted")


def _require(cond: bool, msg: str) -> None:
    if not cond:
        raise ValueError(msg)


@dataclass(frozen=True)
class Manifest:
    """The run's manifest (``run.json``)."""

    run_id: str
    created: str
    command: list[str]
    spec: dict
    layouts: list[str]
    environment: dict
    status: str = "running"  # running | complete | failed | interrupted
    error: str | None = None
    finished: str | None = None
    schema: str = SCHEMA
    #: who keeps this manifest: {"host", "pid"}; with ``RUN/heartbeat`` (touched every
    #: HEARTBEAT_S while the run lasts) a reader tells a live run from an abandoned one
    supervisor: dict | None = None

    def __post_init__(self) -> None:
        _require(self.schema in READABLE, f"unsupported schema {self.schema!r}")
        _require(self.status in STATUSES, "bad status")

    @classmethod
    def new(cls, run_id: str, spec: dict, layouts: list[str]) -> Manifest:
        """The manifest of a run starting now: this command line and this machine's
        environment (the one builder for ``podscale run`` and ``podscale worker``)."""
        import sys

        from podscale.core.environment import environment

        return cls(run_id=run_id, created=now(), command=list(sys.argv), spec=spec,
                   layouts=layouts, environment=environment())


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


HEARTBEAT = "heartbeat"
HEARTBEAT_S = 5.0
#: a running run whose heartbeat (touched every HEARTBEAT_S) is older than this is abandoned
ABANDONED_AFTER_S = 60.0


def _heartbeat(path: Path, stop: threading.Event) -> None:
    while True:
        try:
            path.touch()
        except OSError:
            pass
        if stop.wait(HEARTBEAT_S):
            return


@contextmanager
def lifecycle(run_dir: Path, manifest: Manifest, *, write: bool = True) -> Iterator[None]:
    """The one manifest lifecycle of ``execute`` and ``podscale worker``: written as
    ``running`` (naming this host and process, with a heartbeat file touched every
    HEARTBEAT_S), then ``complete``, ``failed`` (with the error) or ``interrupted`` (with
    the signal). ``write=False`` (processes other than 0 of a cluster job) only runs the
    body."""
    stop = threading.Event()
    if write:
        import os
        import socket

        manifest = replace(manifest, supervisor={"host": socket.gethostname(),
                                                 "pid": os.getpid()})
        write_manifest(run_dir, manifest, reserve=True)
        threading.Thread(target=_heartbeat, args=(run_dir / HEARTBEAT, stop),
                         name="podscale-heartbeat", daemon=True).start()
    status, error = "failed", None
    try:
        yield
        status = "complete"
    except KeyboardInterrupt as exc:
        import signal

        signum = getattr(exc, "signum", signal.SIGINT)
        status, error = "interrupted", f"interrupted by {signal.Signals(signum).name}"
        raise
    except BaseException as exc:
        error = str(exc) or type(exc).__name__
        raise
    finally:
        stop.set()
        if write:
            _finish(run_dir, replace(manifest, status=status, error=error, finished=now()))


def _finish(run_dir: Path, manifest: Manifest) -> None:
    """The last manifest; where it cannot be written, a run that failed anyway keeps its
    own error (the manifest's is said beside it), a completed one fails with it."""
    from podscale.core.errors import DiskFull

    try:
        write_manifest(run_dir, manifest)
    except DiskFull as exc:
        if manifest.status == "complete":
            raise
        from podscale.core import lines

        lines.say(f"podscale: note: the run's manifest still says running: {exc}", err=True)


#: bytes a running run's manifest keeps (trailing spaces) so that its last rewrite fits in
#: place where the disk fills meanwhile
RESERVE = 16 << 10


def write_manifest(run_dir: Path, manifest: Manifest, reserve: bool = False) -> None:
    """``run.json``, whole or not at all: written beside and moved over the last one; on
    a full disk, rewritten in place within the room the running one kept (``reserve``),
    else :class:`DiskFull` naming it (no ``run.json.tmp`` left)."""
    import contextlib
    import errno

    from podscale.core.errors import DiskFull

    path, tmp = run_dir / "run.json", run_dir / "run.json.tmp"
    text = json.dumps(asdict(manifest), indent=2, sort_keys=True) + "\n"
    if reserve:
        text += " " * max(0, RESERVE - len(text))
    try:
        tmp.write_text(text)
        tmp.replace(path)
        return
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        if not (full and _in_place(path, text.encode())):
            raise DiskFull(exc.filename or tmp, exc) from None


def _in_place(path: Path, data: bytes) -> bool:
    """Overwrite ``path`` with ``data`` in the blocks it holds; whether it fit."""
    try:
        if path.stat().st_size < len(data):
            return False
        with path.open("r+b") as fh:
            fh.write(data)
            fh.truncate()
            fh.flush()
            os.fsync(fh.fileno())
        return True
    except OSError:
        return False


def read_manifest(run_dir: Path) -> Manifest:
    path = Path(run_dir) / "run.json"
    if not path.is_file():
        raise UsageError(f"{run_dir}: not a podscale run (no run.json)")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(obj, dict) or obj.get("schema") not in READABLE:
            found = obj.get("schema") if isinstance(obj, dict) else type(obj).__name__
            if found in OLD_SCHEMAS:
                raise UsageError(f"{path}: schema {found!r} was written by "
                                 f"{OLD_SCHEMAS[found]}; this podscale reads {SCHEMA!r} "
                                 "(re-run it)")
            raise UsageError(f"{path}: schema {found!r} is not {SCHEMA!r}")
        return Manifest(**obj)
    except (json.JSONDecodeError, TypeError, ValueError) as exc:
        raise UsageError(f"{path}: unreadable manifest ({exc})") from None


#: a run's kinds: workloads benchmarked (``podscale run``), or a user's program profiled
#: (``podscale profile``/``attach``: its records in ``RUN/profile/``)
KINDS = ("benchmark", "profile")


def run_kind(run_dir: Path) -> str:
    """What kind of run ``run_dir`` holds (:data:`KINDS`): a profiled program where its
    manifest says so (``spec.mode``) or, for a run without a manifest's word, where it has
    ``profile/``; else a benchmark (a folder with no manifest too: its reader says what
    it lacks). An unreadable manifest: a one-line error."""
    if (Path(run_dir) / rf.PROFILE).is_dir():
        return "profile"
    if not (Path(run_dir) / "run.json").is_file():
        return "benchmark"
    mode = read_manifest(run_dir).spec.get("mode")
    return "profile" if mode == "profile" else "benchmark"


def abandoned_because(path: Path, manifest: Manifest) -> str | None:
    """Why a run directory's manifest marked ``running`` is not (its front end is not
    alive on this host, or its heartbeat stopped), or None."""
    if manifest.status != "running":
        return None
    import socket
    import time

    sup = manifest.supervisor or {}
    try:
        age = time.time() - (path / HEARTBEAT).stat().st_mtime
    except OSError:
        age = None
    since = f"; last heartbeat {age:.0f}s ago" if age is not None else ""
    if sup.get("host") == socket.gethostname() and isinstance(sup.get("pid"), int):
        try:
            os.kill(sup["pid"], 0)
        except ProcessLookupError:
            return (f"its front end (pid {sup['pid']} on {sup['host']}) is gone without "
                    f"closing the run{since}; the records written until then are kept")
        except PermissionError:
            pass
    if age is not None and age > ABANDONED_AFTER_S:
        who = f"pid {sup.get('pid')} on {sup.get('host')}" if sup else "its front end"
        return (f"no heartbeat for {age:.0f}s ({who}); the records written until then "
                "are kept")
    return None
