"""Exit statuses, output paths and interrupts of the long commands, run as a user runs them:
0 clean, 1 findings, 2 bad input, 130 interrupted (walkfuzz.core.exit_status); an output path
that cannot be written is one line before any work; Ctrl-C or SIGTERM keeps what was found and
writes the report; a run that did no work is an error."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.opt_outs import skip_if_opted_out
from tests.shared_runs import once
from walkfuzz.core.exit_status import BAD_INPUT, CLEAN, FINDINGS, INTERRUPTED
from walkfuzz.targets.minivm.planted import build, planted_bug
from walkfuzz.targets.table import target_names

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "tests" / "fixtures" / "toy_harness.py"
WALKFUZZ = [sys.executable, "-m", "walkfuzz.cli"]
TIMEOUT = 180.0  # a cap for a command that hangs, far above what any of these takes
WAIT_CAP = 120.0  # how long a test waits for a run to reach the point it interrupts
# A short minivm stress run: a walk budget the busiest machine finishes, no baseline phase.
SHORT_STRESS = ("--walks", "300", "--duration", "20s", "--baseline", "0")


def walkfuzz(*args: str | Path, env: dict[str, str] | None = None,
             cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WALKFUZZ, *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=cwd, env={**os.environ, **(env or {})})


def one_error_line(done: subprocess.CompletedProcess[str], *named: str) -> str:
    """The one line a bad input gets: status 2, no traceback, naming `named`."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == BAD_INPUT, done.stderr[-2000:]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert all(text in lines[0] for text in named), lines[0]
    return lines[0]


def ctrl_c_as_on_a_terminal() -> None:
    """In the command's process, before exec: Ctrl-C as a terminal's foreground job gets it. A
    job a non-interactive shell starts in the background (`make test &`, CI launchers) inherits
    SIGINT ignored, and an ignored SIGINT stays ignored in every program it runs."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupted(argv: list[str], ready: Callable[[int], bool],
                signo: int) -> subprocess.CompletedProcess[str]:
    """Run `argv`, wait until `ready(its pid)`, then send `signo`: SIGINT to the whole process
    group, as a terminal's Ctrl-C does; SIGTERM to the command alone, as a CI timeout does."""
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=ROOT, start_new_session=True, preexec_fn=ctrl_c_as_on_a_terminal)
    deadline = time.monotonic() + WAIT_CAP
    while not ready(child.pid):
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            out, err = child.communicate()
            raise AssertionError(f"never ready (status {child.returncode}): {err[-2000:]}")
        time.sleep(0.05)
    if signo == signal.SIGINT:
        os.killpg(child.pid, signo)
    else:
        child.send_signal(signo)
    out, err = child.communicate(timeout=TIMEOUT)
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


def report_of(out: Path) -> dict[str, object]:
    doc: dict[str, object] = json.loads((out / "report.json").read_text())
    return doc


def status_of_report(out: Path) -> object:
    meta = report_of(out)["meta"]
    assert isinstance(meta, dict)
    return meta["status"]


@pytest.fixture(scope="module")
def planted_walker() -> Path:
    """A walker whose every compiled frame walks wrong: invalid traces at once."""
    return build(planted_bug("frame-size-off-by-one"), "plain")


@pytest.fixture(scope="module")
def found_stress(tmp_path_factory: pytest.TempPathFactory, planted_walker: Path) -> Path:
    """A stress run's output folder with findings, made once per session on whichever xdist
    worker asks first (tests/shared_runs.py); the tests only read it."""

    def make(folder: Path) -> dict[str, str]:
        out = folder / "stress"
        done = walkfuzz("stress", "--walker", planted_walker, *SHORT_STRESS, "--out", out)
        assert done.returncode == FINDINGS, done.stderr[-2000:]
        return {"out": str(out)}

    return Path(once(tmp_path_factory, "found-stress", make)["out"])


# ---- stress ----------------------------------------------------------------------------------


def test_stress_with_invalid_traces_exits_1_and_clean_exits_0(tmp_path: Path,
                                                              found_stress: Path) -> None:
    report = report_of(found_stress)
    counters = report["counters"]
    assert isinstance(counters, dict) and counters["invalid"] > 0
    assert list(found_stress.glob("crash-*")) and report["findings"]
    clean = walkfuzz("stress", *SHORT_STRESS, "--out", tmp_path / "clean")
    counters = report_of(tmp_path / "clean")["counters"]
    assert isinstance(counters, dict)
    found = counters["invalid"] + counters["faults"] + counters["hangs"]
    assert clean.returncode == (FINDINGS if found else CLEAN), clean.stderr[-2000:]


def test_max_invalid_rate_tolerates_invalid_traces(tmp_path: Path, planted_walker: Path) -> None:
    done = walkfuzz("stress", "--walker", planted_walker, *SHORT_STRESS,
                    "--max-invalid-rate", "1", "--out", tmp_path)
    counters = report_of(tmp_path)["counters"]
    assert isinstance(counters, dict) and counters["invalid"] > 0
    assert counters["faults"] == counters["hangs"] == 0
    assert done.returncode == CLEAN, done.stderr[-2000:]


@pytest.mark.parametrize("rate", ["2", "-0.1", "nan", "half"])
def test_max_invalid_rate_is_a_share_of_the_walks(rate: str) -> None:
    one_error_line(walkfuzz("stress", "--max-invalid-rate", rate, "--duration", "1s"),
                   "--max-invalid-rate", repr(rate), "0 to 1" if rate == "half" else "0 and 1")


def test_a_rate_above_max_invalid_rate_says_the_rate_and_the_bound(
        tmp_path: Path, planted_walker: Path) -> None:
    done = walkfuzz("stress", "--walker", planted_walker, *SHORT_STRESS,
                    "--max-invalid-rate", "1e-9", "--out", tmp_path)
    counters = report_of(tmp_path)["counters"]
    assert isinstance(counters, dict) and counters["invalid"] > 0
    assert counters["faults"] == counters["hangs"] == 0
    assert done.returncode == FINDINGS, done.stderr[-2000:]
    walked = counters["walked"]
    assert isinstance(walked, int)
    rate = f"{counters['invalid'] / walked:.4%}"
    assert f"invalid-trace rate {rate} is above --max-invalid-rate 1e-09" in done.stderr, \
        done.stderr[-2000:]


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupted_stress_keeps_its_findings_and_report(tmp_path: Path, planted_walker: Path,
                                                          signo: int) -> None:
    out = tmp_path / "D"
    done = interrupted([*WALKFUZZ, "stress", "--walker", str(planted_walker), "--duration",
                        "10m", "--baseline", "0", "--out", str(out)],
                       lambda pid: any(out.glob("crash-*")), signo)
    assert done.returncode == INTERRUPTED, done.stderr[-2000:]
    assert status_of_report(out) == "interrupted"
    assert report_of(out)["findings"] and any(out.glob("crash-*"))
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("target", ["minivm", "libunwind"])
def test_a_stress_run_that_walked_nothing_is_an_error(tmp_path: Path, target: str) -> None:
    if target != "minivm":
        skip_if_opted_out(target)
    done = walkfuzz("stress", "--target", target, "--interval", "2s", "--duration", "1s",
                    "--baseline", "0", "--out", tmp_path)
    assert done.returncode == BAD_INPUT, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert "no sample was walked" in last and "--interval" in last, last
    assert status_of_report(tmp_path) == "failed"  # the report of what it did is there


def children(pid: int) -> list[int]:
    """The child processes of `pid`, started from any of its threads."""
    return [int(c) for task in Path(f"/proc/{pid}/task").glob("*/children")
            for c in task.read_text().split()]


def sampling(pid: int) -> bool:
    """Whether the stress child of `pid` runs its workload threads (beside its main thread and
    the run's thread): it samples, and an interrupt now ends the run, not the process."""
    return any(len(list(Path(f"/proc/{child}/task").glob("*"))) >= 4
               for child in children(pid))


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupted_libunwind_stress_writes_its_report(tmp_path: Path, signo: int) -> None:
    skip_if_opted_out("libunwind")
    done = interrupted([*WALKFUZZ, "stress", "--target", "libunwind", "--duration", "10m",
                        "--baseline", "0", "--threads", "2", "--out", str(tmp_path)],
                       sampling, signo)
    assert done.returncode == INTERRUPTED, done.stderr[-2000:]
    assert status_of_report(tmp_path) == "interrupted"
    assert "Traceback" not in done.stderr


def agent_started(out: Path) -> Callable[[int], bool]:
    """Whether the HotSpot agent of a run into `out` writes its heartbeat: the JVM runs."""
    events = out / "jvm" / "agent.jsonl"
    return lambda pid: events.is_file() and bool(events.read_text().strip())


# Long runs of the real targets, each interrupted once it runs (by the given signal), and the
# target each needs.
REAL_TARGET_RUNS = {
    "hotspot-stress": ("hotspot", signal.SIGINT, ["stress", "--target", "hotspot",
                                                  "--duration", "10m"]),
    "hotspot-fuzz": ("hotspot", signal.SIGTERM, ["fuzz", "--target", "hotspot", "--time",
                                                 "10m"]),
    "libunwind-generator": ("libunwind", signal.SIGINT, ["fuzz", "--target", "libunwind",
                                                         "--engine", "generator", "--time",
                                                         "10m"]),
}


@pytest.mark.parametrize("run", sorted(REAL_TARGET_RUNS))
def test_interrupted_runs_of_the_real_targets_write_their_report(tmp_path: Path,
                                                                 run: str) -> None:
    target, signo, argv = REAL_TARGET_RUNS[run]
    skip_if_opted_out(target)
    ready = (agent_started(tmp_path) if target == "hotspot"
             else lambda pid: any(tmp_path.glob("crash-*")))
    done = interrupted([*WALKFUZZ, *argv, "--out", str(tmp_path)], ready, signo)
    assert done.returncode == INTERRUPTED, done.stderr[-2000:]
    assert status_of_report(tmp_path) == "interrupted"
    assert "Traceback" not in done.stderr


# A real target's stress run as short as it goes: its status says whether its report has
# findings.
OTHER_TARGETS = {"libunwind": ("--duration", "1s", "--baseline", "0"),
                 "hotspot": ("--duration", "1s")}


@pytest.mark.parametrize("target", sorted(OTHER_TARGETS))
def test_stress_of_every_target_exits_1_exactly_when_it_found_something(
        tmp_path: Path, target: str) -> None:
    skip_if_opted_out(target)
    done = walkfuzz("stress", "--target", target, *OTHER_TARGETS[target], "--out", tmp_path)
    assert done.returncode in (CLEAN, FINDINGS), done.stderr[-2000:]
    assert done.returncode == (FINDINGS if report_of(tmp_path)["findings"] else CLEAN)


# ---- output paths ----------------------------------------------------------------------------


@pytest.mark.parametrize("target", target_names())
@pytest.mark.parametrize("command", ["fuzz", "stress"])
def test_out_naming_a_file_is_one_line_before_any_work(tmp_path: Path, command: str,
                                                       target: str) -> None:
    existing = tmp_path / "a-file"
    existing.write_text("mine\n")
    extra = ["--harness", "layouts"] if (command, target) == ("fuzz", "minivm") else []
    for out in (existing, existing / "under-it"):
        done = walkfuzz(command, "--target", target, *extra, "--out", out)
        one_error_line(done, "--out", str(out))
    assert existing.read_text() == "mine\n"


# /proc exists and its permission bits let root write, but it takes no new file or folder.
UNWRITABLE_OUT = Path("/proc/walkfuzz")


@pytest.mark.parametrize("argv", [
    ("fuzz", "--harness", "layouts", "--time", "10m"),
    ("stress", "--duration", "10m", "--baseline", "0"),
    ("coverage", ROOT / "corpora" / "layouts"),
], ids=["fuzz", "stress", "coverage"])
def test_an_unwritable_out_is_one_line_before_any_work(argv: tuple[str | Path, ...]) -> None:
    # the run asked for would outlast TIMEOUT: refused before it, or the test fails
    one_error_line(walkfuzz(*argv, "--out", UNWRITABLE_OUT), "--out", str(UNWRITABLE_OUT),
                   "not writable")


@pytest.mark.parametrize("flag", ["--json", "--sarif", "--junit"])
def test_an_unwritable_output_file_is_one_line_before_any_work(tmp_path: Path, flag: str,
                                                               found_stress: Path) -> None:
    out = UNWRITABLE_OUT.with_suffix(".out")  # its folder exists: only writing tells
    command = ("regress", "--baseline", tmp_path / "b.json", "--update-baseline") \
        if flag == "--junit" else ("triage",)
    one_error_line(walkfuzz(*command, found_stress, flag, out), flag, str(out), "not writable")
    assert not (tmp_path / "b.json").exists()  # refused before any work


def test_stress_refuses_an_out_holding_a_fuzz_campaign(tmp_path: Path) -> None:
    (tmp_path / "campaign.json").write_text("{}")
    (tmp_path / "report.json").write_text("the campaign's report\n")
    one_error_line(walkfuzz("stress", "--duration", "10m", "--out", tmp_path), "--out",
                   str(tmp_path), "fuzz campaign")
    assert (tmp_path / "report.json").read_text() == "the campaign's report\n"


def test_triage_and_regress_output_files_are_checked_first(tmp_path: Path,
                                                           found_stress: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    one_error_line(walkfuzz("triage", found_stress, "--json", folder), "--json", str(folder))
    unwritable = "/proc/no-such-process/t.sarif"  # /proc takes no new folder, even for root
    one_error_line(walkfuzz("triage", found_stress, "--sarif", unwritable), "--sarif",
                   unwritable)
    one_error_line(walkfuzz("regress", "--baseline", tmp_path / "b.json", "--update-baseline",
                            "--junit", folder, found_stress), "--junit", str(folder))
    assert not (tmp_path / "b.json").exists()  # refused before any work


def test_minimize_and_build_walker_refuse_a_folder_as_their_output(tmp_path: Path,
                                                                   found_stress: Path) -> None:
    crash = sorted(found_stress.glob("crash-*"))[0]
    one_error_line(walkfuzz("minimize", crash, "-o", tmp_path), "--output", str(tmp_path))
    source = ROOT / "examples" / "walker" / "example_walker.c"
    assert source.is_file()
    one_error_line(walkfuzz("build-walker", source, "-o", tmp_path), "--output", str(tmp_path))


def test_triage_writes_into_a_folder_it_creates(tmp_path: Path, found_stress: Path) -> None:
    sarif = tmp_path / "new" / "folder" / "t.sarif"
    done = walkfuzz("triage", found_stress, "--sarif", sarif)
    assert done.returncode == FINDINGS, done.stderr[-2000:]
    assert json.loads(sarif.read_text())["version"] == "2.1.0"


# ---- triage ----------------------------------------------------------------------------------


def test_triage_exits_1_on_findings_and_0_on_a_clean_run(tmp_path: Path,
                                                         found_stress: Path) -> None:
    found = walkfuzz("triage", found_stress)
    assert found.returncode == FINDINGS, found.stderr[-2000:]
    assert "invalid-trace" in found.stdout
    clean_run = tmp_path / "clean"
    run = walkfuzz("fuzz", "--harness", TOY, "--runs", "5", "--no-seeds", "--out", clean_run,
                   env={"WALKFUZZ_TOY_DEATHS": "0"})
    assert run.returncode == CLEAN, run.stderr[-2000:]
    clean = walkfuzz("triage", clean_run)
    assert clean.returncode == CLEAN, clean.stderr[-2000:]
    assert "0 findings" in clean.stdout


def test_triage_of_a_folder_without_inputs_or_an_unknown_target_is_bad_input(
        tmp_path: Path, found_stress: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    one_error_line(walkfuzz("triage", empty), str(empty))
    one_error_line(walkfuzz("triage", "--target", "nosuch", found_stress), "'nosuch'")


def replay_children(pid: int) -> bool:
    """Whether triage's replays started: its process has a child."""
    return bool(children(pid))


def test_interrupted_triage_prints_and_writes_what_it_replayed(tmp_path: Path,
                                                               found_stress: Path) -> None:
    result = tmp_path / "t.json"
    done = interrupted([*WALKFUZZ, "triage", str(found_stress), "--runs", "1000000", "-j", "1",
                        "--json", str(result)], replay_children, signal.SIGINT)
    assert done.returncode == INTERRUPTED, done.stderr[-2000:]
    assert "interrupted" in done.stderr and "Traceback" not in done.stderr
    assert json.loads(result.read_text())["inputs"] < len(list(found_stress.glob("crash-*")))


# ---- fuzz ------------------------------------------------------------------------------------


# Time running out after a death or two, and the supervisor giving up after three deaths.
@pytest.mark.parametrize("budget", ["3", "10m"])
def test_a_campaign_whose_libfuzzer_cannot_start_fails_with_the_reason(tmp_path: Path,
                                                                       budget: str) -> None:
    out = tmp_path / "out"
    done = walkfuzz("fuzz", "--harness", TOY, "--time", budget, "--out", out, "--",
                    "-dict=/nonexistent/walkfuzz.dict")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == BAD_INPUT, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert lines[-1].startswith("walkfuzz fuzz: error: "), lines[-1]
    assert "ParseDictionaryFile" in lines[-1] and "workers/0/log" in lines[-1], lines[-1]
    sessions = json.loads((out / "campaign.json").read_text())["sessions"]
    assert [s["status"] for s in sessions] == ["failed"]
    assert status_of_report(out) == "failed"


def test_interrupted_campaign_exits_130_counts_alike_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    corpus = tmp_path / "seeds"
    corpus.mkdir()
    (corpus / "kill").write_bytes(b"KILL")  # a worker death: a finding the supervisor saves
    stats = out / "stats.jsonl"
    done = interrupted([*WALKFUZZ, "fuzz", "--harness", str(TOY), "--time", "10m", "--corpus",
                        str(corpus), "--out", str(out)],
                       lambda pid: stats.is_file() and bool(stats.read_text().strip()),
                       signal.SIGINT)
    assert done.returncode == INTERRUPTED, done.stderr[-2000:]
    assert status_of_report(out) == "interrupted"
    counters = json.loads((out / "campaign.json").read_text())["sessions"][0]["counters"]
    findings = report_of(out)["findings"]
    assert isinstance(findings, list)
    from_deaths = sum(len(g["examples"]) for g in findings
                      if g["location"].startswith("process-death:"))
    assert counters["findings_from_dead_workers"] == from_deaths >= 1
    again = walkfuzz("fuzz", "--harness", TOY, "--runs", "10", "--out", out)
    assert again.returncode == FINDINGS, again.stderr[-2000:]  # its findings are still there
    assert "resuming campaign" in again.stderr
    assert len(json.loads((out / "campaign.json").read_text())["sessions"]) == 2


# ---- a harness run by hand -------------------------------------------------------------------


def test_a_harness_replaying_a_finding_by_hand_exits_1(tmp_path: Path, found_stress: Path,
                                                       planted_walker: Path) -> None:
    crash = sorted(found_stress.glob("crash-*"))[0]
    harness = [sys.executable, str(ROOT / "harnesses" / "bytes.py"), str(crash)]
    env = {**os.environ, "WALKFUZZ_OUT": str(tmp_path / "hand")}
    found = subprocess.run(harness, capture_output=True, text=True, timeout=TIMEOUT,
                           env={**env, "WALKFUZZ_WALKER": str(planted_walker)})
    assert found.returncode == FINDINGS, found.stderr[-2000:]
    assert list((tmp_path / "hand").glob("findings/*/*.bin"))
    clean = subprocess.run(harness, capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert clean.returncode == CLEAN, clean.stderr[-2000:]
