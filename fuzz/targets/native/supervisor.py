"""`run_fuzz`: perturbed-context walks of one unwinder (libunwind unless told
otherwise) in supervised worker processes.

    supervisor (this module)
      ├── worker 0: python -m walkfuzz.targets.native.worker --unwinder NAME
                 workers/0/{current-input,stats.json,log}
      └── worker 1: ...                                   (one life = one process)

A worker that dies (a fault while libunwind has signals blocked kills the process whatever
handler is installed) or stops making progress (a hang the watchdog signal cannot interrupt)
costs one process: the input in its journal becomes a finding and a new life starts on a new
generator stream. Counters of all lives are summed into the result and the run report; every
process counts its findings' hits on the run's clock (walkfuzz.findings.hits), deaths included.
The processes are walkfuzz.engine.pool's WorkerPool, as a campaign's are.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from walkfuzz.engine.child import walkfuzz_command
from walkfuzz.engine.journal import JOURNAL_NAME, read_journal
from walkfuzz.engine.pool import PoolSlot, WorkerCommand, WorkerPool
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.hits import RunClock, load_hits
from walkfuzz.findings.store import FindingSink, load_findings
from walkfuzz.targets.native.finding import death_finding, is_native
from walkfuzz.targets.native.unwinders import DEFAULT
from walkfuzz.targets.native.worker import STATS_NAME

POLL = 0.25  # seconds between looks at the workers
STALL_SECONDS = 10.0  # a worker whose journal does not move this long is hung: killed
SAMPLE_EVERY = 1.0
STREAM_STRIDE = 0x9E3779B97F4A7C15  # seed of worker w, life k: seed + (w + 16 k) * stride
COUNTER_KEYS = ("inputs", "unperturbed", "walks", "frames", "unw_steps", "faults", "hangs",
                "invalid", "known_limit", "walk_ns", "unconfirmed_hangs")


@dataclass
class _Slot(PoolSlot):
    """One worker: its current life's directory and generator stream, and its progress."""

    directory: Path = Path()
    seed: int = 0
    last_execs: int = 0
    last_progress: float = 0.0
    stalled: bool = False


@dataclass
class FuzzResult:
    """What a run did: summed counters, deaths, findings (each stored input), time series."""

    seconds: float
    jobs: int
    counters: dict[str, Any]
    signatures: dict[str, int]  # hits of every signature found, not just stored examples
    deaths: list[dict[str, Any]]
    findings: list[Finding]
    series: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    interrupted: bool = False  # Ctrl-C or SIGTERM ended it before its time
    unwinder: str = DEFAULT

    @property
    def walks_per_second(self) -> float:
        return float(self.counters.get("walks", 0)) / self.seconds if self.seconds else 0.0


def _life_seed(seed: int, worker: int, life: int) -> int:
    return (seed + (worker + 16 * life) * STREAM_STRIDE) % (1 << 64)


def _death_finding(slot: _Slot, status: int, unwinder: str) -> Finding | None:
    state = read_journal(slot.directory / JOURNAL_NAME)
    if state.data is None:
        return None
    return death_finding(unwinder, state.data, status, slot.stalled,
                         {"worker": slot.index, "seed": slot.seed, "exit_status": status,
                          "inputs_started": state.execs, "unwinder": unwinder,
                          "note": "outside the guard's reach: signals blocked inside the "
                                  "unwinder, or a hang the watchdog could not interrupt"})


def _read_stats(directory: Path) -> dict[str, Any]:
    try:
        doc: dict[str, Any] = json.loads((directory / STATS_NAME).read_text())
        return doc
    except (OSError, ValueError):
        return {}


def _sum_stats(docs: list[dict[str, Any]]) -> dict[str, Any]:
    counters: dict[str, Any] = {key: 0 for key in COUNTER_KEYS}
    nested: dict[str, dict[str, int]] = {"stops": {}, "invalid_kinds": {}, "kinds_used": {}}
    for doc in docs:
        for key in COUNTER_KEYS:
            counters[key] += int(doc.get(key, 0))
        for group, table in nested.items():
            for name, value in doc.get(group, {}).items():
                table[name] = table.get(name, 0) + int(value)
    counters.update(nested)
    return counters


class _Run:
    """A run's workers: each life a process of the pool, in a directory of its own."""

    def __init__(self, out_dir: Path, jobs: int, seed: int, deadline: float, budget_ms: float,
                 clock: RunClock, unwinder: str) -> None:
        self.out_dir, self.seed, self.deadline, self.unwinder = out_dir, seed, deadline, unwinder
        self.budget_ms, self.clock = budget_ms, clock
        self.sink = FindingSink(out_dir, clock=clock)
        self.pool = WorkerPool([_Slot(w) for w in range(jobs)], self._command)
        self.directories: list[Path] = []  # of every life, for the counters
        self.deaths: list[dict[str, Any]] = []

    def _command(self, slot: _Slot) -> WorkerCommand:
        slot.directory = self.out_dir / "workers" / f"{slot.index}" / f"life-{slot.lives}"
        slot.directory.mkdir(parents=True, exist_ok=True)
        slot.seed = _life_seed(self.seed, slot.index, slot.lives)
        slot.last_execs, slot.last_progress, slot.stalled = 0, time.monotonic(), False
        self.directories.append(slot.directory)
        seconds = max(0.0, self.deadline - time.monotonic())
        argv = walkfuzz_command("walkfuzz.targets.native.worker", "--out", str(self.out_dir),
                                "--worker-dir", str(slot.directory), "--seed", str(slot.seed),
                                "--seconds", f"{seconds:.3f}", "--budget-ms", str(self.budget_ms),
                                "--clock", self.clock.to_text(), "--unwinder", self.unwinder)
        return WorkerCommand(argv, slot.directory / "log")

    def kill_stalled(self, now: float) -> None:
        """A worker whose journal has not moved for STALL_SECONDS is hung past the watchdog."""
        for slot in self.pool.slots:
            if slot.process is None or slot.process.poll() is not None:
                continue
            execs = read_journal(slot.directory / JOURNAL_NAME).execs
            if execs != slot.last_execs:
                slot.last_execs, slot.last_progress = execs, now
            if now - slot.last_progress > STALL_SECONDS:
                slot.stalled = True
                self.pool.kill(slot)

    def ended(self, slot: _Slot, status: int) -> bool:
        """A life that died or stalled: its input is a finding, and the worker starts again."""
        if status == 0 and not slot.stalled:
            return False
        finding = _death_finding(slot, status, self.unwinder)
        if finding is not None:
            self.sink.offer(finding)
        self.deaths.append({"worker": slot.index, "status": status, "stalled": slot.stalled,
                            "at": round(time.monotonic() - self.clock.origin, 3)})
        return True

    def counters(self) -> dict[str, Any]:
        return _sum_stats([_read_stats(directory) for directory in self.directories])


def run_fuzz(out_dir: Path, seconds: float, jobs: int = 2, seed: int = 1,
                       budget_ms: float = 50.0,
                       progress: Callable[[float, dict[str, Any]], None] | None = None,
                       unwinder: str = DEFAULT) -> FuzzResult:
    """Fuzz `unwinder` for `seconds` with `jobs` worker processes; findings under out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    clock = RunClock.start()
    start = clock.origin
    deadline = start + seconds
    run = _Run(out_dir, jobs, seed, deadline, budget_ms, clock, unwinder)
    series: dict[str, list[tuple[float, float]]] = {"execs": [], "exec_per_sec": [],
                                                    "findings": []}
    next_sample, last_execs = start + SAMPLE_EVERY, 0
    run.pool.start_all()
    interrupted = False
    try:
        while time.monotonic() < deadline:
            time.sleep(POLL)
            now = time.monotonic()
            run.kill_stalled(now)
            run.pool.reap(run.ended, deadline - now)
            if now >= next_sample:
                counters = run.counters()
                t = round(now - start, 3)
                series["execs"].append((t, counters["inputs"]))
                series["exec_per_sec"].append((t, (counters["inputs"] - last_execs)
                                               / SAMPLE_EVERY))
                series["findings"].append((t, counters["faults"] + counters["hangs"]
                                           + counters["invalid"] + len(run.deaths)))
                last_execs = counters["inputs"]
                next_sample += SAMPLE_EVERY
                if progress is not None:
                    progress(now - start, counters)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the workers stop, what they found is kept
        interrupted = True
    finally:
        run.pool.stop()
    elapsed = time.monotonic() - start
    counters = run.counters()
    counters["worker_deaths"] = len(run.deaths)
    counters["worker_lives"] = len(run.directories)
    findings = [f for f in load_findings(out_dir) if is_native(f)]
    hits = load_hits(out_dir)
    signatures = {f.signature: hits[f.signature].count for f in findings if f.signature in hits}
    return FuzzResult(seconds=elapsed, jobs=jobs, counters=counters,
                               signatures=signatures, deaths=run.deaths, findings=findings,
                               series=series, interrupted=interrupted, unwinder=unwinder)
