"""Campaigns find what they should, and what it took: each planted-bug walker
(fuzz/targets/minivm/planted.py)
is found by a `walkfuzz fuzz` campaign in a child process
(walkfuzz.targets.minivm.planted_campaign.hunt_bug:
-j 1, libFuzzer seed WALKFUZZ_QUALITY_SEED, default 1), with the right finding kind; the
reference walker gives no finding in a full budget; coverage feedback is what finds the deep
bugs; SIGKILL and resume on a real harness lose nothing.

The search, not the seeds, finds each bug: a campaign imports corpora/<harness>/ only for a
bug that none of those seeds triggers (each seed replayed through the planted walker in a child
process), and starts from no seeds for the bugs the shipped seeds do trigger
(frame-size-off-by-one, inlined-scope-order, queue-bookkeeping, and the api harness's
rewind-keeps-scope, name-past-buffer, unchecked-info-handle). frame-size-off-by-one is
found even then by libFuzzer's first input: its campaign checks the plumbing, not the search.

Budgets are inputs, never seconds. A campaign that must find its bug runs until the first
finding of it, capped at RUNS_CAP[bug] inputs: at least five times the most that any of eight
libFuzzer seeds needed, measured with tools/planted_times.py on this 2-core machine while other
builds and test suites ran on it (load average 5-8; figures and commands in docs/fuzzing.md).
A campaign that must find nothing runs CLEAN_RUNS inputs. The plain build, without coverage
feedback, gets BLIND_FACTOR times the inputs the guided campaign needed (at least BLIND_MIN)
and must not find the deep bugs: measured, it found none of them in 10M inputs
(nested-condition, anchor-fp-slot) or 3M (wrapped-negative-index), three seeds each.

A stored hang that does not hang again on replay is set aside. The guard's watchdog used to
count wall time, and a walk descheduled for 200 ms on a loaded machine was stored as a hang;
it counts CPU time now, and the check stays as the cheap second line it is.

Seconds and inputs to each first finding are printed at the end of the run (tests/quality/
conftest.py) and written to build/quality-times.json.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from walkfuzz.engine.corpus import entries
from walkfuzz.findings.store import load_findings
from walkfuzz.targets.minivm import planted
from walkfuzz.targets.minivm.planted_campaign import TIMES_FILE, Hunt, hunt_bug, replay, triggers

pytestmark = pytest.mark.quality

ROOT = Path(__file__).resolve().parents[2]
WALKFUZZ = [sys.executable, "-m", "walkfuzz.cli"]
SEED = int(os.environ.get("WALKFUZZ_QUALITY_SEED", "1"))
RUNS_CAP = {
    "missing-bounds-check": 1_000_000,
    "frame-size-off-by-one": 100_000,
    "fp-cycle": 5_000_000,
    "unchecked-method": 1_000_000,
    "inlined-scope-order": 500_000,
    "nested-condition": 15_000_000,
    "anchor-fp-slot": 5_000_000,
    "wrapped-negative-index": 4_000_000,
    "queue-bookkeeping": 1_000_000,
    "ignores-ret": 100_000,
    "depth-off-by-one": 250_000,  # 2.0k-43k inputs (libFuzzer seeds 1-3, four runs)
    "depth-reported-only": 250_000,  # 13k-49k inputs (libFuzzer seeds 1-3, four runs)
    "rewind-keeps-scope": 500_000,
    "name-past-buffer": 250_000,
    "unchecked-info-handle": 350_000,
    "pool-wraps-early": 150_000,  # 18.8k-29.4k inputs (libFuzzer seeds 1-8, no seeds)
}
CLEAN_RUNS = 100_000
HARNESSES = sorted({b.harness for b in planted.PLANTED_BUGS})
PARALLEL = 2  # campaigns at a time (-j 1 each), as measured
DEEP = ("nested-condition", "anchor-fp-slot", "wrapped-negative-index")
BLIND_FACTOR = 3
BLIND_MIN = 500_000


class Hunts:
    """Each campaign once per module, PARALLEL at a time in the background (a guided hunt
    serves two tests); the must-find and must-not-find campaigns start with the module."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pool = ThreadPoolExecutor(PARALLEL)
        self.started: dict[tuple[str, str], Future[Hunt]] = {}
        self.lock = threading.Lock()  # start() is called from the pool's threads too
        self.closed = False

    def start(self, bug: planted.PlantedBug, flavour: str = "cov",
              runs_cap: int | None = None) -> Future[Hunt]:
        key = (bug.name, flavour)
        with self.lock:
            if key not in self.started:
                cap = runs_cap if runs_cap is not None else RUNS_CAP[bug.name]
                self.started[key] = self.pool.submit(
                    hunt_bug, bug, self.root / f"{bug.name}-{flavour}", cap, flavour=flavour,
                    seeds=bug.seeded, libfuzzer_seed=SEED)
            return self.started[key]

    def start_blind_after(self, bug: planted.PlantedBug) -> None:
        """The blind campaign of a deep bug, queued once its guided one found the bug (its
        budget depends on it), not when its test comes: it runs beside the other campaigns."""
        def queue(guided: Future[Hunt]) -> None:
            if self.closed or guided.cancelled() or guided.exception() is not None:
                return
            if guided.result().execs is not None:
                self.start(bug, "plain", blind_budget(guided.result()))

        self.start(bug).add_done_callback(queue)

    def run(self, bug: planted.PlantedBug, flavour: str = "cov",
            runs_cap: int | None = None) -> Hunt:
        return self.start(bug, flavour, runs_cap).result()

    def rows(self) -> list[dict[str, object]]:
        return [f.result().row() for f in self.started.values()
                if f.done() and not f.cancelled() and f.exception() is None]


def blind_budget(guided: Hunt) -> int:
    """Inputs of the plain build's campaign: BLIND_FACTOR times what the guided one needed."""
    assert guided.execs is not None
    return max(BLIND_FACTOR * guided.execs, BLIND_MIN)


def reference_for(harness: str) -> planted.PlantedBug:
    return dataclasses.replace(planted.REFERENCE, name=f"reference-{harness}", harness=harness)


# autouse: the campaigns start with the module's first test, and run beside the seed replays
# of the tests before the first that waits for one (one process each: a core would idle).
@pytest.fixture(scope="module", autouse=True)
def hunts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hunts]:
    found = Hunts(tmp_path_factory.mktemp("hunts"))
    for name in sorted(RUNS_CAP, key=lambda n: -RUNS_CAP[n]):  # the long ones first
        found.start(planted.planted_bug(name))
    for harness in HARNESSES:
        found.start(reference_for(harness), runs_cap=CLEAN_RUNS)
    for name in DEEP:
        found.start_blind_after(planted.planted_bug(name))
    yield found
    found.closed = True
    found.pool.shutdown(cancel_futures=True)
    TIMES_FILE.parent.mkdir(parents=True, exist_ok=True)
    TIMES_FILE.write_text(json.dumps({
        "command": "pytest -m quality tests/quality/test_planted.py",
        "libfuzzer_seed": SEED, "parallel": PARALLEL, "load_average": os.getloadavg(),
        "hunts": found.rows()}, indent=1))


def test_every_planted_bug_has_a_cap() -> None:
    assert set(RUNS_CAP) == {b.name for b in planted.PLANTED_BUGS}


@pytest.mark.parametrize("bug", planted.PLANTED_BUGS, ids=lambda b: b.name)
def test_the_campaign_does_not_start_with_the_bug(bug: planted.PlantedBug) -> None:
    """The shipped seeds of the bug's harness, replayed through its walker: a campaign that
    imports them must not get the bug for free; one that starts from nothing does so because
    they do trigger it."""
    seeds = entries(ROOT / "corpora" / bug.harness)
    outcomes = replay(planted.build(bug, "plain"), bug.harness, seeds, runs=2)
    triggered = sorted(path.name for path, runs in outcomes.items() if triggers(runs))
    assert len(outcomes) == len(seeds) >= 32
    if bug.seeded:
        assert triggered == [], f"shipped seeds trigger {bug.name}: {triggered}"
    else:
        assert triggered, (f"no shipped seed triggers {bug.name}: its campaign can start from "
                           "them (seeded=True)")


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_reference_walker_runs_every_shipped_seed_clean(harness: str) -> None:
    seeds = entries(ROOT / "corpora" / harness)
    outcomes = replay(planted.build(planted.REFERENCE, "plain"), harness, seeds, runs=2)
    assert [p.name for p, runs in outcomes.items() if triggers(runs)] == []


@pytest.mark.parametrize("bug", planted.PLANTED_BUGS, ids=lambda b: b.name)
def test_planted_bug_is_found_with_its_kind(bug: planted.PlantedBug, hunts: Hunts) -> None:
    hunt = hunts.run(bug)
    assert hunt.found is not None, (f"{bug.name} not found in {hunt.total_execs} inputs (cap "
                                    f"{hunt.runs_cap}); other findings {hunt.others}, hangs "
                                    f"set aside {hunt.ignored}")
    assert hunt.found.kind in bug.kinds
    assert hunt.found.details["walker"] == str(planted.build(bug, "cov"))
    assert hunt.execs is not None and 0 < hunt.execs <= hunt.total_execs


@pytest.mark.parametrize("harness", HARNESSES)
def test_reference_walker_gives_no_finding_in_a_full_budget(harness: str, hunts: Hunts) -> None:
    hunt = hunts.run(reference_for(harness), runs_cap=CLEAN_RUNS)
    assert hunt.others == [], f"the reference walker has findings: {hunt.others}"
    assert hunt.total_execs >= CLEAN_RUNS  # it ran its whole budget


@pytest.mark.parametrize("name", DEEP)
def test_coverage_feedback_finds_what_blind_mutation_does_not(name: str, hunts: Hunts) -> None:
    """Each condition of the bug is a branch of its own: the instrumented build keeps every
    input that gets one step further. The plain build, same seeds and libFuzzer seed, keeps
    nothing (libFuzzer sees no coverage) and does not meet them all at once in several times
    the inputs the guided campaign needed."""
    bug = planted.planted_bug(name)
    guided = hunts.run(bug)
    assert guided.found is not None and guided.execs is not None
    budget = blind_budget(guided)
    blind = hunts.run(bug, "plain", runs_cap=budget)
    assert blind.found is None, f"found without coverage feedback: {blind.found}"
    assert blind.total_execs >= budget


def test_coverage_grows_on_the_instrumented_build(tmp_path: Path) -> None:
    run = subprocess.run(
        [*WALKFUZZ, "fuzz", "--harness", "layouts", "--out", str(tmp_path / "out"),
         "--no-seeds", "--runs", "100000", "--", f"-seed={SEED}"],
        capture_output=True, text=True, cwd=ROOT, timeout=1800)
    assert run.returncode == 0, run.stderr[-2000:]
    coverage = [v for _, v in
                json.loads((tmp_path / "out" / "report.json").read_text())["series"]["coverage"]]
    first = next(v for v in coverage if v > 0)
    assert coverage[-1] > first, coverage


def test_sigkill_and_resume_lose_nothing_on_a_real_harness(tmp_path: Path) -> None:
    """About SIGKILL, not the search: the shipped seeds trigger inlined-scope-order at once."""
    out = tmp_path / "out"
    walker = planted.build(planted.planted_bug("inlined-scope-order"), "cov")
    first = subprocess.Popen(
        [*WALKFUZZ, "fuzz", "--harness", "layouts", "--walker", str(walker), "--out", str(out),
         "--runs", "100000000", "-j", "2"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300  # until found, with a generous cap
        while time.monotonic() < deadline and not list(out.glob("findings/*/*.json")):
            time.sleep(0.5)
        time.sleep(2)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    corpus = {p.name for p in (out / "corpus").iterdir()}
    findings = {p.relative_to(out) for p in out.glob("findings/*/*")}
    assert findings, "no finding before the kill"
    time.sleep(1)  # the workers follow their supervisor (PR_SET_PDEATHSIG)
    resumed = subprocess.run(
        [*WALKFUZZ, "fuzz", "--harness", "layouts", "--walker", str(walker), "--out", str(out),
         "-j", "2", "--runs", "20000"],
        capture_output=True, text=True, cwd=ROOT, timeout=1800)
    assert resumed.returncode == 1 and "resuming campaign" in resumed.stderr
    assert corpus <= {p.name for p in (out / "corpus").iterdir()}
    assert findings <= {p.relative_to(out) for p in out.glob("findings/*/*")}
    sessions = json.loads((out / "campaign.json").read_text())["sessions"]
    assert [s["status"] for s in sessions] == ["killed", "completed"]
    assert load_findings(out)
