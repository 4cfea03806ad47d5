"""Child processes, the one way walkfuzz starts them: a command line (`walkfuzz_command` for
walkfuzz's own modules), started (`start_child`) for a caller that talks to it or watches it
itself, or run to its end (`run_child`) with its output read as it comes and its status
reports handed on; a time-out or a stop kills its process group; its end named
(`ChildRun.died`: the signal that killed it, walkfuzz.core.exit_status's names).

A child `run_child` runs leads a process group of its own, so that a time-out or a stop kills
what it started too, and a terminal's Ctrl-C reaches only this process, which decides: a
graceful run tells the child to stop and still reads its result (walkfuzz.engine.interrupt),
any other run kills the child's group and passes the interrupt on.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from walkfuzz.core.exit_status import describe_exit
from walkfuzz.engine import interrupt
from walkfuzz.engine.progress import status_of

READER_GRACE = 5.0  # seconds to wait for the rest of a finished child's output
STOP_POLL_SECONDS = 0.2  # how often a child run with a stop event looks at it
PR_SET_PDEATHSIG = 1

# Every exit status is the child's own verdict: only a signal is a death.
ANY_EXIT = range(256)

# What a child's stdin, stdout or stderr is: a pipe, nothing, stderr into stdout, an open file.
Stream = int | IO[Any] | None
PIPE, DEVNULL, STDOUT = subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT


def walkfuzz_command(module: str, *args: str) -> list[str]:
    """The command line that runs walkfuzz's module `module` (`walkfuzz.triage.worker`) with
    `args`, in this interpreter (the venv's, with walkfuzz importable)."""
    return python_command("-m", module, *args)


def python_command(*args: str) -> list[str]:
    """The command line that runs this interpreter with `args` (a harness script and its
    flags, `-c CODE`)."""
    return [sys.executable, *args]


@dataclass(frozen=True)
class ChildRun:
    """A child run to its end: its command, exit status and output ("" when not captured)."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def died(self) -> str | None:
        """How it died (`SIGSEGV`), None when it exited."""
        return self.death(ANY_EXIT)

    def death(self, verdicts: Container[int]) -> str | None:
        """How it ended (describe_exit) when that was any other way than exiting with one of
        `verdicts` (the statuses its own main returns); else None."""
        return None if self.returncode in verdicts else describe_exit(self.returncode)


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when its parent goes away."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def start_child(argv: Sequence[str], *, stdin: Stream = None, stdout: Stream = None,
                stderr: Stream = None, env: Mapping[str, str] | None = None,
                cwd: Path | str | None = None, own_group: bool = False,
                die_with_parent: bool = False) -> subprocess.Popen[str]:
    """Start `argv` (text streams, bytes that are no UTF-8 read as U+FFFD; a stream None is
    this process's, `env` None its environment). `own_group`: in a session of its own (a
    terminal's Ctrl-C does not reach it, `kill_group` ends what it started too);
    `die_with_parent`: SIGTERM when this process goes away, even by SIGKILL."""
    return subprocess.Popen(list(argv), stdin=stdin, stdout=stdout, stderr=stderr, text=True,
                            errors="replace", env=None if env is None else dict(env), cwd=cwd,
                            start_new_session=own_group,
                            preexec_fn=_die_with_parent if die_with_parent else None)


def kill_group(process: subprocess.Popen[Any]) -> int:
    """SIGKILL `process` and, when it leads a process group (`own_group`), everything in it;
    its exit status once it is reaped."""
    if process.returncode is None:  # not reaped: its pid still names it (and its group)
        with contextlib.suppress(ProcessLookupError):  # no group of that id: it leads none
            os.killpg(process.pid, signal.SIGKILL)
        process.kill()
    return process.wait()


def terminate(processes: Iterable[subprocess.Popen[Any]], grace: float) -> None:
    """SIGTERM every process still running, `kill_group` those still running `grace` seconds
    later; returns once all have exited."""
    processes = list(processes)
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for process in processes:
        try:
            process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            kill_group(process)


def _pump(source: IO[str], sink: list[str],
          on_status: Callable[[dict[str, Any]], None] | None) -> None:
    """Each line of `source` into `sink`; with `on_status`, a status report to it instead."""
    for line in source:
        status = status_of(line) if on_status is not None else None
        if status is not None and on_status is not None:
            on_status(status)
        else:
            sink.append(line)


def _ignore(status: dict[str, Any]) -> None:
    """A status report nobody asked for: still no line of the child's stderr."""


def _feed(sink: IO[str], text: str) -> None:
    with contextlib.suppress(BrokenPipeError):  # it ended without reading it all
        sink.write(text)
    with contextlib.suppress(BrokenPipeError):
        sink.close()


def run_child(argv: Sequence[str], *, timeout: float | None = None,
              on_status: Callable[[dict[str, Any]], None] | None = None,
              graceful: bool = False, stop: threading.Event | None = None,
              env: Mapping[str, str] | None = None, cwd: Path | str | None = None,
              stdin: str | None = None, capture: bool = True) -> ChildRun:
    """Run `argv` in a process group of its own to its end. `capture`: its stdout and stderr
    read as they come (else they are this process's), each status report on its stderr
    handed to `on_status` (on another thread; None: dropped) and left out of its stderr.
    `stdin`: this text and then its end ("": nothing; None: this process's stdin).
    subprocess.TimeoutExpired after `timeout` seconds (None: no limit; the group is killed).

    On Ctrl-C or SIGTERM here (KeyboardInterrupt): with `graceful` the child is told to stop
    (walkfuzz.engine.interrupt: it ends its run early and prints its result) and its output is
    returned, the interrupt passed on only if the child could not make a result of it;
    otherwise the group is killed and the interrupt passed on. With `stop` the group is
    killed once `stop` is set, from any thread; its output until then is returned."""
    pipe = PIPE if capture else None
    proc = start_child(argv, stdin=None if stdin is None else PIPE, stdout=pipe, stderr=pipe,
                       env=env, cwd=cwd, own_group=True)
    out: list[str] = []
    err: list[str] = []
    threads = []
    if capture:
        assert proc.stdout is not None and proc.stderr is not None
        threads += [threading.Thread(target=_pump, args=(proc.stdout, out, None), daemon=True),
                    threading.Thread(target=_pump, args=(proc.stderr, err,
                                                         on_status or _ignore), daemon=True)]
    if stdin is not None:
        assert proc.stdin is not None
        threads.append(threading.Thread(target=_feed, args=(proc.stdin, stdin),
                                        daemon=True))
    for thread in threads:
        thread.start()
    try:
        if stop is not None:
            _wait_or_stop(proc, timeout, stop)
        elif graceful:
            interrupt.wait(proc, timeout)
        else:
            proc.wait(timeout=timeout)
    except BaseException:
        kill_group(proc)
        raise
    finally:
        for thread in threads:  # the pipes close with the child (unless it left a grandchild)
            thread.join(READER_GRACE)
    return ChildRun(list(argv), proc.returncode, "".join(out), "".join(err))


def _wait_or_stop(proc: subprocess.Popen[str], timeout: float | None,
                  stop: threading.Event) -> None:
    """Wait for `proc`, killing its group once `stop` is set (TimeoutExpired after
    `timeout`)."""
    started = time.monotonic()
    while True:
        try:
            proc.wait(timeout=STOP_POLL_SECONDS)
            return
        except subprocess.TimeoutExpired:
            if stop.is_set():
                kill_group(proc)
                return
            if timeout is not None and time.monotonic() - started > timeout:
                raise subprocess.TimeoutExpired(proc.args, timeout) from None
