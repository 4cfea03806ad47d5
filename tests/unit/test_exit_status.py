"""One spelling of how a process or fault ended (walkfuzz.core.exit_status)."""

from __future__ import annotations

import signal
import subprocess
import sys

from walkfuzz.core.exit_status import describe_exit, signal_name


def test_signal_names() -> None:
    assert signal_name(signal.SIGBUS) == "SIGBUS"
    assert signal_name(signal.SIGRTMAX - 2) == "SIGRTMAX-2"
    assert signal_name(signal.SIGRTMIN + 3) == "SIGRTMIN+3"
    assert signal_name(99) == "signal 99"


def test_a_killed_child_is_named_by_its_signal_and_an_exit_by_its_status() -> None:
    killed = subprocess.run([sys.executable, "-c", "import os; os.kill(os.getpid(), 11)"],
                            check=False)
    exited = subprocess.run([sys.executable, "-c", "raise SystemExit(3)"], check=False)
    assert describe_exit(killed.returncode) == "SIGSEGV"
    assert describe_exit(exited.returncode) == "exit 3"
    assert describe_exit(0) == "exit 0"
