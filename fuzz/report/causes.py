"""The causes of a run's findings: what a reader of the report wants first.

A signature carries the frame shape the bug was hit in, so one walker bug hit in compiled,
interpreted and inlined frames is several signatures; a report's findings carry no triage
groups, so a cause is the signatures that share their kind and location (`check:oracle-end`,
a crashing function and line). Each cause names its smallest reproducer (the signature whose
stored input is smallest: the quickest to read and to replay) and, for an invalid trace whose
details hold the expected and walked frames, the first frame where they differ.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from walkfuzz.report.document import FindingGroup, RunReport

# Keys of a finding's details holding the true frames and the walked ones, and the index of
# the first that differs: a frame each (walkfuzz.targets.minivm.finding) or the whole walks
# (the live stress oracle).
FRAME_PAIRS = (("want", "got", "diff_index"), ("expected", "walked", "first_diff"))
# Whole-walk figures shown beside the frames: (name, expected key, walked key).
WALK_PAIRS = (("frames", "want_frames", "frames"), ("frames", "expected_count", "walked_count"),
              ("end code", "want_end_code", "end_code"))
MISSING = "(none)"


@dataclass
class Difference:
    """The expected and walked frames at the first difference, one row per field, then the
    walks' frame counts and end codes; shown only where some row differs."""

    index: int | None
    rows: list[tuple[str, str, str]]  # field, expected, walked


@dataclass
class Cause:
    kind: str
    location: str
    signatures: list[FindingGroup]

    @property
    def hits(self) -> int:
        return sum(g.count for g in self.signatures)

    @property
    def first(self) -> FindingGroup:
        """The signature seen first (times unknown sort last)."""
        return min(self.signatures, key=lambda g: (g.first_seen_s is None, g.first_seen_s or 0))

    @property
    def shapes(self) -> list[str]:
        return sorted({" > ".join(g.shape) or "none" for g in self.signatures})

    @property
    def smallest(self) -> FindingGroup:
        return min(self.signatures, key=input_size)

    def difference(self) -> Difference | None:
        return first_difference(self.smallest.details)


def input_size(group: FindingGroup) -> float:
    """The size of the input a signature's reproducer replays; a signature without a stored
    input (a live sample: its reproducer reruns the run) sorts after every stored one."""
    try:
        return float(os.stat(group.examples[0]).st_size) if group.examples else float("inf")
    except OSError:
        return float("inf")


def _frames(want: object, got: object, index: int | None) -> tuple[object, object]:
    """The frames at `index` of two walks (MISSING past a walk's end), or the frames given."""
    if isinstance(want, list) and isinstance(got, list) and index is not None:
        return (want[index] if index < len(want) else {},
                got[index] if index < len(got) else {})
    return want, got


def first_difference(details: Mapping[str, object]) -> Difference | None:
    for want_key, got_key, index_key in FRAME_PAIRS:
        raw_index = details.get(index_key)
        index = raw_index if isinstance(raw_index, int) and raw_index >= 0 else None
        want, got = _frames(details.get(want_key), details.get(got_key), index)
        if not (isinstance(want, Mapping) and isinstance(got, Mapping)):
            continue
        fields = list(want) + [k for k in got if k not in want]
        rows = [(str(k), str(want.get(k, MISSING)), str(got.get(k, MISSING))) for k in fields]
        rows += [(name, str(details[w]), str(details[g])) for name, w, g in WALK_PAIRS
                 if w in details and g in details]
        if any(w != g for _, w, g in rows):
            return Difference(index, rows)
    return None


def causes(doc: RunReport) -> list[Cause]:
    """The findings grouped by cause, most hits first."""
    grouped: dict[tuple[str, str], Cause] = {}
    for group in doc.findings:
        key = (group.kind, group.location)
        if key not in grouped:
            grouped[key] = Cause(group.kind, group.location, [])
        grouped[key].signatures.append(group)
    return sorted(grouped.values(), key=lambda c: -c.hits)
