"""A triage replay process (`python -m walkfuzz.triage.worker TASKS.json`).

It replays the inputs listed in TASKS.json, each `runs` times, and writes one JSON line per
input to stdout. Before each input it writes a `{"begin": id}` line, so that when an input
kills the process (a fault the guard cannot catch) the driver knows which one did, records
it, and starts a new process for the rest (walkfuzz.triage.driver).

    task:   {"id": 3, "path": ..., "target": ..., "harness": ..., "walker": ...,
             "unwinder": ...}
    result: {"id": 3, "error": "..."}                           cannot run
            {"id": 3, "runs": 3, "signatures": [...]}          ran clean (all null)
            {"id": 3, "runs": 3, "signatures": [...], "finding": {...}, "class": ...,
             "why": ...}                                        a finding
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from walkfuzz.core.errors import UserError
from walkfuzz.engine.progress import report_status
from walkfuzz.targets.harness_replay import MinivmReplayer, Replay, ReplayError, sniff_harness
from walkfuzz.targets.native import replay as native_replay
from walkfuzz.targets.native.snapshot.format import is_snapshot
from walkfuzz.targets.protocol import StoredInput
from walkfuzz.triage.stored import STORED_HARNESSES, STORED_TARGETS, stored_result

LIBUNWIND = "libunwind"
NATIVE = "native"
PERTURB = "perturb"
SNAPSHOT = "snapshot"  # the native target's remote-memory harness: its inputs are snapshots
Replayer = MinivmReplayer | native_replay.Replayer


class Replayers:
    """One replayer per target (and per unwinder of the native target), created on first use
    (the native extensions are optional). The driver gives each unwinder, and snapshots,
    processes of their own (process_key): their libraries' symbols clash in one process."""

    def __init__(self, hang_ns: int) -> None:
        self.hang_ns = hang_ns
        self._made: dict[tuple[str, str], Replayer] = {}

    def get(self, target: str, source: str, harness: str = "", unwinder: str = "") -> Replayer:
        key = (target, SNAPSHOT if harness == SNAPSHOT else unwinder)
        if key not in self._made:
            if target == "minivm":
                self._made[key] = MinivmReplayer(self.hang_ns)
            elif target in (LIBUNWIND, NATIVE):
                self._made[key] = native_replay.Replayer(self.hang_ns, "")
            else:
                raise ReplayError(f"{source}: target {target!r} cannot be replayed by triage "
                                  "(minivm, libunwind and native can)")
        return self._made[key]


def native_harness(target: str, data: bytes) -> str | None:
    """The harness of a native input that names none: a snapshot is known by its bytes."""
    if target == LIBUNWIND:
        return PERTURB
    if target == NATIVE:
        return SNAPSHOT if is_snapshot(data) else PERTURB
    return None


def _replay(replayer: Replayer, data: bytes, harness: str, task: dict[str, Any],
            source: str) -> Replay:
    walker = str(task.get("walker") or "reference")
    if isinstance(replayer, native_replay.Replayer):
        return replayer.run(data, StoredInput(source, str(task.get("target")), harness, walker,
                                              str(task.get("unwinder") or "")))
    return replayer.run(data, harness, walker, source)


def replay_task(task: dict[str, Any], replayers: Replayers, runs: int) -> dict[str, Any]:
    """Replay one input `runs` times; the result line for it."""
    source = str(task["path"])
    out: dict[str, Any] = {"id": task["id"]}
    try:
        if task.get("error"):
            raise ReplayError(str(task["error"]))
        data = Path(source).read_bytes()
        target = str(task.get("target") or "minivm")
        if target in STORED_TARGETS or (target, task.get("harness")) in STORED_HARNESSES:
            return {**out, **stored_result(source)}
        harness = str(task.get("harness") or native_harness(target, data)
                      or sniff_harness(data, source))
        replayer = replayers.get(target, source, harness, str(task.get("unwinder") or ""))
        replays: list[Replay] = [_replay(replayer, data, harness, task, source)
                                 for _ in range(max(1, runs))]
    except (UserError, OSError) as err:
        out["error"] = str(err) if isinstance(err, UserError) else f"{source}: {err.strerror}"
        return out
    out["runs"] = len(replays)
    out["signatures"] = [r.finding.signature if r.finding else None for r in replays]
    first = next((r for r in replays if r.finding is not None), None)
    if first is not None and first.finding is not None:
        out["finding"] = first.finding.to_json()
        out["class"], out["why"] = first.klass, first.why
        out["harness"] = first.finding.harness
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(Path(args[0]).read_text())
    replayers = Replayers(int(spec["hang_ns"]))
    out = sys.stdout
    for task in spec["tasks"]:
        out.write(json.dumps({"begin": task["id"]}) + "\n")
        out.flush()
        result = replay_task(task, replayers, int(spec["runs"]))
        out.write(json.dumps(result, default=str) + "\n")
        out.flush()
        report_status({"finding": "finding" in result, "error": "error" in result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
