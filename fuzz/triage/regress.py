"""Baselines of known signatures for CI regression jobs (`walkfuzz regress`).

A baseline is a JSON file listing the signatures a team knows about (open bugs it accepts
for now). A CI job replays its inputs (a campaign's output, crash files, a regression corpus),
and fails when one reproduces a signature that is not in the baseline:

    {"version": 1,
     "signatures": {"crash.step_walker.c_120.compiled.1234abcd":
                      {"kind": "crash", "location": "step@walker.c:120", "class": "wild-read",
                       "example": "path/of/an/input"}}}

`--update-baseline` adds what was seen (and `--prune` drops what was not), so a baseline is
created by running the job once with it and reviewed like any other file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.findings.store import write_atomic
from walkfuzz.triage.cluster import Member
from walkfuzz.triage.driver import Outcome, reproducer
from walkfuzz.triage.junit import TestCase

BASELINE_VERSION = 1
SUITE = "walkfuzz.triage.regress"


@dataclass
class Verdict:
    new: dict[str, Member]  # signature -> an input that shows it
    known: dict[str, Member]
    missing: list[str]  # baseline signatures no input reproduced

    @property
    def failed(self) -> bool:
        return bool(self.new)


def load_baseline(path: Path) -> dict[str, dict[str, object]]:
    """The baseline's signatures; UserError naming the file and what is wrong with it."""
    try:
        doc = json.loads(path.read_text())
    except OSError as err:
        raise UserError(f"baseline {str(path)!r} cannot be read: {err.strerror} "
                        "(create it with --update-baseline)") from err
    except ValueError as err:
        raise UserError(f"baseline {str(path)!r} is not JSON: {err}") from err
    if not isinstance(doc, dict) or doc.get("version") != BASELINE_VERSION:
        raise UserError(f"baseline {str(path)!r} is not a version {BASELINE_VERSION} baseline")
    signatures = doc.get("signatures")
    if not isinstance(signatures, dict):
        raise UserError(f"baseline {str(path)!r}: 'signatures' is not an object")
    return signatures


def members_by_signature(outcome: Outcome) -> dict[str, Member]:
    """One input per signature: the smallest."""
    chosen: dict[str, Member] = {}
    for c in outcome.clusters:
        for g in c.groups:
            chosen[g.signature] = g.smallest
    return chosen


def judge(outcome: Outcome, baseline: dict[str, dict[str, object]]) -> Verdict:
    seen = members_by_signature(outcome)
    return Verdict(
        new={s: m for s, m in seen.items() if s not in baseline},
        known={s: m for s, m in seen.items() if s in baseline},
        missing=sorted(s for s in baseline if s not in seen),
    )


def entry(m: Member) -> dict[str, object]:
    return {"kind": m.kind, "location": m.location, "class": m.klass, "example": m.path}


def updated(baseline: dict[str, dict[str, object]], verdict: Verdict,
            prune: bool) -> dict[str, object]:
    """The baseline document after adding what was seen (and dropping the unseen if prune)."""
    signatures = {s: e for s, e in baseline.items() if not (prune and s in verdict.missing)}
    signatures.update({s: entry(m) for s, m in verdict.new.items()})
    return {"version": BASELINE_VERSION, "signatures": dict(sorted(signatures.items()))}


def write_baseline(path: Path, doc: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(doc, indent=1) + "\n").encode())


def test_cases(outcome: Outcome, verdict: Verdict) -> list[TestCase]:
    """One JUnit test case per signature (new: failed; known or gone: passed), and one
    failed case per input that could not be replayed."""
    cases = []
    for s, m in sorted(verdict.new.items()):
        cases.append(TestCase(m.kind, s, failure=f"new {m.kind} ({m.klass}) at {m.location}",
                              output=f"{m.why}\nreproduce: {reproducer(m)}"))
    for s, m in sorted(verdict.known.items()):
        cases.append(TestCase(m.kind, s, output=f"known, still reproduces: {reproducer(m)}"))
    for s in verdict.missing:
        cases.append(TestCase("baseline", s, output="in the baseline, not reproduced by any "
                                                     "input (fixed, or its inputs are gone)"))
    for e in outcome.errors:
        cases.append(TestCase("input", e.path, failure=e.message))
    return cases
