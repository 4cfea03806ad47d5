"""Sanitizer campaigns, run as a user runs them: `walkfuzz fuzz --sanitizer` on a walker built
with `walkfuzz build-walker --flavour asan`, on the reference walker and on libunwind.

The walkers are tests/fixtures/sanitizer_walker.c: the example walker with one planted bug, a
write one byte past a heap buffer (ASan sees it, nothing else does) or a guarded wild read (the
crash guard's fault, with or without ASan: docs/guard.md, "Sanitizers")."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.shared_runs import once
from tests.unit.test_cli_exit import one_error_line, report_of, walkfuzz
from walkfuzz.core.exit_status import CLEAN, FINDINGS, MISSING_TOOL
from walkfuzz.engine.pool import SANITIZER_REPORT_SUFFIX

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "sanitizer_walker.c"
RUNS = "300"  # inputs per campaign: the shipped layouts seeds reach the planted bugs at once


def walker(tmp: Path, bug: str, flavour: str) -> Path:
    out = tmp / f"{bug.lower()}-{flavour}.so"
    done = walkfuzz("build-walker", FIXTURE, "-o", out, "--flavour", flavour, "-D", bug)
    assert done.returncode == CLEAN, done.stderr[-2000:]
    assert done.stdout.strip() == f"built {out.resolve()}"
    return out


@pytest.fixture(scope="module")
def overflow_walkers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The heap-overflow walker's two flavours, built once per session on whichever xdist
    worker asks first (tests/shared_runs.py)."""

    def make(tmp: Path) -> dict[str, str]:
        return {f: str(walker(tmp, "WF_FIXTURE_HEAP_OVERFLOW", f)) for f in ("asan", "cov")}

    return {f: Path(p) for f, p in once(tmp_path_factory, "overflow-walkers", make).items()}


def findings_of(out: Path) -> list[dict[str, object]]:
    found = report_of(out)["findings"]
    assert isinstance(found, list)
    return found


def test_a_write_past_a_buffer_is_an_asan_finding_with_its_report(
        tmp_path: Path, overflow_walkers: dict[str, Path]) -> None:
    out = tmp_path / "asan"
    done = walkfuzz("fuzz", "--harness", "layouts", "--walker", overflow_walkers["asan"],
                    "--sanitizer", "address", "--runs", RUNS, "--stop-on-first", "--out", out)
    assert done.returncode == FINDINGS, done.stderr[-3000:]
    groups = findings_of(out)
    assert {g["kind"] for g in groups} == {"asan"}, groups
    location = str(groups[0]["location"])
    assert location.startswith("heap-buffer-overflow in ASGST_NextFrame@sanitizer_walker.c:")
    inputs = sorted(out.glob("findings/asan.*/*.bin"))
    assert inputs
    for data in inputs:
        report = data.with_name(data.stem + SANITIZER_REPORT_SUFFIX).read_text()
        assert "ERROR: AddressSanitizer: heap-buffer-overflow" in report
        assert "sanitizer_walker.c" in report
    # the reproducer the report prints replays it on the sanitizer build: the same report
    reproducer = shlex.split(str(groups[0]["reproducer"]))
    assert reproducer[:4] == ["walkfuzz", "replay", "--sanitizer", "address"], reproducer
    again = walkfuzz(*reproducer[1:])
    assert again.returncode != CLEAN, again.stderr[-3000:]
    assert "ERROR: AddressSanitizer: heap-buffer-overflow" in again.stderr
    assert "ASGST_NextFrame" in again.stderr
    # triage replays it on the sanitizer build too: the same signature, the same reproducer
    result = tmp_path / "triage.json"
    triaged = walkfuzz("triage", out, "--runs", "1", "-j", "1", "--json", result)
    assert triaged.returncode == FINDINGS, triaged.stderr[-3000:]
    doc = json.loads(result.read_text())
    assert doc["signature_changed"] == [] and doc["findings"] == len(inputs), doc
    assert [g["kind"] for g in doc["groups"]] == ["asan"]
    assert doc["groups"][0]["reproducer"].startswith("walkfuzz replay --sanitizer address ")


def test_a_signed_overflow_is_a_ubsan_finding_with_its_report(tmp_path: Path) -> None:
    overflow = walker(tmp_path, "WF_FIXTURE_INT_OVERFLOW", "asan")
    out = tmp_path / "ubsan"
    done = walkfuzz("fuzz", "--harness", "layouts", "--walker", overflow, "--sanitizer",
                    "undefined", "--runs", RUNS, "--stop-on-first", "--out", out)
    assert done.returncode == FINDINGS, done.stderr[-3000:]
    groups = findings_of(out)
    assert [(g["kind"], str(g["location"]).rsplit(":", 1)[0]) for g in groups] == [
        ("ubsan", "signed integer overflow in ASGST_NextFrame@sanitizer_walker.c")], groups
    reports = list(out.glob(f"findings/ubsan.*/*{SANITIZER_REPORT_SUFFIX}"))
    assert reports and "runtime error: signed integer overflow" in reports[0].read_text()


def test_the_same_bug_is_invisible_without_the_sanitizer(
        tmp_path: Path, overflow_walkers: dict[str, Path]) -> None:
    out = tmp_path / "cov"
    done = walkfuzz("fuzz", "--harness", "layouts", "--walker", overflow_walkers["cov"],
                    "--runs", RUNS, "--out", out)
    assert done.returncode == CLEAN, done.stderr[-3000:]
    assert findings_of(out) == []
    assert json.loads((out / "campaign.json").read_text())["spec"]["native"] == "cov"


def test_a_guarded_wild_read_stays_a_crash_finding_under_asan(tmp_path: Path) -> None:
    wild = walker(tmp_path, "WF_FIXTURE_WILD_READ", "asan")
    out = tmp_path / "wild"
    done = walkfuzz("fuzz", "--harness", "layouts", "--walker", wild, "--sanitizer", "address",
                    "--runs", RUNS, "--stop-on-first", "--out", out)
    assert done.returncode == FINDINGS, done.stderr[-3000:]
    groups = findings_of(out)
    assert groups and {g["kind"] for g in groups} == {"crash"}, groups
    assert all(str(g["location"]).startswith("ASGST_NextFrame@sanitizer_walker.c:")
               for g in groups), groups
    # the guard caught every fault: no worker died, so no sanitizer report was written
    assert not list(out.glob("workers/*/sanitizer.*"))


def test_an_asan_walker_loads_only_where_the_runtime_is(
        tmp_path: Path, overflow_walkers: dict[str, Path]) -> None:
    case = sorted((ROOT / "corpora" / "layouts").iterdir())[0]
    done = walkfuzz("replay", "--harness", "layouts", "--walker", overflow_walkers["asan"], case)
    line = one_error_line_any(done)
    assert "__asan" in line or "undefined symbol" in line, line


def one_error_line_any(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode != CLEAN and len(lines) == 1, done.stderr[-2000:]
    return lines[0]


@pytest.mark.parametrize("target", ["minivm", "libunwind"])
def test_a_sanitizer_campaign_of_the_shipped_walkers_runs_clean(tmp_path: Path,
                                                                target: str) -> None:
    out = tmp_path / target
    harness = ["--harness", "layouts"] if target == "minivm" else []
    done = walkfuzz("fuzz", "--target", target, *harness, "--sanitizer", "address",
                    "--runs", "3000", "--out", out)
    if target == "minivm":  # the reference walker: nothing to find
        assert done.returncode == CLEAN, done.stderr[-3000:]
        assert findings_of(out) == []
    else:  # libunwind has faults of its own that perturbed registers reach (docs/native.md)
        assert done.returncode in (CLEAN, FINDINGS), done.stderr[-3000:]
        kinds = {f["kind"] for f in findings_of(out)}
        assert kinds <= {"crash", "hang"}, kinds  # none a report of the sanitized glue
    assert report_of(out)["series"]["execs"][-1][1] >= 3000  # type: ignore[index]
    assert json.loads((out / "campaign.json").read_text())["spec"]["native"] == "sancov"


def test_an_unknown_sanitizer_is_one_line() -> None:
    one_error_line(walkfuzz("fuzz", "--harness", "layouts", "--sanitizer", "bogus",
                            "--runs", "1"), "--sanitizer", "bogus")


def test_a_missing_sanitizer_runtime_is_one_line_exit_3(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-runtime.so"
    done = walkfuzz("fuzz", "--harness", "layouts", "--sanitizer", "address", "--runs", "1",
                    "--out", tmp_path / "out", env={"WALKFUZZ_SANITIZER_RUNTIME": str(missing)})
    lines = done.stderr.strip().splitlines()
    assert done.returncode == MISSING_TOOL, done.stderr[-2000:]
    assert len(lines) == 1 and str(missing) in lines[0], lines
    assert not (tmp_path / "out").exists()  # refused before any work
