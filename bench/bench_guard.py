"""Cost of the crash guard: a guarded call against the same call unguarded, and a caught fault.

The loops run in C (native/testing/guard_bench.c), one Python call each, and are timed in CPU time
of the calling thread (a shared machine's other processes would inflate wall time); each figure
is the best of a few repetitions of a loop of about 0.2 s. Targets (issue 2): at most 20 ns
added per guarded call on the fast path, at most 3 µs per caught fault.
"""

from __future__ import annotations

from collections.abc import Callable

from runner import Row, budget

from walkfuzz.core import native

# Iterations of each loop, for about 0.2 s each.
PLAIN_CALLS = 100_000_000
GUARDED_CALLS = 20_000_000
MASKED_CALLS = 1_000_000
FAULTS = 80_000
REPEATS = 3


def best_ns_per(loop: Callable[[int], int], count: int) -> float:
    """Fastest of REPEATS runs of the C loop, in ns per iteration."""
    count = budget(count, max(1, count // 10_000))
    elapsed = [loop(count) for _ in range(budget(REPEATS, 1))]
    assert all(elapsed), "a benchmark loop failed (returned 0 ns)"
    return min(elapsed) / count


def measure() -> list[Row]:
    lib = native.load_testing().lib
    return [
        Row("guard", "unguarded call",
            best_ns_per(lib.wf_guard_bench_unguarded_ns, PLAIN_CALLS), "ns/call"),
        Row("guard", "guarded call", best_ns_per(lib.wf_guard_bench_guarded_ns, GUARDED_CALLS),
            "ns/call", baseline="unguarded call", target="<= 20 ns added"),
        Row("guard", "guarded call, watchdog on",
            best_ns_per(lib.wf_guard_bench_watched_ns, GUARDED_CALLS), "ns/call",
            baseline="unguarded call", target="<= 20 ns added"),
        Row("guard", "guarded call, masked",
            best_ns_per(lib.wf_guard_bench_masked_ns, MASKED_CALLS), "ns/call",
            baseline="unguarded call", target="(a syscall: for libunwind)"),
        Row("guard", "caught fault", best_ns_per(lib.wf_guard_bench_fault_ns, FAULTS),
            "ns/fault", baseline="guarded call", target="<= 3000 ns"),
    ]
