"""The run report as a short Markdown summary (for CI job summaries and pull requests).

Every figure is in a table: the causes first (walkfuzz.report.causes: the findings grouped by
kind and location, each with its smallest reproducer), the headline figures
(walkfuzz.report.figures), the counters (one table of the plain ones, then one per counter that
is a group of values), the findings by signature.

Markdown renderers pass raw HTML through, and a `|` ends a table cell, so every string from a
case goes through `_cell`, which escapes both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape

from walkfuzz.report.causes import causes
from walkfuzz.report.document import CounterValue, FindingGroup, RunReport, seen
from walkfuzz.report.figures import headline, value_text
from walkfuzz.report.walk_tables import HEAD, walk_table


def _cell(value: object) -> str:
    text = escape(str(value), quote=False).replace("|", "\\|").replace("`", "&#96;")
    return text.replace("\n", " ")


def table(head: tuple[str, str], rows: Iterable[tuple[object, object]],
          numbers: bool = True) -> list[str]:
    """A two-column table; `numbers`: the values are right-aligned."""
    lines = [f"| {head[0]} | {head[1]} |", "|---|---:|" if numbers else "|---|---|"]
    lines += [f"| {_cell(k)} | {_cell(value_text(v))} |" for k, v in rows]
    return [*lines, ""]


def counter_tables(counters: Mapping[str, CounterValue]) -> list[str]:
    """One table of the counters that are one value, then one per counter that is a group."""
    plain = [(k, v) for k, v in sorted(counters.items()) if not isinstance(v, dict)]
    lines = ["### Counters", "", *table(("counter", "value"), plain)] if plain else []
    for name, group in sorted(counters.items()):
        if isinstance(group, dict):
            lines += [f"#### {_cell(name)}", ""]
            lines += table(("name", "value"), sorted(group.items())) if group else ["(empty)", ""]
    return lines


def _finding_row(g: FindingGroup) -> str:
    return (f"| {_cell(g.kind)} | {g.count} | {seen(g.first_seen_s, g.first_seen_at)} | "
            f"{seen(g.last_seen_s, g.last_seen_at)} | {_cell(g.location)} | "
            f"{_cell(' > '.join(g.shape))} | {_cell(g.reproducer)} |")


def _walk_tables(groups: Iterable[FindingGroup]) -> list[str]:
    """Each finding's per-unwinder table, where it has one."""
    lines: list[str] = []
    for g in groups:
        rows = walk_table(g)
        if rows:
            lines += ["", f"#### {_cell(g.location)}", "", "| " + " | ".join(HEAD) + " |",
                      "|---|---|---:|---|"]
            lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def _causes(doc: RunReport) -> list[str]:
    """One row per cause; a hit is one input that showed a signature."""
    if not doc.findings:
        return []
    found = causes(doc)
    lines = [f"### Causes: {len(found)}", "", _cell(doc.findings_sentence()), "",
             "| class | location | hits | first seen | signatures (shapes) | smallest reproducer |",
             "|---|---|---:|---|---|---|"]
    for c in found:
        first = c.first
        lines.append(f"| {_cell(c.kind)} | {_cell(c.location)} | {c.hits:,} | "
                     f"{seen(first.first_seen_s, first.first_seen_at)} | "
                     f"{len(c.signatures)}: {_cell(', '.join(c.shapes))} | "
                     f"{_cell(c.smallest.reproducer)} |")
    return [*lines, ""]


def render_markdown(doc: RunReport) -> str:
    m = doc.meta
    lines = [
        f"## walkfuzz {_cell(m.run_type)}: {_cell(m.target)} / {_cell(m.mode)}",
        "",
        *table(("run", ""), [("status", f"**{m.status}**"),
                             ("duration", f"{m.duration:.1f} s"), ("walker", m.walker),
                             ("command", " ".join(m.command))], numbers=False),
        *_causes(doc),
        "### Summary",
        "",
        *table(("figure", "value"), headline(doc), numbers=False),
        *counter_tables(doc.counters),
        f"### Findings: {doc.findings_sentence()}",
        "",
    ]
    if doc.findings:
        lines += ["| kind | hits | first seen | last seen | location | shape | reproducer |",
                  "|---|---|---|---|---|---|---|"]
        lines += [_finding_row(g) for g in doc.findings]
        lines += _walk_tables(doc.findings)
    else:
        lines.append("None.")
    if doc.notes:
        lines += ["", "### Notes", ""]
        lines += [f"- {_cell(n)}" for n in doc.notes]
    return "\n".join(lines) + "\n"
