"""`walkfuzz replay --target native --unwinder all|A,B,.. INPUT`: one input walked by every
named unwinder, each in a child process of its own (walkfuzz.targets.native.differential.worker
--input), the per-unwinder table printed and the input judged as the differential run judged
it. Exit 1 when the unwinders disagree (or one faulted, hung or died), else 0.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from walkfuzz.core.exit_status import CLEAN, judged
from walkfuzz.core.paths import read_input
from walkfuzz.targets.native.child import walk_in_child
from walkfuzz.targets.native.differential.judge import Walk, judge
from walkfuzz.targets.native.differential.rows import table_rows, table_text, truth, walks_of
from walkfuzz.targets.native.finding import disagreement_finding


def _unwinder_walk(unwinder: str, path: Path, scratch: Path) -> tuple[Walk, str]:
    """The walk of one unwinder, and the faulting code's name ('' when it did not fault)."""
    end = walk_in_child("walkfuzz.targets.native.differential.worker",
                        ["--unwinder", unwinder, "--dir", str(scratch / unwinder),
                         "--input", str(path)], verdicts=(CLEAN,), capture=True)
    if end.died is not None:
        print(f"{unwinder}: the child died ({end.died}): {end.stderr.strip()[-300:]}",
              file=sys.stderr)
        return Walk(unwinder=unwinder, stop="fault", frames=0, ids=()), end.location
    doc = json.loads(end.stdout.strip().splitlines()[-1])
    return walks_of(unwinder, bytes.fromhex(doc["row"]), 1)[0], str(doc["fault"])


def replay_differential(path: Path, unwinders: Sequence[str], order: Sequence[str]) -> int:
    data = read_input(path)
    with tempfile.TemporaryDirectory(prefix="walkfuzz-diff-replay-") as scratch:
        results = [_unwinder_walk(u, path, Path(scratch)) for u in unwinders]
    walks = [walk for walk, _ in results]
    known = truth(data)
    print(table_text(table_rows(walks), known))
    for walk, fault in results:
        if fault:
            print(f"{walk.unwinder}: {walk.stop} at {fault}")
    verdict = judge(walks, known, order)
    broken = any(w.stop in ("fault", "hang", "cycle") for w in walks)
    summary: dict[str, object] = {"input": str(path), "unwinders": list(unwinders),
                                  "verdict": verdict.location if verdict else None}
    if verdict is not None:
        summary["signature"] = disagreement_finding(verdict, walks, known, data).signature
    print(json.dumps(summary))
    return judged(verdict is not None or broken)
