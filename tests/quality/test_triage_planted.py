"""Triage on a corpus of findings from the planted-bug walkers (tests/fixtures/planted_corpus.py):
45 findings of each planted bug triage replays (all but the queue one), with a dozen signatures
between them, must collapse to one group per bug — no more, no fewer — and the minimized
reproducer of each group must keep its signature and be smaller than the input it came from.
Corpus building and minimization run in child processes (the planted walkers fault on
purpose)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from walkfuzz.triage import triage
from walkfuzz.triage_inputs import discover

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from planted_corpus import TRIAGED_BUGS

pytestmark = pytest.mark.quality
CORPUS_SCRIPT = Path(__file__).resolve().parents[1] / "fixtures" / "planted_corpus.py"
WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
PER_BUG = 45
EXPECTED_CLASS = {
    "missing-bounds-check": "guard-page-overrun",
    "nested-condition": "wild-read",
    "fp-cycle": "hang-or-cycle",
    "frame-size-off-by-one": "truncated",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    out = tmp_path_factory.mktemp("planted-findings")
    done = subprocess.run([sys.executable, str(CORPUS_SCRIPT), str(out),
                           str(PER_BUG)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    walkers = {}
    for line in done.stdout.splitlines():
        name, walker, count = line.split()
        assert int(count) == PER_BUG
        walkers[walker] = name
    return out, walkers


@pytest.fixture(scope="module")
def outcome(corpus: tuple[Path, dict[str, str]]):  # type: ignore[no-untyped-def]
    return triage(discover([corpus[0]]), runs=2, jobs=2)


def test_one_group_per_planted_bug(corpus: tuple[Path, dict[str, str]], outcome) -> None:  # type: ignore[no-untyped-def]
    _, walkers = corpus
    assert outcome.findings == PER_BUG * len(TRIAGED_BUGS) >= 200
    assert not outcome.errors and not outcome.clean
    signatures = sum(len(c.groups) for c in outcome.clusters)
    assert signatures > len(TRIAGED_BUGS), "the corpus should need clustering"
    bugs_of_groups = [{walkers[m.walker] for m in c.members} for c in outcome.clusters]
    assert all(len(bugs) == 1 for bugs in bugs_of_groups), bugs_of_groups
    assert sorted(b for bugs in bugs_of_groups for b in bugs) == sorted(
        bug.name for bug in TRIAGED_BUGS)


def test_groups_are_classified(corpus: tuple[Path, dict[str, str]], outcome) -> None:  # type: ignore[no-untyped-def]
    _, walkers = corpus
    for c in outcome.clusters:
        bug = walkers[c.smallest.walker]
        if bug in EXPECTED_CLASS:
            assert EXPECTED_CLASS[bug] in c.classes, (bug, c.classes)
        assert c.reliability == "reliable"


def test_minimized_reproducers_keep_signature_and_shrink(outcome, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for c in outcome.clusters:
        member = c.smallest
        out = tmp_path / f"group-{c.number}.case"
        done = subprocess.run([str(WALKFUZZ), "minimize", member.path, "-o", str(out),
                               "--budget", "5"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        sizes = [int(w) for w in done.stdout.replace("(", " ").split() if w.isdigit()]
        minimized, original, as_case = sizes[0], sizes[1], sizes[2]
        assert minimized == out.stat().st_size
        assert minimized < as_case
        if member.harness == "bytes":
            assert minimized < original == member.size
        again = subprocess.run([str(WALKFUZZ), "triage", str(out), "--walker", member.walker,
                                "--json", str(tmp_path / "again.json"), "--runs", "1"],
                               capture_output=True, text=True, timeout=60)
        assert again.returncode == 0, again.stderr
        doc = json.loads((tmp_path / "again.json").read_text())
        replayed = [s["signature"] for g in doc["groups"] for s in g["signatures"]]
        assert replayed == [member.signature]
