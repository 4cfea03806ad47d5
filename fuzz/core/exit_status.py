"""How a process or a fault ended, named alike everywhere: `SIGSEGV`, `SIGRTMAX-2`, `exit 3`.

Findings, triage results and messages all carry these names, and a finding's signature is
built from them: one spelling keeps the same death the same finding wherever it was seen.
"""

from __future__ import annotations

import signal


def signal_name(signo: int) -> str:
    """`SIGSEGV` for 11; real-time signals as `SIGRTMAX-2` / `SIGRTMIN+3`."""
    if signal.SIGRTMIN <= signo <= signal.SIGRTMAX:
        below_max = signal.SIGRTMAX - signo
        return f"SIGRTMAX-{below_max}" if below_max < 8 else f"SIGRTMIN+{signo - signal.SIGRTMIN}"
    try:
        return signal.Signals(signo).name
    except ValueError:
        return f"signal {signo}"


def describe_exit(returncode: int) -> str:
    """A child's end from its `Popen.returncode`: the signal that killed it, or `exit N`."""
    return signal_name(-returncode) if returncode < 0 else f"exit {returncode}"
