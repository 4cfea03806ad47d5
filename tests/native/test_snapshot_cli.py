"""Remote-memory mode from the command line, as a user runs it: snapshots captured live and read
from a gcore of a child process replay with the commands `walkfuzz snapshot` prints, the same
twice, and a core's walk is the one elfutils' eu-stack makes of the core itself."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.native.reproducers import run_reproducer, walkfuzz
from tests.opt_outs import skip_if_opted_out

skip_if_opted_out("libunwind", module=True)

from walkfuzz.targets.native.snapshot import format as fmt  # noqa: E402

REPLAY = re.compile(r"replay: (walkfuzz replay .*)$")


def replay_commands(stdout: str) -> list[str]:
    commands = [m.group(1) for line in stdout.splitlines() if (m := REPLAY.search(line))]
    assert commands, stdout
    return commands


def replay_twice(command: str) -> dict[str, object]:
    first, second = run_reproducer(command), run_reproducer(command)
    assert first.returncode == 0, first.stderr + first.stdout
    assert first.stdout == second.stdout  # same frames, addresses and verdicts
    doc: dict[str, object] = json.loads(first.stdout)
    return doc


def test_captured_snapshots_replay_with_the_printed_commands_to_their_known_chain(
        tmp_path: Path) -> None:
    done = walkfuzz("snapshot", "capture", "--out", str(tmp_path), "--chain", "2,5,8,1")
    assert done.returncode == 0, done.stderr
    for command in replay_commands(done.stdout):
        doc = replay_twice(command)
        walks = doc["walks"]
        assert isinstance(walks, list) and {w["unwinder"] for w in walks} == {"libunwind", "libdw"}
        for walk in walks:
            assert walk["verdict"] == "ok" and walk["repeatable"], walk
            assert walk["truth"]["matched"] and walk["stop"] == "root", walk


def eu_stack_pcs(core: Path) -> list[int]:
    done = subprocess.run(["eu-stack", "--core", str(core)], capture_output=True, text=True,
                          timeout=120, check=False)
    pcs = [int(m.group(1), 16) for m in re.finditer(r"^#\d+\s+0x([0-9a-f]+)", done.stdout, re.M)]
    assert pcs, done.stdout + done.stderr
    return pcs


@pytest.fixture()
def core_of_a_child(tmp_path: Path) -> Path:
    """A gcore of `sleep` while it sleeps (main -> nanosleep -> clock_nanosleep)."""
    child = subprocess.Popen([shutil.which("sleep") or "sleep", "120"])
    try:
        time.sleep(0.3)  # into its nanosleep
        done = subprocess.run(["gcore", "-o", str(tmp_path / "core"), str(child.pid)],
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
    finally:
        child.kill()
        child.wait()
    return tmp_path / f"core.{child.pid}"


def test_a_gcore_of_a_child_becomes_a_snapshot_both_unwinders_walk_as_eu_stack_does(
        core_of_a_child: Path, tmp_path: Path) -> None:
    out = tmp_path / "sleep.wfsnap"
    done = walkfuzz("snapshot", "core", str(core_of_a_child), "-o", str(out))
    assert done.returncode == 0, done.stderr
    [command] = replay_commands(done.stdout)
    doc = replay_twice(command)
    expected = eu_stack_pcs(core_of_a_child)
    for walk in doc["walks"]:  # type: ignore[attr-defined]
        pcs = [int(f.split("pc=")[1].split()[0], 16) for f in walk["frames"]]
        assert pcs == expected, (walk["unwinder"], walk)
        assert walk["verdict"] == "ok" and walk["truth"]["ranges"] == 0


def test_bad_snapshot_and_core_arguments_are_one_line_and_exit_2(tmp_path: Path) -> None:
    not_core = tmp_path / "not-a-core"
    not_core.write_bytes(b"WFSNAP1\0" + bytes(10))  # a snapshot's magic, then too short
    for args in (("snapshot", "core", str(not_core), "-o", str(tmp_path / "x")),
                 ("replay", str(not_core)),
                 ("snapshot", "capture", "--out", str(tmp_path), "--chain", "1,16")):
        done = walkfuzz(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
        assert not (tmp_path / "x").exists()


def test_a_snapshot_campaign_seeds_itself_with_live_samples_and_replays_them(
        tmp_path: Path) -> None:
    out = tmp_path / "campaign"
    done = walkfuzz("fuzz", "--target", "native", "--harness", "snapshot", "--unwinder", "libdw",
                    "--runs", "800", "-j", "1", "--out", str(out))
    assert done.returncode in (0, 1), done.stderr  # 1: it found something, saved under out
    report = json.loads((out / "report.json").read_text())
    assert report["meta"]["target"] == "native"
    corpus = sorted((out / "corpus").iterdir())
    seeds = [p for p in corpus if p.name.startswith("chain-")]  # the live samples
    assert len(seeds) == 16, corpus
    # what libFuzzer added kept the captured header, truth and map: only registers and stack
    # bytes were mutated or spliced, so every input still names the seeds' modules
    maps = {fmt.decode(p.read_bytes()).map_text for p in corpus}
    assert maps <= {fmt.decode(p.read_bytes()).map_text for p in seeds}, maps
    replayed = walkfuzz("replay", "--unwinder", "libdw", str(seeds[0]))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert json.loads(replayed.stdout)["walks"][0]["truth"]["matched"]
