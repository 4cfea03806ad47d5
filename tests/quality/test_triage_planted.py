"""Triage on corpora of findings from the planted-bug walkers (tests/fixtures/planted_corpus.py).

- One library per bug: 45 findings of each bug triage replays (all but the queue harness's),
  with a dozen signatures between them, collapse to one group per bug, each of the bug's
  class; the minimized reproducer of each group keeps its signature and is smaller than the
  input it came from.
- One library with several bugs planted at once (planted_corpus.COMBINED, disjoint paths: each
  input triggers its own bug's walker and no other's): every cause key then holds the same
  walker, so only the rest of the key can tell the bugs apart. Triage must still give exactly
  one group per bug, each of the bug's class.
- A campaign's own output on one library with several bugs: each finding is attributed by
  replaying it on every single-bug walker, and no cluster may hold findings of two bugs.

Corpus building and minimization run in child processes (the planted walkers fault on
purpose)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from walkfuzz.targets.minivm import planted
from walkfuzz.targets.minivm.planted_campaign import replay, triggers
from walkfuzz.triage.driver import triage
from walkfuzz.triage.inputs import discover

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from planted_corpus import COMBINED, TRIAGED_BUGS

pytestmark = pytest.mark.quality
CORPUS_SCRIPT = Path(__file__).resolve().parents[1] / "fixtures" / "planted_corpus.py"
WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
PER_BUG = 45
# The classes each bug's findings get (docs/triage.md), the typical one first: the first
# difference of a trace with its inlined scopes reversed is at the right frame's sp, a wrong
# method or bci; a walker that reads its sender from a popped frame's dead slots is elsewhere.
EXPECTED_CLASSES = {
    "missing-bounds-check": ("guard-page-overrun",),
    "frame-size-off-by-one": ("truncated",),
    "fp-cycle": ("hang-or-cycle",),
    "unchecked-method": ("wild-read",),
    "inlined-scope-order": ("wrong-method", "wrong-bci"),
    "nested-condition": ("wild-read",),
    "anchor-fp-slot": ("wrong-frame",),
    "ignores-ret": ("wrong-sender",),
}


def build(out: Path, *flags: str) -> list[list[str]]:
    done = subprocess.run([sys.executable, str(CORPUS_SCRIPT), str(out), str(PER_BUG), *flags],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return [line.split(" ") for line in done.stdout.splitlines()]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    out = tmp_path_factory.mktemp("planted-findings")
    walkers = {}
    for name, walker, count in build(out):
        assert int(count) == PER_BUG
        walkers[walker] = name
    return out, walkers


@pytest.fixture(scope="module")
def outcome(corpus: tuple[Path, dict[str, str]]):  # type: ignore[no-untyped-def]
    return triage(discover([corpus[0]]), runs=2, jobs=2)


def check_classes(bug: str, classes: list[str]) -> None:
    typical, *others = EXPECTED_CLASSES[bug]
    assert typical in classes and set(classes) <= {typical, *others}, (bug, classes)


def test_every_triaged_bug_has_its_classes() -> None:
    assert set(EXPECTED_CLASSES) == {bug.name for bug in TRIAGED_BUGS}


def test_one_group_per_planted_bug(corpus: tuple[Path, dict[str, str]], outcome) -> None:  # type: ignore[no-untyped-def]
    _, walkers = corpus
    assert outcome.findings == PER_BUG * len(TRIAGED_BUGS) >= 300
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
        check_classes(walkers[c.smallest.walker], c.classes)
        assert c.reliability == "reliable"


def test_one_library_with_several_bugs_gives_one_group_per_bug(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    out = tmp_path_factory.mktemp("combined-findings")
    cause, fired = {}, {}
    for sha1, bug, bugs_fired in build(out, "--combined"):
        cause[sha1], fired[sha1] = bug, bugs_fired.split(",")
    assert sorted(set(cause.values())) == sorted(COMBINED) and len(cause) == PER_BUG * len(
        COMBINED)
    assert all(fired[sha1] == [bug] for sha1, bug in cause.items()), (
        "an input triggers another bug's walker: the combined findings would have two causes")
    result = triage(discover([out]), runs=2, jobs=2)
    assert result.findings == len(cause) and not result.errors and not result.clean
    assert len({m.walker for c in result.clusters for m in c.members}) == 1
    bugs_of_groups = [{cause[Path(m.path).stem] for m in c.members} for c in result.clusters]
    assert all(len(bugs) == 1 for bugs in bugs_of_groups), bugs_of_groups
    assert sorted(b for bugs in bugs_of_groups for b in bugs) == sorted(COMBINED)
    for bugs, c in zip(bugs_of_groups, result.clusters, strict=True):
        check_classes(bugs.pop(), c.classes)


# Bugs a layouts campaign from no seeds finds within seconds, planted in one library: two
# invalid traces whose first wrong frame has the same classes of field (ignores-ret steps to a
# wrong sender, inlined-scope-order decodes the right frame wrongly). No crash bug with them:
# ignores-ret's wrong step can lead a walk to where a crash bug faults, a finding that needs
# both bugs and that no single-bug walker reproduces as it is.
CAMPAIGN_BUGS = ("ignores-ret", "inlined-scope-order")
CAMPAIGN_RUNS = 300_000
CAMPAIGN_SEEDS = 4  # libFuzzer seeds tried until the campaign found both bugs


def _campaign(library: Path, out: Path, seed: int) -> list[Path]:
    done = subprocess.run([str(WALKFUZZ), "fuzz", "--target", "minivm", "--harness", "layouts",
                           "--walker", str(library), "--no-seeds", "--runs", str(CAMPAIGN_RUNS),
                           "-j", "1", "--out", str(out), "--", f"-seed={seed}"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return sorted(p.resolve() for p in (out / "findings").glob("*/*.bin"))


def test_a_campaign_on_one_library_with_several_bugs_triages_them_apart(tmp_path: Path) -> None:
    bugs = [planted.planted_bug(name) for name in CAMPAIGN_BUGS]
    library = planted.build_combined(bugs, "cov")
    singles = {bug.name: planted.build(bug, "plain") for bug in bugs}
    for seed in range(1, CAMPAIGN_SEEDS + 1):
        out = tmp_path / f"campaign-{seed}"
        files = _campaign(library, out, seed)
        causes: dict[Path, set[str]] = {f: set() for f in files}
        for name, walker in singles.items():
            for path, outcomes in replay(walker, "layouts", files).items():
                if triggers(outcomes):
                    causes[path].add(name)
        cause = {path: names.pop() for path, names in causes.items() if len(names) == 1}
        if len(set(cause.values())) >= 2:
            break
    assert len(set(cause.values())) >= 2, (f"{CAMPAIGN_SEEDS} campaigns did not find both "
                                           f"of {CAMPAIGN_BUGS}", causes)
    result = triage(discover([out]), runs=1, jobs=2)
    assert not result.errors and result.findings == len(files)
    bugs_of_clusters = [{cause[p] for m in c.members if (p := Path(m.path).resolve()) in cause}
                        for c in result.clusters]
    assert all(len(found) <= 1 for found in bugs_of_clusters), bugs_of_clusters
    assert set().union(*bugs_of_clusters) == set(CAMPAIGN_BUGS), bugs_of_clusters


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
        # the result is a case (harness bytes) or, when no case got below the input, the
        # generator harness's own bytes shrunk: the harness minimize names replays it
        harness = re.search(r"harness (\S+);", done.stdout)
        assert harness is not None, done.stdout
        again = subprocess.run([str(WALKFUZZ), "triage", str(out), "--walker", member.walker,
                                "--harness", harness.group(1), "--json",
                                str(tmp_path / "again.json"), "--runs", "1"],
                               capture_output=True, text=True, timeout=60)
        assert again.returncode == 1, again.stderr  # the finding, minimized
        doc = json.loads((tmp_path / "again.json").read_text())
        replayed = [s["signature"] for g in doc["groups"] for s in g["signatures"]]
        assert replayed == [member.signature]
