"""`walkfuzz fuzz --target libunwind|hotspot` for real, a few seconds each: exit status 1 with
findings, the campaign output layout, and a reproducer from the report that runs."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from walkfuzz.errors import UserError

WALKFUZZ = [sys.executable, "-m", "walkfuzz.cli"]


def fuzz(tmp_path: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALKFUZZ, "fuzz", *args, "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=timeout)


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
    return subprocess.run([*WALKFUZZ, *argv[1:]], capture_output=True, text=True, timeout=60)


def test_libunwind_campaign_finds_faults_and_its_reproducer_runs(tmp_path: Path) -> None:
    pytest.importorskip("walkfuzz._unwind", reason="walkfuzz._unwind not built (libunwind-dev)")
    done = fuzz(tmp_path, "--target", "libunwind", "--time", "5", timeout=60)
    assert done.returncode == 1, done.stderr[-2000:]  # libunwind faults within a second
    groups = assert_layout(tmp_path)
    crash = next(g for g in groups if g["kind"] == "crash")
    replay = run_reproducer(str(crash["reproducer"]))
    assert replay.returncode in (0, 1), replay.stderr[-2000:]
    assert json.loads(replay.stdout)["case"]["perturbations"]


def test_hotspot_fuzz_finds_faults_and_its_reproducer_runs(tmp_path: Path) -> None:
    from walkfuzz.hotspot.jdk import find_jdk

    try:
        find_jdk("17")
    except UserError as err:
        pytest.skip(f"no JDK 17: {err}")
    done = fuzz(tmp_path, "--target", "hotspot", "--jdk", "17", "--time", "12", timeout=120)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["counters"]["jvm_alive_at_end"] is True
    assert done.returncode == (1 if report["findings"] else 0), done.stderr[-2000:]
    if not report["findings"]:
        pytest.skip("no fault in 12 s of perturbed calls this time (about one a second usually)")
    groups = assert_layout(tmp_path)
    assert all(str(g["reproducer"]).startswith("walkfuzz replay --target hotspot") for g in groups
               if g["kind"] == "crash")
