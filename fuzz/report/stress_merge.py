"""Stress reports of several hosts summed into one: the samples, invalid traces by class,
faults and hangs of every host added up, one counter per host with its own figures, findings
deduplicated by signature.

A host is its report's `meta.host["label"]` (`WALKFUZZ_HOST_LABEL` where the run was, or the
machine's name), falling back to `meta.host["hostname"]` for a report that has no label; two
reports of one host are summed under it. The per-host counter is a flat group of numbers,
`counters["host <key>"]`, so the report's schema and renderers take it as they are; the rates
of the merged report are recomputed from the sums (a rate of rates would weigh a short run as
much as a long one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from walkfuzz.report.document import CounterValue, FindingGroup, Histogram, RunMeta, RunReport

# Counts a stress report may carry (single runs, pytest sessions); each is summed where present.
SUMMED = ("requested", "delivered", "walked", "exact", "invalid", "faults", "hangs", "frames",
          "safepoints", "invalid_in_window", "queue_rejected", "queue_gone", "queue_resizes",
          "queue_checks", "queue_miscounts", "tests")
# Groups of counts summed per key.
SUMMED_BY_KEY = ("invalid_by_class", "end_codes", "window_samples")
# What the per-host counter shows of each host, besides its invalid traces by class.
PER_HOST = ("tests", "requested", "delivered", "walked", "exact", "invalid", "faults", "hangs")
HOST_PREFIX = "host "


def host_key(host: Mapping[str, str | int]) -> str:
    """The host a report was written on (its `meta.host`), as the merged report names it."""
    return str(host.get("label") or host.get("hostname") or "unknown")


def _count(value: CounterValue | None) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _sum_counts(reports: Sequence[RunReport]) -> dict[str, CounterValue]:
    counters: dict[str, CounterValue] = {}
    for name in SUMMED:
        if any(name in r.counters for r in reports):
            counters[name] = sum(_count(r.counters.get(name)) for r in reports)
    for name in SUMMED_BY_KEY:
        groups = [g for r in reports if isinstance(g := r.counters.get(name), dict)]
        if groups:
            summed: dict[str, int | float | str] = {}
            for group in groups:
                for key, value in group.items():
                    summed[key] = _count(summed.get(key)) + _count(value)
            counters[name] = summed
    return counters


def _rates(counters: dict[str, CounterValue]) -> None:
    walked, requested = _count(counters.get("walked")), _count(counters.get("requested"))
    if walked:
        counters["invalid_rate"] = round(_count(counters.get("invalid")) / walked, 6)
        counters["exact_rate"] = round(_count(counters.get("exact")) / walked, 6)
    if requested:
        counters["delivered_fraction"] = round(_count(counters.get("delivered")) / requested, 6)
        counters["walked_fraction"] = round(walked / requested, 6)


def _host_counter(reports: Sequence[RunReport]) -> dict[str, int | float | str]:
    summed = _sum_counts(reports)
    row: dict[str, int | float | str] = {"reports": len(reports)}
    row.update({k: _count(summed.get(k)) for k in PER_HOST if k in summed})
    by_class = summed.get("invalid_by_class")
    if isinstance(by_class, dict):
        row.update({f"invalid {cls}": n for cls, n in sorted(by_class.items()) if n})
    return row


def _merge_histograms(reports: Sequence[RunReport]) -> dict[str, Histogram]:
    """Histograms with the same buckets in every report, summed bucket by bucket."""
    merged: dict[str, Histogram] = {}
    for name in reports[0].histograms:
        same = [r.histograms.get(name) for r in reports]
        first = same[0]
        if first and all(h is not None and h.edges == first.edges and h.unit == first.unit
                         for h in same):
            counts = [sum(col) for col in zip(*(h.counts for h in same if h is not None),
                                              strict=True)]
            merged[name] = Histogram(unit=first.unit, edges=first.edges, counts=counts)
    return merged


def _merge_findings(reports: Sequence[RunReport], started: float) -> list[FindingGroup]:
    """One group per signature: hits summed, the earliest first and the latest last sighting,
    every host's examples, and the hits per host in `details["hosts"]`."""
    groups: dict[str, FindingGroup] = {}
    for report in reports:
        key = host_key(report.meta.host)
        for g in report.findings:
            mine = groups.get(g.signature)
            if mine is None:
                mine = groups[g.signature] = replace(g, examples=list(g.examples),
                                                     details={**g.details, "hosts": {}})
                mine.count = 0
            else:
                mine.examples += g.examples
                mine.first_seen_at = _pick(min, mine.first_seen_at, g.first_seen_at)
                mine.last_seen_at = _pick(max, mine.last_seen_at, g.last_seen_at)
            mine.count += g.count
            hosts = mine.details["hosts"]
            assert isinstance(hosts, dict)
            hosts[key] = hosts.get(key, 0) + g.count
    for group in groups.values():  # seconds on the merged run's clock
        group.first_seen_s = _since(group.first_seen_at, started)
        group.last_seen_s = _since(group.last_seen_at, started)
    return list(groups.values())


def _since(wall: float | None, started: float) -> float | None:
    return None if wall is None else round(max(0.0, wall - started), 3)


def _pick(pick: Callable[[list[float]], float], a: float | None,
          b: float | None) -> float | None:
    known = [t for t in (a, b) if t is not None]
    return pick(known) if known else None


def _status(reports: Sequence[RunReport]) -> str:
    statuses = {r.meta.status for r in reports}
    return next((s for s in ("failed", "interrupted") if s in statuses), "completed")


def merge_stress_reports(reports: Sequence[RunReport], command: list[str],
                         notes: Sequence[str] = ()) -> RunReport:
    """One stress report of `reports` (at least one), run by `command`."""
    if not reports:
        raise ValueError("no stress report to merge")
    by_host: dict[str, list[RunReport]] = {}
    for report in reports:
        by_host.setdefault(host_key(report.meta.host), []).append(report)
    started = min(r.meta.started_at for r in reports)
    first = reports[0].meta
    meta = RunMeta(run_type="stress", command=command, target=first.target,
                   mode="+".join(sorted({r.meta.mode for r in reports})),
                   started_at=started, ended_at=max(r.meta.ended_at for r in reports),
                   walker=first.walker, status=_status(reports))
    counters = _sum_counts(reports)
    _rates(counters)
    counters["hosts"] = len(by_host)
    for key, mine in sorted(by_host.items()):
        counters[HOST_PREFIX + key] = _host_counter(mine)
    return RunReport(meta=meta, counters=counters, histograms=_merge_histograms(reports),
                     findings=_merge_findings(reports, started),
                     notes=[f"{len(reports)} stress reports of {len(by_host)} hosts, summed",
                            *notes])
