"""A run's end: what the run knows of each finding goes into the descriptions stored under
its output folder (its signature's hits, the reproducer the report prints, which triage and
`walkfuzz replay` read back), then the report is written. The report itself only reads
findings (walkfuzz.report.files)."""

from __future__ import annotations

from pathlib import Path

from walkfuzz.findings.store import update_descriptions
from walkfuzz.report.document import RunReport, complete_times
from walkfuzz.report.files import write_report


def settle_findings(out_dir: Path, doc: RunReport) -> None:
    """Bring the description of every stored finding of `doc` up to date with its group:
    hits and reproducer."""
    complete_times(doc)
    for group in doc.findings:
        fields: dict[str, object] = {"reproducer": group.reproducer}
        hits = group.hits
        if hits is not None:
            fields["hits"] = hits.to_json()
        update_descriptions(out_dir, group.signature, fields)


def write_run_report(out_dir: Path, doc: RunReport) -> dict[str, Path]:
    """Settle the run's findings (settle_findings), then write its report.{json,html,md}."""
    settle_findings(out_dir, doc)
    return write_report(out_dir, doc)
