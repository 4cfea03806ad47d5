"""`run_differential`: the same inputs walked by several unwinders, one worker process each,
and every input judged across them (walkfuzz.targets.native.differential.judge).

    supervisor (this module)              walks no stack, loads no unwinder
      ├── worker --unwinder libunwind   workers/libunwind/life-K/{current-input,rows.bin,...}
      ├── worker --unwinder libgcc      ...
      └── ...                                one per unwinder (their symbols clash in one process)

Round after round, every worker walks the same batch of the generator stream (the same input
bytes: the same chain, the same perturbation) and writes one row per input; the supervisor
reads the rows, judges each input and stores a disagreement as an `invalid-trace` finding with
the per-unwinder table in its details. A worker that dies (a fault outside the guard's reach)
or stops answering costs one process: its journal names the input, which becomes a crash (or
hang) finding of that unwinder, the walk is marked so (not compared), and a new life walks the
rest of the batch.
"""

from __future__ import annotations

import json
import select
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from walkfuzz.core.errors import MissingDependencyError
from walkfuzz.engine.child import PIPE, kill_group, start_child, walkfuzz_command
from walkfuzz.engine.journal import JOURNAL_NAME, read_journal
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.hits import RunClock
from walkfuzz.findings.store import FindingSink, load_findings, write_atomic
from walkfuzz.targets.native.differential.judge import (
    UNCOMPARED_STOPS,
    Walk,
    comparable,
    judge,
)
from walkfuzz.targets.native.differential.rows import table_rows, truth, walk_text, walks_of
from walkfuzz.targets.native.differential.worker import INPUTS_NAME, ROWS_NAME
from walkfuzz.targets.native.finding import differential_death, disagreement_finding
from walkfuzz.targets.native.inputs import INPUT_SIZE, decode

BATCH = 400  # inputs per round: every worker's share of a round takes ~10-100 ms
START_SECONDS = 60.0  # a worker's import and first build of its tables
STALL_SECONDS = 30.0  # a round a worker has not answered in this long: hung, killed


@dataclass
class DiffResult:
    """What a differential run did: per unwinder and class counts, the classes found."""

    seconds: float
    unwinders: tuple[str, ...]
    inputs: int
    unperturbed: int
    disagreements: int
    incomparable: int  # perturbed inputs whose walks began in different functions: not judged
    per_unwinder: dict[str, dict[str, Any]]
    classes: dict[str, int]  # verdict location -> inputs
    deaths: list[dict[str, Any]]
    findings: list[Finding]
    interrupted: bool = False
    series: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


class _Worker:
    """One unwinder's worker process and its current life."""

    def __init__(self, unwinder: str, run_unwinders: Sequence[str], out_dir: Path,
                 clock: RunClock, budget_ms: float) -> None:
        self.unwinder, self.run_unwinders, self.out_dir = unwinder, run_unwinders, out_dir
        self.clock, self.budget_ms = clock, budget_ms
        self.lives = 0
        self.process: subprocess.Popen[str] | None = None
        self.directory = Path()

    def start(self) -> None:
        self.directory = self.out_dir / "workers" / self.unwinder / f"life-{self.lives}"
        self.directory.mkdir(parents=True, exist_ok=True)
        self.lives += 1
        argv = walkfuzz_command("walkfuzz.targets.native.differential.worker",
                                "--unwinder", self.unwinder, "--dir", str(self.directory),
                                "--out", str(self.out_dir), "--budget-ms", str(self.budget_ms),
                                "--run-unwinders", ",".join(self.run_unwinders),
                                "--clock", self.clock.to_text())
        with open(self.directory / "log", "w") as log:
            self.process = start_child(argv, stdin=PIPE, stdout=PIPE, stderr=log)
        if self.reply(START_SECONDS) != "ready":
            self.end()
            said = (self.directory / "log").read_text(errors="replace").strip().splitlines()
            raise MissingDependencyError(f"unwinder {self.unwinder}: its worker did not start "
                                         f"({said[-1] if said else 'no output'})")

    def send(self, line: str) -> None:
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            pass  # it died: reply() sees the end of its output

    def reply(self, timeout: float) -> str | None:
        """Its next line, or None when it died or said nothing for `timeout` seconds."""
        assert self.process is not None
        out: IO[str] | None = self.process.stdout
        assert out is not None
        ready, _, _ = select.select([out], [], [], timeout)
        if not ready:
            return None
        line = out.readline()
        return line.strip() if line else None

    def end(self) -> int:
        """Kill it if it still runs; its exit status."""
        assert self.process is not None
        return kill_group(self.process)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.send("quit")
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.end()


def _class_of(data: bytes) -> list[str]:
    """The perturbation classes of an input: the kinds it applies, or `unperturbed`."""
    kinds = sorted({p.kind for p in decode(data).perturbations})
    return kinds or ["unperturbed"]


class _Tally:
    """Per unwinder and perturbation class: walks, faults, hangs, cycles, wrong walks, steps."""

    FIELDS = ("walks", "faults", "hangs", "cycles", "wrong", "frames", "steps", "walk_ns")

    def __init__(self, unwinders: Sequence[str]) -> None:
        self.by: dict[str, dict[str, dict[str, int]]] = {u: {} for u in unwinders}

    def add(self, walk: Walk, classes: list[str], odd: bool) -> None:
        for cls in classes:
            row = self.by[walk.unwinder].setdefault(cls, dict.fromkeys(self.FIELDS, 0))
            row["walks"] += 1
            row["faults"] += walk.stop == "fault"
            row["hangs"] += walk.stop == "hang"
            row["cycles"] += walk.stop == "cycle"
            row["wrong"] += odd
            row["frames"] += walk.frames
            row["steps"] += walk.steps
            row["walk_ns"] += walk.walk_ns


class _Run:
    def __init__(self, out_dir: Path, unwinders: Sequence[str], order: Sequence[str], seed: int,
                 budget_ms: float, clock: RunClock) -> None:
        self.out_dir, self.order, self.seed, self.clock = out_dir, list(order), seed, clock
        self.workers = [_Worker(u, unwinders, out_dir, clock, budget_ms) for u in unwinders]
        self.sink = FindingSink(out_dir, clock=clock)
        self.tally = _Tally(unwinders)
        self.classes: dict[str, int] = {}
        self.deaths: list[dict[str, Any]] = []
        self.inputs = self.unperturbed = self.disagreements = self.incomparable = 0
        # (input number, description) of unwinders' own findings stored this round
        self.own_findings: list[tuple[int, Path]] = []

    def start(self) -> None:
        for worker in self.workers:
            worker.start()

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()

    def _died(self, worker: _Worker, first: int, stalled: bool) -> int:
        """A worker died (or stalled) in the batch from `first`: its input becomes a finding,
        a new life starts. Returns the index of the input it died on."""
        status = worker.end()
        state = read_journal(worker.directory / JOURNAL_NAME)
        index = max(first, state.execs - 1)
        if state.data is not None:
            self._offer_own(index, differential_death(
                worker.unwinder, ",".join(w.unwinder for w in self.workers), state.data, status,
                stalled))
        self.deaths.append({"unwinder": worker.unwinder, "status": status, "stalled": stalled,
                            "input": index, "at": round(time.monotonic() - self.clock.origin, 3)})
        worker.start()
        return index

    def _offer_own(self, index: int, finding: Finding) -> None:
        """Store one unwinder's own finding; the round adds every unwinder's walk of it."""
        directory = self.sink.offer(finding)
        if directory is not None:
            self.own_findings.append((index, directory / f"{finding.sha1}.json"))

    def _rest(self, worker: _Worker, first: int, count: int) -> list[Walk]:
        """Inputs first.. of a batch walked by a new life, lives replaced as they die."""
        walks: list[Walk] = []
        while len(walks) < count:
            worker.send(f"batch {self.seed} {first + len(walks)} {count - len(walks)} 0")
            walks += self._answer(worker, first + len(walks), count - len(walks))[0]
        return walks

    def _answer(self, worker: _Worker, first: int, count: int) -> tuple[list[Walk], bool]:
        """The rows of the batch sent from `first` (True: all of them), or those written before
        the worker died, then its death's walk (marked: not compared)."""
        answer = worker.reply(STALL_SECONDS)
        blob = (worker.directory / ROWS_NAME).read_bytes()
        if answer is not None and answer.startswith("ok"):
            for stored in answer.split()[2:]:
                position, _, description = stored.partition(":")
                self.own_findings.append((first + int(position), Path(description)))
            return walks_of(worker.unwinder, blob, count), True
        stalled = answer is None and worker.process is not None and worker.process.poll() is None
        index = self._died(worker, first, stalled)
        walks = walks_of(worker.unwinder, blob, index - first)
        walks.append(Walk(unwinder=worker.unwinder, stop="hang" if stalled else "fault",
                          frames=0, ids=()))
        return walks, False

    def round(self, first: int, count: int) -> None:
        for worker in self.workers:
            worker.send(f"batch {self.seed} {first} {count} 1")
        per_worker: list[list[Walk]] = []
        inputs = b""
        for worker in self.workers:
            walks, got = self._collect(worker, first, count)
            per_worker.append(walks)
            inputs = inputs or got
        for i in range(count):
            data = inputs[i * INPUT_SIZE:(i + 1) * INPUT_SIZE]
            self._judge([walks[i] for walks in per_worker], data)
        for index, description in self.own_findings:
            walks = [w[index - first] for w in per_worker]
            known = truth(inputs[(index - first) * INPUT_SIZE:][:INPUT_SIZE]) if inputs else None
            add_details(description, {"walks": table_rows(walks),
                                      "truth": walk_text(known) if known else None})
        self.own_findings.clear()
        self.inputs += count

    def _collect(self, worker: _Worker, first: int, count: int) -> tuple[list[Walk], bytes]:
        """The answer to the batch already sent (the rest walked by a new life if it died),
        and the inputs' bytes when it walked them all in one life."""
        walks, whole = self._answer(worker, first, count)
        inputs = (worker.directory / INPUTS_NAME).read_bytes()[:count * INPUT_SIZE] if whole \
            else b""
        if len(walks) < count:
            walks += self._rest(worker, first + len(walks), count - len(walks))
        return walks, inputs

    def _judge(self, walks: list[Walk], data: bytes) -> None:
        known = truth(data) if data else None
        self.unperturbed += known is not None
        verdict = judge(walks, known, self.order) if data else None
        if known is None and data and not comparable(
                [w for w in walks if w.stop not in UNCOMPARED_STOPS]):
            self.incomparable += 1
        classes = _class_of(data) if data else ["unknown"]
        for walk in walks:
            odd = verdict is not None and walk.unwinder in verdict.odd
            self.tally.add(walk, classes, odd)
            self.tally.add(walk, ["all"], odd)
        if verdict is None:
            return
        self.disagreements += 1
        self.classes[verdict.location] = self.classes.get(verdict.location, 0) + 1
        self.sink.offer(disagreement_finding(verdict, walks, known, data))


def add_details(description: Path, fields: dict[str, object]) -> None:
    """Add `fields` to the details of one stored finding's description."""
    doc = json.loads(description.read_text())
    doc["details"] = {**doc.get("details", {}), **fields}
    write_atomic(description, json.dumps(doc, indent=1, default=str).encode())


ProgressFn = Callable[[float, dict[str, Any]], None]


def run_differential(out_dir: Path, unwinders: Sequence[str], order: Sequence[str], *,
                     seconds: float, runs: int | None = None, seed: int = 1,
                     budget_ms: float = 50.0, progress: ProgressFn | None = None) -> DiffResult:
    """Walk the generator stream `seed` with every unwinder for `seconds` (or `runs` inputs,
    whichever ends first); findings under out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    clock = RunClock.start()
    deadline = clock.origin + seconds
    run = _Run(out_dir, unwinders, order, seed, budget_ms, clock)
    interrupted = False
    series: dict[str, list[tuple[float, float]]] = {"execs": [], "findings": []}
    try:
        run.start()
        while time.monotonic() < deadline and (runs is None or run.inputs < runs):
            count = BATCH if runs is None else min(BATCH, runs - run.inputs)
            run.round(run.inputs, count)
            t = round(time.monotonic() - clock.origin, 3)
            series["execs"].append((t, run.inputs))
            series["findings"].append((t, run.disagreements))
            if progress is not None:
                progress(t, {"inputs": run.inputs, "disagreements": run.disagreements,
                             "classes": len(run.classes), "deaths": len(run.deaths)})
    except KeyboardInterrupt:
        interrupted = True
    finally:
        run.stop()
    findings = load_findings(out_dir)  # the disagreements and each unwinder's own faults
    return DiffResult(seconds=time.monotonic() - clock.origin, unwinders=tuple(unwinders),
                      inputs=run.inputs, unperturbed=run.unperturbed,
                      disagreements=run.disagreements, incomparable=run.incomparable,
                      per_unwinder=run.tally.by,
                      classes=run.classes, deaths=run.deaths, findings=findings,
                      interrupted=interrupted, series=series)
