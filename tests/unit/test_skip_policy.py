"""The skip policy of tests/opt_outs.py, on a throw-away test file run by a child pytest: a skip
fails unless its tool's opt-out variable is set, a module-level skip (importorskip) fails the
collection, opt-in suites are deselected, and every allowed skip is listed by name."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.opt_outs import OPT_OUTS, SKIP_LINE_PREFIX

ROOT = Path(__file__).resolve().parents[2]

TESTS = '''
import pytest
from tests.opt_outs import skip_if_opted_out

def test_plain_skip():
    pytest.skip("no tool here")

def test_importorskip():
    pytest.importorskip("walkfuzz_no_such_module")

@pytest.mark.skip(reason="marked")
def test_skip_marker():
    pass

def test_hand_written_opt_out_reason():
    pytest.skip("WALKFUZZ_SKIP_HOTSPOT=1: claimed, not set")

def test_needs_hotspot():
    skip_if_opted_out("hotspot")

@pytest.mark.million
def test_opt_in():
    pass
'''


def run_child(tmp_path: Path, source: str, **env: str) -> tuple[subprocess.CompletedProcess[str],
                                                                 dict[str, str]]:
    """Run `source` as a test file under the policy; (process, outcome of each test)."""
    (tmp_path / "test_fake.py").write_text(source)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    million: opt-in\n")
    junit = tmp_path / "junit.xml"
    child_env = {k: v for k, v in os.environ.items()
                 if k not in {var for var, _ in OPT_OUTS.values()} | {"WALKFUZZ_MILLION"}}
    child_env.update(env, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.opt_outs", "-p", "no:cacheprovider",
         "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), f"--junitxml={junit}",
         str(tmp_path / "test_fake.py")],
        cwd=tmp_path, env=child_env, capture_output=True, text=True, timeout=120)
    outcomes = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[case.get("name", "")] = kinds[0] if kinds else "passed"
    return done, outcomes


def test_a_skip_without_its_opt_out_fails(tmp_path: Path) -> None:
    done, outcomes = run_child(tmp_path, TESTS)
    assert done.returncode == 1, done.stdout
    assert outcomes == {"test_plain_skip": "failure", "test_importorskip": "failure",
                        "test_skip_marker": "error", "test_hand_written_opt_out_reason":
                        "failure", "test_needs_hotspot": "passed"}, done.stdout
    assert "skipped without an opt-out: no tool here" in done.stdout
    assert "1 deselected" in done.stdout and SKIP_LINE_PREFIX not in done.stdout


def test_an_opted_out_tool_skips_and_is_listed_by_name(tmp_path: Path) -> None:
    done, outcomes = run_child(tmp_path, TESTS, WALKFUZZ_SKIP_HOTSPOT="1", WALKFUZZ_MILLION="1")
    assert outcomes["test_needs_hotspot"] == "skipped" and outcomes["test_opt_in"] == "passed"
    assert outcomes["test_hand_written_opt_out_reason"] == "skipped"  # now it is set
    assert outcomes["test_plain_skip"] == "failure", done.stdout
    listed = [line for line in done.stdout.splitlines() if line.startswith(SKIP_LINE_PREFIX)]
    assert sorted(line.split(": ")[1] for line in listed) == [
        "test_fake.py::test_hand_written_opt_out_reason", "test_fake.py::test_needs_hotspot"]
    assert all("WALKFUZZ_SKIP_HOTSPOT=1:" in line for line in listed)


@pytest.mark.parametrize("opted_out", [False, True])
def test_a_module_level_importorskip_fails_the_collection(tmp_path: Path, opted_out: bool) -> None:
    source = ('import pytest\nfrom tests.opt_outs import skip_if_opted_out\n'
              'skip_if_opted_out("libunwind", module=True)\n'
              'pytest.importorskip("walkfuzz_no_such_module")\n'
              'def test_never_runs():\n    pass\n')
    env = {"WALKFUZZ_SKIP_LIBUNWIND": "1"} if opted_out else {}
    done, _ = run_child(tmp_path, source, **env)
    if opted_out:
        assert done.returncode == 5, done.stdout  # nothing else in it: "no tests ran"
        assert f"{SKIP_LINE_PREFIX}test_fake.py: WALKFUZZ_SKIP_LIBUNWIND=1:" in done.stdout
    else:
        assert done.returncode == 2, done.stdout  # interrupted: an error during collection
        assert "skipped without an opt-out: could not import 'walkfuzz_no_such_module'" \
            in done.stdout


XFAILS = '''
import pytest

@pytest.mark.xfail(reason="known bug")
def test_xfailed():
    assert False

@pytest.mark.xfail(reason="known bug")
def test_xpassed():
    pass

def test_imperative_xfail():
    pytest.xfail("not today")

@pytest.mark.xfail(reason="WALKFUZZ_SKIP_HOTSPOT=1: the HotSpot target left out")
def test_opted_out_xfail():
    assert False
'''


def test_an_xfail_or_xpass_without_its_opt_out_fails(tmp_path: Path) -> None:
    done, outcomes = run_child(tmp_path, XFAILS)
    assert done.returncode == 1, done.stdout
    assert outcomes == {"test_xfailed": "failure", "test_xpassed": "failure",
                        "test_imperative_xfail": "failure", "test_opted_out_xfail": "failure"}, \
        done.stdout
    assert "xfailed without an opt-out: known bug" in done.stdout
    assert "XPASS (passed although marked xfail) without an opt-out: known bug" in done.stdout
    assert "xfailed without an opt-out: not today" in done.stdout


def test_an_opted_out_xfail_is_allowed(tmp_path: Path) -> None:
    done, outcomes = run_child(tmp_path, XFAILS, WALKFUZZ_SKIP_HOTSPOT="1")
    assert outcomes["test_opted_out_xfail"] == "skipped", done.stdout  # junit's word for xfailed
    assert outcomes["test_xfailed"] == "failure" and outcomes["test_xpassed"] == "failure"
    assert "1 xfailed" in done.stdout


@pytest.mark.parametrize("folder", ["stress", "quality"])
def test_a_stress_or_quality_file_without_its_marker_fails_collection(tmp_path: Path,
                                                                       folder: str) -> None:
    marked = tmp_path / "tests" / folder
    marked.mkdir(parents=True)
    (marked / "test_marked.py").write_text(f"import pytest\npytestmark = pytest.mark.{folder}\n"
                                           "def test_runs():\n    pass\n")
    (marked / "test_unmarked.py").write_text("def test_never_selected():\n    pass\n")
    (tmp_path / "pytest.ini").write_text(f"[pytest]\nmarkers =\n    {folder}: suite\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.opt_outs", "-p", "no:cacheprovider",
         "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), "-m", folder,
         str(marked)],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
        text=True, timeout=120)
    assert done.returncode == 2, done.stdout  # an error during collection
    assert f"test_never_selected lack the `{folder}` marker" in done.stdout
    assert "test_marked.py" not in done.stdout.split("short test summary")[-1]
