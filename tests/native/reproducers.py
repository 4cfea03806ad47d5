"""Running a reproducer the way a user does: the command copied from a written report (or
triage's table), run in a fresh process with a user's environment, its exit status checked
against the documented one and the signature its replay names against the finding's.

How a replay names a finding, per target (what `replayed_findings` reads):
  minivm     `walkfuzz replay` prints a line `finding: KIND SIGNATURE` (none: `finding: none`)
  libunwind  `walkfuzz replay --target libunwind` prints JSON with "verdict" and "signature"
             (native too; a process that died: "process_died" and "signature", a crash)
  snapshot   `walkfuzz replay SNAPSHOT` prints JSON with "walks", a verdict each
  hotspot    `walkfuzz replay --target hotspot` prints JSON with "signatures" (the faults of
             the fresh JVM by signature, each a crash)
What it printed is compared with what the run stored for the input the reproducer names
(`stored_finding`: the description beside it), never with the report, which is read from the
same description. A reproducer that reruns a whole run (a finding without input bytes) is
checked by the report the rerun writes instead (`report_signatures`).
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.opt_outs import skip_if_opted_out
from tests.shared_runs import once
from walkfuzz.core.errors import UserError
from walkfuzz.targets.hotspot.jdk import find_jdk

ROOT = Path(__file__).resolve().parents[2]
WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
# What `make test` sets for its own runs (the sanitizer flavour and runtime) is not in a user's
# shell: a copied command runs with the default build.
NOT_A_USERS = ("WALKFUZZ_NATIVE", "LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "PYTHONMALLOC")
# Documented exit statuses (README, docs/triage.md, docs/targets.md).
REPLAY_FOUND = 1  # walkfuzz replay: the input is a finding (or walks unlike the spec)
FUZZ_FOUND = 1  # walkfuzz fuzz: findings
# walkfuzz stress: a fault, a hang, an invalid trace or a dead JVM fail it
STRESS_CLEAN, STRESS_FAILED = 0, 1
TRIAGE_FOUND = 1  # walkfuzz triage: findings
COPIES = ("crash-", "timeout-")  # a campaign's libFuzzer-style copy of a stored input
# A copied command may take long on a busy machine (a JVM replay runs 10 s of its own); the
# cap only stops a hung process.
TIMEOUT = 1200.0


def user_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in NOT_A_USERS}
    env["PATH"] = f"{WALKFUZZ.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def walkfuzz(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`walkfuzz ARGS` as a user runs it (the installed console script)."""
    return subprocess.run([str(WALKFUZZ), *args], capture_output=True, text=True, cwd=cwd,
                          env=user_env(), timeout=TIMEOUT)


def run_reproducer(command: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run a reproducer exactly as printed: a shell command line that starts with walkfuzz."""
    argv = shlex.split(command)
    assert argv and argv[0] == "walkfuzz", f"not a walkfuzz command: {command!r}"
    return walkfuzz(*argv[1:], cwd=cwd)


def report_groups(out: Path) -> list[dict[str, Any]]:
    """The finding groups of out/report.json; each reproducer also appears, as printed, in
    report.md and report.html (a user may copy it from either)."""
    groups: list[dict[str, Any]] = json.loads((out / "report.json").read_text())["findings"]
    md, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    for group in groups:
        command = group["reproducer"]
        assert html.escape(command, quote=False).replace("|", "\\|") in md, command
        assert html.escape(command, quote=True) in page, command
    return groups


def replayed_findings(target: str, stdout: str) -> set[tuple[str, str]]:
    """The findings, (kind, signature), a replay's output names (see the module docstring)."""
    if target == "minivm":
        return {(line.split()[1], line.split()[2]) for line in stdout.splitlines()
                if line.startswith("finding: ") and line != "finding: none"}
    doc = json.loads(stdout[stdout.index("{"):])
    if target in ("libunwind", "native"):
        kind = "crash" if "process_died" in doc else doc.get("verdict")
        return {(str(kind), doc["signature"])} if "signature" in doc else set()
    if target == "hotspot":
        return {("crash", signature) for signature in doc.get("signatures", {})}
    raise AssertionError(f"no replay for target {target!r}")


def replayed_signatures(target: str, stdout: str) -> set[str]:
    """The signatures a replay's output names."""
    return {signature for _, signature in replayed_findings(target, stdout)}


def stored_finding(path: Path) -> dict[str, Any]:
    """The description a run stored for the input or snapshot at `path`: the JSON beside it in
    findings/<signature>/, or for a libFuzzer-style copy in a campaign's folder (crash-<sha1>,
    timeout-<sha1>) the one of the input it copies."""
    if path.parent.parent.name == "findings":
        description = path.with_suffix(".json")
    else:
        sha1 = path.name.split("-", 1)[1]
        (description,) = path.parent.glob(f"findings/*/{sha1}.json")
    doc: dict[str, Any] = json.loads(description.read_text())
    return doc


def reproducer_input(command: str) -> Path:
    """The stored input (or snapshot, or copy) a `walkfuzz replay` reproducer names."""
    paths = [Path(a) for a in shlex.split(command)
             if Path(a).parent.parent.name == "findings" or Path(a).name.startswith(COPIES)]
    assert len(paths) == 1, f"not one stored input in {command!r}"
    return paths[0]


def check_replay(target: str, group: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """Run a group's `walkfuzz replay` reproducer: exit status 1, and the finding stored for
    its input printed again (check_replayed)."""
    return check_replayed(target, group, run_reproducer(group["reproducer"]))


def check_replayed(target: str, group: dict[str, Any],
                   done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """`done`, the run of a group's reproducer: exit status 1, and what it printed is the
    finding stored for the reproducer's input (kind and signature; a JVM replay may meet other
    faults beside it), which is the group's."""
    stored = stored_finding(reproducer_input(group["reproducer"]))
    assert stored["signature"] == group["signature"], (stored["signature"], group["signature"])
    assert done.returncode == REPLAY_FOUND, (group["reproducer"], done.stdout[-2000:],
                                             done.stderr[-2000:])
    found, want = replayed_findings(target, done.stdout), (stored["kind"], stored["signature"])
    if target == "hotspot":
        assert want in found, (want, done.stdout[-2000:])
    else:
        assert found == {want}, (want, done.stdout[-2000:])
    return done


def is_snapshot_reproducer(command: str) -> bool:
    """A native finding's reproducer that walks the snapshot saved beside its input
    (walkfuzz.targets.native.fresh_replay: the input walks clean in a fresh process)."""
    return command.startswith("walkfuzz replay --unwinder ") and command.endswith(".wfsnap")


def check_snapshot_replay(group: dict[str, Any]) -> dict[str, Any]:
    """Run a group's snapshot reproducer: exit status 1, a walk that is the kind of finding
    stored beside the snapshot (a remote walk has a signature of its own), the same on both
    walks of the replay; returns that walk."""
    stored = stored_finding(reproducer_input(group["reproducer"]))
    assert stored["signature"] == group["signature"], (stored["signature"], group["signature"])
    done = run_reproducer(group["reproducer"])
    assert done.returncode == REPLAY_FOUND, (group["reproducer"], done.stdout[-2000:],
                                             done.stderr[-2000:])
    walk: dict[str, Any] = json.loads(done.stdout)["walks"][0]
    assert walk["verdict"] == stored["kind"] and walk["repeatable"], (stored["kind"], walk)
    return walk


def report_signatures(out: Path) -> set[str]:
    """The signatures a (re)run wrote into out/report.json."""
    return {g["signature"] for g in json.loads((out / "report.json").read_text())["findings"]}


# `walkfuzz fuzz --target libunwind --stop-on-first` ends at its first finding, a guarded fault
# within a second of walking with the plain build, mostly (docs/targets.md): the time is a cap.
LIBUNWIND_FIND_CAP = "900"


def libunwind_campaign(factory: pytest.TempPathFactory) -> Path:
    """The output of a libunwind campaign run until its first finding (exit status 1), as a
    user runs it (the default build, whatever flavour the test session has), made once per
    test session (tests/shared_runs.py): test_reproducers.py and test_targets_e2e.py check it."""
    def run(root: Path) -> dict[str, str]:
        out = root / "out"
        done = walkfuzz("fuzz", "--target", "libunwind", "--stop-on-first", "--time",
                        LIBUNWIND_FIND_CAP, "--out", str(out))
        assert done.returncode == FUZZ_FOUND, done.stderr[-2000:]
        return {"out": str(out)}

    return Path(once(factory, "libunwind-fuzz", run)["out"])


# A guarded fault came within the first half second of every run measured on a busy 2-core
# machine (docs/targets.md); runs of HOTSPOT_RUN_SECONDS, each a fresh JVM with its own seed,
# repeat until one finds a fault, up to a cap far above that. A run is long enough for its
# most frequent fault to be the one every JVM meets (the reproducer test replays that one).
HOTSPOT_JDK = "17"
HOTSPOT_RUN_SECONDS = 10
HOTSPOT_MAX_RUNS = 10


class HotspotCampaign:
    """The first of a series of `walkfuzz fuzz --target hotspot` runs whose report has a crash
    group, made once per test session (tests/shared_runs.py), and the replays of its
    reproducers, each also run once per session."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.out = Path(once(factory, "hotspot-fuzz", hotspot_runs)["out"])

    def replay(self, reproducer: str) -> subprocess.CompletedProcess[str]:
        """The reproducer run as a user runs it (run_reproducer)."""
        def run(_: Path) -> dict[str, Any]:
            done = run_reproducer(reproducer)
            return {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}

        key = hashlib.sha1(reproducer.encode()).hexdigest()
        done = once(self.factory, f"hotspot-replay-{key}", run)
        return subprocess.CompletedProcess(shlex.split(reproducer), done["returncode"],
                                           done["stdout"], done["stderr"])


def hotspot_runs(root: Path) -> dict[str, Any]:
    """Runs of the HotSpot fuzz campaign under `root` until one's report has a crash group
    (its folder, "out"); each run's JVM alive at its end, its exit status 1 with findings, 0
    without."""
    skip_if_opted_out("hotspot")
    try:
        jdk = find_jdk(HOTSPOT_JDK).label
    except UserError as err:
        pytest.fail(f"no JDK {HOTSPOT_JDK} (make setup installs openjdk-17-jdk-headless): {err}")
    for seed in range(1, HOTSPOT_MAX_RUNS + 1):
        out = root / f"seed-{seed}"
        done = walkfuzz("fuzz", "--target", "hotspot", "--jdk", jdk, "--time",
                        str(HOTSPOT_RUN_SECONDS), "--seed", str(seed), "--out", str(out))
        report = json.loads((out / "report.json").read_text())
        assert report["counters"]["jvm_alive_at_end"] is True, done.stderr[-2000:]
        assert done.returncode == (FUZZ_FOUND if report["findings"] else 0), \
            done.stderr[-2000:]
        if any(g["kind"] == "crash" for g in report["findings"]):
            return {"out": str(out)}
    raise AssertionError(f"no guarded fault in {HOTSPOT_MAX_RUNS} runs of "
                         f"{HOTSPOT_RUN_SECONDS} s of perturbed AsyncGetCallTrace calls")
