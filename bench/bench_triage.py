"""Triage throughput and minimization time on findings of the planted-bug walkers.

  findings triaged per second: 1000 findings (200 of each planted bug but fp-cycle, whose
  hangs each cost the watchdog budget per replay; missing-bounds-check twice, two seeds),
  replayed in 2 child processes, with 1 and with 3 replays per input; and the fp-cycle
  findings alone (hangs included).
  minimization: `minimize()` of one finding of each planted bug triage replays (all but the
  queue harness's, which triage does not replay; budget 5 s), mean seconds, the mean shrink
  factor, and how many shrank to the empty input (a generator harness's, which can show a bug).
Targets (issue 7): 1000 findings/s on 2 cores, replay included; under 5 s per minimization.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from runner import Row, budget

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fixtures"))

import planted_corpus

from walkfuzz.findings.store import save_finding
from walkfuzz.targets.minivm.minimize import MINIMIZE_HANG_NS, minimize
from walkfuzz.targets.minivm.replayer import MinivmReplayer
from walkfuzz.triage.driver import triage
from walkfuzz.triage.inputs import discover

PER_BUG = 200
FAST_BUGS = ("missing-bounds-check", "frame-size-off-by-one", "inlined-scope-order",
             "nested-condition", "missing-bounds-check")


def _corpus(out: Path, bugs: tuple[str, ...], per_bug: int, replayer: MinivmReplayer) -> int:
    count = 0
    for i, bug in enumerate(bugs):
        for finding in planted_corpus.findings_of(bug, per_bug, replayer, seed=i + 1):
            save_finding(out, finding)
            count += 1
    return count


def measure() -> list[Row]:
    replayer = MinivmReplayer(MINIMIZE_HANG_NS)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        fast, hangs = Path(tmp) / "fast", Path(tmp) / "cycle"
        count = _corpus(fast, FAST_BUGS, budget(PER_BUG, 2), replayer)
        specs = discover([fast])
        for runs in (1, 3):
            o = triage(specs, runs=runs, jobs=2)
            rows.append(Row("triage", f"{count} findings, {runs} replay(s) each, -j 2",
                            o.findings / o.seconds, "findings/s", target="1000/s"))
        cycles = _corpus(hangs, ("fp-cycle",), budget(40, 2), replayer)
        o = triage(discover([hangs]), runs=1, jobs=2)
        rows.append(Row("triage", f"{cycles} fp-cycle findings (hangs: 100 ms budget each)",
                        o.findings / o.seconds, "findings/s"))
    seconds: list[float] = []
    shrink: list[float] = []
    empty = 0
    for bug in (b.name for b in planted_corpus.TRIAGED_BUGS):
        finding = planted_corpus.findings_of(bug, 1, replayer, seed=7)[0]
        result = minimize(finding.data, finding.harness, planted_corpus.walker_path(bug), 5.0,
                          replayer)
        seconds.append(result.seconds)
        # An empty input is a right answer, not a failed shrink: a generator harness reads
        # missing bytes as zeros, and the layout it generates from none can show the bug
        # (frame-size-off-by-one's does; its replay of b"" keeps the signature, the reference
        # walker's finds nothing). It has no shrink factor: counted on a row of its own.
        if result.data:
            shrink.append(result.materialized_size / len(result.data))
        else:
            empty += 1
    bugs = len(planted_corpus.TRIAGED_BUGS)
    rows.append(Row("minimize", f"mean time per finding ({bugs} planted bugs)",
                    sum(seconds) / len(seconds), "s", target="< 5 s"))
    rows.append(Row("minimize", "max time per finding", max(seconds), "s", target="< 5 s"))
    rows.append(Row("minimize", "mean shrink factor (case bytes before / after)",
                    sum(shrink) / len(shrink) if shrink else 0.0, "x",
                    target="of the findings not shrunk to an empty input"))
    rows.append(Row("minimize", "findings shrunk to an empty input", empty, "findings",
                    target="a generator's empty input showing the bug"))
    return rows
