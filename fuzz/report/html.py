"""The run report as one self-contained HTML page (inline CSS and SVG, no scripts).

Strings in a report come from cases (method names, locations, details a walker produced), so
every one of them passes through `html.escape` on its way into the page: `_e` is the only way
text enters it, besides the figures' SVG, whose text matplotlib escapes (walkfuzz.report.plots).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from html import escape

from walkfuzz.report.document import STANDARD_SERIES, FindingGroup, RunReport, seen
from walkfuzz.report.figures import headline, value_text
from walkfuzz.report.walk_tables import HEAD, walk_table

# Each series a run records: the plot's title, its y axis (the quantity and its unit), and
# whether it counts whole things (integer ticks). Other series are titled by their name.
SERIES_AXES: dict[str, tuple[str, str, bool]] = {
    "coverage": ("coverage", "coverage (blocks/edges)", True),
    "features": ("features", "features (libFuzzer ft)", True),
    "exec_per_sec": ("exec/s", "inputs per second", False),
    "corpus": ("corpus", "corpus (inputs)", True),
    "findings": ("findings", "findings", True),
    "execs": ("total execs", "inputs run, total", True),
}

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1f2328;max-width:1100px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f6f8fa}code{font-size:12px;word-break:break-all}
.plots{display:flex;flex-wrap:wrap;gap:12px}.plots svg{width:480px;height:auto}
.crash,.hang{color:#cf222e}.ok{color:#1a7f37}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _time(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _rows(pairs: Sequence[tuple[str, object]]) -> str:
    return "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in pairs)


def _meta_table(doc: RunReport) -> str:
    m = doc.meta
    pairs: list[tuple[str, object]] = [
        ("run", m.run_type), ("status", m.status), ("target", m.target), ("mode", m.mode),
        ("walker", m.walker), ("started", _time(m.started_at)), ("ended", _time(m.ended_at)),
        ("duration", f"{m.duration:.1f} s"), ("command", " ".join(m.command)),
        ("host", ", ".join(f"{k}={v}" for k, v in m.host.items())),
        ("walkfuzz", m.version),
    ]
    return f"<table>{_rows(pairs)}</table>"


def _counters_table(doc: RunReport) -> str:
    """The plain counters in one table; a counter that is a group of values gets a table of
    its own in its row."""
    if not doc.counters:
        return ""
    rows = []
    for name, value in sorted(doc.counters.items()):
        if isinstance(value, dict):
            inner = _rows([(k, value_text(v)) for k, v in sorted(value.items())])
            rows.append(f"<tr><th>{_e(name)}</th><td><table>{inner}</table></td></tr>")
        else:
            rows.append(_rows([(name, value_text(value))]))
    return f"<h2>Counters</h2><table>{''.join(rows)}</table>"


def _summary_table(doc: RunReport) -> str:
    return f"<h2>Summary</h2><table>{_rows(headline(doc))}</table>"


# walkfuzz.report.plots is imported where a report draws: matplotlib takes seconds to import,
# which a command that stops at a usage error, or prints its help, should not pay.


def _plot(name: str, points: list[tuple[float, float]]) -> str:
    from walkfuzz.report.plots import line_plot

    title, label, integer = SERIES_AXES.get(name, (name, name.replace("_", " "), False))
    return f"<div>{line_plot(title, points, label, integer)}</div>"


def _plots(doc: RunReport) -> str:
    names = [n for n in STANDARD_SERIES if n in doc.series]
    names += sorted(n for n in doc.series if n not in STANDARD_SERIES)
    if not names:
        return ""
    svgs = "".join(_plot(n, doc.series[n]) for n in names)
    return f'<h2>Over time</h2><div class="plots">{svgs}</div>'


def _histograms(doc: RunReport) -> str:
    from walkfuzz.report.plots import bar_histogram

    if not doc.histograms:
        return ""
    svgs = "".join(
        f"<div>{bar_histogram(name, h.edges, h.counts, h.unit)}</div>"
        for name, h in sorted(doc.histograms.items())
    )
    return f'<h2>Histograms</h2><div class="plots">{svgs}</div>'


def _finding_row(group: FindingGroup) -> str:
    details = json.dumps(group.details, sort_keys=True, default=str)
    return (
        f'<tr><td class="{_e(group.kind)}">{_e(group.kind)}</td>'
        f"<td><code>{_e(group.signature)}</code></td><td>{_e(group.location)}</td>"
        f"<td>{_e(' > '.join(group.shape))}</td><td>{group.count}</td>"
        f"<td>{_e(seen(group.first_seen_s, group.first_seen_at))}</td>"
        f"<td>{_e(seen(group.last_seen_s, group.last_seen_at))}</td>"
        f"<td><code>{_e(group.reproducer)}</code></td><td><code>{_e(details)}</code></td></tr>"
    )


def _findings_table(doc: RunReport) -> str:
    if not doc.findings:
        return '<h2>Findings</h2><p class="ok">No findings.</p>'
    head = "".join(
        f"<th>{h}</th>"
        for h in ("kind", "signature", "location", "shape", "hits", "first seen", "last seen",
                  "reproducer", "details")
    )
    body = "".join(_finding_row(g) for g in doc.findings)
    return (
        f"<h2>Findings</h2><p>{_e(doc.findings_sentence())}</p>"
        f"<table><tr>{head}</tr>{body}</table>{''.join(_walk_table(g) for g in doc.findings)}"
    )


def _walk_table(group: FindingGroup) -> str:
    """A finding's per-unwinder table, where it has one."""
    rows = walk_table(group)
    if not rows:
        return ""
    head = "".join(f"<th>{h}</th>" for h in HEAD)
    body = "".join("<tr>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<h3>{_e(group.location)}</h3><table><tr>{head}</tr>{body}</table>"



def _notes(doc: RunReport) -> str:
    if not doc.notes:
        return ""
    return "<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in doc.notes) + "</ul>"


def render_html(doc: RunReport) -> str:
    title = f"walkfuzz {doc.meta.run_type}: {doc.meta.target} / {doc.meta.mode}"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{_e(title)}</h1>{_meta_table(doc)}{_summary_table(doc)}{_findings_table(doc)}"
        f"{_plots(doc)}"
        f"{_histograms(doc)}{_counters_table(doc)}{_notes(doc)}</body></html>\n"
    )
