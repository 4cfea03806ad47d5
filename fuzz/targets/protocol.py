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
    inputs.py   its input formats: read, write, describe, and which harness made an input
                that names none

A target whose replay cannot run in a triage process (a HotSpot finding is a JVM run of
seconds; a differential finding of the native target needs one process per unwinder) still
has a Replayer: its `run` returns `stored_replay(stored, fault_class)`, the finding as the
description stored beside the input names it, not replayed: a Replay with `finding` None and
`extra[STORED]` the description (a dict). Triage reports such an input with runs 0 and groups
it by that description's signature; `replay.extra.get(STORED)` is how any caller tells.

Triage makes one Replayer per target package and process key in each replay process and hands
it only inputs of that key (`key` is process_key's answer for them); `stored.harness` is ""
when nothing said which harness made the input (the target's inputs tell it from the bytes),
and `stored.target` is the name the input was stored under, an alias's included (`libunwind`
resolves to the native package: the table's entry for it names that package).

A target with a minimizer (`walkfuzz minimize`) names it in its table entry: a `Minimizer`
below, whose result is `Minimized`.

`ReplayModule` below is the replay part's shape, checked by mypy where the table hands one out.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from walkfuzz.core.errors import UserError
from walkfuzz.findings.classify import HANG_CLASS
from walkfuzz.findings.finding import Finding
from walkfuzz.report.document import replay_command

# The reference walker takes microseconds; a replayed walk this long hangs.
DEFAULT_HANG_NS = 100_000_000
PARTS = ("fuzz", "stress", "replay", "finding", "inputs")
STORED = "stored"  # Replay.extra's key of a description used in place of a replay
MINIMIZE_BUDGET_S = 5.0  # `walkfuzz minimize`'s default time budget


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


class Minimized(Protocol):
    """A minimizer's result: the smallest input that kept the signature, and how it went."""

    data: bytes
    harness: str
    signature: str
    original_size: int
    materialized_size: int
    tests: int
    seconds: float
    passes: list[str]


class Minimizer(Protocol):
    def __call__(self, data: bytes, harness: str, walker: str, budget: float = ...,
                 *, source: str = ...) -> Minimized: ...


def stored_replay(stored: StoredInput, fault_class: Callable[[Mapping[str, object]], str]
                  ) -> Replay:
    """The Replay of an input its target does not run again here: its finding as the
    description beside it stores it (`extra[STORED]`), classed by kind (a fault by the
    target's `fault_class` of the description), the reproducer it names in `why`;
    ReplayError without a readable description naming a signature."""
    source = stored.path
    description = Path(source).with_suffix(".json")
    try:
        doc = json.loads(description.read_text())
    except (OSError, ValueError) as err:
        raise ReplayError(f"{source}: not replayable by triage and no readable description "
                          f"({description}): {err}") from err
    if not isinstance(doc, dict) or "signature" not in doc:
        raise ReplayError(f"{source}: description {description} names no signature")
    details = doc.get("details")
    details = details if isinstance(details, dict) else {}
    what = details.get("perturbation") or details.get("oracle") or doc.get("location")
    reproducer = doc.get("reproducer") or replay_command(
        str(doc.get("target")), str(doc.get("harness")), "", source)
    return Replay(None, _stored_class(doc, fault_class),
                  f"stored, not replayed ({what}); reproduce: {reproducer}", {STORED: doc})


def _stored_class(doc: Mapping[str, object],
                  fault_class: Callable[[Mapping[str, object]], str]) -> str:
    if doc.get("kind") == "hang":
        return HANG_CLASS
    if doc.get("kind") == "invalid-trace":  # location check:shadow:<class> or check:gst-<kind>
        return str(doc.get("location", "")).rsplit(":", 1)[-1].strip() or "invalid-trace"
    return fault_class(doc)
