#!/usr/bin/env python3
"""HotSpot target benchmark (`make bench`, `make bench-hotspot`): rows with their limits.

1. Perturbed AsyncGetCallTrace calls per second (target >= 100k on 2 cores), JDK 17.
2. Stress CPU overhead at 100 us per thread, on each JDK: the same fixed amount of workload
   work (ITERATIONS steps on each of THREADS threads) run with the agent loaded and
   - unsampled (no timer): the baseline,
   - an empty handler (the same timers and signals, the handler only counts them): what
     delivering the samples costs on this machine, the limit the sampling rows are read
     against,
   - sampling only (ASGCT on every signal, the shadow-stack oracle),
   - sampling plus the GetStackTrace oracle (one held and one bottom check a period).
   The four run back to back, REPEATS rounds. CPU = the JVM's own getrusage at VMDeath (every
   thread: JIT compilers, GC, the checker). A configuration's figure is its best round (the
   machine is shared: a round is only ever slowed by the others' load), an overhead the best
   of the configuration over the best unsampled round, with every round's own overhead (over
   that round's unsampled run) beside it.

    bench/bench_hotspot.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import NamedTuple

from runner import Goal, Row, budget, print_table

from walkfuzz.targets.hotspot.agent_build import build_agent
from walkfuzz.targets.hotspot.campaign import BUILD_DIR, DEBUG_NON_SAFEPOINTS, run_hotspot_fuzz
from walkfuzz.targets.hotspot.jdk import KNOWN, build_jdk, find_jdk
from walkfuzz.targets.hotspot.jvm_run import run_jvm
from walkfuzz.targets.hotspot.workload import build as build_workload

THREADS = 2
ITERATIONS = 100_000
INTERVAL_US = 100
CHECK_EVERY_MS = 5  # the stress command's default period of the GetStackTrace oracle
REPEATS = 3
FUZZ_SECONDS = 10.0
FUZZ_TARGET = 100_000
SAMPLING_LIMIT, ORACLE_LIMIT = 10.0, 30.0  # % CPU over the unsampled run


class Config(NamedTuple):
    case: str
    options: dict[str, object]


CONFIGS = (
    Config("unsampled", {"interval_ns": 0, "check_every_ms": 0}),
    Config("empty handler", {"interval_ns": INTERVAL_US * 1000, "check_every_ms": 0,
                             "walk": 0}),
    Config("sampling only", {"interval_ns": INTERVAL_US * 1000, "check_every_ms": 0}),
    Config("sampling + GetStackTrace oracle", {"interval_ns": INTERVAL_US * 1000,
                                               "check_every_ms": CHECK_EVERY_MS}),
)


def fixed_work(jdk_label: str, config: Config, out: Path) -> dict[str, object]:
    """The agent's summary of ITERATIONS workload steps per thread under `config`."""
    jdk, builder = find_jdk(jdk_label), build_jdk()
    assert builder.include is not None and builder.javac is not None
    agent = build_agent(builder.include, BUILD_DIR)
    workload = build_workload(1, builder.javac, BUILD_DIR / "workloads")
    run = run_jvm(jdk, agent, workload, out, {"mode": "stress", **config.options},
                  threads=THREADS, millis=0, iterations=budget(ITERATIONS, 1000),
                  jvm_flags=DEBUG_NON_SAFEPOINTS)
    return run.summary or {}


def _num(summary: dict[str, object], key: str) -> float:
    return float(str(summary.get(key, 0)))


def _overhead_row(group: str, case: str, cpu: list[float], base: list[float],
                  limit: float | None) -> Row:
    """The best-of overhead, each round's beside it; checked when it has a limit."""
    rounds = "rounds: " + ", ".join(f"{100.0 * (c - b) / b:+.1f}"
                                    for c, b in zip(cpu, base, strict=True))
    value = 100.0 * (min(cpu) - min(base)) / min(base)
    if limit is None:
        return Row(group, case, value, "% CPU", target=f"the machine's cost of delivery ({rounds})")
    return Row(group, case, value, "% CPU", target=f"<= {limit:g}% ({rounds})",
               goal=Goal(at_most=limit, on="value"))


def _beyond_row(group: str, case: str, cpu: list[float], empty: list[float], base: list[float],
                limit: float) -> Row:
    """What `case` costs beyond the empty handler (best over best, of the unsampled best): the
    walk's and the agent's share, measured against the machine's cost of delivery."""
    value = 100.0 * (min(cpu) - min(empty)) / min(base)
    return Row(group, f"beyond the empty handler: {case}", value, "% CPU",
               target=f"<= {limit:g}%: what the walk adds to delivery",
               goal=Goal(at_most=limit, on="value"))


def stress_rows(jdk_label: str, tmp: Path) -> list[Row]:
    cpu: dict[str, list[float]] = {c.case: [] for c in CONFIGS}
    summaries: dict[str, list[dict[str, object]]] = {c.case: [] for c in CONFIGS}
    for k in range(budget(REPEATS, 1)):
        for config in CONFIGS:
            summary = fixed_work(jdk_label, config, tmp / f"{jdk_label}-{k}-{config.case[:5]}")
            cpu[config.case].append(_num(summary, "process_cpu_s"))
            summaries[config.case].append(summary)
    base = cpu["unsampled"]
    group = f"hs-jdk{jdk_label}"
    rows = [Row(group, "unsampled", min(base), "CPU-s",
                target=f"{ITERATIONS} steps x {THREADS} threads, best of {REPEATS}")]
    rows += [Row(group, c.case, min(cpu[c.case]), "CPU-s", baseline="unsampled",
                 target=f"{_samples(summaries[c.case])} samples a round")
             for c in CONFIGS[1:]]
    rows.append(_overhead_row(group, "overhead: empty handler", cpu["empty handler"], base,
                              None))
    rows.append(_overhead_row(group, "overhead: sampling only", cpu["sampling only"], base,
                              SAMPLING_LIMIT))
    rows.append(_overhead_row(group, "overhead: sampling + oracle",
                              cpu["sampling + GetStackTrace oracle"], base, ORACLE_LIMIT))
    rows += [_beyond_row(group, case, cpu[case], cpu["empty handler"], base, limit)
             for case, limit in (("sampling only", SAMPLING_LIMIT),
                                 ("sampling + GetStackTrace oracle", ORACLE_LIMIT))]
    oracle_alone = min(cpu["sampling + GetStackTrace oracle"]) - min(cpu["sampling only"])
    rows.append(Row(group, "overhead: the oracle alone", 100.0 * oracle_alone / min(base),
                    "% CPU", target="oracle rows' best minus sampling rows' best"))
    return (rows + sample_rows(group, summaries["sampling only"])
            + oracle_rows(group, summaries["sampling + GetStackTrace oracle"]))


def _samples(summaries: list[dict[str, object]]) -> str:
    """The signals of each round, "a-b" when they differ."""
    counts = sorted(int(_num(s, "signals")) for s in summaries)
    return f"{counts[0]}" if counts[0] == counts[-1] else f"{counts[0]}-{counts[-1]}"


def sample_rows(group: str, summaries: list[dict[str, object]]) -> list[Row]:
    """Where a sample's time goes inside the handler (wall time: a preempted handler counts
    the preemption), over the sampling-only rounds."""
    signals = sum(_num(s, "signals") for s in summaries) or 1.0
    walk = sum(_num(s, "walk_s") for s in summaries)
    handler = sum(_num(s, "handler_s") for s in summaries)
    cpu = sum(_num(s, "process_cpu_s") for s in summaries)
    return [Row(group, "per sample: ASGCT walk", 1e6 * walk / signals, "us"),
            Row(group, "per sample: the agent's checks", 1e6 * (handler - walk) / signals, "us",
                target="shadow-stack oracle and counters"),
            Row(group, "handler wall time, of the process CPU",
                100.0 * handler / cpu if cpu else 0.0, "%",
                target="ASGCT and the checks, without the delivery (a preempted handler "
                       "counts the preemption)")]


def oracle_rows(group: str, summaries: list[dict[str, object]]) -> list[Row]:
    """What the oracle checked in the oracle rounds, summed: its strength beside its cost."""
    def total(key: str) -> float:
        return sum(_num(s, key) for s in summaries)
    held, holds, bottom = total("held_checks"), total("holds"), total("bottom_checks")
    checks = held + bottom
    agree = total("held_agree") + total("bottom_agree")
    return [
        Row(group, "oracle: GetStackTrace checks", checks, "checks",
            target=f"held {held:.0f} of {holds:.0f} holds offered, bottom {bottom:.0f}; "
                   f"one of each every {CHECK_EVERY_MS} ms"),
        Row(group, "oracle: checks agreeing", 100.0 * agree / checks if checks else 0.0, "%"),
        Row(group, "oracle: checker thread CPU", 1e6 * total("checker_cpu_s") / checks
            if checks else 0.0, "us/check", target="its GetStackTrace walks and compares"),
        Row(group, "oracle: samples cross-checked", 100.0 * checks / total("signals")
            if total("signals") else 0.0, "%", target="every sample: the shadow-stack oracle"),
    ]


def fuzz_rows(tmp: Path) -> list[Row]:
    hs = run_hotspot_fuzz(tmp / "fuzz", jdk="17", duration_s=budget(FUZZ_SECONDS, 1.0),
                          argv=["bench"])
    rate = float(str(hs.counters["perturbed_calls_per_s"]))
    return [Row("hs-fuzz", f"perturbed ASGCT calls, JDK {hs.jdk.version}", rate, "calls/s",
                target=f">= {FUZZ_TARGET}", goal=Goal(at_least=FUZZ_TARGET, on="value"))]


def measure() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="bench-hotspot-") as tmp:
        rows = fuzz_rows(Path(tmp))
        for label in KNOWN:
            rows += stress_rows(label, Path(tmp))
    return rows


if __name__ == "__main__":
    print_table(measure())
