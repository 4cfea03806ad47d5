"""Live stress findings kept as regressions (corpora/stress/regressions/, minimized live
captures of planted-bug walkers): each is a case with EXPECTED, shows a live signature with a
planted walker (the reference walker gives none: tests/unit/test_triage_regressions.py), and
minimizing it again keeps that signature and the reference walker clean. Also: a signature
key as the C side counts it names the signature of the samples counted under it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from walkfuzz.findings.hits import RunClock
from walkfuzz.targets.minivm.case.expected import has_expected
from walkfuzz.targets.minivm.inputs import LIVE_HARNESS, sniff_harness
from walkfuzz.targets.minivm.live.hits import hits_doc
from walkfuzz.targets.minivm.live.signature import key_signature, live_finding
from walkfuzz.targets.minivm.planted import build, planted_bug
from walkfuzz.targets.minivm.replayer import MinivmReplayer
from walkfuzz.targets.table import CORPORA_DIR

LIVE_REGRESSIONS = sorted((CORPORA_DIR / "stress" / "regressions").iterdir())
BUGS = ("frame-size-off-by-one", "inlined-scope-order")
WALKFUZZ = Path(sys.executable).with_name("walkfuzz")


@pytest.fixture(scope="module")
def replayer() -> MinivmReplayer:
    return MinivmReplayer()


def _live_signature(path: Path, replayer: MinivmReplayer) -> tuple[str, str] | None:
    """(walker, signature) of the first planted walker that shows a live finding."""
    for bug in BUGS:
        walker = str(build(planted_bug(bug), "plain"))
        replay = replayer.run_as(path.read_bytes(), LIVE_HARNESS, walker, str(path))
        if replay.finding is not None:
            return walker, replay.finding.signature
    return None


def test_there_are_live_regressions_of_both_kinds() -> None:
    assert len(LIVE_REGRESSIONS) >= 3
    data = [p.read_bytes() for p in LIVE_REGRESSIONS]
    assert all(has_expected(d) for d in data)
    assert {sniff_harness(d, "x") for d in data} == {LIVE_HARNESS}


@pytest.mark.parametrize("path", LIVE_REGRESSIONS, ids=lambda p: p.name[:12])
def test_a_planted_walker_shows_a_live_signature(path: Path, replayer: MinivmReplayer) -> None:
    found = _live_signature(path, replayer)
    assert found is not None and ".check_live-" in found[1], found


def test_minimizing_a_live_regression_keeps_it(tmp_path: Path, replayer: MinivmReplayer) -> None:
    path = LIVE_REGRESSIONS[0]
    found = _live_signature(path, replayer)
    assert found is not None
    walker, signature = found
    out = tmp_path / "min.case"
    done = subprocess.run([str(WALKFUZZ), "minimize", str(path), "--walker", walker, "-o",
                           str(out), "--budget", "2"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert signature in done.stdout and out.stat().st_size <= path.stat().st_size
    assert replayer.run_as(out.read_bytes(), LIVE_HARNESS, "reference", str(out)).finding is None


@pytest.mark.parametrize(("cls", "fault_pc", "shape"), [
    (2, 0, (2, 3, 1)), (5, 0, (4,)), (8, 0, ()), (7, 0, (1, 2))])
def test_a_signature_key_names_the_signature_of_its_samples(
        cls: int, fault_pc: int, shape: tuple[int, ...]) -> None:
    whole = live_finding(cls, fault_pc, shape, b"case", {})
    assert key_signature(cls, fault_pc, shape[-1] if shape else 0).signature == whole.signature


def test_hits_are_seconds_since_the_start_and_wall_time() -> None:
    clock = RunClock(100.0, monotonic=lambda: 100.0, wall=lambda: 1_000_000.0)
    doc = hits_doc(7, 101_500_000_000, 103_000_000_000, clock)
    assert doc == {"count": 7, "first_seen_s": 1.5, "first_seen_at": 1_000_001.5,
                   "last_seen_s": 3.0, "last_seen_at": 1_000_003.0}
