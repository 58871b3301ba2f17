"""Lines written whole: every line a worker, a profiled process or the command line writes
goes out as one ``write`` of its text and its newline together.

``print`` on an unbuffered stream (``PYTHONUNBUFFERED``, which launchers set) writes a
message and its newline in two calls; a launcher that tags each rank's output (mpirun's
``--tag-output``, srun's ``--label``) reads what came and may join one rank's message to
the next rank's. One ``os.write`` of a line below the pipe's atomic size (4 KiB on Linux)
reaches the pipe in one piece. A reader that falls behind (mpirun's, with many ranks
writing at once) then reads what has piled up in chunks of its own size (4 KiB for Open
MPI's), and a chunk may end inside a line; so a line goes into a pipe only once what the
pipe holds and the line fit in one such chunk (waiting a little for the reader, never
long). A block of several lines is written a line at a time."""

from __future__ import annotations

import os
import re
import stat
import sys
import time
from typing import TextIO

#: what a launcher reads of a pipe at once (Open MPI's and Slurm's I/O forwarding: 4 KiB)
CHUNK = 4096
#: the tag mpirun's ``--tag-output`` puts before each piece of a rank's output
MPI_TAG = re.compile(r"\[\d+,(\d+)\]<std(?:out|err)>:")
#: the longest one write waits for the reader to take what the pipe holds
PATIENCE_S = 0.5


def say(text: str, *, err: bool = False) -> None:
    """Write ``text`` (one line or several) to standard output, or to standard error with
    ``err``: each line and its newline in one write, after whatever the stream holds."""
    stream = sys.stderr if err else sys.stdout
    write_lines(stream, text)


def write_lines(stream: TextIO, text: str) -> None:
    """Write each line of ``text`` to ``stream`` whole (see the module). A stream with no
    file descriptor (a test's capture, a replaced ``sys.stdout``) gets one ``write`` per
    line."""
    lines = (text if text.endswith("\n") else text + "\n").splitlines(keepends=True)
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    try:
        stream.flush()  # what print left in the stream's buffer goes first
    except (OSError, ValueError):
        pass
    if fd is None:
        for line in lines:
            stream.write(line)
        stream.flush()
        return
    encoding = getattr(stream, "encoding", None) or "utf-8"
    pipe = _is_pipe(fd)
    for line in lines:
        data = line.encode(encoding, errors="backslashreplace")
        if pipe:
            _room_for(fd, len(data))
        while data:  # a pipe takes a short line whole; a longer one may come in parts
            try:
                data = data[os.write(fd, data):]
            except InterruptedError:
                continue
            except OSError:  # the reader is gone (a closed pipe): nothing more to say
                return


def _is_pipe(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


def _room_for(fd: int, size: int) -> None:
    """Wait (``PATIENCE_S`` at most) until the pipe's unread bytes and ``size`` more fit in
    one reader's chunk, so the reader's next read ends at a line's end."""
    import fcntl
    import struct
    import termios

    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        try:
            (unread,) = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))
        except OSError:
            return
        if unread == 0 or unread + size <= CHUNK:
            return
        time.sleep(0.001)


def rejoin_mpirun(text: str) -> list[tuple[int, str]]:
    """mpirun's tagged output as (rank, line), in order of each line's end. mpirun tags
    every piece it reads, so a line that came in several pieces (a rank's standard output
    is a pseudo-terminal there, read as it arrives) is several tagged fragments,
    interleaved with other ranks': they are joined per rank until the newline. What
    follows a newline untagged is mpirun's own and left out."""
    pieces = MPI_TAG.split(text)  # [before, rank, content, rank, content, ...]
    lines: list[tuple[int, str]] = []
    partial: dict[int, str] = {}
    for rank_text, content in zip(pieces[1::2], pieces[2::2]):
        rank = int(rank_text)
        head, newline, _ = content.partition("\n")
        partial[rank] = partial.get(rank, "") + head
        if newline:
            lines.append((rank, partial.pop(rank)))
    return lines + list(partial.items())


#: the width of a table's comment lines (the header, notes, findings)
COMMENT_WIDTH = 120


def commented(text: str, width: int = COMMENT_WIDTH) -> str:
    """``text`` as comment lines of at most ``width`` columns: ``# `` first, ``#   `` on
    each line it wraps onto (a word longer than a line, a path, stays whole)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width, initial_indent="# ", subsequent_indent="#   ",
                                   break_long_words=False, break_on_hyphens=False)) or "#"
