"""One host's process under ``--launcher ray``: the actor :mod:`.raydriver` starts per
bundle. It runs the command with the variables the driver gives, keeps its output for the
driver's looks, and stops it on request. Where the run folder is not shared (the actor's
node is not the driver's, or ``PODSCALE_RAY_SHIP=1``), the driver ships the folder's
files (the plans, the manifest) in through Ray's object store; the actor runs the command
in its own copy (the folder's path rewritten in the command and the plans) and ships back
what the process wrote."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from podscale.core import envnames

#: what stays the front end's own in the run folder (never shipped back over it)
KEPT = ("run.json", "plans")


def pack(folder: Path, leave: tuple[str, ...] = ()) -> bytes:
    """``folder``'s files as a gzipped tar (names relative to it), ``leave`` left out."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for entry in sorted(folder.iterdir()) if folder.is_dir() else []:
            if entry.name not in leave:
                tar.add(entry, arcname=entry.name)
    return buf.getvalue()


def unpack(data: bytes, folder: Path) -> int:
    """Extract a :func:`pack` into ``folder``; the number of files."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        files = sum(1 for m in tar.getmembers() if m.isfile())
        tar.extractall(folder, filter="data")
    return files


class Host:
    """One host's process, in a Ray actor (``ray.remote`` by the driver)."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.proc: subprocess.Popen | None = None
        # unnamed: gone with the last process that holds it, an actor killed included
        self.out = tempfile.TemporaryFile(prefix=f"podscale-ray-{index}-")
        self.read = 0
        self.own: Path | None = None  # this node's copy of the run folder, where shipped

    def node(self) -> str:
        import ray

        return ray.get_runtime_context().get_node_id()

    def address(self) -> tuple[str, int]:
        """This node's address and a port free on it (for the coordinator)."""
        import ray

        from podscale.core.ports import listen_port

        ip = ray.util.get_node_ip_address()
        return ip, listen_port(ip)

    def start(self, argv: list[str], env: dict[str, str], home: str | None = None,
              shipped: bytes | None = None) -> int:
        """Start the command; with ``shipped`` (the run folder ``home``'s files), in this
        node's own copy of it."""
        if shipped is not None and home:
            self.own = Path(tempfile.mkdtemp(prefix=f"podscale-ray-run-{self.index}-"))
            unpack(shipped, self.own)
            for plan in (self.own / "plans").glob("*.json"):
                plan.write_text(plan.read_text().replace(home, str(self.own)))
            argv = [word.replace(home, str(self.own)) for word in argv]
        full = {**os.environ, **env, envnames.PARENT_PID: str(os.getpid())}
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=subprocess.STDOUT, env=full,
                                     start_new_session=True)
        return self.proc.pid

    def poll(self) -> tuple[str, int | None]:
        """The output written since the last look, and the exit code (None: running)."""
        code = self.proc.poll() if self.proc else None
        data = b""
        while chunk := os.pread(self.out.fileno(), 1 << 20, self.read + len(data)):
            data += chunk
        if code is None:  # a line being written stays for the next look
            data = data[:data.rfind(b"\n") + 1]
        self.read += len(data)
        return data.decode("utf-8", "replace"), code

    def stop(self) -> None:
        """End the process (its group), if it runs: as the local supervisor ends its own."""
        if self.proc is not None and self.proc.poll() is None:
            from podscale.launch.local import Worker, terminate

            terminate([Worker(self.index, self.proc, Path(os.devnull))])

    def collect(self) -> bytes | None:
        """What the process wrote in this node's copy of the run folder (None: it wrote
        in the shared one); the copy and the output are removed."""
        self.out.close()
        if self.own is None:
            return None
        data = pack(self.own, leave=KEPT)
        shutil.rmtree(self.own, ignore_errors=True)
        return data
