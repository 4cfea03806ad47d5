"""One live stress run in this process (C: wf_live_run in native/src/live/live_run.c), turned into
a JSON-able result; its failed samples are drained and saved while it runs
(walkfuzz.targets.minivm.live.drain). A process can run it once: it owns the VM's fixed addresses
and SIGPROF, so callers other than tests use the child process
(walkfuzz.targets.minivm.live.runner)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from walkfuzz.core.errors import UserError
from walkfuzz.core.native import load
from walkfuzz.engine.interrupt import stop_on_interrupt
from walkfuzz.engine.progress import STATUS_EVERY
from walkfuzz.findings.hits import RunClock
from walkfuzz.targets.minivm.live.drain import ERROR_NAMES, POLL_SECONDS, WINDOW_NAMES, Drain
from walkfuzz.targets.minivm.live.options import MODES, SOURCES, WORKLOADS, StressOptions
from walkfuzz.targets.minivm.live.signature import CLASS_NAMES
from walkfuzz.targets.minivm.walker_library import ERROR_LEN, check_walker_library

PERCENTILES = (50.0, 90.0, 99.0, 99.9)
PROGRESS_FIELDS = ("delivered", "walked", "exact", "invalid", "faults", "hangs")
# Histogram edges in ns, 1 µs .. 100 ms, roughly three per decade; the last bucket is open.
HISTOGRAM_EDGES_NS = (0, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000,
                      500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000, 100_000_000)
STATS_FIELDS = ("requested", "delivered", "walked", "exact", "invalid", "faults", "hangs",
                "frames", "safepoints", "invalid_in_window", "queue_rejected", "queue_gone",
                "queue_resizes", "queue_checks", "queue_miscounts", "queue_enqueued",
                "queue_walked", "queue_full", "paced", "iterations_base",
                "iterations_run", "cpu_ns_base", "cpu_ns_run", "wall_ns_base", "wall_ns_run",
                "captured", "capture_dropped", "capture_copies", "capture_ns", "capture_bytes")
# wf_live_stats.queue_miscount, in its order (wf_live.h).
MISCOUNT_FIELDS = ("seen_at", "walker_size", "walker_capacity", "walker_attempts", "model_size",
                   "model_capacity", "model_attempts", "model_pending_capacity",
                   "attempts_inside", "enqueued_inside", "safepoints", "enqueue_calls",
                   "last_safepoint_result", "walker_safepoints", "walker_refused", "walker_full")
MISCOUNT_PLACES = {1: "enqueue", 2: "before-safepoint", 3: "after-safepoint"}
# wf_live_stats.queue_events: one row per event, in this order (wf_live.h); the last field,
# TSC ticks before the miscount, is turned into ns.
EVENT_FIELDS = ("kind", "worker_looking", "result", "walker_size", "walker_capacity",
                "walker_attempts", "model_size", "model_capacity", "model_attempts",
                "enqueue_calls", "enqueue_taken", "ns_before")
EVENT_KINDS = {1: "enqueue", 2: "look-before", 3: "safepoint", 4: "look-after"}


def percentiles(values: list[int]) -> dict[str, float]:
    """Nearest-rank percentiles of `values` (ns), plus count, min, max and mean."""
    if not values:
        return {"count": 0}
    ordered = sorted(values)
    n = len(ordered)
    doc: dict[str, float] = {"count": n, "min": ordered[0], "max": ordered[-1],
                             "mean": sum(ordered) / n}
    for p in PERCENTILES:
        doc[f"p{p:g}"] = ordered[min(n - 1, max(0, round(p / 100 * n + 0.5) - 1))]
    return doc


def histogram(values: list[int]) -> dict[str, Any]:
    edges = list(HISTOGRAM_EDGES_NS)
    top = max([*values, edges[-1]]) + 1
    counts = [0] * len(edges)
    for v in values:
        k = len(edges) - 1
        while k > 0 and v < edges[k]:
            k -= 1
        counts[k] += 1
    return {"unit": "ns", "edges": [*edges, top], "counts": counts}


def _events(s: Any, ns_per_tick: float) -> list[dict[str, Any]]:
    """The accounting events that led to the first queue miscount, oldest first."""
    events = []
    for row in s.queue_events:
        event: dict[str, Any] = dict(zip(EVENT_FIELDS, map(int, row), strict=True))
        if event["kind"] == 0:
            continue
        event["kind"] = EVENT_KINDS.get(event["kind"], str(event["kind"]))
        event["worker_looking"] = bool(event["worker_looking"])
        event["ns_before"] = round(event["ns_before"] * ns_per_tick)
        events.append(event)
    return events


def _stats(s: Any, ns_per_tick: float = 0.0) -> dict[str, Any]:
    doc: dict[str, Any] = {f: int(getattr(s, f)) for f in STATS_FIELDS}
    doc["invalid_by_class"] = {n: int(s.invalid_by_class[i]) for i, n in enumerate(CLASS_NAMES)}
    doc["window_samples"] = {n: int(s.window_samples[i]) for i, n in enumerate(WINDOW_NAMES)}
    errors = {}
    for slot in range(32):
        if s.errors[slot]:
            code = -slot if slot < 31 else "other"
            errors[ERROR_NAMES.get(code, str(code)) if isinstance(code, int) else code] = int(
                s.errors[slot])
    doc["end_codes"] = errors
    doc["capture_hist"] = [int(n) for n in s.capture_hist]
    if s.queue_miscount[0]:
        first: dict[str, Any] = dict(zip(MISCOUNT_FIELDS, map(int, s.queue_miscount), strict=True))
        first["seen_at"] = MISCOUNT_PLACES[first["seen_at"]]
        first["events"] = _events(s, ns_per_tick)
        doc["queue_first_miscount"] = first
    return doc


def capture_summary(lib: Any, total: dict[str, Any], ns_per_tick: float) -> dict[str, float]:
    """What capturing cost: copies, bytes and time per copy (mean, and the median and p90 as
    the upper edge of their bucket: four per power of two TSC ticks)."""
    copies = total["capture_copies"]
    doc: dict[str, float] = {"copies": copies, "captured": total["captured"],
                             "dropped": total["capture_dropped"],
                             "bytes_per_copy": total["capture_bytes"] / copies if copies else 0,
                             "ns_per_copy": total["capture_ns"] / copies if copies else 0,
                             "ns_per_delivered": (total["capture_ns"] / total["delivered"]
                                                  if total["delivered"] else 0)}
    for name, fraction in (("p50_ns", 0.5), ("p90_ns", 0.9)):
        seen, need = 0, fraction * copies
        for k, n in enumerate(total["capture_hist"]):
            seen += n
            if copies and seen >= need:
                doc[name] = round(int(lib.wf_live_capture_bucket_end(k)) * ns_per_tick, 1)
                break
    return doc


def queue_summary(total: dict[str, Any], waits: list[int]) -> dict[str, Any]:
    """Queue mode's own figures: samples enqueued, walked at a safepoint, dropped for a full
    queue (or no free slot), and how long an element waited from its signal to its walk."""
    enqueued = total["queue_enqueued"]
    return {"enqueued": enqueued, "walked": total["queue_walked"],
            "dropped_full": total["queue_full"],
            "walked_fraction": total["queue_walked"] / enqueued if enqueued else 0.0,
            "wait_ns": percentiles(waits)}


def _run_in_thread(lib: Any, args: tuple[Any, ...]) -> tuple[threading.Thread, list[int]]:
    """wf_live_run on a thread of its own (cffi releases the GIL while it runs)."""
    rc: list[int] = []
    thread = threading.Thread(target=lambda: rc.append(lib.wf_live_run(*args)),
                              name="wf_live_run")
    thread.start()
    return thread, rc


def progress_of(lib: Any, counts: Any, drain: Drain) -> dict[str, Any]:
    """The run's counts so far (wf_live_progress_read) and the signatures it stored."""
    lib.wf_live_progress_read(counts)
    doc: dict[str, Any] = {f: int(getattr(counts, f)) for f in PROGRESS_FIELDS}
    doc["sampling"] = bool(counts.sampling)
    doc["signatures_stored"] = len(drain.stored)
    return doc


def run_live(options: StressOptions,
             on_progress: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Run `options` here and return the result document (see
    walkfuzz.targets.minivm.live.summary).
    Failed samples are drained while the run goes on and saved under options.out, if set;
    `on_progress` gets the counts so far (progress_of) every STATUS_EVERY seconds."""
    options.check()
    ffi, lib = load()
    cfg = ffi.new("wf_live_config *", {
        "mode": MODES.index(options.mode) + 1, "threads": options.threads,
        "workload": WORKLOADS.index(options.workload), "seed": options.seed,
        "interval_ns": options.interval_ns, "duration_ns": options.duration_ns,
        "baseline_ns": options.baseline_ns, "walk_budget_ns": options.walk_budget_ns,
        "safepoint_every": options.safepoint_every, "max_walks": options.max_walks,
        "capture": int(options.capture), "stop_on_first": int(options.stop_on_first),
        "source": SOURCES.index(options.source)})
    out = ffi.new("wf_live_result *")
    err = ffi.new("char[]", ERROR_LEN)
    if options.walker:  # loads the runtime a cov-built walker needs before C dlopens it
        check_walker_library(options.walker)
    walker = ffi.new("char[]", options.walker.encode()) if options.walker else ffi.NULL
    clock = RunClock.start()
    drain = Drain(ffi, lib, clock, Path(options.out) if options.out else None,
                  {"walker": options.walker or "reference", "workload": options.workload,
                   "seed": options.seed, "interval_ns": options.interval_ns})
    # Ctrl-C or SIGTERM ends the run's phases early: the result is still returned. The handler
    # stays until the result is made: a second interrupt (a terminal's Ctrl-C reaches this
    # process and its parent, which passes it on) must not cut the findings' drain short.
    with stop_on_interrupt(lib.wf_live_request_stop) as interrupted:
        thread, rc = _run_in_thread(lib, (cfg, walker, out, err, len(err)))
        # the first report after STATUS_EVERY: a run that fails at once shows only its error
        counts, reported = ffi.new("wf_live_progress *"), time.monotonic()
        while thread.is_alive():
            if on_progress is not None and time.monotonic() - reported >= STATUS_EVERY:
                reported = time.monotonic()
                on_progress(progress_of(lib, counts, drain))
            if not drain.take():
                thread.join(POLL_SECONDS)
        thread.join()
        if rc != [0]:
            raise UserError(ffi.string(err).decode(errors="replace"))
        return _result(options, ffi, lib, out, drain, clock, bool(interrupted))


def _result(options: StressOptions, ffi: Any, lib: Any, out: Any, drain: Drain,
            clock: RunClock, interrupted: bool) -> dict[str, Any]:
    """The result document of a finished run: the rest of its findings drained and saved."""
    drain.take()
    signatures = drain.count_hits()
    names = [ffi.string(lib.wf_live_method_name(i)).decode() for i in range(out.method_count)]
    kinds = [ffi.string(lib.wf_live_method_kind(i)).decode() for i in range(out.method_count)]
    intervals = list(ffi.unpack(out.intervals_ns, out.interval_count))
    latencies = list(ffi.unpack(out.latencies_ns, out.latency_count))
    waits = list(ffi.unpack(out.waits_ns, out.wait_count))
    total = _stats(out.total, float(out.ns_per_tick))
    queue = {"queue": queue_summary(total, waits)} if options.mode == "queue" else {}
    return {
        "options": options.to_json(),
        "started_at": clock.at(clock.origin)[1],
        "stopped_early": bool(lib.wf_live_stopped_early()) and not interrupted,
        "interrupted": interrupted,
        "total": total,
        "capture": capture_summary(lib, _stats(out.total), float(out.ns_per_tick)),
        "per_worker": [_stats(out.per_worker[i], float(out.ns_per_tick))
                       for i in range(out.workers)],
        "examples": drain.examples,
        "drained": drain.drained,
        "signatures": signatures,
        "methods": [{"index": i, "name": n, "kind": k}
                    for i, (n, k) in enumerate(zip(names, kinds, strict=True))],
        "vm": {"blobs": int(out.blob_count), "descs": int(out.desc_count),
               "windows": int(out.window_count), "code_bytes": int(out.code_bytes)},
        "interval": percentiles(intervals), "interval_histogram": histogram(intervals),
        "latency": percentiles(latencies), "latency_histogram": histogram(latencies),
        **queue,
    }
