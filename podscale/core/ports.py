"""A port for a coordinator to listen on: one the OS would not hand to an outgoing
connection meanwhile.

A port found free by binding port 0 comes from the kernel's ephemeral range
(``net.ipv4.ip_local_port_range``), which is also where every outgoing connection's local
port comes from: between the probe and the coordinator's own bind, another process's
connection (gloo's, gRPC's) may take it, and JAX's coordinator then fails to start ("Failed
to add port to server"). A free port below that range is taken by no connection.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

#: where the ports below the ephemeral range are looked for
LOWEST = 20000


def ephemeral_start(path: Path = Path("/proc/sys/net/ipv4/ip_local_port_range")) -> int:
    """The first port of the kernel's ephemeral range (32768 where it cannot be read)."""
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def bind_error(host: str, port: int) -> str | None:
    """Why ``port`` cannot be bound on ``host`` now (the OS's words), or None: it can."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def bindable(host: str, port: int) -> bool:
    return bind_error(host, port) is None


def listen_port(host: str = "127.0.0.1", tries: int = 64) -> int:
    """A free port below the ephemeral range, else (all tried were busy) one the OS picks."""
    top = ephemeral_start()
    if top > LOWEST + 1:
        for port in random.sample(range(LOWEST, top), min(tries, top - LOWEST)):
            if bindable(host, port):
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])
