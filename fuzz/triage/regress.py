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
from walkfuzz.core.paths import input_file
from walkfuzz.findings.store import write_atomic
from walkfuzz.triage.cluster import Member
from walkfuzz.triage.driver import Outcome, reproducer
from walkfuzz.triage.inputs import InputSpec, find_inputs, is_output_dir
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


def inputs(paths: list[Path]) -> tuple[list[InputSpec], list[str]]:
    """The inputs `paths` name, and the walkfuzz output folders among them that hold none (a
    run that found nothing: a pass). UserError for a missing path or a plain folder without an
    input, so that a gate never passes having checked nothing."""
    specs, clean_runs = [], []
    for path in paths:
        if not path.exists():
            raise UserError(f"{str(path)!r} does not exist: nothing to check")
        if not path.is_dir():
            input_file(path)  # a device or FIFO: refused, never opened
        found = find_inputs([path]).inputs
        if not found and not is_output_dir(path):
            raise UserError(f"{str(path)!r} holds no input to check (neither a walkfuzz output "
                            "folder nor a folder of inputs)")
        specs += found
        if not found:
            clean_runs.append(str(path))
    return specs, clean_runs


def test_cases(outcome: Outcome, verdict: Verdict, clean_runs: list[str]) -> list[TestCase]:
    """One JUnit test case per input checked (a new signature's: failed; a known one's or a
    clean replay's: passed), one passed case per output folder of a run that found nothing,
    one passed case per baseline signature no input showed, and one failed case per input
    that could not be replayed: a pass is never a suite of no tests."""
    cases = []
    for m in sorted((m for c in outcome.clusters for m in c.members), key=lambda m: m.path):
        if m.signature in verdict.new:
            cases.append(TestCase(m.signature, m.path, output=f"{m.why}\nreproduce: "
                                  f"{reproducer(m)}",
                                  failure=f"new {m.kind} ({m.klass}) at {m.location}"))
        else:
            cases.append(TestCase(m.signature, m.path,
                                  output=f"known, still reproduces: {reproducer(m)}"))
    for path in sorted(outcome.clean):
        cases.append(TestCase("clean", path, output="replayed without a finding"))
    for path in clean_runs:
        cases.append(TestCase("clean-run", path, output="a walkfuzz run that found nothing: "
                                                        "no input to replay"))
    for s in verdict.missing:
        cases.append(TestCase("baseline", s, output="in the baseline, not reproduced by any "
                                                     "input (fixed, or its inputs are gone)"))
    for e in outcome.errors:
        cases.append(TestCase("input", e.path, failure=e.message))
    return cases
