"""Every reproducer a report prints runs: a real finding per target (planted-bug walkers for
minivm, perturbed contexts that fault for libunwind, AsyncGetCallTrace in a JVM for hotspot),
its reproducer taken from the written report (or triage's output) as a user would copy it,
run in a fresh process, with the documented exit status, and what the replay printed (its
`finding: KIND SIGNATURE` line or its JSON) is the finding the run stored for that input.

Campaigns run until they find (--stop-on-first, or a loop of short runs) under a generous cap;
nothing here depends on how fast or idle the machine is.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.native.reproducers import (
    FUZZ_FOUND,
    REPLAY_FOUND,
    ROOT,
    STRESS_CLEAN,
    STRESS_FAILED,
    TIMEOUT,
    TRIAGE_FOUND,
    HotspotCampaign,
    check_replay,
    check_replayed,
    check_snapshot_replay,
    is_snapshot_reproducer,
    replayed_findings,
    replayed_signatures,
    report_groups,
    report_signatures,
    reproducer_input,
    run_reproducer,
    stored_finding,
    user_env,
    walkfuzz,
)
from tests.opt_outs import skip_if_opted_out
from tests.shared_runs import once
from walkfuzz.core.errors import UserError
from walkfuzz.findings.store import load_findings
from walkfuzz.targets.minivm import planted

# Seconds: only a cap. --stop-on-first ends a campaign at its first finding, usually within
# seconds (docs/fuzzing.md has the planted bugs' times to find).
FIND_CAP = "900"
ROUNDS = 8  # short runs tried before a target that finds every few seconds is given up on
MINIVM_BUGS = [("inlined-scope-order", "layouts"), ("missing-bounds-check", "layouts"),
               ("queue-bookkeeping", "queue"), ("rewind-keeps-scope", "api"),
               ("depth-off-by-one", "layouts")]


def _minivm_campaign(factory: pytest.TempPathFactory, bug: str, harness: str) -> Path:
    def run(folder: Path) -> dict[str, str]:
        out = folder / "out"
        walker = planted.build(planted.planted_bug(bug), "cov")
        done = walkfuzz("fuzz", "--target", "minivm", "--harness", harness, "--walker",
                        str(walker), "--stop-on-first", "--time", FIND_CAP, "--out", str(out))
        assert done.returncode == FUZZ_FOUND, done.stderr[-2000:]
        return {"out": str(out)}

    return Path(once(factory, f"minivm-{bug}", run)["out"])


@pytest.fixture(scope="module")
def minivm_campaign(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Path]:
    """A planted bug's campaign output, run once per bug for the tests of this module, on
    whichever xdist worker asks first (tests/shared_runs.py)."""
    return lambda bug, harness: _minivm_campaign(tmp_path_factory, bug, harness)


@pytest.mark.parametrize(("bug", "harness"), MINIVM_BUGS, ids=[b for b, _ in MINIVM_BUGS])
def test_minivm_fuzz_reproducers_replay_the_signature(
        bug: str, harness: str, minivm_campaign: Callable[[str, str], Path]) -> None:
    groups = report_groups(minivm_campaign(bug, harness))
    assert groups
    for group in groups:
        assert group["reproducer"].startswith(
            f"walkfuzz replay --target minivm --harness {harness} --walker ")
        check_replay("minivm", group)


def test_triage_reproducers_replay_the_group(
        minivm_campaign: Callable[[str, str], Path], tmp_path: Path) -> None:
    outs = [minivm_campaign(bug, harness) for bug, harness in MINIVM_BUGS]
    triage_json = tmp_path / "triage.json"
    done = walkfuzz("triage", *map(str, outs), "--json", str(triage_json))
    assert done.returncode == TRIAGE_FOUND, done.stderr[-2000:]
    groups = json.loads(triage_json.read_text())["groups"]
    assert len(groups) >= len(MINIVM_BUGS)
    for group in groups:
        command = group["reproducer"]
        assert command in done.stdout  # the table prints the same command
        path = shlex.split(command)[-1]
        (smallest,) = [i for i in group["inputs"] if i["path"] == path]
        stored = stored_finding(Path(path))
        replay = run_reproducer(command)
        assert replay.returncode == REPLAY_FOUND, replay.stderr[-2000:]
        assert replayed_findings("minivm", replay.stdout) == {
            (stored["kind"], stored["signature"])} == {(stored["kind"], smallest["signature"])}


def _needs_unwind() -> None:
    """Skip only when libunwind is opted out; a missing build is a failure naming it."""
    skip_if_opted_out("libunwind")
    try:
        import walkfuzz._unwind  # noqa: F401
    except ImportError as err:
        pytest.fail(f"walkfuzz._unwind not built (libunwind-dev; make build): {err}")


COPY_TRIES = 3  # fresh processes a process-state-reading input gets to show its finding
# What walkfuzz.targets.native.fresh_replay writes in a group's `replay` detail when the run
# replayed the reproducer in a fresh process and it gave the finding (the input, or the
# snapshot beside it).
REPRODUCES = ("the input reproduces it", "the snapshot beside the input reproduces it")


def _replayed(done: subprocess.CompletedProcess[str]) -> set[str]:
    """The signatures a libunwind replay printed, after checking its documented status (1: a
    finding again, with one signature; 0: clean, none)."""
    assert done.returncode in (0, REPLAY_FOUND), done.stderr[-2000:]
    signatures = replayed_signatures("libunwind", done.stdout)
    assert len(signatures) == (1 if done.returncode == REPLAY_FOUND else 0), done.stdout
    return signatures


def _check_copies(out: Path) -> None:
    """Every stored input (never empty: a perturbation record) has its libFuzzer-style copy in
    the campaign's folder, crash-<sha1> (a hang's: timeout-<sha1>), holding the same bytes."""
    inputs = sorted(out.glob("findings/*/*.bin"))
    assert inputs
    for path in inputs:
        kind = stored_finding(path)["kind"]
        copy = out / f"{'timeout' if kind == 'hang' else 'crash'}-{path.stem}"
        assert path.read_bytes() and copy.is_file(), f"{copy} missing for {path}"
        assert copy.read_bytes() == path.read_bytes(), copy


def _gives(args: list[str], finding: tuple[str, str]) -> bool:
    """Whether `walkfuzz ARGS` (a replay: the printed reproducer, or docs/native.md's form on
    the input's copy, `walkfuzz replay --target libunwind crash-<sha1>`) gives the finding
    within COPY_TRIES fresh processes, each with a documented status: the copy's path is not
    the input's, and a perturbation that reads the words at the top of the stack (argv and
    the environment lie there) or stale words below it may meet other values."""
    for _ in range(COPY_TRIES):
        again = walkfuzz(*args)
        _replayed(again)
        if again.returncode == REPLAY_FOUND and \
                replayed_findings("libunwind", again.stdout) == {finding}:
            return True
    return False


def _check_libunwind_replays(out: Path) -> None:
    """Every reproducer runs as printed. One the report says reproduces (the run replayed it in
    a fresh process: walkfuzz.targets.native.fresh_replay) gives, with exit status 1, the
    finding stored for the input it names, and so does that input's copy; one the report says
    does not (an input that reads process state: docs/native.md, "Reproducers") runs with a
    documented status and the report says why. Every stored input has its copy."""
    groups = report_groups(out)
    assert groups
    _check_copies(out)
    reproduced = 0
    for group in groups:
        detail = str(group["details"].get("replay", ""))
        if is_snapshot_reproducer(group["reproducer"]):  # its input walks clean elsewhere
            assert detail.startswith(REPRODUCES[1]), detail
            check_snapshot_replay(group)
            reproduced += 1
            continue
        assert group["reproducer"].startswith("walkfuzz replay --target native --harness ")
        if not detail.startswith(REPRODUCES[0]):
            assert detail.startswith(("the input does not reproduce it", "not checked: ")), detail
            _replayed(run_reproducer(group["reproducer"]))
            continue
        path = reproducer_input(group["reproducer"])
        stored = stored_finding(path)
        assert stored["signature"] == group["signature"], (stored["signature"], group)
        want = (stored["kind"], stored["signature"])
        # the report checked it in one fresh process; an input that reads process state (a
        # frame classed by where a stale word points) may meet other values in another, so it
        # gets COPY_TRIES fresh processes, as its copy does, to show the same finding
        assert _gives(shlex.split(group["reproducer"])[1:], want), (group["reproducer"], want)
        reproduced += 1
        copy = out / f"{'timeout' if stored['kind'] == 'hang' else 'crash'}-{path.stem}"
        assert _gives(["replay", "--target", "libunwind", str(copy)], want), (copy, want)
    assert reproduced > 0, [(g["signature"], g["details"].get("replay")) for g in groups]


def test_libunwind_fuzz_reproducers_replay(libunwind_fuzz: Callable[[], Path]) -> None:
    """The session's campaign until its first finding (tests/native/conftest.py), shared with
    tests/native/test_targets_e2e.py."""
    _needs_unwind()
    _check_libunwind_replays(libunwind_fuzz())


def test_libunwind_runner_reproducers_replay(tmp_path: Path) -> None:
    """The generator engine (supervised processes, no libFuzzer) stores the same kind of
    input; its faults come within a second (docs/native.md), a few rounds at most."""
    _needs_unwind()
    for round_ in range(ROUNDS):
        out = tmp_path / f"round-{round_}"
        done = walkfuzz("fuzz", "--target", "libunwind", "--engine", "generator", "--time",
                        "3", "-j", "1", "--seed", str(round_ + 1), "--out", str(out))
        if done.returncode == FUZZ_FOUND:
            break
        assert done.returncode == 0, done.stderr[-2000:]
    else:
        pytest.fail(f"no libunwind finding in {ROUNDS} runs of 3 s")
    _check_libunwind_replays(out)


def _jdk() -> str:
    from walkfuzz.targets.hotspot.jdk import find_jdk

    skip_if_opted_out("hotspot")
    try:
        return find_jdk("17").label
    except UserError as err:
        pytest.fail(f"no JDK 17 (make setup installs openjdk-17-jdk-headless): {err}")


def _run_until(found: Callable[[Path], list[dict[str, Any]]], command: Callable[[Path], list[str]],
               root: Path, statuses: tuple[int, ...]) -> tuple[Path, list[dict[str, Any]]]:
    """Short runs until one's report has groups `found` picks; each exits with a status in
    `statuses`."""
    for round_ in range(ROUNDS):
        out = root / f"round-{round_}"
        done = walkfuzz(*command(out))
        assert done.returncode in statuses, done.stderr[-2000:]
        groups = found(out)
        if groups:
            return out, groups
    pytest.fail(f"nothing found in {ROUNDS} runs of {command(root)}")


def test_hotspot_fuzz_reproducer_faults_again_with_the_signature(
        hotspot_campaign: Callable[[], HotspotCampaign]) -> None:
    """The record of the most frequent fault, applied alone in a fresh JVM. Perturbations
    relative to a base the agent finds in every JVM replay (docs/hotspot.md); the most
    frequent fault has been `fp set stack_hi-k` on both JDKs. The runs are the session's
    (tests/native/conftest.py), shared with tests/native/test_targets_e2e.py."""
    campaign = hotspot_campaign()
    groups = [g for g in report_groups(campaign.out) if g["kind"] == "crash"]
    top = max(groups, key=lambda g: g["count"])
    assert top["reproducer"].startswith("walkfuzz replay --target hotspot --harness perturb ")
    replay = campaign.replay(top["reproducer"])
    check_replayed("hotspot", top, replay)
    assert json.loads(replay.stdout)["reproduced"] is True


def test_hotspot_stress_reproducer_is_the_run_and_finds_the_signature_again(
        tmp_path: Path) -> None:
    """An invalid trace of a live sample has no input to replay: its reproducer is the stress
    run's command. Invalid traces are rare (0.03%-0.12% of samples, docs/hotspot.md), so the
    rerun is tried a few times until the signature comes back."""
    jdk = _jdk()

    def invalid(out: Path) -> list[dict[str, Any]]:
        return [g for g in report_groups(out) if g["kind"] == "invalid-trace"]

    out, groups = _run_until(invalid, lambda out: ["stress", "--target", "hotspot", "--jdk", jdk,
                                                   "--duration", "4s", "--out", str(out)],
                             tmp_path, (STRESS_CLEAN, STRESS_FAILED))
    top = max(groups, key=lambda g: g["count"])
    assert shlex.split(top["reproducer"])[:4] == ["walkfuzz", "stress", "--target", "hotspot"]
    triage_json = tmp_path / "triage.json"  # triage groups stored hotspot findings unreplayed
    triaged = walkfuzz("triage", str(out), "--json", str(triage_json))
    assert triaged.returncode == TRIAGE_FOUND, triaged.stderr[-2000:]
    by_signature = {s["signature"]: g["reproducer"]
                    for g in json.loads(triage_json.read_text())["groups"] for s in g["signatures"]}
    assert by_signature[top["signature"]] == top["reproducer"]
    for _ in range(ROUNDS):
        rerun = run_reproducer(top["reproducer"])
        report = json.loads((out / "report.json").read_text())
        failed = bool(report["findings"]) or not report["counters"]["jvm_alive_at_end"]
        assert rerun.returncode == (STRESS_FAILED if failed else STRESS_CLEAN), rerun.stderr
        if top["signature"] in report_signatures(out):
            return
    pytest.fail(f"{top['signature']} did not come back in {ROUNDS} reruns of {top['reproducer']}")


def test_minivm_live_stress_reproducer(tmp_path: Path) -> None:
    """A planted walker's live findings (each a captured case), the reproducer from the report
    (`walkfuzz replay [--walker W] FILE`), the replay naming the same signature."""
    walker = planted.build(planted.planted_bug("inlined-scope-order"), "plain")

    def invalid(out: Path) -> list[dict[str, Any]]:
        return [g for g in report_groups(out) if g["kind"] == "invalid-trace"]

    _, groups = _run_until(invalid, lambda out: ["stress", "--target", "minivm", "--walker",
                                                 str(walker), "--duration", "2s", "--baseline",
                                                 "0", "--out", str(out)],
                           tmp_path, (STRESS_FAILED,))  # its invalid traces are findings
    check_replay("minivm", groups[0])


def test_a_harness_run_by_hand_replays_a_crash_file(
        minivm_campaign: Callable[[str, str], Path], tmp_path: Path) -> None:
    """docs/fuzzing.md: `harnesses/H.py crash-<sha1>` replays one input (runs the file once,
    exit 1: it is a finding) and saves what it finds under $WALKFUZZ_OUT."""
    bug, harness = MINIVM_BUGS[1]
    out = minivm_campaign(bug, harness)
    group = next(g for g in report_groups(out) if g["kind"] == "crash")
    crash_file = out / f"crash-{Path(group['examples'][0]).stem}"
    walker = planted.build(planted.planted_bug(bug), "cov")
    done = subprocess.run(
        [str(ROOT / "harnesses" / f"{harness}.py"), str(crash_file)], capture_output=True,
        text=True, cwd=tmp_path, timeout=TIMEOUT,
        env={**user_env(), "WALKFUZZ_OUT": str(tmp_path / "by-hand"),
             "WALKFUZZ_WALKER": str(walker)})
    assert done.returncode == 1, done.stderr[-2000:]
    assert {f.signature for f in load_findings(tmp_path / "by-hand")} == {group["signature"]}
