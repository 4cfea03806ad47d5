"""The run report on disk: report.json, report.html and report.md written together (the
HTML and Markdown rendered from the JSON document, walkfuzz.report.document), and read back.
"""

from __future__ import annotations

import json
from pathlib import Path

from walkfuzz.findings.store import write_atomic
from walkfuzz.report.document import RunReport, complete_times
from walkfuzz.report.html import render_html
from walkfuzz.report.markdown import render_markdown

REPORT_STEM = "report"


def write_report(out_dir: Path, doc: RunReport) -> dict[str, Path]:
    """Write report.json, report.html and report.md into out_dir (each atomically). It reads
    the findings and writes nothing into them: a run settles its findings' descriptions first
    (walkfuzz.engine.run_report)."""
    complete_times(doc)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out_dir / f"{REPORT_STEM}.json",
        "html": out_dir / f"{REPORT_STEM}.html",
        "md": out_dir / f"{REPORT_STEM}.md",
    }
    write_atomic(paths["json"], json.dumps(doc.to_json(), indent=1, default=str).encode())
    write_atomic(paths["html"], render_html(doc).encode())
    write_atomic(paths["md"], render_markdown(doc).encode())
    return paths


def load_report(path: Path) -> RunReport:
    return RunReport.from_json(json.loads(path.read_text()))
