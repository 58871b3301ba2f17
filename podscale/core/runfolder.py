"""The run folder's names, spelt here only (a lint in ``tests/test_lint.py`` finds one
spelt elsewhere):

- ``records/<layout>/process-<i>.jsonl``: a benchmark run's raw records, per process;
- ``profile/process-<i>.jsonl``: a profiled program's records, per process;
- ``traces/<layout or session>/process-<i>.xplane.pb`` and ``.sync.json``: traces;
- ``hlo/<layout>/...hlo.txt``: the compiled programs ``--hlo`` and replay keep;
- ``logs/<layout>/process-<i>.log``: each process's output;
- ``seed/process-<i>.json``: ``podscale seed``'s answers.

A per-process file is named ``process-<i>`` and a suffix; :func:`process_of` reads the
index back."""

from __future__ import annotations

from pathlib import Path

RECORDS = "records"
PROFILE = "profile"
TRACES = "traces"
HLO = "hlo"
LOGS = "logs"
SEED = "seed"
#: the stem every per-process file's name begins with
PROCESS = "process-"


def process_name(process: int | str, suffix: str = "") -> str:
    """A per-process file's name: ``process-<i><suffix>``."""
    return f"{PROCESS}{process}{suffix}"


def process_glob(suffix: str = "") -> str:
    """The glob of every process's file with ``suffix``."""
    return f"{PROCESS}*{suffix}"


def temporary(process: int | str) -> str:
    """A process's folder for a trace being written (renamed when whole)."""
    return f".tmp-{PROCESS}{process}"


def process_of(path: Path | str) -> int | None:
    """The process index a per-process file's name gives; None for another file."""
    name = Path(path).name
    if not name.startswith(PROCESS):
        return None
    digits = name[len(PROCESS):].split(".", 1)[0]
    return int(digits) if digits.isdigit() else None


def records_file(run_dir: Path, layout_key: str, process: int | str) -> Path:
    """A benchmark run's records of one process in one layout."""
    return Path(run_dir) / RECORDS / layout_key / process_name(process, ".jsonl")


def records_glob() -> str:
    """Every layout's records, relative to the run folder."""
    return f"{RECORDS}/*/{process_glob('.jsonl')}"


def hlo_glob() -> str:
    """Every compiled program's text kept, relative to the run folder."""
    return f"{HLO}/*/*.hlo.txt"
