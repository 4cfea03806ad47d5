"""The figures of a live stress result: rates per second and per CPU-second, the delivered
fraction of what was requested, the invalid-trace rate, and the workload's slowdown against
its own unsampled baseline phase.

The delivered fraction is samples delivered over samples requested, both counted by the run
(`requested`: the interval's periods in the sampled phase, in every mode: thread mode's
sampler skips a worker that has not answered its last signal, and a skipped tick is a sample
requested and not delivered), so it
is the ratio of the two counters the report prints beside it. Per-thread timers fire on wall
time, but on a shared machine a busy thread only gets a share of a CPU: the rates per
CPU-second say how much sampling the CPU time a thread got bought."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from walkfuzz.core.exit_status import invalid_rate_fails, invalid_rate_over, judged
from walkfuzz.engine.progress import human
from walkfuzz.report.figures import slowdown_text

NS = 1e9


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def slowdown(total: dict[str, Any]) -> float | None:
    """Root calls per CPU-second lost to sampling against the unsampled rounds; None when the
    run had none (--baseline 0) and so nothing to compare with."""
    base_speed = _ratio(total["iterations_base"], total["cpu_ns_base"] / NS)
    if not base_speed:
        return None
    return 1.0 - _ratio(total["iterations_run"], total["cpu_ns_run"] / NS) / base_speed


def figures(result: dict[str, Any]) -> dict[str, float]:
    """The rates and fractions of a result (the slowdown is apart: it may be unknown)."""
    total = result["total"]
    options = result["options"]
    workers = max(1, len(result["per_worker"]))
    wall_s = total["wall_ns_run"] / NS / workers       # the phase's length
    cpu_s = total["cpu_ns_run"] / NS                   # all workers' CPU time in it
    requested_rate = NS / options["interval_ns"]       # per thread, per second
    return {
        "seconds": wall_s,
        "cpu_seconds": cpu_s,
        "requested_per_cpu_second": requested_rate,
        "delivered_per_second": _ratio(total["delivered"], wall_s),
        "delivered_per_cpu_second": _ratio(total["delivered"], cpu_s),
        "walked_per_cpu_second": _ratio(total["walked"], cpu_s),
        "delivered_fraction": _ratio(total["delivered"], total["requested"]),
        "walked_fraction": _ratio(total["walked"], total["requested"]),
        "invalid_rate": _ratio(total["invalid"], total["walked"]),
        "exact_rate": _ratio(total["exact"], total["walked"]),
        "frames_per_walk": _ratio(total["frames"], total["walked"]),
    }


def verdict(counts: Mapping[str, Any], max_invalid_rate: float | None) -> int:
    """The exit status of a run's counts (one run's total, or the sum of several hosts'): 1 on
    a fault, a hang, a queue miscount or invalid traces beyond max_invalid_rate, else 0."""
    failed = any(int(counts.get(k, 0)) for k in ("faults", "hangs", "queue_miscounts"))
    rate = _ratio(int(counts.get("invalid", 0)), int(counts.get("walked", 0)))
    if over := invalid_rate_over(rate, max_invalid_rate):
        print(over, file=sys.stderr)
    return judged(failed or invalid_rate_fails(rate, max_invalid_rate))


def one_line(result: dict[str, Any]) -> str:
    """A terminal summary of a result."""
    f = figures(result)
    total = result["total"]
    lat = result["latency"]
    return (f"{total['walked']} walks ({f['walked_per_cpu_second']:.0f}/CPU-s, "
            f"{100 * f['delivered_fraction']:.1f}% of requested), exact {total['exact']}, "
            f"invalid {total['invalid']} "
            f"({100 * f['invalid_rate']:.3f}%), faults {total['faults']}, hangs "
            f"{total['hangs']}; walk p50 {lat.get('p50', 0) / 1e3:.1f}us p99 "
            f"{lat.get('p99', 0) / 1e3:.1f}us; slowdown {slowdown_text(slowdown(total))}"
            + _queue(result) + _paced(total))


def _queue(result: dict[str, Any]) -> str:
    """Queue mode: what its queue took and dropped, and how long elements waited. The walks
    it names add up to the run's walks: an element taken at a safepoint is walked unless its
    frame was gone by then, and a sample whose Enqueue's own walk failed is judged at once."""
    queue = result.get("queue")
    if queue is None:
        return ""
    wait = queue["wait_ns"]
    taken = int(queue["walked"])
    gone = int(result["total"].get("queue_gone", 0))
    at_enqueue = int(result["total"]["walked"]) - (taken - gone)
    failed = f", walked at a failed Enqueue {at_enqueue}" if at_enqueue else ""
    return (f"; queue: enqueued {queue['enqueued']}, taken at a safepoint {taken} "
            f"({100 * queue['walked_fraction']:.1f}%): walked {taken - gone}, frame gone "
            f"{gone}{failed}; dropped full {queue['dropped_full']}, "
            f"wait to safepoint p50 {wait.get('p50', 0) / 1e3:.1f}us "
            f"p99 {wait.get('p99', 0) / 1e3:.1f}us")


def _paced(total: dict[str, Any]) -> str:
    """Timer restarts of the pacing: the machine could not keep the interval."""
    paced = int(total.get("paced", 0))
    return f"; timer restarted {paced} times to leave the workload its time" if paced else ""


def status_line(status: dict[str, Any]) -> str:
    """The progress line of a running live stress from its counts so far (live.progress_of)."""
    walked, invalid = int(status["walked"]), int(status["invalid"])
    # the counts are the whole run's: between sampled rounds they hold the rounds before
    phase = "" if status["sampling"] else \
        "  (sampling paused for a baseline round)" if walked else "  (starting)"
    return (f"walks {human(walked)}  exact {human(int(status['exact']))}  invalid "
            f"{human(invalid)} ({100 * _ratio(invalid, walked):.2f}%)  faults "
            f"{status['faults']}  hangs {status['hangs']}  signatures "
            f"{status['signatures_stored']}{phase}")


def status_key(status: dict[str, Any]) -> object:
    """What, when it changes, is worth a line of its own: a new fault, hang or signature."""
    return (status["faults"], status["hangs"], status["signatures_stored"])
