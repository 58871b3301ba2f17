"""XProf's names, in one place: the lines and stats of an XSpace that podscale reads (as
JAX's ``ProfileData`` gives them, and as XProf's trace viewer JSON carries them), and where
a profiler session lays out its files. Every reader of a trace takes them from here
(``tests/test_jaxapi.py`` finds none spelt elsewhere); they change with XProf, not JAX's
API, and no JAX is imported here."""

from __future__ import annotations

import shutil
from pathlib import Path

from podscale.core import runfolder as rf

#: a device plane's line of XLA program executions (TPU, GPU), and of their ops
MODULES_LINE = "XLA Modules"
OPS_LINE = "XLA Ops"
#: the stats an op event of the CPU client carries: its program, device, execution
HLO_MODULE = "hlo_module"
HLO_OP = "hlo_op"
DEVICE_ORDINAL = "device_ordinal"
RUN_ID = "run_id"
#: a plane's stat: the session's start on the wall clock (ns)
PROFILE_START = "profile_start_time"
#: a session's folder under a trace root, and its files
SESSIONS = ("plugins", "profile")
SUFFIX = ".xplane.pb"
SESSION_GLOB = "/".join((*SESSIONS, "*", "*" + SUFFIX))


def session_dir(root: Path | str, name: str) -> Path:
    """The folder of session ``name`` under trace root ``root``."""
    return Path(root).joinpath(*SESSIONS, name)


def session_files(root: Path) -> list[Path]:
    """Every XSpace file of every session under ``root`` (sorted)."""
    return sorted(root.glob(SESSION_GLOB))


def process_file(session: Path, process: int | str) -> Path:
    """Process ``process``'s file in a session folder (podscale's naming; JAX's own is
    ``<host>.xplane.pb``)."""
    return session / rf.process_name(process, SUFFIX)


def keep(tmp: Path, root: Path, name: str, process: int) -> Path | None:
    """The file a profiler session wrote under ``tmp``, moved to process ``process``'s file
    of session ``name`` under trace root ``root`` (``tmp`` removed); None where the session
    wrote none (``tmp`` left as it is)."""
    found = session_files(tmp)
    if not found:
        return None
    session = session_dir(root, name)
    session.mkdir(parents=True, exist_ok=True)
    dest = process_file(session, process)
    shutil.move(str(found[0]), dest)
    shutil.rmtree(tmp, ignore_errors=True)
    return dest
