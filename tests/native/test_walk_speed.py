"""`walkfuzz bench` (walkfuzz.targets.minivm.walk_speed): stacks of the shape they are named for,
wrong walkers reported and not timed, figures for the walkers that walk right."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from walkfuzz.targets.minivm import planted, spec, walk_speed
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import native as case_native
from walkfuzz.targets.minivm.vm_model import FrameKind


@pytest.fixture(scope="module")
def scope_order_walker() -> str:
    """A walker that reports inlined scopes outermost first: wrong on the mixed stack."""
    return str(planted.build(planted.planted_bug("inlined-scope-order"), "plain"))


@pytest.mark.parametrize("name", sorted(walk_speed.STACKS))
def test_each_stack_is_deep_and_of_its_kind(name: str) -> None:
    stack = walk_speed.STACKS[name]
    sps = walk_speed.generate(stack)
    steps = [s for s in spec.walk(dec.decode(case_native.encode_mapped(), name)).steps
             if s.code is None]
    assert [s.frame.sp for s in steps] == sps
    java = [s for s in steps if s.reported > 0]
    assert len(java) >= 1000
    if stack.kind is None:
        assert {FrameKind.INTERPRETED, FrameKind.COMPILED} <= {s.kind for s in java}
        assert max(s.reported for s in java) > 1  # inlined scopes too
    else:
        assert all((s.kind, s.reported) == (stack.kind, stack.scopes) for s in java)


def test_a_wrong_walker_is_reported_and_not_timed(scope_order_walker: str) -> None:
    walkers = {"reference": case_native.load_walker(None),
               "scope-order": case_native.load_walker(scope_order_walker)}
    t = walk_speed.measure(walk_speed.STACKS["mixed"], walkers, rounds=1)
    reference, wrong = t.walkers
    truth = spec.walk(dec.decode(case_native.encode_mapped(), "mixed"))
    assert reference.wrong is None
    assert reference.returned == len(truth.frames)
    assert reference.ns_per_walk is not None and reference.ns_per_walk > 0
    assert t.floor_ns > 0 and t.physical == len([s for s in truth.steps if s.code is None])
    assert wrong.ns_per_walk is None
    assert wrong.wrong is not None and wrong.wrong.startswith("invalid-trace")
    assert t.rounds == 1


class StepClock:
    """A monotonic clock that moves `step` seconds at every reading: the rounds a measurement
    takes depend on the seconds asked, not on how busy the machine is."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def monotonic(self) -> float:
        self.now += self.step
        return self.now


def test_rounds_go_on_for_the_seconds_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    walkers = {"reference": case_native.load_walker(None)}
    start = time.monotonic()
    t = walk_speed.measure(walk_speed.STACKS["compiled"], walkers, rounds=1, seconds=0.3)
    assert time.monotonic() - start >= 0.3
    assert t.rounds >= 1  # on a machine so busy that one round takes 0.3 s, one is all
    # Past the rounds asked, rounds go on while the time is not up and stop when it is: the
    # deadline is 0.1 + 0.35; after the first round the checks read 0.2, 0.3 and 0.4 (a round
    # each), then 0.5 (the end).
    monkeypatch.setattr(walk_speed, "time", StepClock(0.1))
    assert walk_speed.measure(walk_speed.STACKS["compiled"], walkers, rounds=1,
                              seconds=0.35).rounds == 4
    assert walk_speed.measure(walk_speed.STACKS["compiled"], walkers, rounds=2,
                              seconds=0.0).rounds == 2


@pytest.mark.parametrize("seconds", ["-1", "abc", "nan", "601"])
def test_cli_refuses_a_bad_seconds_value_in_one_line(seconds: str) -> None:
    bad = subprocess.run([sys.executable, "-m", "walkfuzz.cli", "bench", "--seconds", seconds],
                         capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stdout == ""
    [line] = bad.stderr.strip().splitlines()
    assert "--seconds" in line and repr(seconds) in line


def test_cli_times_a_library_and_exits_1_when_one_walks_wrongly(
        scope_order_walker: str) -> None:
    reference_library = str(planted.build(planted.REFERENCE, "plain"))
    ok = subprocess.run([sys.executable, "-m", "walkfuzz.cli", "bench", "--stack", "compiled",
                         "--rounds", "1", "--seconds", "0", "--walker", reference_library,
                         "--json"],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    [compiled] = json.loads(ok.stdout)
    assert [w["walker"] for w in compiled["walkers"]] == ["reference", reference_library]
    assert all(w["wrong"] is None and w["ns_per_physical_frame"] > 0
               for w in compiled["walkers"])
    bad = subprocess.run([sys.executable, "-m", "walkfuzz.cli", "bench", "--stack", "mixed",
                          "--rounds", "1", "--seconds", "0", "--walker", scope_order_walker],
                         capture_output=True, text=True)
    assert bad.returncode == 1, bad.stderr
    assert f"{scope_order_walker} not timed: walks this stack wrongly, invalid-trace" in bad.stdout
