"""What the commands take as input and leave behind, run as a user runs them: minimize never
returns more than its input, triage takes files of any name (and names what it skips), replay
knows a generator harness's input by where it lies and leaves no temporary file, and a hang's
input is saved under libFuzzer's name for it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import MAX_INPUT_BYTES, read_input
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.store import save_finding
from walkfuzz.targets.minivm import planted

WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
ROOT = Path(__file__).resolve().parents[2]
LAYOUTS = ROOT / "corpora" / "layouts"
REGRESSIONS = ROOT / "corpora" / "bytes" / "regressions"
TIMEOUT = 120


def walkfuzz(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(WALKFUZZ), *args], capture_output=True, text=True,
                          timeout=TIMEOUT, env=env, check=False)


@pytest.fixture(scope="module")
def every_bug_walker() -> str:
    return str(planted.build_combined(planted.PLANTED_BUGS, "plain"))


def layouts_input(walker: str, at_least: int) -> Path:
    """A shipped layouts seed of at least `at_least` bytes that the walker finds a bug in."""
    for seed in sorted(p for p in LAYOUTS.iterdir() if p.is_file()):
        if seed.stat().st_size >= at_least and \
                walkfuzz("replay", "--harness", "layouts", "--walker", walker,
                         str(seed)).returncode == 1:
            return seed
    raise AssertionError(f"no layouts seed of {at_least}+ bytes shows a planted bug")


def test_minimize_never_returns_more_than_its_input(every_bug_walker: str,
                                                    tmp_path: Path) -> None:
    # a generated case is far larger than the generator bytes; with no time to shrink it,
    # the result must still not grow
    seed = layouts_input(every_bug_walker, 200)
    out = tmp_path / "min"
    done = walkfuzz("minimize", str(seed), "--harness", "layouts", "--walker",
                    every_bug_walker, "--budget", "1ms", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert 0 < out.stat().st_size <= seed.stat().st_size, done.stdout


def test_triage_takes_files_of_any_name_and_names_what_it_skips(tmp_path: Path) -> None:
    regressions = sorted(p for p in REGRESSIONS.iterdir() if p.is_file())[:3]
    for i, source in enumerate(regressions, 1):
        shutil.copy(source, tmp_path / f"testcase-{i}")
    shutil.copy(regressions[0], tmp_path / "crash-1")  # a libFuzzer artifact beside them
    (tmp_path / "fuzz-0.log").write_text("INFO: Seed: 1\n")
    done = walkfuzz("triage", str(tmp_path), "--runs", "1")
    assert f"; {len(regressions) + 1} inputs in" in done.stdout, done.stdout
    assert f"skipped {tmp_path / 'fuzz-0.log'}: a log" in done.stderr


def test_triage_takes_an_output_folder_s_timeout_file(tmp_path: Path) -> None:
    case = sorted(p for p in REGRESSIONS.iterdir() if p.is_file())[0]
    (tmp_path / "findings").mkdir()
    shutil.copy(case, tmp_path / "timeout-1")
    shutil.copy(case, tmp_path / "testcase-2")
    (tmp_path / "report.json").write_text("{}")
    done = walkfuzz("triage", str(tmp_path), "--runs", "1")
    assert "; 2 inputs in" in done.stdout, (done.stdout, done.stderr)
    assert "report.json" not in done.stderr  # the run's own files are no news


def test_replay_knows_a_corpus_entry_s_harness_by_its_folder() -> None:
    seed = sorted(p for p in LAYOUTS.iterdir() if p.is_file())[0]
    done = walkfuzz("replay", str(seed))
    assert done.returncode in (0, 1), done.stderr
    assert "input of the layouts harness" in done.stderr
    assert "bad-magic" not in done.stderr


def test_replay_of_a_generator_input_elsewhere_says_to_pass_the_harness(tmp_path: Path) -> None:
    seed = sorted(p for p in LAYOUTS.iterdir() if p.is_file())[0]
    copy = tmp_path / "input"
    shutil.copy(seed, copy)
    done = walkfuzz("replay", str(copy))
    lines = done.stderr.splitlines()
    assert done.returncode == 2
    assert len(lines) == 1 and "pass --harness (api, layouts, registers)" in lines[0], lines


def test_replay_of_a_generator_input_leaves_no_temporary_file(tmp_path: Path) -> None:
    seed = sorted(p for p in LAYOUTS.iterdir() if p.is_file())[0]
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = walkfuzz("replay", "--harness", "layouts", str(seed),
                    env={**os.environ, "TMPDIR": str(scratch)})
    assert done.returncode in (0, 1), done.stderr
    assert "finding:" in done.stdout
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize(("kind", "prefix"), [("hang", "timeout-"), ("crash", "crash-")])
def test_a_finding_s_input_copy_has_libfuzzer_s_name(tmp_path: Path, kind: str,
                                                     prefix: str) -> None:
    finding = Finding(kind=kind, target="minivm", harness="bytes", location="wf_walk+0x10",
                      shape=(), data=b"input", details={})
    save_finding(tmp_path, finding)
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == [f"{prefix}{finding.sha1}"]
    # triage knows the copy for the stored input's: one input, not two
    done = walkfuzz("triage", str(tmp_path), "--runs", "1")
    assert "; 1 inputs in" in done.stdout, (done.stdout, done.stderr)


def test_triage_knows_a_generator_corpus_s_harness_by_its_folder() -> None:
    total = sum(1 for p in LAYOUTS.iterdir() if p.is_file())
    done = walkfuzz("triage", str(LAYOUTS), "--runs", "1")
    assert f"0 could not run; {total} inputs in" in done.stdout, (done.stdout, done.stderr)


@pytest.fixture
def not_inputs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Paths that are no input file, and what the refusal calls each: a device (its read
    never ends), a FIFO (its open waits for a writer), a folder, a file over the cap (sparse)."""
    fifo, folder, huge = tmp_path / "fifo", tmp_path / "folder", tmp_path / "huge"
    os.mkfifo(fifo)
    folder.mkdir()
    with huge.open("wb") as stream:
        stream.truncate(MAX_INPUT_BYTES + 1)
    return {"device": (Path("/dev/zero"), "a character device"), "fifo": (fifo, "a FIFO"),
            "folder": (folder, "a folder"), "huge": (huge, f"{MAX_INPUT_BYTES}-byte limit")}


@pytest.mark.parametrize("command", ["replay", "minimize", "triage", "regress"])
@pytest.mark.parametrize("kind", ["device", "fifo", "huge"])
def test_an_input_that_is_no_regular_file_or_too_large_is_refused_in_one_line(
        not_inputs: dict[str, tuple[Path, str]], tmp_path: Path, command: str,
        kind: str) -> None:
    path, says = not_inputs[kind]
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"version": 1, "signatures": {}}')
    extra = ["--baseline", str(baseline)] if command == "regress" else []
    started = time.monotonic()
    done = walkfuzz(command, *extra, str(path))
    assert time.monotonic() - started < 10
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0], done.stderr[-2000:]
    if command != "minimize" or kind == "huge":  # minimize names a non-file in its own words
        assert says in lines[0], lines[0]


def test_replay_refuses_a_folder_where_a_file_is_meant(
        not_inputs: dict[str, tuple[Path, str]]) -> None:
    path, says = not_inputs["folder"]
    done = walkfuzz("replay", str(path))
    assert done.returncode == 2 and says in done.stderr, done.stderr[-2000:]


def test_read_input_reads_a_regular_file_and_refuses_the_rest(
        not_inputs: dict[str, tuple[Path, str]], tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.write_bytes(b"WFCS")
    assert read_input(small) == b"WFCS"
    with pytest.raises(UserError, match="4 bytes, over the 3-byte limit"):
        read_input(small, cap=3)
    for path, says in not_inputs.values():
        with pytest.raises(UserError, match=says):
            read_input(path)
