"""One live stress run in this process (C: wf_live_run in native/src/live_run.c), turned into
a JSON-able result. A process can run it once: it owns the VM's fixed addresses and SIGPROF,
so callers other than tests use the child process (walkfuzz.stress.runner)."""

from __future__ import annotations

from typing import Any

from walkfuzz.errors import UserError
from walkfuzz.native import load
from walkfuzz.stress.options import MODES, WORKLOADS, StressOptions
from walkfuzz.symbolize import symbolize

CLASS_NAMES = ("missing", "extra", "wrong-method", "wrong-bci", "wrong-type", "truncated",
               "cycle", "contract", "wrong-result")
WINDOW_NAMES = ("none", "call", "prologue", "epilogue", "bci")
FRAME_TYPES = {1: "java", 2: "inlined", 3: "native", 4: "non-java"}
PERCENTILES = (50.0, 90.0, 99.0, 99.9)
# Histogram edges in ns, 1 µs .. 100 ms, roughly three per decade; the last bucket is open.
HISTOGRAM_EDGES_NS = (0, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000,
                      500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000, 100_000_000)
ERROR_NAMES = {0: "ASGST_NO_FRAME", -1: "ASGST_NO_THREAD", -2: "ASGST_THREAD_EXIT",
               -3: "ASGST_UNSAFE_STATE", -4: "ASGST_NO_TOP_JAVA_FRAME",
               -17: "ASGST_WF_BAD_PC", -18: "ASGST_WF_BAD_SP", -19: "ASGST_WF_BAD_FP",
               -20: "ASGST_WF_BAD_METHOD", -21: "ASGST_WF_BAD_BCP",
               -22: "ASGST_WF_DEPTH_LIMIT", -23: "ASGST_WF_BAD_ARGUMENT",
               -24: "ASGST_WF_FRAME_GONE", -5: "ASGST_ENQUEUE_NO_QUEUE",
               -6: "ASGST_ENQUEUE_FULL_QUEUE", -7: "ASGST_ENQUEUE_OTHER_ERROR"}
STATS_FIELDS = ("requested", "delivered", "walked", "exact", "invalid", "faults", "hangs",
                "frames", "safepoints", "invalid_in_window", "queue_rejected", "queue_gone",
                "queue_resizes", "queue_checks", "queue_miscounts", "iterations_base",
                "iterations_run", "cpu_ns_base", "cpu_ns_run", "wall_ns_base", "wall_ns_run")


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


def _stats(s: Any) -> dict[str, Any]:
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
    return doc


def _frames(frames: Any, count: int, names: list[str]) -> list[dict[str, Any]]:
    out = []
    for k in range(min(count, len(frames))):
        f = frames[k]
        method = int(f.method)
        out.append({"method": names[method] if 0 <= method < len(names) else method,
                    "bci": int(f.bci), "type": FRAME_TYPES.get(int(f.type), str(int(f.type))),
                    "level": int(f.level)})
    return out


def _example(e: Any, names: list[str]) -> dict[str, Any]:
    cls = int(e.cls)
    kind = {-1: "fault", -2: "hang"}.get(cls) or CLASS_NAMES[cls]
    return {
        "class": kind, "window": WINDOW_NAMES[int(e.window)], "worker": int(e.worker),
        "end_code": int(e.end_code),
        "end_name": ERROR_NAMES.get(int(e.end_code), str(int(e.end_code))),
        "first_diff": int(e.first_diff), "thread_state": int(e.thread_state),
        "pc": int(e.pc), "sp": int(e.sp), "fault_pc": int(e.fault_pc),
        "fault_addr": int(e.fault_addr), "fault_signo": int(e.fault_signo),
        "fault_location": symbolize(int(e.fault_pc), with_offset=cls != -2) if cls < 0 else "",
        "walked_count": int(e.walked_count), "expected_count": int(e.shadow_count),
        "walked": _frames(e.walked, int(e.walked_count), names),
        "expected": _frames(e.shadow, int(e.shadow_count), names),
    }


def run_live(options: StressOptions) -> dict[str, Any]:
    """Run `options` here and return the result document (see walkfuzz.stress.summary)."""
    options.check()
    ffi, lib = load()
    cfg = ffi.new("wf_live_config *", {
        "mode": MODES.index(options.mode) + 1, "threads": options.threads,
        "workload": WORKLOADS.index(options.workload), "seed": options.seed,
        "interval_ns": options.interval_ns, "duration_ns": options.duration_ns,
        "baseline_ns": options.baseline_ns, "walk_budget_ns": options.walk_budget_ns,
        "safepoint_every": options.safepoint_every, "max_walks": options.max_walks})
    out = ffi.new("wf_live_result *")
    err = ffi.new("char[512]")
    walker = ffi.new("char[]", options.walker.encode()) if options.walker else ffi.NULL
    if lib.wf_live_run(cfg, walker, out, err, len(err)) != 0:
        raise UserError(ffi.string(err).decode(errors="replace"))
    names = [ffi.string(lib.wf_live_method_name(i)).decode() for i in range(out.method_count)]
    kinds = [ffi.string(lib.wf_live_method_kind(i)).decode() for i in range(out.method_count)]
    intervals = list(ffi.unpack(out.intervals_ns, out.interval_count))
    latencies = list(ffi.unpack(out.latencies_ns, out.latency_count))
    return {
        "options": options.to_json(),
        "total": _stats(out.total),
        "per_worker": [_stats(out.per_worker[i]) for i in range(out.workers)],
        "examples": [_example(out.examples[i], names) for i in range(out.example_count)],
        "methods": [{"index": i, "name": n, "kind": k}
                    for i, (n, k) in enumerate(zip(names, kinds, strict=True))],
        "vm": {"blobs": int(out.blob_count), "descs": int(out.desc_count),
               "windows": int(out.window_count), "code_bytes": int(out.code_bytes)},
        "interval": percentiles(intervals), "interval_histogram": histogram(intervals),
        "latency": percentiles(latencies), "latency_histogram": histogram(latencies),
    }
