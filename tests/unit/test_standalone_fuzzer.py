"""A harness run as a standalone fuzzer (the ClusterFuzzLite / OSS-Fuzz packaging of
.clusterfuzzlite/build.sh sets WALKFUZZ_ON_FINDING=crash): a finding is a crash libFuzzer
stores as crash-<sha1> and exits on with its crash status, and that artifact replays and triages
as the finding it was. Run here on the harness script itself, without the packaging
(tests/cfl/test_build.py builds and runs the packaged fuzzers)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from walkfuzz.core.exit_status import INTERRUPTED
from walkfuzz.targets.minivm import planted

ROOT = Path(__file__).resolve().parents[2]
WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
LAYOUTS = ROOT / "harnesses" / "layouts.py"
LIBFUZZER_CRASH = 77  # libFuzzer's -error_exitcode default: what the engines read as a crash
RUNS = 100_000  # the planted bug below takes a handful of inputs (RUNS_CAP in test_planted.py)
TIMEOUT = 300
FINDING_LINE = re.compile(r"FindingCrash: walkfuzz (\S+) finding in .*signature (\S+)\)")


@pytest.fixture(scope="module")
def planted_walker() -> str:
    return str(planted.build(planted.planted_bug("frame-size-off-by-one"), "cov"))


def standalone(args: list[str], cwd: Path, walker: str,
               on_finding: str = "crash") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WALKFUZZ_ON_FINDING": on_finding, "WALKFUZZ_WALKER": walker,
           "WALKFUZZ_NATIVE": "cov", "WALKFUZZ_OUT": str(cwd / "walkfuzz-out")}
    return subprocess.run([sys.executable, str(LAYOUTS), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)


def walkfuzz(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(WALKFUZZ), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)


def test_a_finding_is_a_libfuzzer_crash_that_replays_and_triages(planted_walker: str,
                                                                 tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    done = standalone([f"-runs={RUNS}", "-seed=1", str(corpus)], tmp_path, planted_walker)
    output = done.stdout + done.stderr  # atheris prints the exception on stdout
    assert done.returncode == LIBFUZZER_CRASH, output[-3000:]
    raised = FINDING_LINE.search(output)
    assert raised is not None, output[-3000:]
    kind, signature = raised.groups()
    assert kind in planted.planted_bug("frame-size-off-by-one").kinds
    artifacts = sorted(tmp_path.glob("crash-*"))
    assert len(artifacts) == 1, output[-3000:]
    assert not (tmp_path / "walkfuzz-out").exists()  # the artifact is the one record

    replayed = walkfuzz("replay", "--harness", "layouts", "--walker", planted_walker,
                        str(artifacts[0]), cwd=tmp_path)
    assert replayed.returncode == 1, replayed.stdout[-2000:] + replayed.stderr
    assert f"finding: {kind} {signature}" in replayed.stdout

    triaged = walkfuzz("triage", "--harness", "layouts", "--walker", planted_walker,
                       "--runs", "1", "-j", "1", str(tmp_path), cwd=tmp_path)
    assert triaged.returncode == 1, triaged.stdout + triaged.stderr
    assert "1 findings in 1 groups" in triaged.stdout

    # The engines reproduce a crash by running the fuzzer on the artifact: libFuzzer runs it
    # and exits with its crash status again.
    again = standalone([str(artifacts[0])], tmp_path, planted_walker)
    assert again.returncode == LIBFUZZER_CRASH, again.stdout + again.stderr
    assert f"signature {signature})" in again.stdout


def test_an_unknown_on_finding_value_is_named_in_one_line(planted_walker: str,
                                                         tmp_path: Path) -> None:
    done = standalone(["-runs=1"], tmp_path, planted_walker, on_finding="explode")
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "$WALKFUZZ_ON_FINDING='explode' is not one of save, crash"]


def test_ctrl_c_stops_a_harness_with_the_interrupted_status(tmp_path: Path) -> None:
    """The inputs run in the core's C fuzz loop, where Python's Ctrl-C handler never runs: the
    loop's own ends the process with the interrupted status, as atheris did."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    env = {**os.environ, "WALKFUZZ_NATIVE": "cov", "WALKFUZZ_OUT": str(tmp_path / "out"),
           "WALKFUZZ_WORKER_DIR": str(tmp_path)}
    with subprocess.Popen([sys.executable, str(LAYOUTS), f"-runs={RUNS * 100}", str(corpus)],
                          cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as fuzzer:
        assert fuzzer.stderr is not None
        for line in fuzzer.stderr:  # libFuzzer has run the (empty) corpus: the loop is running
            if "INITED" in line:
                break
        fuzzer.send_signal(signal.SIGINT)
        stdout, _ = fuzzer.communicate(timeout=TIMEOUT)
    assert fuzzer.returncode == INTERRUPTED, stdout[-2000:]
    assert "KeyboardInterrupt: stopping." in stdout
