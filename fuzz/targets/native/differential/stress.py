"""`walkfuzz stress --target native --unwinder all|A,B`: live workload threads sampled every
--interval, each sample walked by every unwinder available in the sampling process.

In one process only one library unwinder can be loaded (their `unw_*` and `_Unwind_*` symbols
clash); the frame-pointer walker needs no library and coexists with any of them. So "every
unwinder available in that process" is: the process's library unwinder, plus `fp` when `fp`
is among the chosen ones (the companion, native/agents/native/wf_uw_companion.h). Each chosen
library unwinder gets a stress run of its own, one after the other, each --duration long, on
the same workload (same seed, threads, interval); `fp` alone (no library unwinder chosen) runs
as its own process.

Each run's own findings (faults, hangs, invalid samples against the shadow stack) are stored
as a single-unwinder stress run stores them; a sample where the library unwinder and fp
disagree (one walked the shadow stack, by its own rule, the other did not) is an
`invalid-trace` finding `<the wrong one> vs <the right one>: sample` with both walks and the
shadow stack in its table. The report has the per-unwinder table (walks, stops, faults).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from walkfuzz.core.exit_status import FINDINGS, INTERRUPTED, judged
from walkfuzz.engine.progress import Progress, firsts
from walkfuzz.engine.run_report import write_run_report
from walkfuzz.findings.hits import RunClock
from walkfuzz.findings.store import FindingSink, load_findings
from walkfuzz.report.document import CounterValue, RunMeta, RunReport, group_findings
from walkfuzz.targets.native import TARGET
from walkfuzz.targets.native.differential.judge import FP
from walkfuzz.targets.native.finding import companion_findings
from walkfuzz.targets.native.reporting import stress_report
from walkfuzz.targets.native.stress_run import (
    StressConfig,
    StressResult,
    percentile_ns,
    run_stress,
    status_line,
)

RUN_TYPE = "native-stress-differential"


def _counters(results: dict[str, StressResult]) -> dict[str, CounterValue]:
    counters: dict[str, CounterValue] = {}
    for unwinder, r in results.items():
        c = r.counters
        counters[f"unwinder.{unwinder}"] = {
            "walked": r.walked, "match_rate": round(r.match_rate, 6), "invalid": r.invalid,
            "faults": int(c.get("faults", 0)), "hangs": int(c.get("hangs", 0)),
            "walk_p99_ns_le": percentile_ns(r.latency_hist, 0.99),
            **{f"stop.{k}": int(v) for k, v in c.get("stops", {}).items()}}
        fp = r.companion
        if fp:
            walked = fp["walked"]
            counters[f"fp_in.{unwinder}"] = {
                **{k: v for k, v in fp.items() if k not in ("kept", "walk_ns")},
                "ns_per_walk": round(fp["walk_ns"] / walked, 1) if walked else 0.0}
    return counters


def _wrong(r: StressResult) -> bool:
    c, fp = r.counters, r.companion or {}
    return bool(r.died is not None or int(c.get("faults", 0)) + int(c.get("hangs", 0))
                + r.invalid + fp.get("fp_wrong", 0) + fp.get("fp_faults", 0)
                + fp.get("main_only_ok", 0) + fp.get("fp_only_ok", 0))


def summary_lines(results: dict[str, StressResult]) -> list[str]:
    lines = [f"  {'unwinder':<18} {'walked':>8} {'match':>9} {'invalid':>8} {'faults':>7} "
             f"{'hangs':>6}"]
    for unwinder, r in results.items():
        lines.append(f"  {unwinder:<18} {r.walked:>8} {r.match_rate:>9.4%} {r.invalid:>8} "
                     f"{int(r.counters.get('faults', 0)):>7} "
                     f"{int(r.counters.get('hangs', 0)):>6}")
        fp = r.companion
        if fp:
            ok = fp["fp_exact"] + fp["fp_faithful"]
            lines.append(f"  {'fp (same process)':<18} {fp['walked']:>8} "
                         f"{ok / fp['walked'] if fp['walked'] else 0:>9.4%} "
                         f"{fp['fp_wrong']:>8} {fp['fp_faults']:>7} {fp['fp_hangs']:>6}"
                         f"   only {unwinder} right {fp['main_only_ok']}, only fp right "
                         f"{fp['fp_only_ok']}")
    return lines


def stress_differential(out: Path, unwinders: list[str], base: StressConfig,
                        argv: list[str]) -> int:
    libraries = [u for u in unwinders if u != FP] or [FP]
    companion = FP in unwinders and libraries != [FP]
    clock = RunClock.start()
    started = time.time()
    results: dict[str, StressResult] = {}
    sink = FindingSink(out, clock=clock)
    for unwinder in libraries:
        cfg = replace(base, unwinder=unwinder, companion=companion)
        with Progress() as progress:
            def show(status: dict[str, Any], name: str = unwinder) -> None:
                progress.update(time.monotonic() - clock.origin, f"{name}: {status_line(status)}",
                                firsts(*(int(status.get(k, 0))
                                         for k in ("faults", "hangs", "invalid"))))

            result = run_stress(cfg, show)
        results[unwinder] = result
        stress_report(out, result, argv, clock)  # its findings, stored under out
        for finding in companion_findings(unwinder, result.companion or {}, FP):
            sink.offer(finding)
        if result.interrupted:
            break
    doc = RunReport(
        meta=RunMeta(run_type=RUN_TYPE, command=argv, target=TARGET, mode="stress",
                     started_at=started, ended_at=time.time(), walker=",".join(unwinders),
                     status="interrupted" if any(r.interrupted for r in results.values())
                     else "completed"),
        counters=_counters(results),
        findings=group_findings(out, load_findings(out), run_command=argv),
        notes=[f"one stress run per library unwinder ({', '.join(libraries)}), each "
               f"{base.seconds:g} s on the same workload; "
               + ("every sample also walked by fp in the same process" if companion
                  else "no fp companion")])
    paths = write_run_report(out, doc)
    print(f"native stress ({','.join(unwinders)}), {base.seconds:g} s per process at "
          f"{base.interval_us:g} us, {base.threads} threads:")
    print("\n".join(summary_lines(results)))
    print(f"report: {paths['html']}")
    if any(r.interrupted for r in results.values()):
        return INTERRUPTED
    if any(r.died is not None for r in results.values()):
        return FINDINGS
    return judged(any(_wrong(r) for r in results.values()))
