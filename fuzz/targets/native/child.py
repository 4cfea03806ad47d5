"""One walk in a fresh child process, the one way the native target's replays run one
(`walkfuzz replay --target native|libunwind`, a snapshot's replay, the differential replay): a
walk may kill the process that runs it (a fault while the unwinder has signals blocked, which
no handler catches), so it runs in a child and a dead child is a result, named here the way the
fuzz supervisors name a worker's death (`death_location`), never a traceback of the parent.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass

from walkfuzz.core.exit_status import describe_exit
from walkfuzz.engine.child import ANY_EXIT, run_child, walkfuzz_command
from walkfuzz.findings.finding import death_location as finding_death_location


def death_location(status: int, stalled: bool) -> str:
    """The location of a finding whose process died (or stalled) on it."""
    if stalled:
        return "process-stall"
    return finding_death_location(describe_exit(status))


@dataclass(frozen=True)
class ChildEnd:
    """How a child walk ended: its exit status, its output (when captured), its death."""

    returncode: int
    stdout: str  # "" unless captured
    stderr: str  # "" unless captured
    died: str | None  # how it died (describe_exit), None when it ended with a verdict of its own

    @property
    def location(self) -> str:
        """The location a finding of this death carries (`process-death:SIGSEGV`)."""
        return death_location(self.returncode, stalled=False)


def walk_in_child(module: str, args: Sequence[str], *, verdicts: Container[int] = ANY_EXIT,
                  capture: bool = False) -> ChildEnd:
    """Run `python -m module args` in a fresh process and wait for it. It died when it ended
    any other way than exiting with one of `verdicts` (the statuses its own main returns).
    `capture`: keep its stdout and stderr (else they are this process's)."""
    done = run_child(walkfuzz_command(module, *args), capture=capture)
    return ChildEnd(done.returncode, done.stdout, done.stderr, done.death(verdicts))
