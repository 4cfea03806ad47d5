"""The remote side of a stress run spread over execnet gateways
(walkfuzz.targets.minivm.stress.gateways): one live stress run on the gateway's host, with
walkfuzz as installed there, and its report and findings sent back as they are on disk.

HELLO is the source the driver sends first (`gateway.remote_exec`): it imports nothing of
walkfuzz before it has said which version the host has (None: not installed for that Python),
so a host without walkfuzz, or with another version, is one line, never a remote traceback.
Then it waits for the run's request (None: the driver stopped it) and `serve` runs it.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from walkfuzz.core.errors import UserError, WalkfuzzError
from walkfuzz.report.files import REPORT_STEM
from walkfuzz.targets.minivm.stress.options import StressOptions
from walkfuzz.targets.minivm.stress.reporting import write_stress_report
from walkfuzz.targets.minivm.stress.runner import run_minivm_stress
from walkfuzz.targets.minivm.stress.summary import one_line

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
    from walkfuzz.targets.minivm.stress.remote import serve
    serve(channel, request)
"""


class Channel(Protocol):
    """What serve needs of an execnet channel."""

    def send(self, item: object) -> None: ...


def run_request(request: dict[str, Any]) -> dict[str, Any]:
    """Run one request (`options`: StressOptions as JSON, `command`: the user's command line)
    in a folder of its own; the report as JSON text, every other file written there by
    relative path, and the folder's path (`root`: the paths in the report and the findings'
    descriptions start with it). A bad option or a failed run: `error` and whether it was the
    user's (`user`)."""
    options = StressOptions.from_json(request["options"])
    with tempfile.TemporaryDirectory(prefix="walkfuzz-stress-") as tmp:
        root = Path(tmp)
        started = time.time()
        try:
            result = run_minivm_stress(replace(options, out=str(root)))
        except WalkfuzzError as err:
            return {"error": str(err), "user": isinstance(err, UserError)}
        paths = write_stress_report(root, result, list(request["command"]), started)
        files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
                 if p.is_file() and p.stem != REPORT_STEM}
        return {"root": str(root), "report": paths["json"].read_text(), "files": files,
                "summary": one_line(result), "interrupted": bool(result.get("interrupted"))}


def serve(channel: Channel, request: dict[str, Any]) -> None:
    channel.send(run_request(request))
