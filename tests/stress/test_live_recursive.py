"""Live stress past the depth limit: the `recursive` workload recurses (Java -> native -> Java)
past WF_WALK_MAX_DEPTH physical frames and back, run as a user runs it (`walkfuzz stress
--workload recursive`, bounded by --walks). The reference walker, which stops at the limit
with ASGST_WF_DEPTH_LIMIT, walks every sample exactly, some of them ending at the limit;
walkers whose limit is wrong (planted: one frame too many, or only reported frames counted)
give invalid traces, saved as cases past the depth limit (the whole stack, the whole expected
trace) that the report's reproducer replays offline to the same finding, and that the
reference walker replays clean."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from walkfuzz.core.exit_status import BAD_INPUT, CLEAN, FINDINGS
from walkfuzz.targets.minivm.case.decode import decode
from walkfuzz.targets.minivm.planted import build, planted_bug

pytestmark = pytest.mark.stress

WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
WALKS = "1000"
TIMEOUT = 600  # a busy machine makes a run longer, never shorter of walks
DEPTH_LIMIT = "ASGST_WF_DEPTH_LIMIT"
CAPTURE_STACK = 65536  # WF_LIVE_CAPTURE_STACK: a deeper stack goes into the deep buffer


def stress(out: Path, mode: str, *extra: str) -> tuple[int, dict[str, Any]]:
    """One `walkfuzz stress` of the recursive workload: its exit status and report."""
    done = subprocess.run(
        [str(WALKFUZZ), "stress", "--target", "minivm", "--workload", "recursive", "--mode",
         mode, "--threads", "1" if mode == "thread" else "2", "--walks", WALKS,
         "--duration", "300s", "--baseline", "0", "--out", str(out), *extra],
        capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode in (CLEAN, FINDINGS), done.stderr
    return done.returncode, json.loads((out / "report.json").read_text())


@pytest.mark.parametrize("mode", ["signal", "thread"])
def test_reference_walker_stops_at_the_limit_exactly(mode: str, tmp_path: Path) -> None:
    status, report = stress(tmp_path, mode)
    counters = report["counters"]
    assert status == CLEAN, counters["invalid_by_class"]
    assert counters["invalid"] == 0 and counters["faults"] == 0 and counters["hangs"] == 0
    assert counters["exact"] == counters["walked"] >= int(WALKS)
    # samples above the limit (the walk ends there) and below it (the walk ends at the root)
    assert counters["end_codes"].get(DEPTH_LIMIT, 0) > 0, counters["end_codes"]
    assert counters["end_codes"].get("ASGST_NO_FRAME", 0) > 0, counters["end_codes"]


@pytest.mark.parametrize(("bug", "mode"), [("depth-off-by-one", "signal"),
                                           ("depth-reported-only", "thread")])
def test_a_walker_with_a_wrong_limit_gives_invalid_traces(bug: str, mode: str,
                                                          tmp_path: Path) -> None:
    walker = build(planted_bug(bug), "plain")
    status, report = stress(tmp_path, mode, "--walker", str(walker))
    counters = report["counters"]
    assert status == FINDINGS
    assert counters["invalid"] > 0, counters["end_codes"]
    assert counters["faults"] == 0 and counters["hangs"] == 0
    saved = report["findings"]
    # every finding the report lists has its case: one per key and worker goes deep
    assert saved and all(f["examples"] for f in saved), saved
    repeats = []
    for group in saved:
        for path in group["examples"]:   # every stored case is a sample past the bound
            details = json.loads(Path(path).with_suffix(".json").read_text())["details"]
            assert details["stack_bytes"] > CAPTURE_STACK and details["stack_dropped"] == 0
            case = decode(Path(path).read_bytes())   # the Python codec reads what C wrote
            assert case.expected is not None and len(case.expected.frames) > 480
            repeats.append(case.stack_run)
        argv = shlex.split(group["reproducer"])
        assert argv[:2] == ["walkfuzz", "replay"] and str(walker) in argv, argv
        replayed = replay(argv)
        assert replayed.returncode == FINDINGS, replayed.stderr
        assert f"finding: {group['kind']} {group['signature']}" in replayed.stdout
        # the reference walker walks the same case as the live oracle expected
        walker_at = argv.index("--walker")
        clean = replay(argv[:walker_at] + argv[walker_at + 2:])
        assert clean.returncode == CLEAN, clean.stdout + clean.stderr
        assert "live oracle: exact" in clean.stdout, clean.stdout
    # the recursion's levels are alike: its cases carry the stack as a repeated run
    assert any(r is not None and r.times > 100 for r in repeats), repeats


def replay(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """A printed `walkfuzz replay ...` command, run as a user runs it."""
    return subprocess.run([str(WALKFUZZ), *argv[1:]], capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)


def test_queue_mode_refuses_the_recursive_workload(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(WALKFUZZ), "stress", "--target", "minivm", "--workload", "recursive", "--mode",
         "queue", "--walks", WALKS, "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == BAD_INPUT
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "recursive" in lines[0] and "queue" in lines[0], done.stderr
