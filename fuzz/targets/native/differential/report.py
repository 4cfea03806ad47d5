"""The run report (walkfuzz.report.document) of a differential run, and its summary lines.

Counters: inputs, unperturbed inputs, disagreements, then per unwinder its walks, faults,
hangs, cycles and wrong walks (`wrong`: an odd one of a disagreement, or not the known chain)
with ns per step; `<measure>_by_class` each of them per perturbation class and unwinder (an
input counts in every class it applies). Each finding group carries the per-unwinder table
of its first example (`details.walks`), which the Markdown and HTML reports render under the
findings.
"""

from __future__ import annotations

import time
from pathlib import Path

from walkfuzz.engine.run_report import write_run_report
from walkfuzz.report.document import CounterValue, RunMeta, RunReport, group_findings
from walkfuzz.targets.native.differential.run import DiffResult

RUN_TYPE = "native-differential"


def ns_per_step(row: dict[str, int]) -> float:
    return round(row["walk_ns"] / row["steps"], 1) if row.get("steps") else 0.0


def per_million(count: int, walks: int) -> float:
    return round(count * 1e6 / walks, 1) if walks else 0.0


def unwinder_counters(result: DiffResult) -> dict[str, CounterValue]:
    """`unwinder.<name>`: its totals and ns per step; `<measure>_by_class`: each measure per
    `<perturbation class>/<unwinder>`."""
    counters: dict[str, CounterValue] = {}
    by_measure: dict[str, dict[str, int | float | str]] = {
        f"{m}_by_class": {} for m in ("walks", "faults", "hangs", "cycles", "wrong")}
    for unwinder, by_class in result.per_unwinder.items():
        row = by_class.get("all", {})
        group: dict[str, int | float | str] = {k: v for k, v in row.items() if k != "walk_ns"}
        group["ns_per_step"] = ns_per_step(row)
        counters[f"unwinder.{unwinder}"] = group
        for cls, c in sorted(by_class.items()):
            if cls != "all":
                for name, table in by_measure.items():
                    table[f"{cls}/{unwinder}"] = c[name.removesuffix("_by_class")]
    counters.update(by_measure)
    return counters


def diff_report(out_dir: Path, result: DiffResult, command: list[str],
                started_at: float) -> dict[str, Path]:
    counters: dict[str, CounterValue] = {
        "inputs": result.inputs,
        "unperturbed": result.unperturbed,
        "disagreements": result.disagreements,
        "incomparable": result.incomparable,
        "worker_deaths": len(result.deaths),
        "inputs_per_second": round(result.inputs / result.seconds, 1) if result.seconds else 0.0,
        "classes": dict(result.classes),
        **unwinder_counters(result),
    }
    doc = RunReport(
        meta=RunMeta(run_type=RUN_TYPE, command=command, target="native", mode="differential",
                     started_at=started_at, ended_at=time.time(),
                     walker=",".join(result.unwinders),
                     status="interrupted" if result.interrupted else "completed"),
        series={k: list(v) for k, v in result.series.items()},
        counters=counters,
        findings=group_findings(out_dir, result.findings, run_command=command),
        notes=["every input walked by every unwinder, each in its own worker process; "
               "unperturbed inputs checked against the known chain (fp: its frames a "
               "subsequence of it), perturbed ones compared among the unwinders by frame id "
               "up to the first unknown frame (walkfuzz.targets.native.differential.judge)"],
    )
    return write_run_report(out_dir, doc)


def summary_lines(result: DiffResult) -> list[str]:
    lines = [f"native differential ({','.join(result.unwinders)}): {result.inputs} inputs "
             f"({result.unperturbed} unperturbed) in {result.seconds:.1f}s; disagreements "
             f"{result.disagreements} in {len(result.classes)} classes; incomparable "
             f"{result.incomparable}; worker deaths {len(result.deaths)}"]
    lines.append(f"  {'unwinder':<10} {'walks':>8} {'faults':>7} {'hangs':>6} {'cycles':>7} "
                 f"{'wrong':>7} {'ns/step':>8}")
    for unwinder, by_class in result.per_unwinder.items():
        row = by_class.get("all", {})
        lines.append(f"  {unwinder:<10} {row.get('walks', 0):>8} {row.get('faults', 0):>7} "
                     f"{row.get('hangs', 0):>6} {row.get('cycles', 0):>7} "
                     f"{row.get('wrong', 0):>7} {ns_per_step(row):>8}")
    for location, count in sorted(result.classes.items(), key=lambda kv: -kv[1]):
        lines.append(f"  {count:8d}  {location}")
    return lines
