"""Triage groups as a SARIF 2.1.0 log, for code-scanning views (GitHub code scanning).

One run, tool `walkfuzz`. Each group is a rule (id `walkfuzz/<kind>/<class>`, one per cause
class) and a result: level `error`; message = class, location, count and reproducer; the
logical location is the walker function (or the check) that failed. The physical location is
the walker's source file and line of the fault (the faulting pc's debug info,
walkfuzz.core.symbolize, kept in the finding's details["source"]); the smallest input that
reproduces it is a related location (and the physical one when no source line is known: a
failed check has no pc). Paths are relative to the repository root — the git work tree that
holds the current directory, else the current directory — as code scanning resolves them
against its checkout; a host's absolute paths would place nothing. `partialFingerprints`
carries the cause key without the walker's path, so a group keeps its identity from run to run
and across copies of the library. A triage in which inputs could not be replayed is not a
successful execution: `executionSuccessful` is false and a notification says why.
"""

from __future__ import annotations

import os
from pathlib import Path

from walkfuzz import __version__
from walkfuzz.triage.cluster import Cluster, Member
from walkfuzz.triage.driver import Outcome, reproducer

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/walkfuzz/walkfuzz"
FINGERPRINT = "walkfuzzCause/v2"
WALKER_IN_KEY = 1  # the walker's path in a cause key (walkfuzz.triage.cluster.cause_key)


def repository_root(start: Path | None = None) -> Path:
    """The git work tree holding `start` (default: the current directory), else `start`."""
    here = (start or Path.cwd()).resolve()
    return next((d for d in (here, *here.parents) if (d / ".git").exists()), here)


def relative_uri(path: str, root: Path) -> str:
    """`path` relative to `root`, with forward slashes (a URI reference code scanning joins
    to its checkout); a path outside `root` goes up with `..`."""
    return Path(os.path.relpath(Path(path).resolve(), root)).as_posix()


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
    kind = "function" if location and not location.startswith("check:") else "object"
    name = location.rsplit("!", 1)[-1].split("@", 1)[0].split("+", 1)[0] or location
    return {"name": name, "fullyQualifiedName": location, "kind": kind}


def _source(m: Member, root: Path) -> dict[str, object] | None:
    """The physical location of the fault's source line, None when it is not known."""
    if not m.source:
        return None
    path, _, line = m.source.rpartition(":")
    if not path or not line.isdigit() or int(line) < 1:
        return None
    return {"artifactLocation": {"uri": relative_uri(path, root)},
            "region": {"startLine": int(line)}}


def _input(m: Member, root: Path) -> dict[str, object]:
    return {"artifactLocation": {"uri": relative_uri(m.path, root)}}


def _result(c: Cluster, rid: str, index: int, root: Path) -> dict[str, object]:
    smallest = c.smallest
    text = (f"{'/'.join(c.kinds)} ({'/'.join(c.classes)}) at {smallest.location}: "
            f"{len(c.members)} inputs, {c.reliability}; {smallest.why}. "
            f"Reproduce: {reproducer(smallest)}")
    source = next((s for s in (_source(m, root) for m in [smallest, *c.members]) if s), None)
    walker = smallest.walker if smallest.walker == "reference" else \
        relative_uri(smallest.walker, root)
    return {
        "ruleId": rid,
        "ruleIndex": index,
        "level": "error",
        "message": {"text": text},
        "locations": [{
            "physicalLocation": source or _input(smallest, root),
            "logicalLocations": [_logical(smallest.location)],
        }],
        "relatedLocations": [{
            "id": 1,
            "physicalLocation": _input(smallest, root),
            "message": {"text": f"the smallest of {len(c.members)} inputs that reproduce it "
                                f"({smallest.size} bytes)"},
        }],
        "partialFingerprints": {FINGERPRINT: "|".join(
            part for i, part in enumerate(c.key) if i != WALKER_IN_KEY)},
        "properties": {
            "group": c.number,
            "count": len(c.members),
            "signatures": [g.signature for g in c.groups],
            "walker": walker,
            "reliability": c.reliability,
        },
    }


def _invocation(outcome: Outcome) -> dict[str, object]:
    """Successful only when every input replayed; else an error notification says how many
    could not and why (the first reason), then one warning per input."""
    notifications: list[dict[str, object]] = []
    if outcome.errors:
        notifications.append({"level": "error", "message": {"text": (
            f"{len(outcome.errors)} of {outcome.inputs} inputs could not be replayed; the "
            f"first: {outcome.errors[0].message}")}})
    notifications += [{"level": "warning", "message": {"text": e.message}}
                      for e in outcome.errors]
    return {"executionSuccessful": not outcome.errors,
            "toolExecutionNotifications": notifications}


def to_sarif(outcome: Outcome, root: Path | None = None) -> dict[str, object]:
    """The SARIF log of a triage outcome, paths relative to `root` (default:
    repository_root())."""
    base = root or repository_root()
    rules: list[dict[str, object]] = []
    index: dict[str, int] = {}
    results = []
    for c in outcome.clusters:
        rid = rule_id(c)
        if rid not in index:
            index[rid] = len(rules)
            rules.append(_rule(rid, c))
        results.append(_result(c, rid, index[rid], base))
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {"name": "walkfuzz", "version": __version__,
                                "informationUri": INFORMATION_URI, "rules": rules}},
            "results": results,
            "invocations": [_invocation(outcome)],
        }],
    }
