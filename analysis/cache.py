"""A columnar cache of a run's records: ``RUN/cache/records.npz``.

The JSON Lines files stay the record; the cache holds the same samples as numpy columns
(case ids and phases as codes into their distinct values) and the other records as JSON,
under a key of every record file's name, size and modification time. A cache whose key
no longer matches (a record file changed, appeared or went) is ignored and rewritten;
a run directory that cannot be written to simply has none. Loading the cache skips JSON
parsing, which dominates reading a large run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

FORMAT = "podscale.cache/1"
NAME = Path("cache") / "records.npz"
INTS = ("process", "iteration", "round")  # stored as int32, read as int64


def key(files: list[Path], run_dir: Path) -> str:
    parts = [FORMAT]
    for f in files:
        st = f.stat()
        parts.append(f"{f.relative_to(run_dir)}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts)


def load(run_dir: Path, files: list[Path]) -> tuple[dict[str, np.ndarray], list[dict]] | None:
    """(sample columns, other records as dicts with their type) if the cache is current."""
    path = run_dir / NAME
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["key"]) != key(files, run_dir):
                return None
            cols = {name: z[name].astype(np.int64) for name in INTS}
            cols["seconds"] = z["seconds"]
            cols["case_id"] = z["case_ids"].astype(object)[z["case_code"]]
            cols["phase"] = z["phases"].astype(object)[z["phase_code"]]
            device = z["device"]
            cols["device"] = np.where(device < 0, None, device.astype(object))
            other = json.loads(str(z["other"]))
    except (OSError, ValueError, KeyError):
        return None
    return cols, other


def save(run_dir: Path, files: list[Path], cols: dict[str, np.ndarray],
         other: list[dict]) -> None:
    """Write the cache next to the records; quietly nothing where that is not possible."""
    import pandas as pd

    case_code, case_ids = pd.factorize(cols["case_id"])
    phase_code, phases = pd.factorize(cols["phase"])
    device = pd.Series(cols["device"], dtype=object).fillna(-1).to_numpy(np.int32)
    path = run_dir / NAME
    tmp = path.with_name(f".records-{os.getpid()}.npz")
    try:
        path.parent.mkdir(exist_ok=True)
        with tmp.open("wb") as fh:
            np.savez(fh, key=np.array(key(files, run_dir)),
                     case_ids=np.asarray(case_ids, dtype=str), case_code=case_code.astype(
                         np.int32), phases=np.asarray(phases, dtype=str),
                     phase_code=phase_code.astype(np.int8), device=device,
                     other=np.array(json.dumps(other)), seconds=cols["seconds"],
                     **{n: cols[n].astype(np.int32) for n in INTS})
        tmp.replace(path)
    except OSError:
        tmp.unlink(missing_ok=True)
