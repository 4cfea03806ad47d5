"""walkfuzz.report.document: the JSON document validates against the schema and round-trips; HTML
and Markdown renderings carry the data and escape every string that came from a case."""

from __future__ import annotations

import itertools
import json
import os
import stat
from pathlib import Path

import jsonschema
import pytest

from walkfuzz.core.filemode import new_file_mode
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.store import save_finding
from walkfuzz.report.document import (
    Histogram,
    RunMeta,
    RunReport,
    complete_times,
    group_findings,
)
from walkfuzz.report.figures import headline
from walkfuzz.report.files import load_report, write_report
from walkfuzz.report.plots import (
    bucket_scale,
    fit_limits,
    histogram_figure,
    line_figure,
    line_plot,
)

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = 'Evil.<script>alert("x")</script>|`'


def finding(**overrides: object) -> Finding:
    fields: dict[str, object] = {
        "kind": "invalid-trace", "target": "minivm", "harness": "layouts",
        "location": "check:method", "shape": ("java", "inlined"), "data": b"\x00\x01",
        "details": {"method": HOSTILE, "walker": "/tmp/planted off-by-one.so"},
    }
    fields.update(overrides)
    return Finding(**fields)  # type: ignore[arg-type]


def sample_report(tmp_path: Path) -> RunReport:
    findings = [finding(), finding(data=b"\x02"), finding(kind="crash", location=HOSTILE)]
    for f in findings:
        save_finding(tmp_path, f)
    return RunReport(
        meta=RunMeta(run_type="fuzz", command=["walkfuzz", "fuzz"], target="minivm",
                     mode="layouts", started_at=1000.0, ended_at=1060.5),
        series={"coverage": [(0.0, 10.0), (30.0, 55.0), (60.0, 61.0)],
                "exec_per_sec": [(0.0, 0.0), (30.0, 412345.0)],
                "execs": [(0.0, 0.0), (30.0, 6_000_000.0), (60.0, 12_000_000.0)]},
        counters={"execs": 123, "errors": {"WF_ERR_X": 2}},
        histograms={"interval_us": Histogram(unit="us", edges=[0, 50, 100, 200],
                                             counts=[3, 90, 7])},
        findings=group_findings(tmp_path, findings),
        notes=[f"note about {HOSTILE}"],
    )


def test_groups_count_findings_per_signature_with_a_reproducer(tmp_path: Path) -> None:
    groups = sample_report(tmp_path).findings
    assert [g.count for g in groups] == [2, 1]
    first = groups[0]
    assert Path(first.examples[0]).read_bytes() == b"\x00\x01"
    assert first.reproducer.startswith("walkfuzz replay --target minivm --harness layouts")
    assert "--walker '/tmp/planted off-by-one.so'" in first.reproducer
    assert first.reproducer.endswith(first.examples[0])


def test_json_validates_against_schema_and_round_trips(tmp_path: Path) -> None:
    doc = sample_report(tmp_path)
    paths = write_report(tmp_path / "r", doc)
    schema = json.loads((ROOT / "reports" / "run.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads(paths["json"].read_text()))
    assert load_report(paths["json"]) == doc


def test_schema_rejects_a_bad_finding_kind(tmp_path: Path) -> None:
    raw = sample_report(tmp_path).to_json()
    raw["findings"][0]["kind"] = "explosion"  # type: ignore[index]
    schema = json.loads((ROOT / "reports" / "run.schema.json").read_text())
    with pytest.raises(jsonschema.ValidationError, match="explosion"):
        jsonschema.validate(raw, schema)


def test_histogram_shape_is_checked() -> None:
    with pytest.raises(ValueError, match="3 counts but 3 edges"):
        Histogram(unit="us", edges=[0, 1, 2], counts=[1, 2, 3])


def test_html_escapes_every_string_from_a_case(tmp_path: Path) -> None:
    html = write_report(tmp_path / "r", sample_report(tmp_path))["html"].read_text()
    assert html.count("<script>") == 1  # the page's own, which wires the copy buttons
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert" in html
    assert html.count("<svg") == 4  # coverage, exec/s, execs over time; the histogram
    assert "inputs per second" in html  # the exec/s plot's y axis says what it counts
    assert html.count('<section class="signature"') == 2  # one detail per signature
    assert html.count("<tr><td class=") == 2  # one row per cause: kind and location differ


def test_html_groups_shapes_of_one_check_into_one_cause(tmp_path: Path) -> None:
    """Five signatures of one check in five shapes are one cause; the counts line says
    signatures and hits per kind, each right; a frame difference is shown side by side."""
    shapes = [("compiled",), ("interpreted",), ("inlined",), ("non-java",), ()]
    frame = {"type": 2, "bci": 7, "method": "0x10"}
    found = [finding(location="check:oracle-end", shape=s, data=bytes([i]) * (i + 1),
                     details={"diff_index": 1, "want": frame, "got": {**frame, "bci": 9}})
             for i, s in enumerate(shapes)]
    for f in found + found[:1]:
        save_finding(tmp_path, f)
    doc = sample_report(tmp_path)
    doc.findings = group_findings(tmp_path, found + found[:1])
    paths = write_report(tmp_path / "r", doc)
    html = paths["html"].read_text()
    assert html.count("<tr><td class=") == 1
    md = paths["md"].read_text()
    assert "### Causes: 1" in md and md.count("| invalid-trace | check:oracle-end | 6 |") == 1
    assert "1 cause; 5 distinct signatures (invalid-trace: 5 signatures, 6 hits)" in html
    assert "<td class=differs>7</td><td class=differs>9</td>" in html
    assert "{&quot;" not in html and '{"' not in html  # details are fields, not JSON


def test_html_of_a_run_without_findings_says_so(tmp_path: Path) -> None:
    doc = sample_report(tmp_path)
    doc.findings = []
    html = write_report(tmp_path / "r", doc)["html"].read_text()
    assert "No findings." in html


def test_markdown_summary_escapes_html_and_table_pipes(tmp_path: Path) -> None:
    md = write_report(tmp_path / "r", sample_report(tmp_path))["md"].read_text()
    assert "<script>" not in md
    assert "&lt;script&gt;" in md and "\\|" in md
    assert "| coverage, final | 61 |" in md
    assert "| exec/s, peak sample | 412,345 |" in md
    assert "| total execs | 12,000,000 |" in md and "| exec/s, mean | 200,000 |" in md
    assert "| coverage, last growth | by +60 s (0 s before the end) |" in md
    assert "| execs | 123 |" in md  # a counter is a table row
    assert "#### errors" in md and "| WF_ERR_X | 2 |" in md  # a group of counters, a table
    assert "{" not in md  # no Python dict printed
    assert "### Findings: 2 distinct signatures" in md
    assert md.count("\n| invalid-trace | 2 |") == 1


def test_findings_sentence_names_signatures_and_hits_per_kind(tmp_path: Path) -> None:
    paths = write_report(tmp_path / "r", sample_report(tmp_path))
    # two signatures: invalid-trace hit twice, crash once; hits are never called signatures
    sentence = ("2 distinct signatures (crash: 1 signature, 1 hit; "
                "invalid-trace: 1 signature, 2 hits)")
    assert f"### Findings: {sentence}" in paths["md"].read_text()
    assert f"; {sentence}</p>" in paths["html"].read_text()  # after the causes


def test_line_plot_y_range_fits_the_data_not_zero() -> None:
    coverage = [(0.0, 685.0), (1.0, 686.0), (2.0, 688.0)]
    low, high = fit_limits([v for _, v in coverage])
    assert 600 < low <= 685 and 688 <= high < 700  # 685 -> 688 fills the plot
    ax = line_figure("coverage", coverage, "coverage (blocks/edges)", integer=True).axes[0]
    assert ax.get_ylim() == (low, high)
    assert ax.get_ylabel() == "coverage (blocks/edges)" and ax.get_xlabel().endswith("(s)")
    assert fit_limits([0.0, 5.0])[0] == 0.0  # data from 0 does not go below it
    constant = fit_limits([42.0, 42.0])
    assert constant[0] < 42 < constant[1]


def test_histogram_buckets_are_drawn_to_scale() -> None:
    edges = [0.0, 1_000.0, 2_000.0, 5_000.0, 100_000.0, 100_000_000.0]
    counts = [5, 9, 1, 0, 2]
    ax = histogram_figure("walk latency", edges, counts, "ns").axes[0]
    bars = ax.patches
    assert [b.get_x() for b in bars] == pytest.approx([e * 1e-9 for e in edges[:-1]])
    assert [b.get_width() for b in bars] == pytest.approx(
        [(b - a) * 1e-9 for a, b in itertools.pairwise(edges)])
    assert [b.get_height() for b in bars] == counts
    assert ax.get_xscale() == "symlog" and "log scale" in ax.get_xlabel()
    assert ax.get_ylabel() == "samples"
    assert bucket_scale([1.0, 2.0, 4.0]) == "linear" and bucket_scale([2.0, 4.0, 1e6]) == "log"


def test_headline_figures_come_from_the_series_and_findings(tmp_path: Path) -> None:
    doc = sample_report(tmp_path)
    complete_times(doc)
    rows = dict(headline(doc))
    assert rows["total execs"] == "12,000,000"
    assert rows["coverage, last growth"] == "by +60 s (0 s before the end)"
    first = min(g.first_seen_s or 0.0 for g in doc.findings)
    assert rows["first finding"] == f"+{first:.1f} s"
    assert "not measured" in rows["stability"]
    doc.series["coverage"].append((90.0, 61.0))
    doc.series["execs"].append((90.0, 13_000_000.0))
    assert dict(headline(doc))["coverage, last growth"] == "by +60 s (30 s before the end)"


def test_report_files_are_as_readable_as_any_file_the_user_writes(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        paths = write_report(tmp_path / "r", sample_report(tmp_path))
        assert new_file_mode() == 0o640
    finally:
        os.umask(old)
    assert {stat.S_IMODE(p.stat().st_mode) for p in paths.values()} == {0o640}


def test_figure_text_is_escaped_and_not_mathtext() -> None:
    svg = line_plot(HOSTILE + " $x$", [(0.0, 1.0), (1.0, 2.0)], "y")
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert "$x$" in svg  # printed as typed, not rendered as math
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
