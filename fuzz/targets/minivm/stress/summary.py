"""The figures of a live stress result: rates per second and per CPU-second, the delivered
fraction of what was requested, the invalid-trace rate, and the workload's slowdown against
its own unsampled baseline phase.

Per-thread timers fire on wall time, but on a shared machine a busy thread only gets a share
of a CPU, so what can be delivered is bounded by the CPU time it got: delivery is judged per
CPU-second (requested per CPU-second = 1 / interval)."""

from __future__ import annotations

from typing import Any

from walkfuzz.engine.progress import human

NS = 1e9


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def figures(result: dict[str, Any]) -> dict[str, float]:
    total = result["total"]
    options = result["options"]
    workers = max(1, len(result["per_worker"]))
    wall_s = total["wall_ns_run"] / NS / workers       # the phase's length
    cpu_s = total["cpu_ns_run"] / NS                   # all workers' CPU time in it
    requested_rate = NS / options["interval_ns"]       # per thread, per second
    base_speed = _ratio(total["iterations_base"], total["cpu_ns_base"] / NS)
    run_speed = _ratio(total["iterations_run"], cpu_s)
    return {
        "seconds": wall_s,
        "cpu_seconds": cpu_s,
        "requested_per_cpu_second": requested_rate,
        "delivered_per_second": _ratio(total["delivered"], wall_s),
        "delivered_per_cpu_second": _ratio(total["delivered"], cpu_s),
        "walked_per_cpu_second": _ratio(total["walked"], cpu_s),
        "delivered_fraction": _ratio(_ratio(total["delivered"], cpu_s), requested_rate),
        "walked_fraction": _ratio(_ratio(total["walked"], cpu_s), requested_rate),
        "invalid_rate": _ratio(total["invalid"], total["walked"]),
        "exact_rate": _ratio(total["exact"], total["walked"]),
        "frames_per_walk": _ratio(total["frames"], total["walked"]),
        "slowdown": 1.0 - _ratio(run_speed, base_speed) if base_speed else 0.0,
    }


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
            f"{lat.get('p99', 0) / 1e3:.1f}us; slowdown {100 * f['slowdown']:.1f}%"
            + _paced(total))


def _paced(total: dict[str, Any]) -> str:
    """Timer periods restarted after an overrun: the machine could not keep the interval."""
    paced = int(total.get("paced", 0))
    return f"; timer restarted after an overrun {paced} times" if paced else ""


def status_line(status: dict[str, Any]) -> str:
    """The progress line of a running live stress from its counts so far (live.progress_of)."""
    walked, invalid = int(status["walked"]), int(status["invalid"])
    phase = "" if status["sampling"] else \
        "  (unsampled baseline round)" if walked else "  (starting)"
    return (f"walks {human(walked)}  exact {human(int(status['exact']))}  invalid "
            f"{human(invalid)} ({100 * _ratio(invalid, walked):.2f}%)  faults "
            f"{status['faults']}  hangs {status['hangs']}  signatures "
            f"{status['signatures_stored']}{phase}")


def status_key(status: dict[str, Any]) -> object:
    """What, when it changes, is worth a line of its own: a new fault, hang or signature."""
    return (status["faults"], status["hangs"], status["signatures_stored"])
