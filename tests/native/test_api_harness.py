"""The `api` harness (wf_api_fuzz.h): its one C call runs operation sequences clean on the
reference walker and finds each planted bug of the iterator and info calls with the check that
names the operation; the shipped seeds replay clean, as a user replays them; a short campaign
on the reference walker ends clean."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.native.reproducers import ROOT, walkfuzz
from walkfuzz.core.native import load
from walkfuzz.engine.corpus import entries
from walkfuzz.targets.minivm import planted
from walkfuzz.targets.minivm.finding import to_finding
from walkfuzz.targets.minivm.harness import HARNESSES
from walkfuzz.targets.minivm.replayer import MinivmReplayer
from walkfuzz.targets.minivm.walker_library import load_walker

API = HARNESSES["api"]
INPUTS = 3000
SEEDS = ROOT / "corpora" / "api"


def _inputs(seed: int, count: int = INPUTS) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(rng.choice((256, 512, 1024))) for _ in range(count)]


Found = Counter[tuple[str, str, str]]


def _run_all(walker: Any, inputs: list[bytes]) -> tuple[Found, Counter[str]]:
    """(kind, check, op) of every finding, and the ops the inputs ran."""
    ffi, lib = load()
    case = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    r = ffi.new("wf_run_result *")
    found: Found = Counter()
    ops: Counter[str] = Counter()
    for data in inputs:
        if lib.wf_worker_run(API, walker, data, len(data), case, r):
            f = to_finding(ffi, lib, r, data, "api", "planted")
            found[(f.kind, str(f.details["check"]), str(f.details["api_op_name"]))] += 1
        for i in range(lib.wf_api_fuzz_op_count()):
            ops[ffi.string(lib.wf_api_op_name(lib.wf_api_fuzz_op(i))).decode()] += 1
    return found, ops


def test_every_operation_runs_clean_on_the_reference_walker() -> None:
    _, lib = load()
    found, ops = _run_all(lib.wf_walker_reference(), _inputs(1))
    assert found == Counter()
    names = {"next-frame", "next-frames", "rewind", "state", "method-info", "class-info",
             "from-frame", "nested", "capabilities", "thread-state", "return", "null-info"}
    assert set(ops) == names, ops


# (bug, the findings it must show: kind, check, operation)
PLANTED = [
    ("rewind-keeps-scope", {("invalid-trace", "api-next-frame", "next-frame"),
                            ("invalid-trace", "api-next-frame", "next-frames")}),
    ("name-past-buffer", {("contract", "api-name-buffer", "method-info")}),
    ("unchecked-info-handle", {("crash", "none", "method-info"), ("crash", "none", "class-info"),
                               ("contract", "api-method-info", "method-info"),
                               ("contract", "api-class-info", "class-info")}),
]


@pytest.mark.parametrize(("bug", "expected"), PLANTED, ids=[b for b, _ in PLANTED])
def test_planted_bug_is_found_at_its_operation(bug: str, expected: set[tuple[str, ...]]) -> None:
    walker = load_walker(str(planted.build(planted.planted_bug(bug), "plain")))
    found, _ = _run_all(walker, _inputs(2))
    assert found, f"{bug}: no finding in {INPUTS} inputs"
    assert set(found) <= expected, found


def test_shipped_seeds_replay_clean_in_process() -> None:
    seeds = entries(SEEDS)
    assert len(seeds) >= 32
    replayer = MinivmReplayer()
    assert [p.name for p in seeds
            if replayer.run_as(p.read_bytes(), "api", "reference", str(p)).finding] == []


def test_a_seed_replays_as_an_api_input_from_where_it_lies() -> None:
    seed = entries(SEEDS)[0]
    done = walkfuzz("replay", str(seed))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "input of the api harness" in done.stderr
    assert "finding: none" in done.stdout


def test_a_short_campaign_on_the_reference_walker_is_clean(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = walkfuzz("fuzz", "--harness", "api", "--runs", "20000", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["findings"] == []
    assert (report["meta"]["mode"], report["meta"]["status"]) == ("api", "completed")
    assert report["series"]["execs"][-1][1] >= 20000  # it ran its whole budget
