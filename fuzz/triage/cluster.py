"""Grouping triaged findings: exact groups by signature, then clusters of near-duplicates.

Level 1, exact: inputs with the same walker and the same signature (kind, location, tail of
the shape with repeats collapsed — walkfuzz.findings.finding) are one group.

Level 2, near-duplicates: groups whose *cause key* is equal form one cluster. The shape is
left out of the key: it says which frames the walk crossed before the failure, and a bug
in one walker step is reached through many different stacks. The key is:

    crash            walker, location (function and source line of the faulting pc), fault class
    hang-or-cycle    walker only: a watchdog hang and a walk stopped by the frame limit are
                     the same non-termination, and where the watchdog interrupted the loop
                     is not a cause
    contract         walker, the check that failed
    invalid-trace    walker, the check that failed, the class family:
                       stepping (truncated, missing, extra, cycle, wrong-sender) — a
                       wrong sender,
                       content (wrong-method, wrong-bci, wrong-type, wrong-frame) — a wrong
                       decode of a frame that was found, result (wrong-result)
    escaped-guard    walker, the signal that killed the replay process

The walker is part of every key: the same location in two libraries is two programs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from walkfuzz.findings.classify import HANG_CLASS

STEPPING = frozenset({"truncated", "missing", "extra", "cycle", "wrong-sender"})
CONTENT = frozenset({"wrong-method", "wrong-bci", "wrong-type", "wrong-frame"})


@dataclass
class Member:
    """One replayed input that reproduced a finding."""

    path: str
    size: int
    walker: str
    target: str
    harness: str
    signature: str
    kind: str
    location: str
    shape: tuple[str, ...]
    klass: str
    why: str
    reliable: bool
    reproduced: int  # runs that gave the signature
    runs: int
    stored_signature: str | None = None
    source: str | None = None  # `/path/file.c:LINE` of the fault, from debug info (symbolize)
    unwinder: str = ""  # the native target's unwinder (its reproducer's --unwinder)


@dataclass
class Group:
    """Inputs with one signature on one walker."""

    signature: str
    members: list[Member] = field(default_factory=list)

    @property
    def smallest(self) -> Member:
        return min(self.members, key=lambda m: (m.size, m.path))


@dataclass
class Cluster:
    """Groups with one cause key; numbered from 1 in order of size (most inputs first)."""

    key: tuple[str, ...]
    groups: list[Group] = field(default_factory=list)
    number: int = 0

    @property
    def members(self) -> list[Member]:
        return [m for g in self.groups for m in g.members]

    @property
    def smallest(self) -> Member:
        return min((g.smallest for g in self.groups), key=lambda m: (m.size, m.path))

    @property
    def kinds(self) -> list[str]:
        return sorted({m.kind for m in self.members})

    @property
    def classes(self) -> list[str]:
        return sorted({m.klass for m in self.members})

    @property
    def reliability(self) -> str:
        if all(m.runs == 0 for m in self.members):  # walkfuzz.targets.protocol.stored_replay
            return "not replayed"
        flaky = sum(1 for m in self.members if not m.reliable)
        return "reliable" if flaky == 0 else f"flaky ({flaky} of {len(self.members)} inputs)"


def family(klass: str) -> str:
    if klass in STEPPING:
        return "stepping"
    if klass in CONTENT:
        return "content"
    return klass


def cause_key(m: Member) -> tuple[str, ...]:
    """The near-duplicate key of one input (see the module docstring)."""
    if m.klass == HANG_CLASS:
        return (m.target, m.walker, HANG_CLASS)
    if m.kind == "crash":
        return (m.target, m.walker, "crash", m.location, m.klass)
    if m.kind == "invalid-trace":
        return (m.target, m.walker, "invalid-trace", m.location, family(m.klass))
    return (m.target, m.walker, m.kind, m.location)


def group_key(group: Group) -> tuple[str, ...]:
    """The cause key most of a group's inputs have (its inputs share a signature, but an
    invalid trace's class can differ between them); ties go to the smallest key."""
    votes = Counter(cause_key(m) for m in group.members)
    return min(votes, key=lambda k: (-votes[k], k))


def cluster(members: Iterable[Member]) -> list[Cluster]:
    """Exact groups, then clusters, numbered by decreasing size (ties by key)."""
    groups: dict[tuple[str, str], Group] = {}
    for m in members:
        groups.setdefault((m.walker, m.signature), Group(m.signature)).members.append(m)
    clusters: dict[tuple[str, ...], Cluster] = {}
    for group in groups.values():
        key = group_key(group)
        clusters.setdefault(key, Cluster(key)).groups.append(group)
    ordered = sorted(clusters.values(), key=lambda c: (-len(c.members), c.key))
    for number, c in enumerate(ordered, 1):
        c.number = number
        c.groups.sort(key=lambda g: (-len(g.members), g.signature))
    return ordered
