"""Run reports of one kind from several hosts (stress runs: `walkfuzz stress`, execnet
gateways) made one report, summed and kept per host.

What adds up is summed: every whole-number counter (samples requested, delivered, walked,
invalid, faults, hangs...), every group of whole numbers key by key (invalid traces by class,
end codes), the seconds of the sampled phases, histograms with the same buckets. The rates
are computed again from the sums. What does not add up (percentiles, a slowdown) is left out,
and a note names it: each host's own report has it.

Per host, `counters["host <label>"]` holds that host's whole-number counters and its invalid
traces by class (`invalid <class>`); the host is `meta.host["label"]` (WALKFUZZ_HOST_LABEL,
else the host name; walkfuzz.report.document.host_label), and reports of one host are summed
under it. Findings are grouped by signature across reports: hits summed, the earliest first
and the latest last sighting.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from walkfuzz.report.document import (
    CounterValue,
    FindingGroup,
    Histogram,
    RunMeta,
    RunReport,
    host_label,
)

# Counters that are sums of time, not counts, and add up too.
SUMMED_SECONDS = ("seconds", "cpu_seconds")
# Rates computed again from the summed counters: name -> (numerator, denominator).
RATES = {
    "delivered_fraction": ("delivered", "requested"),
    "walked_fraction": ("walked", "requested"),
    "invalid_rate": ("invalid", "walked"),
    "exact_rate": ("exact", "walked"),
    "frames_per_walk": ("frames", "walked"),
    "delivered_per_second": ("delivered", "seconds"),
    "delivered_per_cpu_second": ("delivered", "cpu_seconds"),
    "walked_per_cpu_second": ("walked", "cpu_seconds"),
}
BY_CLASS = "invalid_by_class"
HOST_PREFIX = "host "
# Whole numbers that describe a run rather than count what happened in it (the VM's tables).
DESCRIPTIONS = frozenset({"vm"})
# Names of rates, which a whole number may happen to be (10000 samples requested a CPU-second).
RATE_MARKS = ("_per_", "_rate", "_fraction")


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _additive(name: str) -> bool:
    return not (name in DESCRIPTIONS or name.startswith(HOST_PREFIX) or
                any(mark in name for mark in RATE_MARKS))


def _is_count_group(value: object) -> bool:
    return isinstance(value, dict) and all(_whole(v) for v in value.values())


def summed_counters(reports: Sequence[RunReport]) -> tuple[dict[str, CounterValue], list[str]]:
    """The counters that add up, summed over `reports`, the rates computed again, and the
    names of the counters left out."""
    total: dict[str, CounterValue] = {}
    left_out: set[str] = set()
    for report in reports:
        for name, value in report.counters.items():
            if not _additive(name):
                left_out.add(name)
            elif _whole(value) or (name in SUMMED_SECONDS and isinstance(value, int | float)):
                before = total.get(name, 0)
                assert isinstance(before, int | float) and isinstance(value, int | float)
                total[name] = before + value
            elif _is_count_group(value):
                group = total.setdefault(name, {})
                assert isinstance(group, dict) and isinstance(value, dict)
                for key, count in value.items():
                    group[key] = int(group.get(key, 0)) + int(count)
            else:
                left_out.add(name)
    for name, (part, whole) in RATES.items():
        if any(name in r.counters for r in reports) and part in total and whole in total:
            numerator, denominator = total[part], total[whole]
            assert isinstance(numerator, int | float) and isinstance(denominator, int | float)
            total[name] = round(numerator / denominator, 6) if denominator else 0.0
    return total, sorted(n for n in left_out - set(total) if not n.startswith(HOST_PREFIX))


def host_rows(report: RunReport) -> dict[str, dict[str, int | float | str]]:
    """The per-host counters a merged report carries (none in a host's own report)."""
    return {name: dict(row) for name, row in report.counters.items()
            if name.startswith(HOST_PREFIX) and isinstance(row, dict)}


def add_row(hosts: dict[str, dict[str, int | float | str]], name: str,
            row: Mapping[str, int | float | str]) -> None:
    """Sum `row` into the row `name` of `hosts`, number by number."""
    into = hosts.setdefault(name, {})
    for key, value in row.items():
        before = into.get(key, 0)
        if isinstance(value, int | float) and isinstance(before, int | float):
            into[key] = before + value


def per_host(reports: Sequence[RunReport]) -> dict[str, CounterValue]:
    """One counter per host: its reports, whole-number counters and invalid traces by class;
    a report merged before brings its hosts' rows."""
    hosts: dict[str, dict[str, int | float | str]] = {}
    for report in reports:
        carried = host_rows(report)
        for name, row in carried.items():
            add_row(hosts, name, row)
        if carried:
            continue
        counts: dict[str, int | float | str] = {
            k: v for k, v in report.counters.items()
            if isinstance(v, int) and _whole(v) and _additive(k)}
        by_class = report.counters.get(BY_CLASS)
        if isinstance(by_class, dict):
            counts.update({f"invalid {k}": v for k, v in by_class.items() if _whole(v)})
        add_row(hosts, f"{HOST_PREFIX}{host_label(report.meta.host)}", {"reports": 1, **counts})
    return dict(sorted(hosts.items()))


def summed_histograms(reports: Sequence[RunReport]) -> dict[str, Histogram]:
    """Histograms every report has with the same buckets, their counts summed."""
    merged: dict[str, Histogram] = {}
    for name in set.intersection(*(set(r.histograms) for r in reports)):
        first = reports[0].histograms[name]
        if all(r.histograms[name].edges == first.edges and
               r.histograms[name].unit == first.unit for r in reports):
            counts = [sum(c) for c in zip(*(r.histograms[name].counts for r in reports),
                                          strict=True)]
            merged[name] = Histogram(first.unit, list(first.edges), counts)
    return merged


def _carried_hits(group: FindingGroup) -> dict[str, int]:
    """The hits by host a group's details carry (a merged report's), else none."""
    carried = group.details.get("hosts")
    if not isinstance(carried, dict):
        return {}
    return {str(k): int(v) for k, v in carried.items() if _whole(v)}


def _hits_per_host(report: RunReport, group: FindingGroup) -> dict[str, int]:
    """A group's hits by host: those a merged report carries, else all of its own host's."""
    return _carried_hits(group) or {host_label(report.meta.host): group.count}


def merged_groups(reports: Sequence[RunReport], since: float,
                  relocate: Callable[[str], str]) -> list[FindingGroup]:
    """Finding groups by signature over `reports`, in order of first appearance: hits summed
    (and per host in `details["hosts"]`), the earliest first and the latest last sighting
    (seconds since `since`), each stored input named where it is now (`relocate` of its old
    path)."""
    merged: dict[str, FindingGroup] = {}
    for report in reports:
        for group in report.findings:
            moved = replace(group, examples=[relocate(e) for e in group.examples],
                            reproducer=_relocated(group, relocate),
                            details={**group.details, "hosts": _hits_per_host(report, group)})
            known = merged.get(group.signature)
            merged[group.signature] = moved if known is None else _joined(known, moved)
    for group in merged.values():
        if group.first_seen_at is not None:
            group.first_seen_s = round(max(0.0, group.first_seen_at - since), 3)
        if group.last_seen_at is not None:
            group.last_seen_s = round(max(0.0, group.last_seen_at - since), 3)
    return list(merged.values())


def _relocated(group: FindingGroup, relocate: Callable[[str], str]) -> str:
    text = group.reproducer
    for example in group.examples:
        text = text.replace(example, relocate(example))
        # a file saved beside the input (a native finding's snapshot) moved with it
        old, new = Path(example).parent, Path(relocate(example)).parent
        text = text.replace(f"{old}{os.sep}", f"{new}{os.sep}")
    return text


def _joined(a: FindingGroup, b: FindingGroup) -> FindingGroup:
    firsts = [t for t in (a.first_seen_at, b.first_seen_at) if t is not None]
    lasts = [t for t in (a.last_seen_at, b.last_seen_at) if t is not None]
    examples = a.examples + [e for e in b.examples if e not in a.examples]
    hosts = _carried_hits(a)
    for host, hits in _carried_hits(b).items():
        hosts[host] = hosts.get(host, 0) + hits
    return replace(a, count=a.count + b.count, examples=examples,
                   details={**a.details, "hosts": hosts},
                   reproducer=a.reproducer if a.examples or not b.examples else b.reproducer,
                   first_seen_at=min(firsts, default=None), last_seen_at=max(lasts, default=None))


def merged_status(reports: Sequence[RunReport]) -> str:
    """completed when every run completed; else interrupted when one was, else failed."""
    statuses = {r.meta.status for r in reports}
    if statuses == {"completed"}:
        return "completed"
    return "interrupted" if "interrupted" in statuses else "failed"


def _unmoved(path: str) -> str:
    return path


def merge_reports(reports: Sequence[RunReport], command: list[str],
                  relocate: Callable[[str], str] = _unmoved,
                  notes: Sequence[str] = ()) -> RunReport:
    """One report of `reports` (at least one, of one run type, target and walker: the
    caller checks; several modes, as a pytest stress session has, are named together), its
    stored inputs where `relocate` says, `notes` after the merge's own."""
    if not reports:
        raise ValueError("no report to merge")
    first = reports[0].meta
    since = min(r.meta.started_at for r in reports)
    counters, left_out = summed_counters(reports)
    hosts = per_host(reports)
    said = [f"merged from {len(reports)} reports of {len(hosts)} hosts"]
    if left_out:
        said.append(f"not summed (see each host's report): {', '.join(left_out)}")
    meta = RunMeta(run_type=first.run_type, command=command, target=first.target,
                   mode="+".join(sorted({r.meta.mode for r in reports})), started_at=since,
                   ended_at=max(r.meta.ended_at for r in reports), walker=first.walker,
                   status=merged_status(reports))
    return RunReport(meta=meta, counters={**counters, "hosts": len(hosts), **hosts},
                     histograms=summed_histograms(reports),
                     findings=merged_groups(reports, since, relocate), notes=[*said, *notes])


def relocator(sources: Sequence[Path], out: Path) -> Callable[[str], str]:
    """A stored input's path under `out` for its path under one of `sources`."""
    roots = [(str(s), str(s.resolve())) for s in sources]

    def relocate(path: str) -> str:
        for plain, resolved in roots:
            for root in (resolved, plain):
                if path.startswith(root + "/"):
                    return str(out / path[len(root) + 1:])
        return path
    return relocate
