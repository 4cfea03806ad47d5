"""The headline figures of a run, as AFL++'s status screen gives them, taken from what the run
recorded (the `execs`, `coverage`, `corpus` series sampled once a second, the findings' first
seen times): inputs run in total and per second, final coverage, when coverage last grew and
how long before the end that was, when the corpus last grew, when the first and the last new
finding appeared (on the run's clock, which a run's series need not share: a JVM's ticks).

Stability (AFL++: the share of coverage that is the same when an input runs again, measured by
running each new input several times) is not given: libFuzzer does not run an input again to
compare, and its status lines give totals only, so a campaign records nothing it could be
computed from.

Times are seconds since the start of the run (a resumed campaign's clock goes on across
sessions), exact to the one-second sampling of the series.
"""

from __future__ import annotations

from collections.abc import Mapping

from walkfuzz.report.document import CAMPAIGN_SECONDS, Point, RunReport

STABILITY_NOTE = ("not measured: libFuzzer does not run an input again to compare its "
                  "coverage, and reports no per-input coverage a campaign could compare")


def last_growth(points: list[Point]) -> float:
    """The time of the first sample that reached the series' maximum: the series last grew
    by then (within the sampling interval before it)."""
    peak = max(v for _, v in points)
    return next(t for t, v in points if v >= peak)


def value_text(value: object) -> str:
    """A counter's value as a reader wants it: integers with thousands separators, fractions
    to 6 significant digits, anything else as it is."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() and abs(value) >= 1 else f"{value:,.6g}"
    return str(value)


def slowdown_text(value: float | None) -> str:
    """A workload's slowdown as a terminal line says it; None: the run had no baseline."""
    return "n/a (no baseline)" if value is None else f"{100 * value:.1f}%"


def counts_text(counts: Mapping[str, int]) -> str:
    """Named counts as a terminal line says them ("missing 3, cycle 1"), the zero ones left
    out; "none" when all are zero."""
    named = [f"{name} {count}" for name, count in counts.items() if count]
    return ", ".join(named) if named else "none"


def _ago(t: float, end: float) -> str:
    return f"by +{t:.0f} s ({max(0.0, end - t):.0f} s before the end)"


def _count(value: float) -> str:
    return f"{value:,.0f}"


def run_end(doc: RunReport) -> float:
    """The end of the run on the clock of its series: the last sample's time (a resumed
    campaign's clock leaves out the time between sessions), else the run's duration."""
    execs = doc.series.get("execs")
    return execs[-1][0] if execs else doc.meta.duration


def _campaign_rows(doc: RunReport, end: float) -> list[tuple[str, str]]:
    execs = doc.series.get("execs", [])
    # A campaign's series clock runs only while it fuzzes (sessions add up); other runs'
    # series cover their sampled phase only.
    what = "fuzzing time, all sessions" if doc.meta.run_type == "fuzz" else "time sampled"
    rows: list[tuple[str, str]] = [(what, f"{end:.0f} s")]
    # merged campaigns ran side by side: the clock is the longest one's, the work all of theirs
    summed = doc.counters.get(CAMPAIGN_SECONDS)
    merged, seconds = False, end
    if isinstance(summed, int | float) and not isinstance(summed, bool):
        merged, seconds = True, float(summed)
        rows = [("wall time, longest campaign", f"{end:.0f} s"),
                ("fuzzing time, campaigns summed", f"{seconds:.0f} s")]
    if execs:
        rows.append(("total execs", _count(execs[-1][1])))
        if seconds > 0:
            rows.append(("exec/s, mean per campaign" if merged else "exec/s, mean",
                         _count(execs[-1][1] / seconds)))
    rate = [v for _, v in doc.series.get("exec_per_sec", [])]
    if rate:
        rows.append(("exec/s, peak sample", _count(max(rate))))
    for name, label in (("coverage", "coverage"), ("features", "features"),
                        ("corpus", "corpus entries")):
        points = doc.series.get(name)
        if points:
            rows.append((f"{label}, final", _count(points[-1][1])))
            rows.append((f"{label}, last growth", _ago(last_growth(points), end)))
    if "coverage" in doc.series:
        rows.append(("stability", STABILITY_NOTE))
    return rows


def _finding_rows(doc: RunReport) -> list[tuple[str, str]]:
    """Times on the run's clock (a run's series may keep another: a JVM's ticks)."""
    first = [g.first_seen_s for g in doc.findings if g.first_seen_s is not None]
    if not first:
        return [("findings", "none")]
    return [("distinct findings", str(len(doc.findings))),
            ("hits, all findings", _count(sum(g.count for g in doc.findings))),
            ("first finding", f"+{min(first):.1f} s"),
            ("last new finding", f"+{max(first):.1f} s")]


def headline(doc: RunReport) -> list[tuple[str, str]]:
    """(figure, value) rows, in the order a reader looks for them; the campaign figures only
    for runs that recorded an `execs` series."""
    rows = _campaign_rows(doc, run_end(doc)) if "execs" in doc.series else []
    return rows + _finding_rows(doc)
