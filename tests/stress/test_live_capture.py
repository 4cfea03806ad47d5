"""Every live finding is a replayable case, saved when it happens (docs/stress.md "Findings").

A planted-bug walker's live findings (signal mode: frame-size-off-by-one, inlined-scope-order;
queue mode: frame-size-off-by-one) are saved as case files while the run goes on; each one
replays, every time, to the live finding's signature (kind, `check:live-<class>`, shape) and
first differing frame. The report's reproducer command runs and shows that signature;
--stop-on-first stops at the first finding, with it on disk. Budgets are in walks and "until
found" with generous caps, never in what a busy machine delivers per second."""

from __future__ import annotations

import json
import math
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from walkfuzz.findings.store import load_findings
from walkfuzz.targets.minivm.inputs import LIVE_HARNESS
from walkfuzz.targets.minivm.live.options import StressOptions
from walkfuzz.targets.minivm.live.runner import run_minivm_stress
from walkfuzz.targets.minivm.planted import build, planted_bug
from walkfuzz.targets.minivm.replayer import MinivmReplayer

pytestmark = pytest.mark.stress

REPLAYS = 100          # replays of saved cases per planted bug and mode, spread over them
WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
FOUND_CAP_SECONDS = 120.0   # "until found": how long a test waits for a first finding at most


def live(out: Path, bug: str, mode: str, **kw: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {"interval_ns": 100_000, "threads": 2,
                                "duration_ns": 1_000_000_000, "baseline_ns": 0,
                                "workload": "mixed", **kw}
    options = StressOptions(mode=mode, walker=str(build(planted_bug(bug), "plain")),
                            out=str(out), **settings)
    return run_minivm_stress(options)


@pytest.mark.parametrize(("bug", "mode"), [("frame-size-off-by-one", "signal"),
                                           ("inlined-scope-order", "signal"),
                                           ("frame-size-off-by-one", "queue")])
def test_planted_findings_replay_to_their_signature_every_time(
        bug: str, mode: str, tmp_path: Path, file_result: Any) -> None:
    result = live(tmp_path, bug, mode)
    file_result(result)
    assert result["total"]["invalid"] > 0, result["total"]
    stored = sorted((tmp_path / "findings").glob("*/*.bin"))
    assert stored, result["capture"]
    walker = str(build(planted_bug(bug), "plain"))
    replayer = MinivmReplayer()
    per_file = math.ceil(REPLAYS / len(stored))
    same = total = 0
    for path in stored:
        doc = json.loads(path.with_suffix(".json").read_text())
        data = path.read_bytes()
        assert doc["details"]["mode"] == mode and doc["harness"] == LIVE_HARNESS
        assert doc["hits"]["count"] >= 1
        assert doc["hits"]["first_seen_s"] <= doc["hits"]["last_seen_s"]
        for _ in range(per_file):
            replay = replayer.run_as(data, LIVE_HARNESS, walker, str(path))
            total += 1
            same += (replay.finding is not None
                     and replay.finding.signature == doc["signature"]
                     and replay.extra["first_diff"] == doc["details"]["first_diff"]
                     and replay.klass == doc["details"]["class"])
    assert same == total >= REPLAYS, f"{same} of {total} replays reproduced the signature"
    reference = [replayer.run_as(p.read_bytes(), LIVE_HARNESS, "reference", str(p)).finding
                 for p in stored]
    assert reference == [None] * len(stored)   # the expected trace is the truth of the case


def test_queue_findings_replay_the_element_walk(tmp_path: Path, file_result: Any) -> None:
    """Queue mode: an element judged at the safepoint replays through section 9 (ENQUEUE,
    POKEs, THREAD, SAFEPOINT) and its EXPECTED section is about the element's walk."""
    result = live(tmp_path, "frame-size-off-by-one", "queue")
    file_result(result)
    elements = [e for e in result["examples"] if e["source"] == "element" and "path" in e]
    assert elements, [e["source"] for e in result["examples"]]
    from walkfuzz.targets.minivm.case import decode as dec

    case = dec.decode(Path(elements[0]["path"]).read_bytes())
    assert case.expected is not None and case.expected.source == 3
    assert case.queue is not None and [op.code for op in case.queue][-2:] == [12, 9]


def test_report_reproducer_runs_and_shows_the_signature(tmp_path: Path) -> None:
    walker = build(planted_bug("frame-size-off-by-one"), "plain")
    done = subprocess.run([str(WALKFUZZ), "stress", "--walker", str(walker), "--duration", "1s",
                           "--baseline", "0", "--threads", "2", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=FOUND_CAP_SECONDS)
    assert done.returncode == 1, done.stderr  # its invalid traces are findings
    report = json.loads((tmp_path / "report.json").read_text())
    groups = [g for g in report["findings"] if g["examples"]]
    assert groups, report["findings"]
    for group in groups:
        assert group["details"]["hits"]["count"] == group["count"] >= len(group["examples"])
        argv = shlex.split(group["reproducer"])
        assert argv[:2] == ["walkfuzz", "replay"] and "--harness" not in argv
        replayed = subprocess.run([str(WALKFUZZ), *argv[1:]], capture_output=True, text=True,
                                  timeout=60)
        assert replayed.returncode == 1, replayed.stderr     # a reproduced finding
        assert f"finding: {group['kind']} {group['signature']}" in replayed.stdout


def test_stop_on_first_stops_with_the_finding_on_disk(tmp_path: Path) -> None:
    duration_ns = int(FOUND_CAP_SECONDS * 1e9)
    result = live(tmp_path, "inlined-scope-order", "signal", stop_on_first=True,
                  duration_ns=duration_ns)
    assert result["stopped_early"]
    assert result["total"]["wall_ns_run"] < duration_ns / 2
    found = load_findings(tmp_path)
    assert found and all(f.data for f in found)


def test_findings_are_on_disk_while_the_run_goes_on(tmp_path: Path) -> None:
    """A run of FOUND_CAP_SECONDS: its first finding appears under --out long before the run
    ends (the run is then killed; what is on disk replays)."""
    walker = build(planted_bug("frame-size-off-by-one"), "plain")
    child = subprocess.Popen(
        [str(WALKFUZZ), "stress", "--walker", str(walker), "--duration",
         f"{FOUND_CAP_SECONDS:g}s", "--baseline", "0", "--out", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + FOUND_CAP_SECONDS
        while not list((tmp_path / "findings").glob("*/*.json")) and time.monotonic() < deadline:
            time.sleep(0.1)
        running = child.poll() is None
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert running, "the run ended before a finding was on disk"
    found = load_findings(tmp_path)
    assert found and all(f.data for f in found)
    replay = MinivmReplayer().run_as(found[0].data, LIVE_HARNESS, str(walker), "first")
    assert replay.finding is not None and replay.finding.signature == found[0].signature
