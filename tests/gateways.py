"""execnet socket gateways on this machine, as a test stands in for other hosts: each is
execnet's own socket server script (`python -m execnet.script.socketserver HOST:PORT`), started
on a free port (port 0: the server prints the one the system gave it), stopped at the end.
The server runs every connection's code in its own process, so each test starts fresh ones."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.report.document import HOST_LABEL_ENV

START_SECONDS = 60.0  # a server that has not said its port by then is not starting
# "socket_readline_exec_server-1.2 Entering Accept loop ('127.0.0.1', 38977)"
LISTENING = re.compile(r"Entering Accept loop \('([^']+)', (\d+)\)")


@dataclass(frozen=True)
class SocketServer:
    spec: str  # socket=HOST:PORT, as --tx takes it
    pid: int


def children(pid: int, module: str) -> list[int]:
    """The processes whose parent is `pid` and whose command line names `module`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            argv = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue  # it ended while we looked
        if ppid == pid and module.encode() in argv:
            found.append(int(stat.parent.name))
    return found


def _address(server: subprocess.Popen[str]) -> str:
    assert server.stdout is not None
    ready, _, _ = select.select([server.stdout], [], [], START_SECONDS)
    line = server.stdout.readline() if ready else ""
    found = LISTENING.search(line)
    assert found, f"socket server did not start: {line!r}"
    return f"{found.group(1)}:{found.group(2)}"


@contextmanager
def socket_servers(count: int, cwd: Path, env: dict[str, str] | None = None,
                   python: str = sys.executable) -> Iterator[list[SocketServer]]:
    """`count` socket servers of `python` in `cwd`, with this environment and `env` but no
    host label (a stand-in host has the label its spec gives it, if any: this test may itself
    run on a labelled host)."""
    inherited = {k: v for k, v in os.environ.items() if k != HOST_LABEL_ENV}
    servers = [subprocess.Popen([python, "-u", "-m", "execnet.script.socketserver",
                                 "127.0.0.1:0"], cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                env={**inherited, **(env or {})}) for _ in range(count)]
    try:
        yield [SocketServer(f"socket={_address(server)}", server.pid) for server in servers]
    finally:
        for server in servers:
            server.kill()
            server.wait()
