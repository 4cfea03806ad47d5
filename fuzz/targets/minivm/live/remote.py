"""The remote side of a stress run spread over execnet gateways
(walkfuzz.targets.minivm.live.gateways): one live stress run on the gateway's host, with
walkfuzz as installed there, and its report and findings sent back as they are on disk.

HELLO is the source the driver sends first (`gateway.remote_exec`): it imports nothing of
walkfuzz before it has said which version the host has (None: not installed for that Python),
so a host without walkfuzz, or with another version, is one line, never a remote traceback.
Then it waits for the run's request (None: the driver stopped it) and `serve` runs it; a
STOP sent while it runs (the user's Ctrl-C or SIGTERM where the driver runs) ends the run the
way Ctrl-C ends a local one (walkfuzz.engine.interrupt): the stress child gets SIGINT, ends
its run early and still prints its result, whose report comes back marked interrupted.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from walkfuzz.core.errors import UserError, WalkfuzzError
from walkfuzz.report.files import REPORT_STEM
from walkfuzz.targets.minivm.live.options import StressOptions
from walkfuzz.targets.minivm.live.reporting import write_stress_report
from walkfuzz.targets.minivm.live.runner import run_minivm_stress
from walkfuzz.targets.minivm.live.summary import one_line

HELLO = """
import os, socket, sys
try:
    import walkfuzz
    version = walkfuzz.__version__
except ImportError:
    version = None
channel.send({"version": version, "hostname": socket.gethostname(),
              "label": os.environ.get("WALKFUZZ_HOST_LABEL", ""), "python": sys.executable})
request = channel.receive() if version is not None else None
if request is not None:
    from walkfuzz.targets.minivm.live.remote import serve
    serve(channel, request)
"""


STOP = "stop"
STATUS = "status"  # a message of the run's counts so far (live.progress_of), while it runs
STOP_POLL_SECONDS = 0.05  # how often a stop looks for the stress child to interrupt
CHILD_MODULE = "walkfuzz.targets.minivm.live.child"  # what run_minivm_stress starts


class Channel(Protocol):
    """What serve needs of an execnet channel."""

    def send(self, item: object) -> None: ...

    def receive(self, timeout: float | None = None) -> Any: ...


def _stress_children() -> list[int]:
    """This process's stress children (run_minivm_stress starts one and waits for it)."""
    me = str(os.getpid())
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # the fields after the command's closing parenthesis: state, ppid, ...
            ppid = stat.read_text().rsplit(")", 1)[1].split()[1]
            argv = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError):
            continue  # it ended while we looked
        if ppid == me and CHILD_MODULE.encode() in argv:
            found.append(int(stat.parent.name))
    return found


def _stop_when_asked(channel: Channel, done: threading.Event) -> None:
    """Wait for STOP, then interrupt the run's stress child, once, as soon as there is one
    (it may not have started yet), until the run is `done`. The channel closing first (the
    run is over and its reply read) ends the wait."""
    try:
        asked = channel.receive()
    except Exception:  # execnet: EOFError or RemoteError once the other side has closed
        return
    if asked != STOP:
        return
    stopped: set[int] = set()
    while not done.wait(STOP_POLL_SECONDS):
        for pid in set(_stress_children()) - stopped:
            os.kill(pid, signal.SIGINT)  # a second one could land after its handler is gone
            stopped.add(pid)


def run_request(request: dict[str, Any],
                on_status: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Run one request (`options`: StressOptions as JSON, `command`: the user's command line)
    in a folder of its own; `on_status` gets the run's counts so far while it runs. The reply:
    the report as JSON text, every other file written there by relative path, and the
    folder's path (`root`: the paths in the report and the findings' descriptions start with
    it); a bad option or a failed run: `error` and whether it was the user's (`user`)."""
    options = StressOptions.from_json(request["options"])
    with tempfile.TemporaryDirectory(prefix="walkfuzz-stress-") as tmp:
        root = Path(tmp)
        started = time.time()
        try:
            result = run_minivm_stress(replace(options, out=str(root)), on_status)
        except WalkfuzzError as err:
            return {"error": str(err), "user": isinstance(err, UserError)}
        paths = write_stress_report(root, result, list(request["command"]), started)
        files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
                 if p.is_file() and p.stem != REPORT_STEM}
        return {"root": str(root), "report": paths["json"].read_text(), "files": files,
                "summary": one_line(result), "interrupted": bool(result.get("interrupted"))}


def serve(channel: Channel, request: dict[str, Any]) -> None:
    done = threading.Event()
    threading.Thread(target=_stop_when_asked, args=(channel, done), daemon=True).start()
    try:
        reply = run_request(request, lambda status: channel.send({STATUS: status}))
    finally:
        done.set()
    channel.send(reply)
