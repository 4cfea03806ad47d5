"""walkfuzz.report.merge: stress reports summed per host. The hosts' figures are made
up here (each host's own report is checked against a real run in tests/stress/
test_gateways.py); what is checked is the rule: reports of one host are summed under its key,
the label else the hostname, and every sum is the sum of its parts."""

from __future__ import annotations

from walkfuzz.report.document import FindingGroup, Histogram, RunMeta, RunReport, host_label
from walkfuzz.report.merge import HOST_PREFIX, merge_reports


def stress_report(host: dict[str, str | int], walked: int, invalid: dict[str, int],
                  started: float, hits: int) -> RunReport:
    group = FindingGroup(signature="sig", kind="invalid-trace", target="minivm",
                         harness="stress", location="check:live-missing", shape=["compiled"],
                         count=hits, examples=[f"/x/{host_label(host)}-{started}.bin"],
                         reproducer="walkfuzz replay", first_seen_at=started + 1,
                         last_seen_at=started + 2)
    return RunReport(
        meta=RunMeta(run_type="stress", command=["walkfuzz", "stress"], target="minivm",
                     mode="signal", started_at=started, ended_at=started + 10, host=host),
        counters={"walked": walked, "invalid": sum(invalid.values()), "faults": 0,
                  "invalid_by_class": invalid, "invalid_rate": 0.5},
        histograms={"latency": Histogram(unit="ns", edges=[0, 1, 2], counts=[walked, 0])},
        findings=[group])


def test_reports_are_summed_per_host_key() -> None:
    reports = [stress_report({"hostname": "m1", "label": "a"}, 10, {"missing": 1}, 100.0, 1),
               stress_report({"hostname": "m2", "label": "a"}, 20, {"extra": 2}, 90.0, 2),
               stress_report({"hostname": "b"}, 5, {"missing": 4}, 95.0, 4)]
    merged = merge_reports(reports, ["walkfuzz", "merge"])
    counters = merged.counters
    assert counters["hosts"] == 2
    assert counters["walked"] == 35 and counters["invalid"] == 7
    assert counters["invalid_by_class"] == {"missing": 5, "extra": 2}
    assert counters["invalid_rate"] == round(7 / 35, 6)  # from the sums, not the reports' rates
    assert counters[HOST_PREFIX + "a"] == {"reports": 2, "walked": 30, "invalid": 3,
                                           "faults": 0, "invalid extra": 2,
                                           "invalid missing": 1}
    assert counters[HOST_PREFIX + "b"]["walked"] == 5
    assert merged.histograms["latency"].counts == [35, 0]
    (group,) = merged.findings
    assert group.count == 7 and group.details["hosts"] == {"a": 3, "b": 4}
    assert len(group.examples) == 3
    assert (merged.meta.started_at, group.first_seen_at, group.last_seen_at) == (90.0, 91.0, 102.0)
    assert group.first_seen_s == 1.0 and group.last_seen_s == 12.0
