"""A columnar cache of a run's records: ``RUN/cache/`` (``meta.json`` and one ``.npy`` per
column, memory-mapped when read).

The JSON Lines files stay the record; the cache holds what loading them gives — the
samples as numpy columns (case ids and phases as codes into their distinct values, read
back as pandas categoricals), and the cases and environments frames column by column
(numbers as arrays, anything else as codes into a JSON list of its distinct values) —
under a key of every record file's name, size and modification time. A cache whose key no
longer matches (a record file changed, appeared or went) is ignored and rewritten; a run
directory that cannot be written to simply has none. Loading it skips JSON parsing and
record validation, which dominate reading a large run (docs/performance.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from podscale.core import runfolder as rf

#: the cache's format; a cache of another is rebuilt from the records, never read. History
#: (commits): 1 (58e5fad) the first cache; 2 (4847191) memory-mapped columns, samples as
#: categorical codes; 3, then 4 (45f807f) the case rows' new columns and the ledger; 5
#: (0.4) a case's layout spelled with its mesh split, as Layout.key; 6 (0.5) the case rows'
#: timing methods, the samples' chain and device phases; 7 the units of the workloads'
#: parameters saved beside the frames (no longer in a frame's attrs)
FORMAT = "podscale.cache/7"
NAME = Path("cache")


def record_files(run_dir: Path) -> list[Path]:
    """A run's record files, in a stable order (what the cache's key is made of)."""
    return sorted(run_dir.glob(rf.records_glob()))


def key(files: list[Path], run_dir: Path) -> str:
    parts = [FORMAT]
    for f in files:
        st = f.stat()
        parts.append(f"{f.relative_to(run_dir)}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts)


def _encode(df: pd.DataFrame, prefix: str, arrays: dict[str, np.ndarray]) -> dict:
    """A frame's columns into ``arrays``; returns how to read them back."""
    columns = []
    for i, name in enumerate(df.columns):
        col = df[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            arrays[f"{prefix}{i}"] = col.cat.codes.to_numpy(np.int32)
            columns.append({"name": name, "codes": col.cat.categories.tolist(), "cat": True})
        elif isinstance(col.dtype, pd.api.extensions.ExtensionDtype) and col.dtype.kind in "iu":
            arrays[f"{prefix}{i}"] = col.to_numpy(dtype=np.int32, na_value=0)
            arrays[f"{prefix}{i}m"] = col.isna().to_numpy()
            columns.append({"name": name, "nullable": True})
        elif col.dtype.kind in "iu" and len(col) and -2**31 < col.min() and col.max() < 2**31:
            arrays[f"{prefix}{i}"] = col.to_numpy(np.int32)  # half the bytes to read
            columns.append({"name": name, "dtype": str(col.dtype)})
        elif col.dtype.kind in "biuf":
            arrays[f"{prefix}{i}"] = col.to_numpy()
            columns.append({"name": name})
        else:
            try:
                codes, uniques = pd.factorize(col.to_numpy(object), use_na_sentinel=True)
            except TypeError:  # unhashable values (an environment's extra dict): as JSON
                columns.append({"name": name, "values": [_plain(v) for v in col]})
                continue
            arrays[f"{prefix}{i}"] = codes.astype(np.int32)
            columns.append({"name": name, "codes": [_plain(u) for u in uniques]})
    return {"columns": columns}


def _plain(value: object) -> object:
    return value.item() if isinstance(value, np.generic) else value


def _decode(z: dict[str, np.ndarray], prefix: str, meta: dict) -> pd.DataFrame:
    data = {}
    for i, c in enumerate(meta["columns"]):
        if "values" in c:
            data[c["name"]] = c["values"]
            continue
        a = z[f"{prefix}{i}"]
        if c.get("nullable"):
            data[c["name"]] = pd.arrays.IntegerArray(a.astype(np.int64), z[f"{prefix}{i}m"])
        elif "dtype" in c:
            data[c["name"]] = a.astype(c["dtype"])
        elif "codes" not in c:
            data[c["name"]] = a
        elif c.get("cat"):
            data[c["name"]] = pd.Categorical.from_codes(a, pd.Index(c["codes"], dtype=object))
        else:
            uniques = np.empty(len(c["codes"]) + 1, dtype=object)
            uniques[:-1] = c["codes"]
            uniques[-1] = None  # code -1: a missing value
            data[c["name"]] = uniques[a]
    return pd.DataFrame(data, columns=[c["name"] for c in meta["columns"]])


#: what a run's records give beside its frames (JSON): the cases the backend skipped, the
#: lines left out, the parameters' units
FACTS = ("skipped", "problems", "units")


def load(run_dir: Path, files: list[Path]
         ) -> tuple[dict[str, pd.DataFrame], dict] | None:
    """({samples, cases, envs, ledger}, {skipped, problems, units}) as saved, if the cache
    is current."""
    where = run_dir / NAME
    try:
        meta = json.loads((where / "meta.json").read_text(encoding="utf-8"))
        if meta.get("key") != key(files, run_dir):
            return None
        arrays = {name: np.load(where / f"{name}.npy", mmap_mode="r", allow_pickle=False)
                  for name in meta["arrays"]}
        frames = {name: _decode(arrays, f"{name}.", meta[name])
                  for name in ("samples", "cases", "envs", "ledger")}
        return frames, {k: meta[k] for k in FACTS}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save(run_dir: Path, files: list[Path], frames: dict[str, pd.DataFrame],
         facts: dict) -> None:
    """Write the cache next to the records (a new folder swapped in whole); quietly
    nothing where that is not possible."""
    import shutil

    arrays: dict[str, np.ndarray] = {}
    meta: dict = {name: _encode(df, f"{name}.", arrays) for name, df in frames.items()}
    meta.update({k: facts[k] for k in FACTS}, key=key(files, run_dir),
                arrays=sorted(arrays))
    where = run_dir / NAME
    tmp = run_dir / f".cache-{os.getpid()}"
    try:
        tmp.mkdir()
        for name, a in arrays.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(a), allow_pickle=False)
        (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        old = run_dir / f".cache-old-{os.getpid()}"
        if where.exists():
            where.rename(old)
        tmp.rename(where)
        shutil.rmtree(old, ignore_errors=True)
    except (OSError, TypeError, ValueError):
        shutil.rmtree(tmp, ignore_errors=True)
