"""Triage of a differential run's findings (target native, harness differential): judged across
several unwinders' processes, they are grouped by their stored descriptions, not replayed, each
with its class and the reproducer that replays it on every unwinder."""

from __future__ import annotations

from pathlib import Path

from walkfuzz.findings.finding import Finding
from walkfuzz.findings.store import FindingSink
from walkfuzz.triage.driver import table, triage
from walkfuzz.triage.inputs import discover

UNWINDERS = "libunwind,fp"


def _store(out: Path, kind: str, location: str, data: bytes, **details: object) -> None:
    FindingSink(out).offer(Finding(kind=kind, target="native", harness="differential",
                                   location=location, shape=(), data=data,
                                   details={"unwinder": UNWINDERS, **details}))


def test_differential_findings_are_grouped_by_description_with_their_classes(
        tmp_path: Path) -> None:
    _store(tmp_path, "invalid-trace", "fp vs libunwind: fp-walks-on-after-end", b"\1" * 59)
    _store(tmp_path, "invalid-trace", "fp vs libunwind: fp-walks-on-after-end", b"\2" * 59)
    _store(tmp_path, "crash", "fp:step@wf_uw_fp_walk.c:49", b"\3" * 59, faulted="fp",
           fault_address="0x8", si_code=1)
    _store(tmp_path, "crash", "process-death:SIGSEGV", b"\4" * 59, faulted="libunwind")
    outcome = triage(discover([tmp_path]), runs=1, jobs=1)
    assert not outcome.errors
    classes = sorted("/".join(c.classes) for c in outcome.clusters)
    assert classes == ["fp-walks-on-after-end", "near-null-read", "process-death"], classes
    assert all(c.reliability == "not replayed" for c in outcome.clusters)
    assert f"walkfuzz replay --target native --harness differential --unwinder {UNWINDERS} " \
        in table(outcome)


def test_a_stored_fault_record_is_classified_as_the_older_flat_keys_are(tmp_path: Path) -> None:
    """A finding stored now keeps the guard's record under details.fault (Fault.to_json)."""
    fault = {"kind": "signal", "signal": "SIGSEGV", "signo": 11, "si_code": 1, "address": "0x8",
             "pc": "0x0", "frames": 0, "last_sp": "0x0", "last_fp": "0x0", "last_pc": "0x0"}
    _store(tmp_path, "crash", "fp:step@wf_uw_fp_walk.c:49", b"\3" * 59, faulted="fp",
           fault=fault)
    outcome = triage(discover([tmp_path]), runs=1, jobs=1)
    assert not outcome.errors
    assert [c.classes for c in outcome.clusters] == [["near-null-read"]], outcome.clusters
