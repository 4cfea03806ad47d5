"""Triage of findings a triage process cannot replay: a HotSpot finding's replay is a JVM run
of seconds (`walkfuzz replay --target hotspot FILE`), a differential finding of the native
target a replay in one process per unwinder, so triage groups such findings by the description
stored next to each input instead, and says they were not replayed (runs 0).

    result: {"runs": 0, "signatures": [], "finding": <the description>, "class": ..., "why": ...}

The reproducer named is the description's (a run keeps the report's there as it ends: a replay of
the record, or for a finding without one the command of the run that found it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from walkfuzz.core.guard import ADDRESS_KEYS, Fault
from walkfuzz.findings.classify import HANG_CLASS, fault_class
from walkfuzz.report.document import replay_command
from walkfuzz.targets.harness_replay import ReplayError

STORED_TARGETS = ("hotspot",)
# A differential finding is judged across several unwinders' processes at once (its replay is
# `walkfuzz replay --target native --unwinder A,B FILE`, one fresh process per unwinder): not
# a replay of one process, so grouped by its description too.
STORED_HARNESSES = (("native", "differential"),)
JVM_FAULT_CLASS = "jvm-fault"
DEATH_CLASS = "process-death"  # a native worker died on it: no fault address was kept


def _class(doc: dict[str, Any]) -> str:
    if doc.get("kind") == "hang":
        return HANG_CLASS
    if doc.get("kind") == "invalid-trace":  # location check:shadow:<class> or check:gst-<kind>
        return str(doc.get("location", "")).rsplit(":", 1)[-1].strip() or "invalid-trace"
    if doc.get("target") == "native":
        fault = _stored_fault(doc.get("details"))
        if fault is None:
            return DEATH_CLASS
        # the regions are those of the process that found it, gone: the address alone
        return fault_class(fault.address, fault.si_code, ())[0]
    return JVM_FAULT_CLASS


def _stored_fault(details: object) -> Fault | None:
    """The fault a stored native finding's details name: their `fault` record, or the flat
    keys findings stored before it kept (`fault_address`); None when no address was kept."""
    if not isinstance(details, dict):
        return None
    record = details.get("fault", details)
    if not isinstance(record, dict) or not set(ADDRESS_KEYS) & record.keys():
        return None
    try:
        return Fault.from_json(record)
    except ValueError:
        return None


def stored_result(source: str) -> dict[str, Any]:
    """The result line of one input from its stored description; ReplayError without one."""
    description = Path(source).with_suffix(".json")
    try:
        doc = json.loads(description.read_text())
    except (OSError, ValueError) as err:
        raise ReplayError(f"{source}: not replayable by triage and no readable description "
                          f"({description}): {err}") from err
    if not isinstance(doc, dict) or "signature" not in doc:
        raise ReplayError(f"{source}: description {description} names no signature")
    details = doc.get("details")
    details = details if isinstance(details, dict) else {}
    what = details.get("perturbation") or details.get("oracle") or doc.get("location")
    reproducer = doc.get("reproducer") or replay_command(
        str(doc.get("target")), str(doc.get("harness")), "", source)
    return {"runs": 0, "signatures": [], "finding": doc, "class": _class(doc),
            "why": f"stored, not replayed ({what}); reproduce: {reproducer}",
            "harness": doc.get("harness")}
