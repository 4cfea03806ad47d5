"""A campaign on a planted-bug walker (walkfuzz.targets.minivm.planted), run until it finds that
bug, and what finding it took; and the replay that proves a seed corpus does not already trigger it.

    hunt = hunt_bug(bug, out, runs_cap=2_000_000)      # `walkfuzz fuzz` in a child process
    hunt.found, hunt.seconds, hunt.execs               # the first finding of the bug, and when

The campaign is `walkfuzz fuzz --runs CAP -j 1 -- -seed=S`, started from the shipped seeds of
the bug's harness or from none. It stops when a finding of one of the bug's kinds is stored
(the supervisor is sent SIGTERM), or when the cap is spent. A hang it stores is only the bug
when its input hangs again on replay: the guard's watchdog measures wall time, so on a loaded
machine a walk that was not scheduled for its 200 ms budget is stored as a hang; such a
signature is set aside (`ignored`) and the hunt goes on. A campaign that runs no input for
STALL seconds is stuck (a worker blocked for good: docs/fuzzing.md), and the hunt fails
naming it rather than wait.

Executions to the finding come from the worker's log: libFuzzer's first status line (`#N`)
after the harness said it saved the finding, so at most N inputs ran before it (the status
lines come at every new coverage and every power of two). Seconds are from the start of the
campaign (its workers' start-up included) to the finding's `saved_at`.

Replays run in a child process (`python -m walkfuzz.targets.minivm.planted_campaign replay ...`): a
planted walker faults on purpose, and a fault the guard cannot catch must cost a process, not the
test. """

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.core.exit_status import INTERRUPTED
from walkfuzz.core.paths import ROOT
from walkfuzz.engine.child import DEVNULL, run_child, start_child, terminate, walkfuzz_command
from walkfuzz.engine.libfuzzer_log import parse_status
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.store import load_findings
from walkfuzz.targets.minivm import planted

WALKFUZZ = walkfuzz_command("walkfuzz.cli")
POLL = 0.5  # seconds between looks at the findings directory
STOP_WAIT = 60.0  # seconds the stopped campaign gets to write its report
LOG_WAIT = 60.0  # seconds a stored finding may take to reach the worker's log (a busy machine)
# A campaign whose input count has not moved for this long is stuck (libFuzzer's -timeout is
# 25 s, a worker restart a few seconds): the hunt fails instead of waiting for ever.
STALL = 180.0
HANG_CONFIRM_RUNS = 3
HANG_CONFIRM_NS = 1_000_000_000  # replay budget: five times the harness's 200 ms watchdog
KILLED = "replay process killed"  # the location of an input that killed the replay process
FINAL_EXECS = "stat::number_of_executed_units:"
TIMES_FILE = ROOT / "build" / "quality-times.json"  # the quality suite's hunts


@dataclass
class Hunt:
    """One campaign's search for one planted bug."""

    bug: str
    flavour: str  # cov, or plain: no coverage feedback
    seeds: str  # "shipped" (corpora/<harness>/) or "none"
    libfuzzer_seed: int
    runs_cap: int
    out: Path
    found: Finding | None = None
    seconds: float | None = None  # campaign start to the finding being stored
    execs: int | None = None  # inputs run up to the finding (at most)
    total_execs: int = 0
    ignored: list[str] = field(default_factory=list)  # hangs that did not hang again
    others: list[str] = field(default_factory=list)  # findings of kinds not the bug's

    def row(self) -> dict[str, object]:
        return {"bug": self.bug, "flavour": self.flavour, "seeds": self.seeds,
                "libfuzzer_seed": self.libfuzzer_seed, "runs_cap": self.runs_cap,
                "found": self.found is not None,
                "signature": self.found.signature if self.found else None,
                "seconds": None if self.seconds is None else round(self.seconds, 1),
                "execs": self.execs, "total_execs": self.total_execs,
                "ignored": self.ignored, "others": self.others}


def table(rows: Sequence[dict[str, object]]) -> list[str]:
    """Hunt.row()s as text: one line per campaign."""
    lines = [f"{'bug':<24} {'build':<6} {'seeds':<8} {'found':<6} {'seconds':>8} "
             f"{'inputs to it':>12} {'inputs run':>11} {'cap':>10}  set aside"]
    for r in rows:
        seconds = "-" if r["seconds"] is None else f"{r['seconds']:.1f}"
        execs = "-" if r["execs"] is None else str(r["execs"])
        aside = len(r["ignored"]) if isinstance(r["ignored"], list) else 0
        lines.append(f"{r['bug']!s:<24} {r['flavour']!s:<6} {r['seeds']!s:<8} "
                     f"{'yes' if r['found'] else 'no':<6} {seconds:>8} {execs:>12} "
                     f"{r['total_execs']!s:>11} {r['runs_cap']!s:>10}  {aside} hangs")
    return lines


def campaign_argv(bug: planted.PlantedBug, out: Path, runs_cap: int, flavour: str, seeds: bool,
                  libfuzzer_seed: int) -> list[str]:
    argv = [*WALKFUZZ, "fuzz", "--target", "minivm", "--harness", bug.harness,
            "--walker", str(planted.build(bug, flavour)), "--out", str(out),
            "--runs", str(runs_cap), "-j", "1"]
    if not seeds:
        argv.append("--no-seeds")
    if flavour == "plain":
        argv += ["--build", "plain"]
    return [*argv, "--", f"-seed={libfuzzer_seed}"]


def hunt_bug(bug: planted.PlantedBug, out: Path, runs_cap: int, *, flavour: str = "cov",
             seeds: bool = True, libfuzzer_seed: int = 1) -> Hunt:
    """Run a campaign on `bug`'s walker until it stores a finding of the bug or has run
    `runs_cap` inputs."""
    if out.exists():
        raise UserError(f"campaign directory {str(out)!r} exists: a hunt starts afresh")
    hunt = Hunt(bug.name, flavour, "shipped" if seeds else "none", libfuzzer_seed, runs_cap,
                out)
    argv = campaign_argv(bug, out, runs_cap, flavour, seeds, libfuzzer_seed)
    log = out.with_name(out.name + ".log")
    with log.open("w") as stderr:
        process = start_child(argv, cwd=ROOT, stdout=DEVNULL, stderr=stderr)
        try:
            _watch(bug, hunt, process)
            if hunt.found is not None:
                _await_logged(out / "workers" / "0" / "log", hunt.found.signature, process)
        finally:
            stopped_by_us = process.poll() is None
            terminate([process], STOP_WAIT)
    # A campaign the hunt stops once it has its finding exits as an interrupted one does.
    accepted = (0, 1, INTERRUPTED) if stopped_by_us else (0, 1)
    if process.returncode not in accepted:
        raise UserError(f"campaign on {bug.name} failed with exit {process.returncode}: "
                        f"{log.read_text()[-2000:]}")
    hunt.total_execs = _total_execs(out)
    if hunt.found is not None:
        hunt.seconds = _seconds_to(out, hunt.found)
        hunt.execs = execs_to(out / "workers" / "0" / "log", hunt.found.signature)
    return hunt


def _watch(bug: planted.PlantedBug, hunt: Hunt, process: subprocess.Popen[str]) -> None:
    """Look at each new signature until one is the bug or the campaign ends."""
    seen: set[str] = set()
    progress = (-1, time.monotonic())  # inputs run, and since when
    while True:
        ended = process.poll() is not None  # before the look: nothing stored after it is missed
        for finding in _new_findings(hunt.out, seen):
            if finding.kind == "hang" and not hangs_again(bug, finding):
                hunt.ignored.append(finding.signature)
            elif finding.kind not in bug.kinds:
                hunt.others.append(finding.signature)
            else:
                hunt.found = finding
                return
        if ended:
            return
        progress = _check_progress(hunt.out, progress)
        time.sleep(POLL)


def _await_logged(log: Path, signature: str, process: subprocess.Popen[str]) -> None:
    """Wait until the worker's log names the stored finding (it saves the input first, then
    logs it): stopped in between, the campaign would leave no count of inputs to it."""
    deadline = time.monotonic() + LOG_WAIT
    while execs_to(log, signature) is None and time.monotonic() < deadline:
        if process.poll() is not None:
            return
        time.sleep(POLL)


def _check_progress(out: Path, progress: tuple[int, float]) -> tuple[int, float]:
    """(inputs run, since when); UserError, with the worker's last words, after STALL s."""
    execs, now = _last_execs(out), time.monotonic()
    if execs != progress[0]:
        return execs, now
    if now - progress[1] < STALL:
        return progress
    log = out / "workers" / "0" / "log"
    tail = log.read_text(errors="replace").splitlines()[-6:] if log.exists() else []
    raise UserError(f"campaign in {out} stalled: no input finished in {STALL:.0f} s, at "
                    f"{execs} inputs; worker log ends: {' | '.join(tail)}")


def _last_execs(out: Path) -> int:
    """Inputs run by the campaign at its last sample (stats.jsonl), -1 before the first."""
    stats = out / "stats.jsonl"
    if not stats.exists():
        return -1
    with stats.open("rb") as f:
        f.seek(max(0, stats.stat().st_size - 4096))
        lines = f.read().decode(errors="replace").splitlines()
    for line in reversed(lines):
        try:
            return int(json.loads(line)["execs"])
        except (ValueError, KeyError, TypeError):
            continue
    return -1


def _new_findings(out: Path, seen: set[str]) -> list[Finding]:
    """The first stored input of each signature not seen yet, oldest first."""
    new = []
    for finding in load_findings(out):
        if finding.signature not in seen:
            seen.add(finding.signature)
            new.append(finding)
    return sorted(new, key=lambda f: _saved_at(out, f))


def _saved_at(out: Path, finding: Finding) -> float:
    doc = json.loads((out / "findings" / finding.signature / f"{finding.sha1}.json").read_text())
    return float(doc["saved_at"])


def _seconds_to(out: Path, finding: Finding) -> float:
    sessions = json.loads((out / "campaign.json").read_text())["sessions"]
    return _saved_at(out, finding) - float(sessions[0]["started_at"])


def _total_execs(out: Path) -> int:
    report = out / "report.json"
    if not report.exists():
        return 0
    series = json.loads(report.read_text())["series"]["execs"]
    return int(series[-1][1]) if series else 0


def execs_to(log: Path, signature: str) -> int | None:
    """Inputs the worker had run when it stored `signature` (at most), from its log: the first
    libFuzzer count after the harness's "finding saved in .../<signature>" line, counting the
    inputs of the worker's earlier lives; None if the log never names it."""
    if not log.exists():
        return None
    earlier = life = 0
    waiting = False
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("=== walkfuzz: worker"):  # a new life of the worker
            if waiting:
                break
            earlier, life = earlier + life, 0
            continue
        status = parse_status(line)
        count = status.execs if status else None
        if line.startswith(FINAL_EXECS):
            count = int(line.split()[-1])
        if count is not None:
            life = max(life, count)
            if waiting:
                break
        elif "finding saved in" in line and line.rstrip().endswith("/" + signature):
            waiting = True
    return earlier + life if waiting else None


# ---- replay in a child process --------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one replay of one input gave: None fields for a clean run."""

    kind: str | None
    location: str | None

    @property
    def clean(self) -> bool:
        return self.kind is None


def replay(walker: Path, harness: str, files: Sequence[Path], runs: int = 1,
           hang_ns: int = HANG_CONFIRM_NS) -> dict[Path, list[Outcome]]:
    """Each file run `runs` times by `harness` on `walker` (a plain build), in child
    processes; an input that kills its process gets one `crash` outcome located KILLED."""
    left = list(files)
    outcomes: dict[Path, list[Outcome]] = {}
    while left:
        argv = walkfuzz_command("walkfuzz.targets.minivm.planted_campaign", "replay",
                                str(walker), harness, str(runs), str(hang_ns), *map(str, left))
        child = run_child(argv, cwd=ROOT)
        running = None
        for line in child.stdout.splitlines():
            doc = json.loads(line)
            if "begin" in doc:
                running = Path(doc["begin"])
            else:
                outcomes[Path(doc["file"])] = [Outcome(r and r["kind"], r and r["location"])
                                               for r in doc["results"]]
                running = None
        if child.returncode != 0 and running is None:
            raise UserError(f"replay on {walker} failed: {child.stderr.strip()[-2000:]}")
        if running is not None:
            outcomes[running] = [Outcome("crash", KILLED)]
        left = [f for f in left if f not in outcomes]
    return outcomes


def triggers(outcomes: list[Outcome]) -> bool:
    """Whether replays of one input show a bug: any finding but a hang, or a hang every time
    (a walk not scheduled for its budget is not a hang of the walker)."""
    real = [o for o in outcomes if not o.clean and o.kind != "hang"]
    return bool(real) or all(o.kind == "hang" for o in outcomes)


def hangs_again(bug: planted.PlantedBug, finding: Finding) -> bool:
    """Whether a stored hang hangs on every replay (plain build of the same walker)."""
    with_input = _input_file(finding)
    try:
        outcomes = replay(planted.build(bug, "plain"), finding.harness, [with_input],
                          runs=HANG_CONFIRM_RUNS)[with_input]
    finally:
        with_input.unlink(missing_ok=True)
    return all(o.kind == "hang" for o in outcomes)


def _input_file(finding: Finding) -> Path:
    path = planted.BUILD_DIR / f"hang-{finding.sha1}.bin"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(finding.data)
    return path


def _replay_child(argv: list[str]) -> int:
    """The child: replay each file and print one JSON line per file (a `begin` line first)."""
    from walkfuzz.targets.minivm.finding import to_finding
    from walkfuzz.targets.minivm.harness import HARNESSES, NEEDS_QUEUE
    from walkfuzz.targets.minivm.replayer import MinivmReplayer

    walker, harness, runs, hang_ns, *files = argv
    replayer = MinivmReplayer(int(hang_ns))
    table = replayer.walker(walker)
    lib, ffi, result = replayer.lib, replayer.ffi, replayer.result
    lib.wf_guard_set_budget_ns(int(hang_ns))
    for name in files:
        print(json.dumps({"begin": name}), flush=True)
        data = Path(name).read_bytes()
        results: list[dict[str, str] | None] = []
        for _ in range(int(runs)):
            if lib.wf_worker_run(HARNESSES[harness], table, data, len(data), replayer.case,
                                 result):  # a finding, as the harness sees it
                f = to_finding(ffi, lib, result, data, harness, walker, harness in NEEDS_QUEUE)
                results.append({"kind": f.kind, "location": f.location})
            else:
                results.append(None)
        print(json.dumps({"file": name, "results": results}), flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] != ["replay"] or len(sys.argv) < 6:
        sys.exit("usage: python -m walkfuzz.targets.minivm.planted_campaign replay WALKER HARNESS "
                 "RUNS HANG_NS FILE...")
    sys.exit(_replay_child(sys.argv[2:]))
