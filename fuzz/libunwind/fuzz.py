"""`run_libunwind_fuzz`: perturbed-context walks of libunwind in supervised worker processes.

    supervisor (this module)
      ├── worker 0: python -m walkfuzz.libunwind.worker   workers/0/{current-input,stats.json,log}
      └── worker 1: ...                                   (one life = one process)

A worker that dies (a fault while libunwind has signals blocked kills the process whatever
handler is installed) or stops making progress (a hang the watchdog signal cannot interrupt)
costs one process: the input in its journal becomes a finding and a new life starts on a new
generator stream. Counters of all lives are summed into the result and the run report; every
process counts its findings' hits on the run's clock (walkfuzz.findings), deaths included.
"""

from __future__ import annotations

import ctypes
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from walkfuzz.exit_status import describe_exit
from walkfuzz.findings import Finding, FindingKind, FindingSink, RunClock, load_findings, load_hits
from walkfuzz.input_journal import JOURNAL_NAME, read_journal
from walkfuzz.libunwind.outcome import TARGET
from walkfuzz.libunwind.worker import HARNESS, STATS_NAME

POLL = 0.25  # seconds between looks at the workers
STALL_SECONDS = 10.0  # a worker whose journal does not move this long is hung: killed
STOP_GRACE = 5.0
SAMPLE_EVERY = 1.0
STREAM_STRIDE = 0x9E3779B97F4A7C15  # seed of worker w, life k: seed + (w + 16 k) * stride
PR_SET_PDEATHSIG = 1
COUNTER_KEYS = ("inputs", "unperturbed", "walks", "frames", "unw_steps", "faults", "hangs",
                "invalid", "walk_ns", "unconfirmed_hangs")


@dataclass
class _Life:
    process: subprocess.Popen[bytes]
    directory: Path
    seed: int
    started: float
    last_execs: int = 0
    last_progress: float = 0.0


@dataclass
class LibunwindFuzzResult:
    """What a run did: summed counters, deaths, findings (each stored input), time series."""

    seconds: float
    jobs: int
    counters: dict[str, Any]
    signatures: dict[str, int]  # hits of every signature found, not just stored examples
    deaths: list[dict[str, Any]]
    findings: list[Finding]
    series: dict[str, list[tuple[float, float]]] = field(default_factory=dict)

    @property
    def walks_per_second(self) -> float:
        return float(self.counters.get("walks", 0)) / self.seconds if self.seconds else 0.0


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _life_seed(seed: int, worker: int, life: int) -> int:
    return (seed + (worker + 16 * life) * STREAM_STRIDE) % (1 << 64)


def _start(out_dir: Path, worker: int, life: int, seed: int, seconds: float,
           budget_ms: float, clock: RunClock) -> _Life:
    directory = out_dir / "workers" / f"{worker}" / f"life-{life}"
    directory.mkdir(parents=True, exist_ok=True)
    life_seed = _life_seed(seed, worker, life)
    argv = [sys.executable, "-m", "walkfuzz.libunwind.worker", "--out", str(out_dir),
            "--worker-dir", str(directory), "--seed", str(life_seed),
            "--seconds", f"{seconds:.3f}", "--budget-ms", str(budget_ms),
            "--clock", clock.to_text()]
    log = (directory / "log").open("wb")
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                               preexec_fn=_die_with_parent)
    log.close()
    now = time.monotonic()
    return _Life(process, directory, life_seed, now, last_progress=now)


def death_location(status: int, stalled: bool) -> str:
    """The location of a finding whose process died (or stalled) on it."""
    if stalled:
        return "process-stall"
    return f"process-death:{describe_exit(status)}"


def _death_finding(life: _Life, status: int, worker: int, stalled: bool) -> Finding | None:
    state = read_journal(life.directory / JOURNAL_NAME)
    if state.data is None:
        return None
    kind: FindingKind = "hang" if stalled else "crash"
    location = death_location(status, stalled)
    return Finding(kind=kind, target=TARGET, harness=HARNESS, location=location, shape=(),
                   data=state.data,
                   details={"worker": worker, "seed": life.seed, "exit_status": status,
                            "inputs_started": state.execs,
                            "note": "outside the guard's reach: signals blocked inside "
                                    "libunwind, or a hang the watchdog could not interrupt"})


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


def _stop(lives: list[_Life]) -> None:
    for life in lives:
        if life.process.poll() is None:
            life.process.send_signal(signal.SIGTERM)
    end = time.monotonic() + STOP_GRACE
    for life in lives:
        try:
            life.process.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            life.process.kill()
            life.process.wait()


def run_libunwind_fuzz(out_dir: Path, seconds: float, jobs: int = 2, seed: int = 1,
                       budget_ms: float = 50.0,
                       progress: Callable[[float, dict[str, Any]], None] | None = None,
                       ) -> LibunwindFuzzResult:
    """Fuzz libunwind for `seconds` with `jobs` worker processes; findings under out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    clock = RunClock.start()
    sink = FindingSink(out_dir, clock=clock)
    start = clock.origin
    deadline = start + seconds
    active = [_start(out_dir, w, 0, seed, seconds, budget_ms, clock) for w in range(jobs)]
    all_lives = list(active)
    lives_per_worker = [1] * jobs
    deaths: list[dict[str, Any]] = []
    series: dict[str, list[tuple[float, float]]] = {"execs": [], "exec_per_sec": [],
                                                    "findings": []}
    next_sample, last_execs = start + SAMPLE_EVERY, 0
    while time.monotonic() < deadline:
        time.sleep(POLL)
        now = time.monotonic()
        for w, life in enumerate(active):
            status = life.process.poll()
            execs = read_journal(life.directory / JOURNAL_NAME).execs
            if execs != life.last_execs:
                life.last_execs, life.last_progress = execs, now
            stalled = status is None and now - life.last_progress > STALL_SECONDS
            if stalled:
                life.process.kill()
                status = life.process.wait()
            if status is None or (status == 0 and not stalled):
                continue
            finding = _death_finding(life, status, w, stalled)
            if finding is not None:
                sink.offer(finding)
            deaths.append({"worker": w, "status": status, "stalled": stalled,
                           "at": round(now - start, 3)})
            if deadline - now > 1.0:
                active[w] = _start(out_dir, w, lives_per_worker[w], seed, deadline - now,
                                   budget_ms, clock)
                all_lives.append(active[w])
                lives_per_worker[w] += 1
        if now >= next_sample:
            counters = _sum_stats([_read_stats(life.directory) for life in all_lives])
            t = round(now - start, 3)
            series["execs"].append((t, counters["inputs"]))
            series["exec_per_sec"].append((t, (counters["inputs"] - last_execs) / SAMPLE_EVERY))
            series["findings"].append((t, counters["faults"] + counters["hangs"]
                                       + counters["invalid"] + len(deaths)))
            last_execs = counters["inputs"]
            next_sample += SAMPLE_EVERY
            if progress is not None:
                progress(now - start, counters)
    _stop(active)
    elapsed = time.monotonic() - start
    counters = _sum_stats([_read_stats(life.directory) for life in all_lives])
    counters["worker_deaths"] = len(deaths)
    counters["worker_lives"] = len(all_lives)
    findings = [f for f in load_findings(out_dir) if f.target == TARGET]
    hits = load_hits(out_dir)
    signatures = {f.signature: hits[f.signature].count for f in findings if f.signature in hits}
    return LibunwindFuzzResult(seconds=elapsed, jobs=jobs, counters=counters,
                               signatures=signatures, deaths=deaths, findings=findings,
                               series=series)

