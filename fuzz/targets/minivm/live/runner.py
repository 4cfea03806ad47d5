"""`run_minivm_stress`: the live stress run in a child process, so that a fault the guard
cannot catch (or a walker that corrupts the process) costs the child, not the caller."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

from walkfuzz.core.errors import UserError, WalkfuzzError
from walkfuzz.engine.child import run_child, walkfuzz_command
from walkfuzz.targets.minivm.live.options import StressOptions

GRACE_SECONDS = 60.0  # beyond the run's own length, before the child is killed


class StressChildError(WalkfuzzError):
    """The child process died or printed no result; the message has its status and stderr."""


def run_minivm_stress(options: StressOptions,
                      on_status: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Run `options` on the live simulated VM in a child process; its result document.
    `on_status` gets the child's counts so far while it runs (live.progress_of)."""
    options.check()
    seconds = (options.duration_ns + options.baseline_ns) / 1e9 + GRACE_SECONDS
    command = walkfuzz_command("walkfuzz.targets.minivm.live.child",
                               json.dumps(options.to_json()))
    try:
        # graceful: a Ctrl-C or SIGTERM still gets the result, marked interrupted
        child = run_child(command, timeout=seconds, on_status=on_status, graceful=True)
    except subprocess.TimeoutExpired as err:
        raise StressChildError(f"stress child ({options.label}) still running after "
                               f"{seconds:.0f} s; killed") from err
    stderr = child.stderr.strip()
    if child.returncode == 2 and stderr:
        raise UserError(stderr.splitlines()[-1].removeprefix("walkfuzz stress: "))
    if child.returncode != 0:
        raise StressChildError(f"stress child ({options.label}) exited with status "
                               f"{child.returncode}: {stderr[-2000:] or 'no output'}")
    try:
        result: dict[str, Any] = json.loads(child.stdout)
    except json.JSONDecodeError as err:
        raise StressChildError(f"stress child ({options.label}) printed no result: {err}") from err
    return result
