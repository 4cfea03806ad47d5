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

from walkfuzz.core.errors import UnknownTargetError, UserError
from walkfuzz.core.paths import read_input
from walkfuzz.engine.progress import report_status
from walkfuzz.targets.protocol import STORED, Replay, Replayer, ReplayError, StoredInput
from walkfuzz.targets.table import DEFAULT_TARGET, lookup


class Replayers:
    """One Replayer per target package and process key (walkfuzz.targets.protocol), created on
    first use (the native extensions are optional). The driver gives each process key
    processes of its own (walkfuzz.triage.driver.process_key): their libraries' symbols clash
    in one process."""

    def __init__(self, hang_ns: int) -> None:
        self.hang_ns = hang_ns
        self._made: dict[tuple[str, str], Replayer] = {}

    def get(self, stored: StoredInput) -> Replayer:
        try:
            target = lookup(stored.target)
        except UnknownTargetError as err:
            raise ReplayError(f"{stored.path}: {err}") from None
        part = target.replayer()
        key = (target.package, part.process_key(stored))
        if key not in self._made:
            self._made[key] = part.Replayer(self.hang_ns, key[1])
        return self._made[key]


def stored_input(task: dict[str, Any]) -> StoredInput:
    return StoredInput(str(task["path"]), str(task.get("target") or DEFAULT_TARGET),
                       str(task.get("harness") or ""), str(task.get("walker") or "reference"),
                       str(task.get("unwinder") or ""))


def _stored_result(replay: Replay) -> dict[str, Any]:
    """An input grouped by its stored description, not replayed (runs 0)."""
    doc = replay.extra[STORED]
    harness = doc.get("harness") if isinstance(doc, dict) else None
    return {"runs": 0, "signatures": [], "finding": doc, "class": replay.klass,
            "why": replay.why, "harness": harness}


def replay_task(task: dict[str, Any], replayers: Replayers, runs: int) -> dict[str, Any]:
    """Replay one input `runs` times; the result line for it."""
    source = str(task["path"])
    out: dict[str, Any] = {"id": task["id"]}
    try:
        if task.get("error"):
            raise ReplayError(str(task["error"]))
        data = read_input(Path(source))
        stored = stored_input(task)
        replayer = replayers.get(stored)
        replays: list[Replay] = []
        for _ in range(max(1, runs)):
            replays.append(replayer.run(data, stored))
            if STORED in replays[-1].extra:
                return {**out, **_stored_result(replays[-1])}
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
