"""`walkfuzz triage`: replay a pile of findings, group them by cause, say what each group is.

    inputs (walkfuzz.triage.inputs)  ->  replay in child processes (walkfuzz.triage.worker),
    each input `runs` times under the guard  ->  signature, class, reliability per input  ->
    exact groups and clusters of near-duplicates (walkfuzz.triage.cluster)  ->  table, JSON,
    SARIF (walkfuzz.triage.sarif)

Replays run in `jobs` child processes, each given a slice of the inputs. An input that kills
its process (a fault that escaped the guard) is recorded as an `escaped-guard` crash and a
new process takes the rest of the slice, so one such input never stops a triage. Ctrl-C or
SIGTERM stops the replays at once (they run in sessions of their own, so a terminal's Ctrl-C is
not mistaken for a death); the inputs replayed until then make the outcome, marked interrupted.

Each input is replayed by its target's Replayer (walkfuzz.targets.protocol, reached through
walkfuzz.targets.table), in processes of its target's process key (the native target's: one
per unwinder, and for snapshots). An input that does not give its stored finding is replayed
again as its target's first alternative (the native target's: the snapshot saved beside it,
since a fresh process's stack is not the one the finding walked) and, when that gives a
finding, the input's member is the alternative's.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from walkfuzz.core import sanitizer
from walkfuzz.core.errors import UnknownTargetError
from walkfuzz.core.exit_status import describe_exit
from walkfuzz.engine.child import run_child, walkfuzz_command
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.sanitizer_report import read_report
from walkfuzz.report.document import SANITIZER_KINDS, replay_command
from walkfuzz.targets.protocol import DEFAULT_HANG_NS
from walkfuzz.targets.table import DEFAULT_TARGET, lookup
from walkfuzz.triage.cluster import Cluster, Member, cluster
from walkfuzz.triage.inputs import Defaults, InputSpec, resolve, stored_input
from walkfuzz.triage.worker import stored_input as task_input

DEFAULT_RUNS = 3
ESCAPED = "escaped-guard"
SCHEMA_VERSION = 1


@dataclass
class FileError:
    path: str
    message: str


@dataclass
class Outcome:
    """What triage made of a set of inputs."""

    inputs: int
    clusters: list[Cluster]
    errors: list[FileError]
    clean: list[str]  # inputs that replayed without a finding
    mismatched: list[tuple[str, str, str]]  # (path, stored signature, replayed signature)
    seconds: float
    runs: int
    extra: dict[str, object] = field(default_factory=dict)
    interrupted: bool = False  # stopped by Ctrl-C or SIGTERM: `inputs` were replayed of more

    @property
    def findings(self) -> int:
        return sum(len(c.members) for c in self.clusters)


# ---- replaying in child processes -----------------------------------------------------------


def process_key(task: dict[str, Any]) -> tuple[bool, str]:
    """Which replay processes may take `task`: a sanitizer's or not, and its target's process
    key (walkfuzz.targets.protocol: the native target's unwinder, or `snapshot`). A target
    whose inputs need processes of their own loads libraries of its own there, not the core's
    sanitizer build."""
    target = str(task.get("target") or DEFAULT_TARGET)
    try:
        key = lookup(target).replayer().process_key(task_input(task))
    except UnknownTargetError:  # an unknown target: its replay names it
        key = ""
    return (False, key) if key else (_sanitized(task), "")


def _run_slice(tasks: list[dict[str, Any]], runs: int, hang_ns: int,
               on_status: Callable[[dict[str, Any]], None],
               stop: threading.Event) -> list[dict[str, Any]]:
    """Replay `tasks` in child processes until every task has a result line, or `stop` is set
    (then the result lines so far); `on_status` gets each input's status report
    (walkfuzz.triage.worker) as it is done."""
    with tempfile.TemporaryDirectory(prefix="walkfuzz-triage-") as reports:
        env = ({**os.environ, **sanitizer.environ(Path(reports))}
               if any(_sanitized(t) for t in tasks) else None)
        return _replay_slice(tasks, runs, hang_ns, on_status, stop, env, Path(reports))


def _sanitized(task: dict[str, Any]) -> bool:
    """Whether `task` is a stored sanitizer finding: replayed under the sanitizer build."""
    return str(task.get("stored_signature") or "").split(".")[0] in SANITIZER_KINDS


def _sanitizer_death(reports: Path) -> dict[str, str] | None:
    """The report a sanitizer replay process left before it died (then removed), if any."""
    for path in sorted(reports.glob(f"{sanitizer.REPORT_NAME}.*")):
        report = read_report(path)
        path.unlink()
        if report is not None:
            return {"kind": report.kind, "location": report.location}
    return None


def _replay_slice(tasks: list[dict[str, Any]], runs: int, hang_ns: int,
                  on_status: Callable[[dict[str, Any]], None], stop: threading.Event,
                  env: dict[str, str] | None, reports: Path) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    pending = list(tasks)
    while pending and not stop.is_set():
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as spec:
            json.dump({"tasks": pending, "runs": runs, "hang_ns": hang_ns}, spec)
        try:
            # its process group killed once `stop` is set
            child = run_child(walkfuzz_command("walkfuzz.triage.worker", spec.name),
                              on_status=on_status, stop=stop, env=env)
        finally:
            os.unlink(spec.name)
        began, done = None, set()
        returncode, stderr = child.returncode, child.stderr
        for line in child.stdout.splitlines():
            doc = json.loads(line)
            if "begin" in doc:
                began = doc["begin"]
            else:
                results.append(doc)
                done.add(doc["id"])
        if (returncode == 0 and len(done) == len(pending)) or stop.is_set():
            break
        if began is None or began in done:  # died before or between inputs: not an input's fault
            tail = (stderr.strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"triage replay process failed ({describe_exit(returncode)})"
                               f": {tail}")
        death = _sanitizer_death(reports) if env is not None else None
        results.append({"id": began, "died": describe_exit(returncode),
                        **({"sanitizer": death} if death else {})})
        done.add(began)
        pending = [t for t in pending if t["id"] not in done]
    return results


def replay_all(specs: Sequence[InputSpec], runs: int = DEFAULT_RUNS, jobs: int = 2,
               hang_ns: int = DEFAULT_HANG_NS,
               on_status: Callable[[dict[str, Any]], None] = lambda status: None,
               ) -> tuple[list[dict[str, Any] | None], bool]:
    """Result lines (walkfuzz.triage.worker) of every input, in input order, and whether
    Ctrl-C or SIGTERM stopped the replays (then the inputs not replayed have None);
    `on_status` gets each input's status report as it is done (from several threads)."""
    tasks = [{"id": i, **s.to_json()} for i, s in enumerate(specs)]
    jobs = max(1, min(jobs, len(tasks)))
    if any(_sanitized(t) for t in tasks):
        sanitizer.ensure_built()
    # a slice is the tasks of one process key: sanitizer findings (their processes start with
    # the runtime) or none, one native unwinder's or snapshots'
    keys = sorted({process_key(t) for t in tasks})
    slices = [part for key in keys for i in range(jobs)
              if (part := [t for t in tasks if process_key(t) == key][i::jobs])]
    stop = threading.Event()
    with ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(_run_slice, part, runs, hang_ns, on_status, stop)
                   for part in slices]
        try:
            parts = [f.result() for f in futures]
        except KeyboardInterrupt:
            stop.set()
            parts = [f.result() for f in futures]
    by_id = {r["id"]: r for part in parts for r in part}
    return [by_id.get(t["id"]) for t in tasks], stop.is_set()


# ---- from result lines to members --------------------------------------------------------------


def _reproduced(spec: InputSpec, result: dict[str, Any] | None) -> bool:
    finding = (result or {}).get("finding")
    if not isinstance(finding, dict):
        return "died" in (result or {})
    return spec.stored_signature in (None, finding.get("signature"))


def _alternative_retries(specs: Sequence[InputSpec], results: Sequence[dict[str, Any] | None]
                         ) -> dict[int, InputSpec]:
    """The first alternative (its target's replay part's `alternatives`) of each input that
    replayed without its stored finding, by input index."""
    retries = {}
    for i, (spec, result) in enumerate(zip(specs, results, strict=True)):
        if result is None or "error" in result or _reproduced(spec, result):
            continue
        stored = stored_input(spec)
        try:
            alternatives = lookup(stored.target).replayer().alternatives(stored)
        except UnknownTargetError:  # an unknown target: its replay named it already
            continue
        if alternatives:
            first = alternatives[0]
            retries[i] = InputSpec(first.path, first.target, first.harness, first.walker,
                                   unwinder=first.unwinder or None)
    return retries


def _with_alternatives(specs: list[InputSpec], results: list[dict[str, Any] | None], runs: int,
                    jobs: int, hang_ns: int
                    ) -> tuple[list[InputSpec], list[dict[str, Any] | None], bool]:
    """Inputs whose alternative reproduced a finding where they did not are replaced by it
    (the input's stored signature kept, so the change is reported)."""
    retries = _alternative_retries(specs, results)
    if not retries:
        return specs, results, False
    # not counted on the progress line: it counts the inputs, replayed already
    again, interrupted = replay_all(list(retries.values()), runs, jobs, hang_ns)
    specs, results = list(specs), list(results)
    for (i, spec), result in zip(retries.items(), again, strict=True):
        if result is not None and "finding" in result:
            result["why"] = (f"from the snapshot beside {Path(specs[i].path).name} (the input "
                             f"walks clean in a fresh process): {result['why']}")
            specs[i] = InputSpec(spec.path, spec.target, spec.harness, spec.walker,
                                 specs[i].stored_signature, unwinder=spec.unwinder)
            results[i] = result
    return specs, results, interrupted


def _member(spec: InputSpec, result: dict[str, Any]) -> Member:
    path = Path(spec.path)
    size = path.stat().st_size if path.exists() else 0
    if "sanitizer" in result:  # the sanitizer's report ended it, as in the campaign
        found = result["sanitizer"]
        signature = Finding(found["kind"], spec.target or DEFAULT_TARGET, spec.harness or "?",
                            found["location"], (), b"").signature
        return Member(spec.path, size, spec.walker or "reference", spec.target or DEFAULT_TARGET,
                      spec.harness or "?", signature, found["kind"], found["location"], (),
                      found["kind"], f"the {found['kind']} report: {found['location']}", True,
                      1, 1, spec.stored_signature)
    if "died" in result:
        signature = f"crash.{ESCAPED}.{result['died']}"
        return Member(spec.path, size, spec.walker or "reference", spec.target or DEFAULT_TARGET,
                      spec.harness or "?", signature, "crash", f"{ESCAPED}:{result['died']}",
                      (), ESCAPED, f"the replay process died of {result['died']}", True, 1, 1,
                      spec.stored_signature)
    f = result["finding"]
    signature = str(f["signature"])
    reproduced = sum(1 for s in result["signatures"] if s == signature)
    return Member(
        path=spec.path, size=size, walker=spec.walker or "reference", target=str(f["target"]),
        harness=str(f["harness"]), signature=signature, kind=str(f["kind"]),
        location=str(f["location"]), shape=tuple(f["shape"]), klass=str(result["class"]),
        why=str(result["why"]), reliable=reproduced == result["runs"], reproduced=reproduced,
        runs=int(result["runs"]), stored_signature=spec.stored_signature,
        source=(f.get("details") or {}).get("source"), unwinder=spec.unwinder or "")


def triage(specs: Sequence[InputSpec], defaults: Defaults | None = None,
           runs: int = DEFAULT_RUNS, jobs: int = 2, hang_ns: int = DEFAULT_HANG_NS,
           on_error: Callable[[FileError], None] | None = None,
           on_status: Callable[[dict[str, Any]], None] = lambda status: None) -> Outcome:
    """Replay, classify and cluster `specs`; a bad input becomes a FileError and the rest go on.
    `on_status` gets each input's status report as it is replayed (from several threads)."""
    started = time.monotonic()
    defaults = defaults or Defaults()
    resolved = [resolve(s, defaults) for s in specs]
    results, interrupted = (replay_all(resolved, runs, jobs, hang_ns, on_status) if resolved
                            else ([], False))
    if not interrupted:
        resolved, results, interrupted = _with_alternatives(resolved, results, runs, jobs,
                                                            hang_ns)
    replayed = [(s, r) for s, r in zip(resolved, results, strict=True) if r is not None]
    members, errors, clean, mismatched = [], [], [], []
    for spec, result in replayed:
        if "error" in result:
            error = FileError(spec.path, str(result["error"]))
            errors.append(error)
            if on_error is not None:
                on_error(error)
        elif "finding" in result or "died" in result:
            member = _member(spec, result)
            members.append(member)
            if spec.stored_signature and spec.stored_signature != member.signature:
                mismatched.append((spec.path, spec.stored_signature, member.signature))
        else:
            clean.append(spec.path)
    return Outcome(len(replayed), cluster(members), errors, clean, mismatched,
                   time.monotonic() - started, runs, interrupted=interrupted)


# ---- presenting -------------------------------------------------------------------------------


def _stored_reproducer(path: str) -> str | None:
    """The reproducer a finding's description names (a run keeps it there as it ends:
    walkfuzz.engine.run_report)."""
    try:
        value = json.loads(Path(path).with_suffix(".json").read_text()).get("reproducer")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and value else None


def reproducer(m: Member) -> str:
    """The shell command that replays and explains one input (`walkfuzz replay`, as the run
    reports print it); for a stored finding without input bytes, the reproducer its
    description names (the command of the run that found it)."""
    if m.size == 0:
        stored = _stored_reproducer(m.path)
        if stored is not None:
            return stored
    return replay_command(m.target, m.harness, m.walker, m.path, m.kind, m.unwinder)


def cluster_json(c: Cluster) -> dict[str, object]:
    smallest = c.smallest
    return {
        "group": c.number,
        "key": list(c.key),
        "kind": "/".join(c.kinds),
        "class": "/".join(c.classes),
        "count": len(c.members),
        "min_size": smallest.size,
        "reliability": c.reliability,
        "walker": smallest.walker,
        "location": smallest.location,
        "why": smallest.why,
        "reproducer": reproducer(smallest),
        "signatures": [
            {"signature": g.signature, "count": len(g.members), "kind": g.members[0].kind,
             "location": g.members[0].location, "shape": list(g.members[0].shape),
             "examples": [m.path for m in sorted(g.members, key=lambda m: (m.size, m.path))]}
            for g in c.groups],
        "inputs": [{"path": m.path, "size": m.size, "signature": m.signature, "class": m.klass,
                    "reproduced": f"{m.reproduced}/{m.runs}"} for m in c.members],
    }


def outcome_json(o: Outcome, command: list[str]) -> dict[str, object]:
    return {
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "inputs": o.inputs,
        "findings": o.findings,
        "groups": [cluster_json(c) for c in o.clusters],
        "errors": [{"path": e.path, "message": e.message} for e in o.errors],
        "clean": o.clean,
        "signature_changed": [{"path": p, "stored": s, "replayed": r} for p, s, r in o.mismatched],
        "runs_per_input": o.runs,
        "seconds": round(o.seconds, 3),
    }


def notes(o: Outcome) -> list[str]:
    """Lines the table does not say: why some targets' groups keep their size (the table's
    `not_minimized` of each target among the members)."""
    said: list[str] = []
    for target in dict.fromkeys(m.target for c in o.clusters for m in c.members):
        try:
            note = lookup(target).not_minimized
        except UnknownTargetError:
            continue
        if note and note not in said:
            said.append(note)
    return said


def table(o: Outcome) -> str:
    """The summary table: group, kind, class, count, minimal size, reproducer command."""
    header = ("group", "kind", "class", "count", "min size", "reliability", "reproducer")
    rows = [(str(c.number), "/".join(c.kinds), "/".join(c.classes), str(len(c.members)),
             str(c.smallest.size), c.reliability, reproducer(c.smallest)) for c in o.clusters]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1]
             for r in [header, *rows]]
    lines.append(f"{o.findings} findings in {len(o.clusters)} groups "
                 f"({sum(len(c.groups) for c in o.clusters)} signatures); {len(o.clean)} inputs "
                 f"ran clean, {len(o.errors)} could not run; {o.inputs} inputs in "
                 f"{o.seconds:.2f} s ({o.inputs / max(o.seconds, 1e-9):.0f}/s, "
                 f"{o.runs} replays each)")
    return "\n".join(lines)
