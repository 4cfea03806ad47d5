"""Ctrl-C and SIGTERM for a run done by a child process that prints its result when it ends
(the live stress runs of minivm and libunwind): the child ends its run early and still prints
the result, the parent still reads it, and the run's findings and report are kept.

    child:   with stop_on_interrupt(lib.wf_..._request_stop) as received:
                 ... the run, on a thread of its own, the main thread polling ...
             result["interrupted"] = bool(received)
    parent:  run_child(argv, timeout=..., on_status=..., graceful=True)
             (walkfuzz.engine.child, which waits with `wait` here)

A terminal's Ctrl-C and a SIGTERM (a CI job's timeout) reach the parent only (the child leads
a process group of its own), which passes them on as SIGINT.
"""

from __future__ import annotations

import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

# After an interrupt: the child ends its phases within milliseconds, then tears down and prints.
INTERRUPT_GRACE_SECONDS = 30.0


@contextmanager
def stop_on_interrupt(stop: Callable[[], None]) -> Iterator[list[int]]:
    """While the block runs, Ctrl-C and SIGTERM call `stop` (an async-signal-safe request to
    end the run early) instead of ending the process; the list yielded holds the signals
    received. Signal handlers run on the main thread, between bytecodes: the run itself goes
    on another thread while this one polls."""
    received: list[int] = []

    def on_signal(signo: int, frame: FrameType | None) -> None:
        received.append(signo)
        stop()

    if threading.current_thread() is not threading.main_thread():  # only it may set handlers
        yield received
        return
    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for signo, handler in previous.items():
            signal.signal(signo, handler)


def wait(child: subprocess.Popen[Any], timeout: float | None) -> int:
    """The child's exit status once it exits (subprocess.TimeoutExpired after `timeout`). On
    Ctrl-C or SIGTERM here the child is told to stop and is still waited for: its output, a
    result that says it was interrupted, stays to be read. An interrupt the child could not
    turn into a result (it had not started its run, or failed to stop in time) is passed on."""
    try:
        return child.wait(timeout=timeout)
    except KeyboardInterrupt:
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
        try:
            returncode = child.wait(timeout=INTERRUPT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            returncode = None
        if returncode != 0:
            raise
        return 0
