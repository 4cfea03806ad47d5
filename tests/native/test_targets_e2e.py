"""`walkfuzz fuzz --target libunwind|hotspot` for real, a few seconds each: exit status 1 with
findings, the campaign output layout, and a reproducer from the report that runs."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.native.reproducers import HotspotCampaign
from tests.opt_outs import skip_if_opted_out
from walkfuzz.targets.native.extension import load as load_unwind

WALKFUZZ = [sys.executable, "-m", "walkfuzz.cli"]


def assert_layout(out: Path) -> list[dict[str, object]]:
    """findings/<signature>/<sha1>.{bin,json}, crash-<sha1> per stored crash, report.*;
    returns the report's finding groups."""
    for name in ("report.json", "report.html", "report.md"):
        assert (out / name).is_file(), name
    groups: list[dict[str, object]] = json.loads((out / "report.json").read_text())["findings"]
    assert groups
    for directory in (out / "findings").iterdir():
        inputs = sorted(directory.glob("*.bin"))
        assert inputs and all(p.with_suffix(".json").is_file() for p in inputs), directory
        if directory.name.startswith("crash."):
            assert all((out / f"crash-{p.stem}").is_file() for p in inputs), directory
    return groups


def run_reproducer(command: str) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    assert argv[:2] == ["walkfuzz", "replay"]
    return subprocess.run([*WALKFUZZ, *argv[1:]], capture_output=True, text=True, timeout=180)


def test_libunwind_campaign_finds_faults_and_its_reproducer_runs(
        libunwind_fuzz: Callable[[], Path]) -> None:
    """The session's campaign until its first finding, exit status 1 (tests/native/conftest.py),
    shared with tests/native/test_reproducers.py."""
    skip_if_opted_out("libunwind")
    load_unwind()  # not built: an error naming the module, never a skip
    out = libunwind_fuzz()
    group = assert_layout(out)[0]
    assert group["kind"] in ("crash", "hang", "invalid-trace"), group
    # the report names the walker the harness ran, not minivm's reference walker
    assert json.loads((out / "report.json").read_text())["meta"]["walker"] == "libunwind"
    assert "| walker | libunwind |" in (out / "report.md").read_text()
    replay = run_reproducer(str(group["reproducer"]))
    assert replay.returncode in (0, 1), replay.stderr[-2000:]
    assert json.loads(replay.stdout)["case"]["perturbations"]


def test_hotspot_fuzz_finds_faults_and_its_reproducer_runs(
        hotspot_campaign: Callable[[], HotspotCampaign]) -> None:
    """The session's HotSpot runs (tests/native/conftest.py), shared with
    tests/native/test_reproducers.py: each run's JVM alive at the end and its exit status 1
    with findings, 0 without, until one has a guarded fault."""
    campaign = hotspot_campaign()
    crashes = [g for g in assert_layout(campaign.out) if g["kind"] == "crash"]
    assert all(str(g["reproducer"]).startswith("walkfuzz replay --target hotspot")
               for g in crashes)
    replay = campaign.replay(str(crashes[0]["reproducer"]))  # a fresh JVM, 10 s
    assert replay.returncode in (0, 1), replay.stderr[-2000:]
    assert json.loads(replay.stdout)["stored_signature"] == crashes[0]["signature"]
