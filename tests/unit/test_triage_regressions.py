"""Every file in corpora/<harness>/regressions/ is a bug once found (a minimized reproducer
of a planted-bug walker, or of a walker bug fixed since): the reference walker must walk each
one without a finding, through the same hot path a campaign uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from walkfuzz.targets.minivm.replayer import MinivmReplayer
from walkfuzz.targets.table import CORPORA_DIR

REGRESSIONS = sorted(p for p in CORPORA_DIR.glob("*/regressions/*") if p.is_file())


@pytest.fixture(scope="module")
def replayer() -> MinivmReplayer:
    return MinivmReplayer()


def test_there_are_regression_inputs() -> None:
    assert len(REGRESSIONS) >= 5


@pytest.mark.parametrize("path", REGRESSIONS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_reference_walker_gives_no_finding(path: Path, replayer: MinivmReplayer) -> None:
    harness = path.parent.parent.name
    replay = replayer.run_as(path.read_bytes(), harness, "reference", str(path))
    assert replay.finding is None, (replay.finding.signature if replay.finding else None)
