"""The run report as one self-contained HTML page (inline CSS, SVG and a few lines of script).

The page reads top down in the order a reader needs it: a one-line status and the findings'
counts, the causes (walkfuzz.report.causes) with their smallest reproducer, the plots, the
headline figures, then each signature's detail as fields (never a JSON dump), the counters and
the run's metadata. A reproducer is a code block of its own (`white-space: pre`, scrolled, never
broken mid-word) with a button that copies it; the script only wires those buttons.

Strings in a report come from cases (method names, locations, details a walker produced), so
every one of them passes through `html.escape` on its way into the page: `_e` is the only way
text enters it, besides the figures' SVG, whose text matplotlib escapes (walkfuzz.report.plots).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from html import escape

from walkfuzz.report.causes import Cause, causes
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
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1f2328;max-width:1300px}
h1{font-size:20px;margin-bottom:4px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}
h3{font-size:14px;margin:20px 0 4px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f6f8fa}code{font-size:12px}
.repro{display:flex;align-items:flex-start;gap:6px;max-width:820px}
.repro pre{flex:1;min-width:0;margin:0;padding:4px 6px;background:#f6f8fa;border-radius:4px;
white-space:pre;overflow-x:auto}
.repro button{font-size:12px;padding:2px 8px;cursor:pointer}
.diff td.differs{background:#ffebe9;font-weight:600}.diff{font-size:12px}
.plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(400px,1fr));gap:12px}
.plots svg{width:100%;height:auto}
dl.fields{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:4px 0}
dl.fields dt{font-weight:600}dl.fields dd{margin:0}dl.fields dl.fields{margin:0}
.causes td.name{white-space:nowrap}.crash,.hang{color:#cf222e}.ok{color:#1a7f37}
.status{color:#59636e;margin-top:0}
"""

# Wires the copy buttons (rendered disabled: without the script they could do nothing).
# navigator.clipboard needs a secure context; a page opened otherwise copies by selection.
SCRIPT = """
for (const b of document.querySelectorAll("button.copy")) {
  b.disabled = false;
  b.addEventListener("click", () => {
    const code = b.parentElement.querySelector("code"), done = () => { b.textContent = "copied"; };
    if (navigator.clipboard) { navigator.clipboard.writeText(code.textContent).then(done); return; }
    const range = document.createRange(); range.selectNodeContents(code);
    getSelection().removeAllRanges(); getSelection().addRange(range);
    if (document.execCommand("copy")) done();
  });
}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _time(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _rows(pairs: Sequence[tuple[str, object]]) -> str:
    return "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in pairs)


def _anchor(index: int) -> str:
    return f"signature-{index}"


def _reproducer(command: str) -> str:
    """A command in a code block of its own, with the button that copies it."""
    return (f'<div class="repro"><pre><code>{_e(command)}</code></pre>'
            '<button type="button" class="copy" disabled>copy</button></div>')


def _status_line(doc: RunReport) -> str:
    m = doc.meta
    parts = [f"{m.run_type} {m.status}", f"{m.duration:.1f} s", f"walker {m.walker}",
             f"started {_time(m.started_at)}"]
    return f'<p class="status">{_e(" · ".join(parts))}</p>'


def _counts_line(doc: RunReport, found: Sequence[Cause]) -> str:
    """The causes, then signatures and hits, each per kind (RunReport.findings_sentence)."""
    text = f"{len(found)} cause{'' if len(found) == 1 else 's'}; {doc.findings_sentence()}"
    return f"<p>{_e(text)}</p>"


def _difference(cause: Cause) -> str:
    """The expected and walked frames side by side at the first difference, where the
    finding's details carry them."""
    diff = cause.difference()
    if diff is None:
        return ""
    where = "" if diff.index is None else f" (frame {diff.index})"
    rows = "".join(
        f"<tr><th>{_e(field)}</th>" + "".join(
            f'<td{" class=differs" if want != got else ""}>{_e(v)}</td>' for v in (want, got))
        + "</tr>"
        for field, want, got in diff.rows)
    return (f"<p>first difference{_e(where)}:</p><table class=diff><tr><th>field</th>"
            f"<th>expected</th><th>walked</th></tr>{rows}</table>")


def _causes(doc: RunReport, found: Sequence[Cause]) -> str:
    if not doc.findings:
        return '<h2 id="causes">Causes</h2><p class="ok">No findings.</p>'
    index = {id(g): i for i, g in enumerate(doc.findings)}
    head = "".join(f"<th>{h}</th>" for h in ("class", "location", "hits", "first seen",
                                             "signatures (shapes)", "smallest reproducer"))
    body = []
    for cause in found:
        first = cause.first
        links = ", ".join(
            f'<a href="#{_anchor(index[id(g)])}">{_e(" > ".join(g.shape) or "none")}</a>'
            for g in cause.signatures)
        body.append(
            f'<tr><td class="{_e(cause.kind)} name">{_e(cause.kind)}</td>'
            f'<td class="name">{_e(cause.location)}</td><td>{cause.hits:,}</td>'
            f"<td>{_e(seen(first.first_seen_s, first.first_seen_at))}</td>"
            f"<td>{len(cause.signatures)}: {links}</td>"
            f"<td>{_reproducer(cause.smallest.reproducer)}{_difference(cause)}</td></tr>")
    return (f'<h2 id="causes">Causes</h2>{_counts_line(doc, found)}'
            f'<table class="causes"><tr>{head}</tr>{"".join(body)}</table>')


# walkfuzz.report.plots is imported where a report draws: matplotlib takes seconds to import,
# which a command that stops at a usage error, or prints its help, should not pay.


def _plot(name: str, points: list[tuple[float, float]]) -> str:
    from walkfuzz.report.plots import line_plot

    title, label, integer = SERIES_AXES.get(name, (name, name.replace("_", " "), False))
    return f"<div>{line_plot(title, points, label, integer)}</div>"


def _plots(doc: RunReport) -> str:
    """The series over time, then the histograms, in one grid."""
    from walkfuzz.report.plots import bar_histogram

    names = [n for n in STANDARD_SERIES if n in doc.series]
    names += sorted(n for n in doc.series if n not in STANDARD_SERIES)
    svgs = [_plot(n, doc.series[n]) for n in names]
    svgs += [f"<div>{bar_histogram(name, h.edges, h.counts, h.unit)}</div>"
             for name, h in sorted(doc.histograms.items())]
    if not svgs:
        return ""
    return f'<h2 id="plots">Plots</h2><div class="plots">{"".join(svgs)}</div>'


# A list of plain values this short each is joined on one line; longer ones (paths) get a line
# each.
SHORT_ITEM = 24


def _value(value: object) -> str:
    """A detail's value as fields: a mapping as a definition list, a list of short plain
    values joined, of others one per line, anything else as text."""
    if isinstance(value, Mapping):
        return _fields([(str(k), v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))])
    if isinstance(value, Sequence) and not isinstance(value, str):
        if value and all(isinstance(v, Mapping) for v in value):
            return _records(value)
        items = [value_text(v) for v in value if not isinstance(v, (Mapping, list, tuple))]
        if len(items) == len(value) and all(len(v) <= SHORT_ITEM for v in items):
            return _e(", ".join(items)) or "(none)"
        return "".join(f"<div>{_value(v)}</div>" for v in value)
    return _e(value_text(value))


def _records(records: Sequence[Mapping[str, object]]) -> str:
    """Mappings of one kind (a walk's frames) as a table: one row each, one column per key."""
    keys = list(dict.fromkeys(str(k) for r in records for k in r))
    head = "".join(f"<th>{_e(k)}</th>" for k in keys)
    body = "".join("<tr>" + "".join(f"<td>{_value(r.get(k, ''))}</td>" for k in keys) + "</tr>"
                   for r in records)
    return f"<table><tr>{head}</tr>{body}</table>"


def _fields(pairs: Sequence[tuple[str, object]]) -> str:
    items = "".join(f"<dt>{_e(k)}</dt><dd>{_value(v)}</dd>" for k, v in pairs)
    return f'<dl class="fields">{items}</dl>'


def _walk_table(group: FindingGroup) -> str:
    """A finding's per-unwinder table, where it has one."""
    rows = walk_table(group)
    if not rows:
        return ""
    head = "".join(f"<th>{h}</th>" for h in HEAD)
    body = "".join("<tr>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _signature(index: int, group: FindingGroup) -> str:
    shown = {k: v for k, v in group.details.items() if k not in ("walks", "truth")
             or not walk_table(group)}
    pairs: list[tuple[str, object]] = [
        ("class", group.kind), ("location", group.location),
        ("shape", " > ".join(group.shape) or "none"), ("hits", group.count),
        ("first seen", seen(group.first_seen_s, group.first_seen_at)),
        ("last seen", seen(group.last_seen_s, group.last_seen_at)),
        ("inputs", group.examples),
    ]
    return (f'<section class="signature" id="{_anchor(index)}"><h3><code>{_e(group.signature)}'
            f"</code></h3>{_fields(pairs)}{_reproducer(group.reproducer)}"
            f"{_walk_table(group)}{_fields(sorted(shown.items())) if shown else ''}</section>")


def _signatures(doc: RunReport) -> str:
    if not doc.findings:
        return ""
    return ('<h2 id="signatures">Findings by signature</h2>'
            + "".join(_signature(i, g) for i, g in enumerate(doc.findings)))


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


def _meta_table(doc: RunReport) -> str:
    m = doc.meta
    pairs: list[tuple[str, object]] = [
        ("run", m.run_type), ("status", m.status), ("target", m.target), ("mode", m.mode),
        ("walker", m.walker), ("started", _time(m.started_at)), ("ended", _time(m.ended_at)),
        ("duration", f"{m.duration:.1f} s"), ("command", " ".join(m.command)),
        ("host", ", ".join(f"{k}={v}" for k, v in m.host.items())),
        ("walkfuzz", m.version),
    ]
    return f"<h2>Run</h2><table>{_rows(pairs)}</table>"


def _notes(doc: RunReport) -> str:
    if not doc.notes:
        return ""
    return "<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in doc.notes) + "</ul>"


def render_html(doc: RunReport) -> str:
    title = f"walkfuzz {doc.meta.run_type}: {doc.meta.target} / {doc.meta.mode}"
    found = causes(doc)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{_e(title)}</h1>{_status_line(doc)}{_causes(doc, found)}{_plots(doc)}"
        f"<h2>Summary</h2><table>{_rows(headline(doc))}</table>{_notes(doc)}"
        f"{_signatures(doc)}{_counters_table(doc)}{_meta_table(doc)}"
        f"<script>{SCRIPT}</script></body></html>\n"
    )
