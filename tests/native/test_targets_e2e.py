"""`walkfuzz fuzz --target libunwind|hotspot` for real, a few seconds each: exit status 1 with
findings, the campaign output layout, and reproducers from the report that, run as printed,
exit 1 and print the finding stored for their input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.native.reproducers import (
    HotspotCampaign,
    check_replay,
    check_replayed,
    check_snapshot_replay,
    is_snapshot_reproducer,
)
from tests.opt_outs import skip_if_opted_out
from walkfuzz.targets.native.extension import load as load_unwind


def assert_layout(out: Path) -> list[dict[str, Any]]:
    """findings/<signature>/<sha1>.{bin,json}, crash-<sha1> per stored crash, report.*;
    returns the report's finding groups."""
    for name in ("report.json", "report.html", "report.md"):
        assert (out / name).is_file(), name
    groups: list[dict[str, Any]] = json.loads((out / "report.json").read_text())["findings"]
    assert groups
    for directory in (out / "findings").iterdir():
        inputs = sorted(directory.glob("*.bin"))
        assert inputs and all(p.with_suffix(".json").is_file() for p in inputs), directory
        if directory.name.startswith("crash."):
            assert all((out / f"crash-{p.stem}").is_file() for p in inputs), directory
    return groups


def test_libunwind_campaign_finds_faults_and_its_reproducer_runs(
        libunwind_fuzz: Callable[[], Path]) -> None:
    """The session's campaign until its first finding, exit status 1 (tests/native/conftest.py),
    shared with tests/native/test_reproducers.py. Every reproducer the report prints, run as
    printed, exits 1 and prints the finding stored for the input it names; the report says it
    replayed each in a fresh process (walkfuzz.targets.native.fresh_replay)."""
    skip_if_opted_out("libunwind")
    load_unwind()  # not built: an error naming the module, never a skip
    out = libunwind_fuzz()
    groups = assert_layout(out)
    assert all(g["kind"] in ("crash", "hang", "invalid-trace") for g in groups), groups
    # the report names the walker the harness ran, not minivm's reference walker
    assert json.loads((out / "report.json").read_text())["meta"]["walker"] == "libunwind"
    assert "| walker | libunwind |" in (out / "report.md").read_text()
    for group in groups:
        assert "reproduces it in a fresh process" in group["details"].get("replay", ""), group
        if is_snapshot_reproducer(group["reproducer"]):
            check_snapshot_replay(group)
            continue
        replay = check_replay("libunwind", group)
        assert json.loads(replay.stdout)["case"]["perturbations"]


def test_hotspot_fuzz_finds_faults_and_its_reproducer_runs(
        hotspot_campaign: Callable[[], HotspotCampaign]) -> None:
    """The session's HotSpot runs (tests/native/conftest.py), shared with
    tests/native/test_reproducers.py: each run's JVM alive at the end and its exit status 1
    with findings, 0 without, until one has a guarded fault. The reproducer of the most
    frequent fault (the one every JVM meets), run as printed in a fresh JVM, exits 1 with the
    finding stored for its input among the faults it counted."""
    campaign = hotspot_campaign()
    crashes = [g for g in assert_layout(campaign.out) if g["kind"] == "crash"]
    assert all(str(g["reproducer"]).startswith("walkfuzz replay --target hotspot")
               for g in crashes)
    top = max(crashes, key=lambda g: g["count"])
    check_replayed("hotspot", top, campaign.replay(str(top["reproducer"])))  # 10 s
