#!/usr/bin/env python3
"""Live stress benchmark, each figure beside the limit it is measured against: per interval
(100 us, 10 us) the delivery limit of this machine is measured first (bench_limit's: spinning
workers, an empty handler, per-thread timers and a sampler thread), then each mode's live
stress of the reference walker on the mixed workload, so a row's ratio is its share of the
limit measured minutes apart, not days. Rows per interval group:

- delivered samples per worker CPU-second: signal and queue mode against the timers' limit,
  thread mode and signal/queue mode from a sampler thread (`signal/sampler`, `queue/sampler`:
  `--source sampler`) against the sampler thread's (target at 10 us: >= 80% of the limit);
  signal and
  queue mode also against the paced timers' limit (the timers paced as theirs are, which
  leaves the workload its time: the share of what a paced sampler can deliver);
- queue mode: samples the handler tried to enqueue (= delivered), enqueued, walked at a
  safepoint (of which the frame was gone by then), judged at the signal for want of a Java
  frame to enqueue (Enqueue's walk error is the sample's answer), judged either way (target
  at 10 us: >= 80% of those the handler tried), refused because the signal landed in the
  thread's own safepoint, dropped for a full queue, and the wait from signal to walk (p50,
  p99);
- the workload's slowdown (target at 100 us: <= 10% in every mode) beside the limit's, and
  the points it adds to the limit's (target at 100 us: <= 10 points: the 10% target read
  against this machine's cost of delivering the signals, not against zero);
- the workload CPU lost per delivered sample (slowdown / delivered per CPU-second) beside the
  limit's CPU per empty-handler signal: what the walk and the mode add to the delivery.

Each mode runs one worker per CPU it leaves to the workload (signal, queue: a worker per CPU;
thread and the /sampler variants: one CPU kept for the sampler thread). A mode's figures are
its run of median slowdown among --repeats; its slowdown row shows the range.
Prints ratios; asserts nothing.

    python bench/bench_stress.py [--seconds 3] [--repeats 3]
        [--modes signal,thread,queue,signal/sampler,queue/sampler]
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from bench_limit import run_limit, workers_for
from runner import Goal, Row, budget, print_table

from walkfuzz.targets.minivm.live.limit import Limit
from walkfuzz.targets.minivm.live.options import MODES, StressOptions
from walkfuzz.targets.minivm.live.runner import run_minivm_stress
from walkfuzz.targets.minivm.live.summary import figures, slowdown

INTERVALS_US = (100, 10)
SECONDS, REPEATS = 3.0, 3
# a run's variant: its mode, and "/sampler" for signal and queue mode's --source sampler
VARIANTS = (*MODES, "signal/sampler", "queue/sampler")
SOURCE = {"signal": "timers", "queue": "timers", "thread": "sampler",
          "signal/sampler": "sampler", "queue/sampler": "sampler"}
PACED = {"signal": "timers paced", "queue": "timers paced"}   # paced as these modes pace
DELIVERY_GOAL_US = 10    # at this interval, deliver >= 80% of the limit, walk >= 80% (queue)
SLOWDOWN_GOAL_US = 100   # at this interval, slowdown <= 10%


def one_run(variant: str, interval_us: int, seconds: float, threads: int) -> dict[str, Any]:
    mode, _, source = variant.partition("/")
    options = StressOptions(mode=mode, interval_ns=interval_us * 1000, threads=threads,
                            duration_ns=int(seconds * 1e9), baseline_ns=int(seconds * 1e9),
                            source=source or "timers")
    return run_minivm_stress(options)


def lost(result: dict[str, Any]) -> float:
    """The run's slowdown (every run here has a baseline phase, so it is known)."""
    return slowdown(result["total"]) or 0.0


def us_per_sample(lost_fraction: float, per_cpu_second: float) -> float:
    """Workload CPU lost per delivered sample, in us."""
    return 1e6 * lost_fraction / per_cpu_second if per_cpu_second else 0.0


def limit_rows(group: str, limits: dict[str, Limit]) -> list[Row]:
    rows = []
    for kind, lim in limits.items():
        label = f"limit {kind} ({lim.params.workers}w)"
        rows += [Row(group, f"{label}: delivered", lim.delivered_per_cpu_second, "/CPU-s"),
                 Row(group, f"{label}: slowdown", 100 * lim.slowdown, "%"),
                 Row(group, f"{label}: CPU per signal",
                     us_per_sample(lim.slowdown, lim.delivered_per_cpu_second), "us")]
    return rows


def mode_rows(group: str, mode: str, interval_us: int, runs: list[dict[str, Any]],
              limit: Limit, paced: Limit | None = None) -> list[Row]:
    """A mode's rows from its run of median slowdown; the slowdown's range across runs."""
    runs = sorted(runs, key=lost)
    result = runs[len(runs) // 2]
    f = figures(result)
    label = f"limit {SOURCE[mode]} ({limit.params.workers}w)"
    at_delivery_goal = interval_us == DELIVERY_GOAL_US
    spread = f"runs {100 * lost(runs[0]):.1f}..{100 * lost(runs[-1]):.1f}%"
    rows = [Row(group, f"{mode}: delivered", f["delivered_per_cpu_second"], "/CPU-s",
                baseline=f"{label}: delivered",
                target=">= 80% of limit" if at_delivery_goal else "",
                goal=Goal(at_least=0.8) if at_delivery_goal else None),
            *([Row(group, f"{mode}: delivered, vs paced", f["delivered_per_cpu_second"],
                   "/CPU-s", baseline=f"limit {PACED[mode]} ({paced.params.workers}w): delivered")]
              if paced is not None else []),
            Row(group, f"{mode}: slowdown", 100 * lost(result), "%",
                baseline=f"{label}: slowdown",
                target=f"<= 10% ({spread})" if interval_us == SLOWDOWN_GOAL_US else spread,
                goal=Goal(at_most=10, on="value") if interval_us == SLOWDOWN_GOAL_US else None),
            Row(group, f"{mode}: slowdown beyond the limit's",
                100 * (lost(result) - limit.slowdown), "points",
                target="<= 10 points: what the walk adds to delivery"
                if interval_us == SLOWDOWN_GOAL_US else "",
                goal=Goal(at_most=10, on="value") if interval_us == SLOWDOWN_GOAL_US else None),
            Row(group, f"{mode}: CPU per sample",
                us_per_sample(lost(result), f["delivered_per_cpu_second"]), "us",
                baseline=f"{label}: CPU per signal")]
    if mode.startswith("queue"):
        rows += queue_rows(group, result, at_delivery_goal, prefix=mode)
    return rows


def queue_rows(group: str, result: dict[str, Any], at_goal: bool,
               prefix: str = "queue") -> list[Row]:
    """The queue's own figures: what the handler tried to enqueue (every delivered sample),
    what the queue took and walked at a safepoint, what it dropped full, the samples with no
    Java frame to enqueue (Enqueue's walk error, judged at the signal), every sample judged
    either way, and how long an element waited."""
    q, total = result["queue"], result["total"]
    wait, tried = q["wait_ns"], f"{prefix}: tried to enqueue"
    judged_at_safepoint = q["walked"] - total["queue_gone"]
    return [Row(group, tried, total["delivered"], "samples"),
            Row(group, f"{prefix}: enqueued", q["enqueued"], "samples", baseline=tried),
            Row(group, f"{prefix}: walked at safepoint", q["walked"], "samples",
                baseline=f"{prefix}: enqueued"),
            Row(group, f"{prefix}: frame gone by the safepoint", total["queue_gone"], "samples",
                baseline=f"{prefix}: enqueued"),
            Row(group, f"{prefix}: no Java frame, judged at signal",
                total["walked"] - judged_at_safepoint, "samples", baseline=tried),
            Row(group, f"{prefix}: refused, the thread at its safepoint",
                total["queue_rejected"] - q["dropped_full"], "samples", baseline=tried),
            Row(group, f"{prefix}: walked, all", total["walked"], "samples", baseline=tried,
                target=">= 80% of tried" if at_goal else "",
                goal=Goal(at_least=0.8) if at_goal else None),
            Row(group, f"{prefix}: dropped full", q["dropped_full"], "samples", baseline=tried),
            Row(group, f"{prefix}: wait to safepoint p50", wait.get("p50", 0) / 1e3, "us"),
            Row(group, f"{prefix}: wait to safepoint p99", wait.get("p99", 0) / 1e3, "us")]


def interval_rows(interval_us: int, modes: list[str], cpus: int, seconds: float,
                  repeats: int) -> list[Row]:
    group = f"stress-{interval_us}us"
    limits = {kind: run_limit(kind, interval_us, cpus)
              for kind in sorted({SOURCE[m] for m in modes} | {PACED[m] for m in PACED
                                                                if m in modes})}
    rows = limit_rows(group, limits)
    for mode in modes:
        threads = workers_for(SOURCE[mode], cpus)
        runs = [one_run(mode, interval_us, seconds, threads) for _ in range(repeats)]
        paced = limits[PACED[mode]] if mode in PACED else None
        rows += mode_rows(group, mode, interval_us, runs, limits[SOURCE[mode]], paced)
    return rows


def measure(seconds: float = SECONDS, repeats: int = REPEATS,
            modes: tuple[str, ...] = VARIANTS) -> list[Row]:
    cpus = len(os.sched_getaffinity(0))
    seconds, repeats = budget((seconds, repeats), (0.05, 1))
    return [row for us in INTERVALS_US
            for row in interval_rows(us, list(modes), cpus, seconds, repeats)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--repeats", type=int, default=REPEATS,
                        help="runs per mode; its figures are the run of median slowdown")
    parser.add_argument("--modes", default=",".join(VARIANTS),
                        help="modes, and signal/sampler, queue/sampler for --source sampler")
    args = parser.parse_args()
    print_table(measure(args.seconds, args.repeats, tuple(args.modes.split(","))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
