"""walkfuzz.targets.minivm.planted_campaign's bookkeeping: inputs to a finding from a worker's log,
which replays count as a bug, and a stalled campaign named instead of waited on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from walkfuzz.core.errors import UserError
from walkfuzz.targets.minivm import planted_campaign as pc

SIG = "crash.walker_f+0x10.compiled.0123abcd"


def log(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "log"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_inputs_to_a_finding_are_the_next_count_after_it(tmp_path: Path) -> None:
    path = log(tmp_path, "=== walkfuzz: worker 0 life 1: ...", "#2\tINITED cov: 5 ft: 5",
               "#100\tNEW    cov: 9 ft: 9", f"walkfuzz: crash finding saved in /o/findings/{SIG}",
               "#131\tNEW    cov: 10 ft: 10", "#500\tNEW    cov: 11 ft: 11")
    assert pc.execs_to(path, SIG) == 131
    assert pc.execs_to(path, "hang.other.none.00000000") is None


def test_inputs_of_earlier_lives_count_and_the_final_stat_closes_a_life(tmp_path: Path) -> None:
    path = log(tmp_path, "=== walkfuzz: worker 0 life 1: ...", "#64\tpulse  cov: 5 ft: 5",
               "stat::number_of_executed_units: 70", "=== walkfuzz: worker 0 life 2: ...",
               "#8\tNEW    cov: 9 ft: 9", f"walkfuzz: crash finding saved in /o/findings/{SIG}",
               "stat::number_of_executed_units: 9")
    assert pc.execs_to(path, SIG) == 70 + 9


@pytest.mark.parametrize(("kinds", "real"), [
    ([None, None], False),
    (["hang", None], False),          # a walk not scheduled for its budget
    (["hang", "hang"], True),
    ([None, "crash"], True),
    (["invalid-trace", "invalid-trace"], True),
])
def test_which_replays_show_a_bug(kinds: list[str | None], real: bool) -> None:
    assert pc.triggers([pc.Outcome(k, None if k is None else "x") for k in kinds]) is real


def test_a_campaign_that_runs_no_input_is_named_stalled(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "stats.jsonl").write_text(json.dumps({"execs": 5}) + "\n")
    progress = pc._check_progress(tmp_path, (-1, 0.0))
    assert progress[0] == 5
    assert pc._check_progress(tmp_path, progress) == progress
    monkeypatch.setattr(pc, "STALL", 0.0)
    with pytest.raises(UserError, match=r"stalled: no input finished .* at 5 inputs"):
        pc._check_progress(tmp_path, progress)
