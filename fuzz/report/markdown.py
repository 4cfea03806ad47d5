"""The run report as a short Markdown summary (for CI job summaries and pull requests).

Markdown renderers pass raw HTML through, and a `|` ends a table cell, so every string from a
case goes through `_cell`, which escapes both.
"""

from __future__ import annotations

from html import escape

from walkfuzz.report.document import FindingGroup, RunReport, seen


def _cell(value: object) -> str:
    text = escape(str(value), quote=False).replace("|", "\\|").replace("`", "&#96;")
    return text.replace("\n", " ")


def _last(doc: RunReport, series: str) -> str:
    points = doc.series.get(series)
    return f"{points[-1][1]:.0f}" if points else "n/a"


def _peak(doc: RunReport, series: str) -> str:
    points = doc.series.get(series)
    return f"{max(v for _, v in points):.0f}" if points else "n/a"


def _mean_rate(doc: RunReport) -> str:
    """Inputs per second over the whole run, from the cumulative `execs` series."""
    points = doc.series.get("execs")
    if not points or points[-1][0] <= 0:
        return "n/a"
    return f"{points[-1][1] / points[-1][0]:.0f}"


def _finding_row(g: FindingGroup) -> str:
    return (f"| {_cell(g.kind)} | {g.count} | {seen(g.first_seen_s, g.first_seen_at)} | "
            f"{seen(g.last_seen_s, g.last_seen_at)} | {_cell(g.location)} | "
            f"{_cell(' > '.join(g.shape))} | {_cell(g.reproducer)} |")


def render_markdown(doc: RunReport) -> str:
    m = doc.meta
    lines = [
        f"## walkfuzz {_cell(m.run_type)}: {_cell(m.target)} / {_cell(m.mode)}",
        "",
        f"- status: **{_cell(m.status)}**, {m.duration:.1f} s, walker {_cell(m.walker)}",
        f"- command: {_cell(' '.join(m.command))}",
    ]
    if "coverage" in doc.series or "exec_per_sec" in doc.series:
        lines.append(
            f"- final coverage {_last(doc, 'coverage')}, corpus {_last(doc, 'corpus')}, "
            f"exec/s peak {_peak(doc, 'exec_per_sec')}, mean {_mean_rate(doc)}"
        )
    for name, value in sorted(doc.counters.items()):
        lines.append(f"- {_cell(name)}: {_cell(value)}")
    lines += ["", f"### Findings: {len(doc.findings)} distinct signatures", ""]
    if doc.findings:
        lines += ["| kind | hits | first seen | last seen | location | shape | reproducer |",
                  "|---|---|---|---|---|---|---|"]
        lines += [_finding_row(g) for g in doc.findings]
    else:
        lines.append("None.")
    lines += [f"- {_cell(n)}" for n in doc.notes]
    return "\n".join(lines) + "\n"
