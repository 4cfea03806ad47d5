"""The delivery limit (walkfuzz.targets.minivm.live.limit, native/testing/live_limit.c): what
this machine can deliver to spinning workers with an empty SIGPROF handler, at 100 us, 10 us and
5 us, from per-thread timers (signal and queue mode's sampling; a worker per CPU), the same
timers paced as the live stress paces them (a starved or late worker's timer restarts, which
leaves the workload its own time: wf_live_pace.h) and from one sampler thread signalling every
worker (thread mode's, and signal and queue mode's with --source sampler; a worker per CPU but
one). Per row group
(one interval): the requested rate, samples delivered per worker CPU-second (ratio: the
delivered share of the requested rate) and the workload's slowdown in loop rounds per
CPU-second. bench/bench_stress.py measures the limit again beside each live stress row and
shows the stress figure as a fraction of it. Limits are not targets: no goal here.

    python bench/bench_limit.py [--rounds 4] [--round-ms 250]
"""

from __future__ import annotations

import argparse
import os
import sys

from runner import Row, budget

from walkfuzz.targets.minivm.live.limit import Limit, LimitParams
from walkfuzz.targets.minivm.live.limit import measure as measure_limit

INTERVALS_US = (100, 10, 5)
ROUNDS, ROUND_NS = 4, 250_000_000
TINY_ROUNDS = (1, 10_000_000)  # a quick run's (rounds, round_ns)


KINDS = ("timers", "timers paced", "sampler")   # a limit's source, and whether it is paced


def workers_for(kind: str, cpus: int) -> int:
    """A worker per CPU; the sampler thread keeps one CPU for itself (as in bench_stress)."""
    return max(1, cpus - 1) if kind == "sampler" else cpus


def run_limit(kind: str, interval_us: int, cpus: int, rounds: int | None = None,
              round_ns: int | None = None) -> Limit:
    full = budget((ROUNDS, ROUND_NS), TINY_ROUNDS)
    rounds, round_ns = rounds or full[0], round_ns or full[1]
    return measure_limit(LimitParams(source=kind.split()[0], workers=workers_for(kind, cpus),
                                     interval_ns=interval_us * 1000, rounds=rounds,
                                     round_ns=round_ns, paced=kind.endswith(" paced")))


def limit_rows(interval_us: int, cpus: int, rounds: int | None = None,
               round_ns: int | None = None) -> list[Row]:
    group = f"limit-{interval_us}us"
    requested = 1e6 / interval_us
    rows = [Row(group, "requested", requested, "/CPU-s")]
    for kind in KINDS:
        lim = run_limit(kind, interval_us, cpus, rounds, round_ns)
        label = f"{kind} ({lim.params.workers} workers)"
        rows.append(Row(group, f"{label}: delivered", lim.delivered_per_cpu_second, "/CPU-s",
                        baseline="requested"))
        rows.append(Row(group, f"{label}: slowdown", 100 * lim.slowdown, "%"))
        if kind == "sampler":
            rows.append(Row(group, f"{label}: sampler CPU", 100 * lim.sampler_cpu_fraction,
                            "% of wall"))
    return rows


def measure(rounds: int | None = None, round_ns: int | None = None) -> list[Row]:
    cpus = len(os.sched_getaffinity(0))
    return [row for us in INTERVALS_US for row in limit_rows(us, cpus, rounds, round_ns)]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--round-ms", type=int, default=ROUND_NS // 1_000_000)
    args = parser.parse_args()
    for row in measure(args.rounds, args.round_ms * 1_000_000):
        print(row)
    sys.exit(0)
