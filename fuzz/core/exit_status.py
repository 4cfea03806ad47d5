"""How a process or a fault ended, named alike everywhere: `SIGSEGV`, `SIGRTMAX-2`, `exit 3`;
and how a walkfuzz command ends, the same for every command and target.

Findings, triage results and messages all carry these names, and a finding's signature is
built from them: one spelling keeps the same death the same finding wherever it was seen.
"""

from __future__ import annotations

import argparse
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

# A walkfuzz command's exit status. Bad input and a missing tool are the exit_status of
# walkfuzz.core.errors.UserError and MissingDependencyError, which name these.
CLEAN = 0  # the run did its work and found nothing
FINDINGS = 1  # it found something (saved under its output folder)
BAD_INPUT = 2  # a flag, path or file it cannot use; one line names it
MISSING_TOOL = 3  # a tool or library it needs is not installed
INTERRUPTED = 130  # Ctrl-C or SIGTERM: stopped early, what was found kept, the report written


def judged(found: bool) -> int:
    """The status of a run that did its work: FINDINGS if it found anything, else CLEAN."""
    return FINDINGS if found else CLEAN


def invalid_rate_fails(rate: float, limit: float | None) -> bool:
    """Whether a stress run's invalid-trace rate makes it a run with findings: every invalid
    trace is one (and saved as one), unless --max-invalid-rate tolerates the rate."""
    return rate > (limit or 0.0)


def invalid_rate_over(rate: float, limit: float | None) -> str | None:
    """The line that says why a run exits FINDINGS for its invalid-trace rate, the rate and the
    bound; None within the bound or without one (then each invalid trace is a finding)."""
    if limit is None or not invalid_rate_fails(rate, limit):
        return None
    return f"invalid-trace rate {rate:.4%} is above --max-invalid-rate {limit:g} ({limit:.4%})"


def rate_fraction(text: str) -> float:
    """--max-invalid-rate's argparse type: a share of the walks, 0 to 1 (0.005 is 0.5%); a
    rate above 1 would tolerate anything and is a mistake, so argparse names the text."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number: a share of the walks, "
                                         "0 to 1 (0.005 for 0.5%)") from None
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"{text!r} is not a share of the walks between 0 and 1 "
                                         "(0.005 for 0.5%)")
    return value


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


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does: a command stopped by either (a CI
    job's timeout sends SIGTERM) takes the same way out, keeping its findings and report."""

    def interrupt(signo: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
