"""The Target protocol: the parts every target package has, under the same names.

A target is a package `walkfuzz.targets.<package>` registered once in walkfuzz.targets.table.
Nothing outside the package names the target: the CLI, triage, merge, regress and the report
reach it only through the table, which imports these modules of it when an action needs them:

    fuzz.py     fuzz(args) -> int          `walkfuzz fuzz --target T`: inputs -> guarded runs
                                           -> findings; the exit status (0 none, 1 findings)
    stress.py   stress(request) -> int     `walkfuzz stress --target T`: a workload sampled
                                           live, every sample judged -> findings
    replay.py   replay(args) -> int        `walkfuzz replay --target T FILE`
                process_key(stored) -> str which triage replay process may run `stored`
                                           ("" any; inputs whose libraries clash get their own)
                alternatives(stored)       what else was saved beside an input that gives its
                  -> list[StoredInput]     finding when the input itself runs clean (a native
                                           finding's stack snapshot); [] for most targets
                Replayer(hang_ns, key)     one stored input run again in this process, the way
                  .run(data, stored)       it ran when found: `walkfuzz replay`, triage and the
                                           reproducer check alike
    finding.py  the one builder of the target's findings (signature, location, details)
    inputs.py   its input formats: read, write, describe

`ReplayModule` below is the replay part's shape, checked by mypy where the table hands one out.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Protocol

from walkfuzz.core.errors import UserError
from walkfuzz.findings.finding import Finding

# The reference walker takes microseconds; a replayed walk this long hangs.
DEFAULT_HANG_NS = 100_000_000
PARTS = ("fuzz", "stress", "replay", "finding", "inputs")


class ReplayError(UserError):
    """An input that cannot be replayed; the message is the per-file error line."""


@dataclass(frozen=True)
class StoredInput:
    """One input to run again and what is known of how it ran when it was found."""

    path: str
    target: str
    harness: str = ""  # "" when nothing says: the target's inputs tell it from the bytes
    walker: str = "reference"  # minivm: the walker library (a path) or the reference walker
    unwinder: str = ""  # native: the unwinder that walked it ("" its default)


@dataclass
class Replay:
    """What one input did: a finding (None: it ran clean) with its class and the reason."""

    finding: Finding | None
    klass: str = ""
    why: str = ""
    extra: dict[str, object] = field(default_factory=dict)


class Replayer(Protocol):
    """Runs stored inputs of one target again, in this process."""

    def run(self, data: bytes, stored: StoredInput) -> Replay:
        """Once; ReplayError (or another UserError) for an input that cannot run."""
        ...


class ReplayerFactory(Protocol):
    def __call__(self, hang_ns: int, key: str) -> Replayer: ...


class ReplayModule(Protocol):
    """A target's replay.py."""

    Replayer: ReplayerFactory

    def replay(self, args: argparse.Namespace) -> int: ...

    def process_key(self, stored: StoredInput) -> str: ...

    def alternatives(self, stored: StoredInput) -> list[StoredInput]: ...
