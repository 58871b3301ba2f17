"""A run directory as a block of text lines, for results that can only leave a job through
its log (a Kubernetes pod without a volume): ``podscale worker --print-run`` prints it at
the end of process 0's output, ``podscale collect LOG`` turns it back into the directory.

The block::

    PODSCALE-RUN BEGIN v1 run=<run id> files=<n> bytes=<tar.gz bytes> chunks=<C> sha256=<hex>
    PODSCALE-RUN 1/C <base64 chunk> <crc32 of the chunk>
    ...
    PODSCALE-RUN C/C <base64 chunk> <crc32>
    PODSCALE-RUN END sha256=<hex>

The payload is a gzipped tar of the run directory (without its cache or report). Each
line carries its own CRC32, so a damaged line is named, and the whole a SHA-256; lines are
found wherever ``PODSCALE-RUN`` stands in a line, so prefixes a log collector adds
(timestamps, pod names) do no harm. A missing line, a wrong checksum or no END is a
:class:`UsageError` that names what is missing or damaged.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import tarfile
import zlib
from pathlib import Path

from podscale.core.errors import UsageError
from podscale.core.lines import MPI_TAG, rejoin_mpirun

TAG = "PODSCALE-RUN"
VERSION = "v1"
CHUNK = 3072  # base64 characters a line: well under log collectors' line limits
SKIP = ("cache", "report")  # derived: rebuilt after collection


def _tar(run_dir: Path) -> tuple[bytes, int]:
    buf = io.BytesIO()
    files = 0
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(run_dir.rglob("*")):
            rel = path.relative_to(run_dir)
            if path.is_file() and rel.parts[0] not in SKIP:
                tar.add(path, arcname=str(Path(run_dir.name) / rel))
                files += 1
    return buf.getvalue(), files


def encode(run_dir: Path) -> list[str]:
    """The block's lines for ``run_dir``."""
    payload, files = _tar(run_dir)
    digest = hashlib.sha256(payload).hexdigest()
    text = base64.b64encode(payload).decode()
    chunks = [text[i:i + CHUNK] for i in range(0, len(text), CHUNK)] or [""]
    lines = [f"{TAG} BEGIN {VERSION} run={run_dir.name} files={files} bytes={len(payload)} "
             f"chunks={len(chunks)} sha256={digest}"]
    lines += [f"{TAG} {i}/{len(chunks)} {c} {zlib.crc32(c.encode()):08x}"
              for i, c in enumerate(chunks, 1)]
    lines.append(f"{TAG} END sha256={digest}")
    return lines


_BEGIN = re.compile(rf"{TAG} BEGIN (\S+) run=(\S+) files=(\d+) bytes=(\d+) chunks=(\d+) "
                    r"sha256=([0-9a-f]{64})")
_CHUNK = re.compile(rf"{TAG} (\d+)/(\d+) (\S*) ([0-9a-f]{{8}})\s*$")
_END = re.compile(rf"{TAG} END sha256=([0-9a-f]{{64}})")


def _ranges(numbers: list[int]) -> str:
    out, start = [], None
    for i, n in enumerate(numbers):
        start = n if start is None else start
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            out.append(f"{start}" if start == n else f"{start}-{n}")
            start = None
    return ", ".join(out)


def decode(text: str) -> tuple[str, bytes]:
    """(run id, tar.gz payload) of the last complete block in ``text`` (from mpirun's
    tagged output, its fragments joined first)."""
    lines = [line for _, line in rejoin_mpirun(text)] if MPI_TAG.search(text) \
        else text.splitlines()
    begins = [i for i, line in enumerate(lines) if _BEGIN.search(line)]
    if not begins:
        raise UsageError(f"no {TAG} block found (was the job run with --print-run, and did "
                         "the log keep its end?)")
    start = begins[-1]
    found = _BEGIN.search(lines[start])
    assert found is not None  # begins holds only lines it matched
    version, run, _, size, count, digest = found.groups()
    if version != VERSION:
        raise UsageError(f"{TAG} block of version {version}; this podscale reads {VERSION}")
    count = int(count)
    chunks: dict[int, str] = {}
    end = None
    for n, line in enumerate(lines[start + 1:], start + 2):
        if m := _END.search(line):
            end = m.group(1)
            break
        m = _CHUNK.search(line)
        if not m:
            continue
        i, total, data, crc = int(m[1]), int(m[2]), m[3], m[4]
        if total != count or not 1 <= i <= count:
            raise UsageError(f"{TAG} line {n} ({i}/{total}) does not belong to the block of "
                             f"{count} chunks")
        if f"{zlib.crc32(data.encode()):08x}" != crc:
            raise UsageError(f"{TAG} chunk {i} of {count} (log line {n}) is corrupted "
                             "(checksum mismatch)")
        chunks[i] = data
    missing = [i for i in range(1, count + 1) if i not in chunks]
    if missing:
        why = "" if end else "; no END line: the log was cut off"
        raise UsageError(f"{TAG} block of run {run} is incomplete: chunk(s) "
                         f"{_ranges(missing)} of {count} missing{why}")
    if end is None:
        raise UsageError(f"{TAG} block of run {run} has no END line: the log was cut off")
    payload = base64.b64decode("".join(chunks[i] for i in range(1, count + 1)))
    if len(payload) != int(size) or hashlib.sha256(payload).hexdigest() != digest or \
            end != digest:
        raise UsageError(f"{TAG} block of run {run}: payload checksum mismatch")
    return run, payload


def extract(text: str, out: Path) -> Path:
    """Write the block's run directory under ``out``; its path."""
    run, payload = decode(text)
    target = Path(out) / run
    if target.exists():
        raise UsageError(f"{target} exists already; choose another --out")
    with tarfile.open(fileobj=io.BytesIO(payload), mode="r:gz") as tar:
        members = tar.getmembers()
        for m in members:
            parts = Path(m.name).parts
            if not m.isfile() or m.name.startswith("/") or ".." in parts or parts[0] != run:
                raise UsageError(f"{TAG} block of run {run}: unexpected entry {m.name!r}")
        tar.extractall(Path(out), members=members, filter="data")
    return target
