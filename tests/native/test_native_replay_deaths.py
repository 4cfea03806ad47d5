"""A replay's walk runs in a child process, since a walk may kill the process that runs it; a
child killed by a signal is a result (walkfuzz.targets.native.child), never a traceback. Each
of the three replays of the native target, run as a user runs it, with its walking child killed
by SIGKILL on its way in: a `sitecustomize` on the child's PYTHONPATH kills a process whose
command line names the replay's child module (the parent's does not)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.opt_outs import skip_if_opted_out

skip_if_opted_out("libunwind", module=True)

from walkfuzz.targets.native.inputs import unperturbed  # noqa: E402

WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
KILLER = """import os, signal, sys
if all(word in sys.orig_argv for word in {words!r}):
    os.kill(os.getpid(), signal.SIGKILL)
"""


def replay_killing(tmp_path: Path, words: list[str],
                   *args: str) -> subprocess.CompletedProcess[str]:
    """`walkfuzz replay ARGS`, every process whose argv holds all of `words` killed at start."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(KILLER.format(words=words))
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run([str(WALKFUZZ), "replay", *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": path}, timeout=300, check=False)


def chain_input(tmp_path: Path) -> Path:
    file = tmp_path / "chain-1-2-3"
    file.write_bytes(unperturbed([1, 2, 3]))
    return file


def test_a_replay_whose_child_dies_prints_the_crash_finding_it_is(tmp_path: Path) -> None:
    done = replay_killing(tmp_path, ["walkfuzz.targets.native.child_replay"],
                          "--target", "native", "--unwinder", "fp", str(chain_input(tmp_path)))
    assert done.returncode == 1, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert doc["process_died"] == "SIGKILL"
    assert doc["location"] == "fp:process-death:SIGKILL"
    assert doc["signature"].startswith("crash.")


def test_a_snapshot_replay_whose_child_dies_is_one_line_and_status_1(tmp_path: Path) -> None:
    snapshot = tmp_path / "dies.wfsnap"
    snapshot.write_bytes(b"WFSNAP1\0" + bytes(64))  # the magic: the snapshot replay runs it
    done = replay_killing(tmp_path, ["walkfuzz.targets.native.snapshot.replay"], str(snapshot))
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == (
        "walkfuzz replay: the replay process died (SIGKILL)")
    assert "Traceback" not in done.stderr


def test_a_differential_replay_marks_the_dead_unwinder_faulted(tmp_path: Path) -> None:
    done = replay_killing(tmp_path, ["walkfuzz.targets.native.differential.worker", "fp"],
                          "--target", "native", "--unwinder", "libunwind,fp",
                          str(chain_input(tmp_path)))
    assert done.returncode == 1, done.stderr[-2000:]
    assert "fp: the child died (SIGKILL)" in done.stderr
    assert "fp: fault at process-death:SIGKILL" in done.stdout.splitlines()
    rows = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()
            if line.split() and line.split()[0] in ("libunwind", "fp")}
    assert rows == {"libunwind": "root", "fp": "fault"}, done.stdout
