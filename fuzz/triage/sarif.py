"""Triage groups as a SARIF 2.1.0 log, for code-scanning views.

One run, tool `walkfuzz`. Each group is a rule (id `walkfuzz/<kind>/<class>`, one per cause
class) and a result: level `error`; message = class, location, count and reproducer; the
logical location is the walker function (or the check) that failed; the physical location
is the smallest input that reproduces it; `partialFingerprints` carries the signatures so a
code-scanning service keeps a group's identity from run to run.
"""

from __future__ import annotations

from walkfuzz import __version__
from walkfuzz.triage.cluster import Cluster
from walkfuzz.triage.driver import Outcome, reproducer

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/walkfuzz/walkfuzz"


def rule_id(c: Cluster) -> str:
    return f"walkfuzz/{'+'.join(c.kinds)}/{'+'.join(c.classes)}"


def _rule(rid: str, c: Cluster) -> dict[str, object]:
    return {
        "id": rid,
        "name": rid.replace("/", "-"),
        "shortDescription": {"text": f"{'/'.join(c.kinds)} in a stack walker: "
                                     f"{'/'.join(c.classes)}"},
        "defaultConfiguration": {"level": "error"},
    }


def _logical(location: str) -> dict[str, object]:
    kind = "function" if "!" in location or "+" in location else "object"
    return {"name": location.rsplit("!", 1)[-1], "fullyQualifiedName": location, "kind": kind}


def _result(c: Cluster, rid: str, index: int) -> dict[str, object]:
    smallest = c.smallest
    text = (f"{'/'.join(c.kinds)} ({'/'.join(c.classes)}) at {smallest.location}: "
            f"{len(c.members)} inputs, {c.reliability}; {smallest.why}. "
            f"Reproduce: {reproducer(smallest)}")
    return {
        "ruleId": rid,
        "ruleIndex": index,
        "level": "error",
        "message": {"text": text},
        "locations": [{
            "physicalLocation": {"artifactLocation": {"uri": smallest.path}},
            "logicalLocations": [_logical(smallest.location)],
        }],
        "partialFingerprints": {"walkfuzzCause/v1": "|".join(c.key)},
        "properties": {
            "group": c.number,
            "count": len(c.members),
            "signatures": [g.signature for g in c.groups],
            "walker": smallest.walker,
            "reliability": c.reliability,
        },
    }


def to_sarif(outcome: Outcome) -> dict[str, object]:
    """The SARIF log of a triage outcome."""
    rules: list[dict[str, object]] = []
    index: dict[str, int] = {}
    results = []
    for c in outcome.clusters:
        rid = rule_id(c)
        if rid not in index:
            index[rid] = len(rules)
            rules.append(_rule(rid, c))
        results.append(_result(c, rid, index[rid]))
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {"name": "walkfuzz", "version": __version__,
                                "informationUri": INFORMATION_URI, "rules": rules}},
            "results": results,
            "invocations": [{
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {"level": "warning", "message": {"text": e.message}}
                    for e in outcome.errors],
            }],
        }],
    }
