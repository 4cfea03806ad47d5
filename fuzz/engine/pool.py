"""The campaign supervisor: runs -j N libFuzzer worker processes on one shared corpus, restarts
a worker that dies, turns what a dead worker left behind into findings, and samples progress.

Workers are harness scripts (walkfuzz.engine.worker) started with `<out>/corpus` as libFuzzer's
corpus (-reload=1 shares new inputs between them), their output appended to `workers/<n>/log`, and
libFuzzer's own artifacts (crash-, timeout-, oom-) directed into `workers/<n>/`.

The processes themselves are a `WorkerPool`, the one process manager of walkfuzz's
supervisors (this one, and walkfuzz.targets.native.supervisor's): `jobs` slots running one
process (a life) each, started with PR_SET_PDEATHSIG so that killing the supervisor, even with
SIGKILL, also ends them; a life that ends is handed to the supervisor, and its slot restarted
when the supervisor asks and time is left; stopping is SIGTERM, STOP_GRACE, SIGKILL
(`terminate`).

When a worker exits on its own with a non-zero status, in order:
  1. each libFuzzer artifact it wrote becomes a finding (timeout- -> hang, others -> crash);
  2. the input in its current-input journal, unless it is one of those artifacts, becomes a
     `crash` finding: the process died inside it in a way libFuzzer could not report
     (stack overflow, abort with signals blocked, killed from outside);
  3. it is restarted, unless the campaign is over.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, NamedTuple, TypeVar

from walkfuzz.core import sanitizer
from walkfuzz.core.exit_status import describe_exit
from walkfuzz.engine.campaign import CampaignDir, CampaignSpec, Sample
from walkfuzz.engine.child import (
    DEVNULL,
    STDOUT,
    kill_group,
    python_command,
    start_child,
    terminate,
)
from walkfuzz.engine.corpus import entries
from walkfuzz.engine.journal import JOURNAL_NAME, read_execs, read_journal
from walkfuzz.engine.libfuzzer_log import LogTail, Status, parse_error, parse_status
from walkfuzz.engine.worker import WorkerEnv
from walkfuzz.findings.finding import Finding, death_location
from walkfuzz.findings.hits import RunClock
from walkfuzz.findings.sanitizer_report import SanitizerReport, read_report
from walkfuzz.findings.store import FindingSink, write_atomic

ARTIFACT_KINDS = {"crash-": "crash", "timeout-": "hang", "oom-": "crash"}
STOP_GRACE = 5.0  # seconds a worker gets to exit after SIGTERM before SIGKILL
LOG_TAIL_LINES = 30  # lines of a dead worker's log kept in its finding
DEFAULT_TIMEOUT = 25  # libFuzzer -timeout (s) unless the user gives one; the C guard is faster
MIN_SESSION_LEFT = 1.0  # don't restart a worker with less than this much time left
SANITIZER_REPORT_SUFFIX = ".sanitizer.txt"  # a sanitizer finding's report, beside its input
START_FAILURES = 3  # a worker dying this many times in a row before its first input is fatal


class WorkerCommand(NamedTuple):
    """How to start one life of a slot."""

    argv: Sequence[str]
    log: Path  # its stdout and stderr are appended here
    env: Mapping[str, str] | None = None  # None: this process's environment


def spawn(command: WorkerCommand) -> subprocess.Popen[str]:
    """Start a worker process: no stdin, output appended to its log, a session of its own (a
    terminal's Ctrl-C reaches the supervisor, which stops it), SIGTERM when the supervisor
    goes away."""
    with command.log.open("ab") as log:
        return start_child(command.argv, stdin=DEVNULL, stdout=log, stderr=STDOUT,
                           env=command.env, own_group=True, die_with_parent=True)


@dataclass
class PoolSlot:
    """One slot of a WorkerPool; a supervisor's own per-slot state extends it."""

    index: int
    process: subprocess.Popen[str] | None = field(default=None, kw_only=True)
    lives: int = field(default=0, kw_only=True)  # started so far
    stop_requested: bool = field(default=False, kw_only=True)
    done: bool = field(default=False, kw_only=True)  # ended, not to be restarted


SlotT = TypeVar("SlotT", bound=PoolSlot)


class WorkerPool(Generic[SlotT]):
    """Worker processes, one per slot at a time. `command(slot)` prepares a slot's next life
    (`slot.lives` is its number) and says how to start it."""

    def __init__(self, slots: Sequence[SlotT], command: Callable[[SlotT], WorkerCommand]) -> None:
        self.slots = list(slots)
        self.command = command

    def start(self, slot: SlotT) -> None:
        slot.process = spawn(self.command(slot))
        slot.lives += 1

    def start_all(self) -> None:
        for slot in self.slots:
            self.start(slot)

    def reap(self, ended: Callable[[SlotT, int], bool], time_left: float | None) -> int:
        """Hand each slot whose process has exited to `ended(slot, returncode)` (its process
        still set, cleared after); restart it when that says so and at least MIN_SESSION_LEFT
        seconds are left (`time_left` None: no limit), else it is done. The number restarted."""
        restarted = 0
        for slot in self.slots:
            if slot.process is None or slot.process.poll() is None:
                continue
            again = ended(slot, slot.process.returncode)
            slot.process = None
            if again and (time_left is None or time_left >= MIN_SESSION_LEFT):
                self.start(slot)
                restarted += 1
            else:
                slot.done = True
        return restarted

    def kill(self, slot: SlotT) -> None:
        """SIGKILL a slot's process that makes no progress (it is reaped as any other)."""
        if slot.process is not None:
            kill_group(slot.process)

    def stop(self) -> None:
        """End every running process (SIGTERM, STOP_GRACE, SIGKILL); their slots are marked
        stop_requested for the reap that follows."""
        running = [s for s in self.slots if s.process is not None and s.process.poll() is None]
        for slot in running:
            slot.stop_requested = True
        terminate((s.process for s in running if s.process is not None), STOP_GRACE)

    def running(self) -> int:
        return sum(1 for s in self.slots if s.process is not None)

    def finished(self) -> bool:
        return all(s.done for s in self.slots)


@dataclass
class WorkerSlot(PoolSlot):
    """A campaign's worker slot: its directory, and what its lives have run and found."""

    directory: Path
    execs_before: int = 0  # inputs run by earlier lives of this slot
    runs_left: int | None = None
    life_execs: int = 0  # inputs of the current life, from libFuzzer's status lines
    coverage: int = 0  # highest seen in any life (libFuzzer's cov:)
    features: int = 0  # likewise ft:
    error: str | None = None
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=LOG_TAIL_LINES))
    tail: LogTail | None = None
    start_failures: int = 0  # consecutive lives that died before running any input

    @property
    def journal(self) -> Path:
        return self.directory / JOURNAL_NAME

    @property
    def log(self) -> Path:
        return self.directory / "log"

    def take(self, status: Status) -> None:
        self.life_execs = status.execs
        self.coverage = max(self.coverage, status.coverage or 0)
        self.features = max(self.features, status.features or 0)

    def execs(self) -> int:
        own = read_execs(self.journal) if self.process is not None else 0
        return self.execs_before + max(own, self.life_execs)

    def last_words(self) -> str:
        """The last line its log has (why a worker that could not start stopped)."""
        return next((line.strip() for line in reversed(self.recent) if line.strip()),
                    "no output")


class Supervisor:
    def __init__(self, spec: CampaignSpec, out: CampaignDir, started: float,
                 previous: Sample | None) -> None:
        self.spec = spec
        self.out = out
        self.started = started  # this session's start (monotonic clock)
        self.offset = previous.t if previous else 0.0  # fuzzing time of earlier sessions
        self.execs_offset = previous.execs if previous else 0
        self.pool = WorkerPool([WorkerSlot(i, out.worker_dir(i)) for i in range(spec.jobs)],
                               self._command)
        self.slots = self.pool.slots
        # Findings are timed on the axis of the samples (Sample.t), workers' and ours alike.
        self.clock = RunClock(started, self.offset)
        self.sink = FindingSink(out.root, clock=self.clock)
        # findings_from_dead_workers: the findings this supervisor saved from what a dead
        # worker left (a subset of the campaign's findings; workers save the others).
        self.counters = {"restarts": 0, "worker_deaths": 0, "findings_from_dead_workers": 0}
        self.messages: list[str] = []  # not yet shown
        self.failure: str | None = None  # why the campaign cannot go on (a worker cannot start)
        self.notes: list[str] = []  # everything noted, for the report
        self._last_execs = 0
        self._last_sample = started
        self._running_at_sample: set[int] = set()  # slots with a process at the last sample

    # --- worker life cycle ----------------------------------------------------------------

    def time_left(self) -> float | None:
        if self.spec.time_budget is None:
            return None
        return self.spec.time_budget - (time.monotonic() - self.started)

    def _budget_flags(self, slot: WorkerSlot) -> list[str]:
        flags = []
        left = self.time_left()
        if left is not None:
            flags.append(f"-max_total_time={max(1, int(left + 0.5))}")
        if slot.runs_left is not None:
            flags.append(f"-runs={slot.runs_left}")
        return flags

    def argv(self, slot: WorkerSlot) -> list[str]:
        user = self.spec.libfuzzer_flags
        defaults = [f"-max_len={self.spec.max_len}", "-print_final_stats=1", "-reload=1"]
        if not any(f.startswith("-timeout=") for f in user):
            defaults.append(f"-timeout={DEFAULT_TIMEOUT}")
        return python_command(self.spec.script, f"-artifact_prefix={slot.directory}/",
                              *defaults, *self._budget_flags(slot), *user, str(self.out.corpus))

    def _command(self, slot: WorkerSlot) -> WorkerCommand:
        """The next life of `slot`: a fresh journal, a header line in the log."""
        slot.directory.mkdir(parents=True, exist_ok=True)
        slot.journal.unlink(missing_ok=True)  # a life that dies before writing one ran nothing
        env = WorkerEnv(self.out.root, slot.directory, self.spec.target, self.spec.walker,
                        self.spec.native, self.clock)
        argv = self.argv(slot)
        with slot.log.open("ab") as log:
            log.write(f"=== walkfuzz: worker {slot.index} life {slot.lives + 1}: "
                      f"{' '.join(argv)}\n".encode())
        if slot.tail is None:
            slot.tail = LogTail(slot.log)
            slot.tail.offset = slot.log.stat().st_size
        slot.life_execs, slot.error = 0, None
        extra = sanitizer.environ(slot.directory) if self.spec.native == sanitizer.FLAVOUR else {}
        return WorkerCommand(argv, slot.log, {**os.environ, **env.to_environ(), **extra})

    def start_all(self) -> None:
        for slot in self.slots:
            if self.spec.runs is not None:
                slot.runs_left = self.spec.runs
        self.pool.start_all()

    def read_logs(self) -> None:
        for slot in self.slots:
            for line in slot.tail.new_lines() if slot.tail else ():
                slot.recent.append(line)
                status = parse_status(line)
                if status is not None:
                    slot.take(status)
                error = parse_error(line)
                if error is not None:
                    slot.error = error

    def reap(self) -> None:
        """Handle every worker that has exited since the last call."""
        self.counters["restarts"] += self.pool.reap(self._ended, self.time_left())

    def _ended(self, slot: WorkerSlot, returncode: int) -> bool:
        """Account for a life that ended; whether the slot is to run another."""
        self.read_logs()
        life = read_execs(slot.journal)
        execs = slot.execs()
        abnormal = returncode != 0 and not slot.stop_requested
        gave_up = abnormal and life == 0 and self._start_failed(slot, returncode)
        if life > 0:
            slot.start_failures = 0
        self.harvest(slot, returncode, abnormal)
        slot.life_execs = 0
        slot.execs_before = execs
        if slot.runs_left is not None:
            slot.runs_left = max(0, (self.spec.runs or 0) - execs)
        again = abnormal and not gave_up and (slot.runs_left is None or slot.runs_left > 0)
        if abnormal:
            self.counters["worker_deaths"] += 1
            self._note(f"worker {slot.index} exited with {describe_exit(returncode)}"
                       f"{': ' + slot.error if slot.error else ''}"
                       f"{'; restarting' if again else ''}")
        return again

    def _start_failed(self, slot: WorkerSlot, returncode: int) -> bool:
        """A worker that cannot even start (bad harness, walker library that does not load)
        would be restarted forever: after START_FAILURES, say why in `failure` (the campaign
        stops) and give up on it; whether it was given up."""
        slot.start_failures += 1
        if slot.start_failures < START_FAILURES:
            return False
        self.failure = (f"worker {slot.index} exited with {describe_exit(returncode)} before its "
                        f"first input {START_FAILURES} times: {slot.last_words()} "
                        f"(log: {slot.log})")
        return True

    def idle_reason(self) -> str | None:
        """Why this session ran no input at all, in one line from a worker's log; None when it
        ran some. A session that ran nothing is a failed one, never a completed one."""
        if any(slot.execs() for slot in self.slots):
            return None
        slot = next((s for s in self.slots if s.recent), self.slots[0])
        return f"worker {slot.index}: {slot.last_words()} (log: {slot.log})"

    def harvest(self, slot: WorkerSlot, returncode: int, abnormal: bool) -> None:
        """Findings from libFuzzer's artifacts and, after an abnormal exit, the journal; a
        sanitizer report the life left makes its input an asan or ubsan finding."""
        report = self._sanitizer_report(slot)
        artifact_sha1s = set()
        for artifact in sorted(slot.directory.iterdir()):
            kind = next((k for p, k in ARTIFACT_KINDS.items() if artifact.name.startswith(p)),
                        None)
            if kind is None:
                continue
            data = artifact.read_bytes()
            artifact_sha1s.add(hashlib.sha1(data).hexdigest())
            self._save(slot, kind, slot.error or "libfuzzer-artifact", data, returncode, report)
            artifact.unlink()
        if not abnormal:
            return
        state = read_journal(slot.journal)
        if state.data is not None:
            sha1 = hashlib.sha1(state.data).hexdigest()
            if sha1 not in artifact_sha1s:
                self._save(slot, "crash", describe_exit(returncode), state.data,
                           returncode, report)
            self.quarantine(sha1)
        for sha1 in artifact_sha1s:
            self.quarantine(sha1)

    def quarantine(self, sha1: str) -> None:
        """Move a corpus entry that killed a worker out of the corpus, or every restart
        would die loading it again. It stays on disk as a finding."""
        entry = self.out.corpus / sha1
        if entry.exists():
            self.out.quarantine.mkdir(exist_ok=True)
            entry.replace(self.out.quarantine / sha1)
            self._note(f"corpus entry {sha1} killed a worker; moved to {self.out.quarantine}")

    def _sanitizer_report(self, slot: WorkerSlot) -> SanitizerReport | None:
        """The report the runtime wrote for the life that ended (sanitizer.<pid>), if any."""
        if self.spec.native != sanitizer.FLAVOUR or slot.process is None:
            return None
        return read_report(slot.directory / f"{sanitizer.REPORT_NAME}.{slot.process.pid}")

    def _save(self, slot: WorkerSlot, kind: str, reason: str, data: bytes, rc: int,
              report: SanitizerReport | None = None) -> None:
        location = report.location if report else death_location(reason.split(" after ")[0])
        finding = Finding(
            kind=report.kind if report else kind,  # type: ignore[arg-type]
            target=self.spec.target, harness=self.spec.harness, location=location, shape=(),
            data=data,
            details={"worker": slot.index, "exit": describe_exit(rc), "walker": self.spec.walker,
                     "log_tail": list(slot.recent),
                     **({"sanitizer": sanitizer.FLAVOUR} if report else {})},
        )
        saved = self.sink.offer(finding)
        if saved is None:
            return
        if report is not None:  # beside the input: <sha1>.sanitizer.txt
            write_atomic(saved / f"{finding.sha1}{SANITIZER_REPORT_SUFFIX}", report.text.encode())
        self.counters["findings_from_dead_workers"] += 1
        self._note(f"worker {slot.index}: {finding.kind} finding saved ({location})")

    def _note(self, text: str) -> None:
        self.messages.append(text)
        self.notes.append(text)

    def stop_all(self) -> None:
        self.pool.stop()
        self.reap()

    def running(self) -> int:
        return self.pool.running()

    def finished(self) -> bool:
        return self.pool.finished()

    # --- sampling ---------------------------------------------------------------------------

    def sample(self, closing: bool = False) -> Sample:
        """The campaign now; `closing`: the session is stopping (its workers are stopped)."""
        now = time.monotonic()
        execs = sum(s.execs() for s in self.slots)
        rate = (execs - self._last_execs) / max(1e-3, now - self._last_sample)
        self._last_execs, self._last_sample = execs, now
        running = {s.index for s in self.slots if s.process is not None}
        partial = closing or bool(self._running_at_sample - running)
        self._running_at_sample = running
        return Sample(
            t=round(self.offset + now - self.started, 3),
            wall=time.time(),
            execs=self.execs_offset + execs,
            exec_per_sec=round(rate, 1),
            coverage=max(s.coverage for s in self.slots),
            features=max(s.features for s in self.slots),
            corpus=len(entries(self.out.corpus)),
            findings=sum(self.out.signatures_by_kind().values()),
            partial=partial,
        )
