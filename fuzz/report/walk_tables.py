"""The per-unwinder table of a finding that several unwinders walked (a differential run's
`details.walks`: one row per unwinder, its stop, its frame count and its walk), as rows both
report renderers print under the findings."""

from __future__ import annotations

from collections.abc import Sequence

from walkfuzz.report.document import FindingGroup

HEAD = ("unwinder", "stop", "frames", "walk")


def walk_table(group: FindingGroup) -> list[tuple[str, str, str, str]]:
    """The table's rows (the known chain first when there is one); [] for another finding."""
    walks = group.details.get("walks")
    if not isinstance(walks, Sequence) or not walks:
        return []
    rows: list[tuple[str, str, str, str]] = []
    known = group.details.get("truth")
    if isinstance(known, str):
        rows.append(("(truth)", "root", str(len(known.split())), known))
    for walk in walks:
        if isinstance(walk, dict):
            rows.append(tuple(str(walk.get(k, "")) for k in HEAD))  # type: ignore[arg-type]
    return rows
