"""libFuzzer artifacts from ClusterFuzzLite and OSS-Fuzz straight into `walkfuzz triage`,
`regress` and `replay`, as a user downloads them: ClusterFuzzLite's artifacts folder
(`<fuzzer>/<sanitizer>/crash-<sha1>` with a `.summary` stack trace beside each), OSS-Fuzz's
`clusterfuzz-testcase-minimized-<fuzzer>-<id>`, and a plain folder of crash files with
--harness. The inputs are the shipped layouts seeds, which a walker with the planted
frame-size-off-by-one bug walks wrong (planted.py: seeded=False)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from walkfuzz.core.exit_status import BAD_INPUT, CLEAN, FINDINGS
from walkfuzz.targets.minivm.planted import build, planted_bug

ROOT = Path(__file__).resolve().parents[2]
WALKFUZZ = [sys.executable, "-m", "walkfuzz.cli"]
TIMEOUT = 300.0
SEEDS = ROOT / "corpora" / "layouts"
INPUTS = 6  # seeds made artifacts: enough for several signatures, few to replay


def walkfuzz(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALKFUZZ, *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=ROOT, env=dict(os.environ))


@pytest.fixture(scope="module")
def walker() -> Path:
    return build(planted_bug("frame-size-off-by-one"), "plain")


def seeds() -> list[bytes]:
    return [p.read_bytes() for p in sorted(SEEDS.iterdir()) if p.is_file()][:INPUTS]


@pytest.fixture
def cflite(tmp_path: Path) -> Path:
    """ClusterFuzzLite's artifacts folder as its upload holds it."""
    root = tmp_path / "artifacts"
    folder = root / "layouts" / "address"
    folder.mkdir(parents=True)
    for data in seeds():
        crash = folder / f"crash-{hashlib.sha1(data).hexdigest()}"
        crash.write_bytes(data)
        crash.with_name(crash.name + ".summary").write_text("==1==ERROR: libFuzzer: deadly "
                                                            "signal\n    #0 0x0 in walk\n")
    return root


def test_triage_takes_a_clusterfuzzlite_artifacts_folder_and_knows_its_harness(
        cflite: Path, walker: Path) -> None:
    done = walkfuzz("triage", cflite, "--walker", walker, "--runs", "1")
    assert done.returncode == FINDINGS, done.stderr[-2000:]
    assert "could not run" in done.stdout and ", 0 could not run" in done.stdout, done.stdout
    assert "--harness layouts" in done.stdout  # each group's reproducer names the harness
    assert f"{INPUTS} inputs" in done.stdout  # the .summary files are no inputs


def test_regress_gates_on_clusterfuzzlite_artifacts(cflite: Path, walker: Path,
                                                    tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    accepted = walkfuzz("regress", cflite, "--walker", walker, "--baseline", baseline,
                        "--update-baseline", "--runs", "1")
    assert accepted.returncode == CLEAN, accepted.stderr[-2000:]
    signatures = json.loads(baseline.read_text())["signatures"]
    assert signatures
    assert walkfuzz("regress", cflite, "--walker", walker, "--baseline", baseline,
                    "--runs", "1").returncode == CLEAN
    dropped = sorted(signatures)[0]
    del signatures[dropped]
    baseline.write_text(json.dumps({"version": 1, "signatures": signatures}))
    gated = walkfuzz("regress", cflite, "--walker", walker, "--baseline", baseline,
                     "--runs", "1")
    assert gated.returncode == FINDINGS, gated.stderr[-2000:]
    assert f"NEW {dropped}" in gated.stderr


def test_replay_knows_the_harness_of_an_oss_fuzz_testcase(tmp_path: Path,
                                                           walker: Path) -> None:
    """Seeds one after another as the testcase, until one replays as a finding (each replay
    is a process of its own: the first finding ends the test)."""
    testcase = tmp_path / "clusterfuzz-testcase-minimized-layouts-5712345678901234"
    outcomes = []
    for data in seeds():
        testcase.write_bytes(data)
        done = walkfuzz("replay", "--walker", walker, testcase)
        assert "Traceback" not in done.stderr and done.returncode in (CLEAN, FINDINGS)
        assert "input of the layouts harness" in done.stderr, done.stderr[-2000:]
        outcomes.append(done.returncode)
        if done.returncode == FINDINGS:
            break
    assert FINDINGS in outcomes


def test_a_plain_folder_of_crash_files_takes_harness_from_the_flag(tmp_path: Path,
                                                                   walker: Path) -> None:
    plain = tmp_path / "crashes"
    plain.mkdir()
    for data in seeds():
        (plain / f"crash-{hashlib.sha1(data).hexdigest()}").write_bytes(data)
    unknown = walkfuzz("triage", plain, "--walker", walker, "--runs", "1")
    assert unknown.returncode == BAD_INPUT, unknown.stderr[-2000:]
    assert "no --harness says which generator harness" in unknown.stderr
    told = walkfuzz("triage", plain, "--harness", "layouts", "--walker", walker, "--runs", "1")
    assert told.returncode == FINDINGS, told.stderr[-2000:]
