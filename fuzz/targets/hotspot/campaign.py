"""The HotSpot target's two run types, as functions the `fuzz` and `stress` commands call:

    run_hotspot_fuzz(out_dir, jdk=None, duration_s=60, ...)   -> HotspotRun
    run_hotspot_stress(out_dir, jdk=None, duration_s=10, ...) -> HotspotRun

Each builds the agent and a generated workload (both cached), runs the JVM under the watchdog,
saves findings (walkfuzz.findings.store, a few examples per signature, every hit counted with its
time: results.hit_spans) and writes one report (walkfuzz.report.document: JSON, HTML, Markdown) into
out_dir. A finding with a perturbation record replays with `walkfuzz replay --target hotspot`;
one without (a hang, an invalid trace) is reproduced by the run's command.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from walkfuzz.core.paths import ROOT
from walkfuzz.engine.run_report import write_run_report
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.hits import RunClock
from walkfuzz.findings.store import FindingSink, stored_findings
from walkfuzz.report.document import Histogram, RunMeta, RunReport, group_findings
from walkfuzz.targets.hotspot import finding as results
from walkfuzz.targets.hotspot.agent_build import build_agent
from walkfuzz.targets.hotspot.inputs import RecordError, records
from walkfuzz.targets.hotspot.jdk import Jdk, build_jdk, find_jdk
from walkfuzz.targets.hotspot.jvm_run import JvmRun, run_jvm
from walkfuzz.targets.hotspot.workload import CompiledWorkload
from walkfuzz.targets.hotspot.workload import build as build_workload

BUILD_DIR = ROOT / "build" / "hotspot"
# Perturbed calls may exceed the batch only by this much: the agent stops a batch at half the
# interval, so the workload keeps at least half of every interval.
DEFAULT_FUZZ_INTERVAL_US = 1000
DEFAULT_BATCH = 1000
# Unguarded control: the strategies that faulted under the guard (random, special).
CONTROL_STRATEGIES = (1 << 1) | (1 << 7)
# JIT debug info at every pc, as async-profiler asks for; without it ASGCT maps a pc between
# safepoints to a nearby scope and the top frames are legitimately off.
DEBUG_NON_SAFEPOINTS = ("-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints")


@dataclass
class HotspotRun:
    """What one run did: the JVM run, its findings and where the report is."""

    jdk: Jdk
    run: JvmRun
    findings: list[Finding]
    counters: dict[str, object]
    report: dict[str, Path] = field(default_factory=dict)
    control: JvmRun | None = None


def _prepare(jdk_spec: str | None, seed: int) -> tuple[Jdk, Path, CompiledWorkload]:
    jdk = find_jdk(jdk_spec)
    builder = build_jdk()
    assert builder.include is not None and builder.javac is not None  # checked by build_jdk
    agent = build_agent(builder.include, BUILD_DIR)
    workload = build_workload(seed, builder.javac, BUILD_DIR / "workloads")
    return jdk, agent, workload


def _whole_records(path: Path) -> bytes:
    """The file's whole records (either version) as they are; a cut-off tail is dropped."""
    try:
        return b"".join(raw for _, raw in records(path.read_bytes()))
    except RecordError as e:
        raise RecordError(f"corpus file {str(path)!r}: {e}") from None


def _corpus_file(corpus: Path | None, run_dir: Path) -> Path | None:
    """All records of a corpus directory (or file) in one file, as the agent reads them."""
    if corpus is None:
        return None
    files = sorted(p for p in corpus.rglob("*") if p.is_file()) if corpus.is_dir() else [corpus]
    data = b"".join(_whole_records(p) for p in files if not p.name.endswith(".json"))
    out = run_dir / "corpus.bin"
    run_dir.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return out if data else None


def _series(run: JvmRun, key: str) -> list[tuple[float, float]]:
    return [(float(str(e["t"])), float(str(e[key]))) for e in run.of_type("tick") if key in e]


def _rate(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    return [(t1, (v1 - v0) / (t1 - t0)) for (t0, v0), (t1, v1) in itertools.pairwise(points)
            if t1 > t0]


def _ints(values: object) -> list[int]:
    """A JSON array of integers from the agent, or [] when absent."""
    return [int(v) for v in values] if isinstance(values, list) else []


def _histogram(counts: object, unit: str) -> Histogram:
    values = _ints(counts)
    edges = [0.0] + [float(2 ** i) for i in range(len(values))]
    return Histogram(unit=unit, edges=edges, counts=values)


def _save(out_dir: Path, clock: RunClock, examples: int,
          runs: list[tuple[JvmRun, list[Finding]]]) -> None:
    """Every hit of each JVM run's findings (results.hit_spans), then a few examples each."""
    sink = FindingSink(out_dir, examples=examples, clock=clock)
    totals = {}
    for run, findings in runs:
        for signature, span in results.hit_spans(run, findings).items():
            totals[signature] = sink.hits.add(signature, clock.span(*span))
    for _run, findings in runs:
        for f in findings:
            sink.store(f, totals.get(f.signature))


def _write(out_dir: Path, hs: HotspotRun, mode: str, clock: RunClock, argv: list[str],
           series: dict[str, list[tuple[float, float]]], notes: list[str]) -> None:
    summary = hs.run.summary or {}
    groups = group_findings(out_dir, stored_findings(out_dir, hs.findings), run_command=argv)
    status = ("interrupted" if hs.run.interrupted
              else "completed" if hs.run.watchdog is None and hs.run.returncode == 0
              else "failed")
    doc = RunReport(
        meta=RunMeta(run_type="hotspot", command=argv, target="hotspot", mode=mode,
                     started_at=clock.at(clock.origin)[1], ended_at=time.time(),
                     walker=f"AsyncGetCallTrace (JDK {hs.jdk.version})", status=status),
        series=series,
        counters=hs.counters,  # type: ignore[arg-type]  # nested JSON values
        histograms={"interval_us": _histogram(summary.get("interval_us_log2"), "us"),
                    "walk_latency_us": _histogram(summary.get("latency_us_log2"), "us")}
        if mode == "stress" else {},
        findings=groups,
        notes=notes,
    )
    hs.report = write_run_report(out_dir, doc)


def _common_counters(jdk: Jdk, run: JvmRun) -> dict[str, object]:
    s = run.summary or {}
    cpu = float(str(s.get("process_cpu_s", 0.0)))
    return {
        "jdk": jdk.label, "jdk_version": jdk.version,
        # an interrupted JVM was ended by us, not by what it ran
        "jvm_alive_at_end": run.watchdog is None and (
            run.returncode == 0 or (run.interrupted and run.hs_err is None)),
        "jvm_exit": -1 if run.returncode is None else run.returncode,
        "watchdog": run.watchdog or "none",
        "wall_s": round(run.wall_s, 2), "process_cpu_s": round(cpu, 2),
        "worker_cpu_s": round(float(str(s.get("worker_cpu_s", 0.0))), 2),
        "threads": int(str(s.get("threads", 0))), "signals": int(str(s.get("signals", 0))),
        "asgct_calls": int(str(s.get("calls", 0))), "faults": int(str(s.get("faults", 0))),
        "asgct_codes": results.code_counts(_ints(s.get("codes"))),
        "methods_preloaded": int(str(s.get("methods", 0))),
        "fault_events_dropped": int(str(s.get("fault_drops", 0))),
    }


def run_hotspot_fuzz(
    out_dir: Path, *, jdk: str | None = None, duration_s: float = 60.0, seed: int = 1,
    threads: int = 2, corpus: Path | None = None, control: bool = False,
    batch: int = DEFAULT_BATCH, interval_us: int = DEFAULT_FUZZ_INTERVAL_US,
    depth: int = 64, strategies: int = 0x1FF, budget_ms: int = 0, examples: int = 3,
    control_timeout_s: float = 60.0, argv: list[str] | None = None,
    on_tick: Callable[[dict[str, object]], None] | None = None,
) -> HotspotRun:
    """Perturbed-context ASGCT calls on the workload's threads, inside the JVM-aware guard.
    With control=True, then the same calls unguarded, expected to crash the VM (hs_err)."""
    clock = RunClock.start()
    out_dir = out_dir.resolve()
    the_jdk, agent, workload = _prepare(jdk, seed)
    corpus_file = _corpus_file(corpus, out_dir / "jvm")
    options: dict[str, object] = {"mode": "fuzz", "interval_ns": interval_us * 1000,
                                  "batch": batch, "depth": depth, "strategies": strategies,
                                  "budget_ns": budget_ms * 1_000_000}
    if corpus_file:
        options["corpus"] = corpus_file
    run = run_jvm(the_jdk, agent, workload, out_dir / "jvm", options, threads=threads,
                  millis=int(duration_s * 1000), seed=seed, on_tick=on_tick)
    findings = list(results.fault_findings(the_jdk, run, "perturb"))
    for extra in (results.watchdog_finding(the_jdk, run, "perturb"),
                  results.crash_finding(the_jdk, run, "perturb")):
        if extra:
            findings.append(extra)
    counters = _common_counters(the_jdk, run)
    calls = int(str(counters["asgct_calls"]))
    counters["perturbed_calls_per_s"] = round(calls / max(run.wall_s, 1e-9))
    counters["perturbed_calls_per_cpu_s"] = round(
        calls / max(float(str(counters["process_cpu_s"])), 1e-9))
    counters["signals_not_in_java"] = int(str((run.summary or {}).get("skipped_not_java", 0)))
    counters["faults_by_signature"] = dict(results.signature_counts(findings))
    hs = HotspotRun(the_jdk, run, findings, counters)
    saved = [(run, list(findings))]
    if control and not run.interrupted:
        hs.control = _control(the_jdk, agent, workload, out_dir, seed, threads, control_timeout_s)
        crash = results.crash_finding(the_jdk, hs.control, "perturb-unguarded")
        counters["control_crashed_vm"] = hs.control.hs_err is not None
        if crash:
            findings.append(crash)
            saved.append((hs.control, [crash]))
            counters["control_crash_location"] = crash.location
    _save(out_dir, clock, examples, saved)
    calls_series = _series(run, "calls")
    _write(out_dir, hs, "perturb", clock, argv or sys.argv,
           {"execs": calls_series, "exec_per_sec": _rate(calls_series),
            "findings": _series(run, "faults")},
           [f"workload seed {seed}: {workload.root}", f"agent: {agent}",
            "Perturbations: grid, random, bitflip, heap, code, stacks, unwound, special, corpus;"
            " only signals that interrupted Java code (pc in the code cache) are used."])
    return hs


def _control(jdk: Jdk, agent: Path, workload: CompiledWorkload, out_dir: Path, seed: int,
             threads: int, timeout_s: float) -> JvmRun:
    run_dir = out_dir / "control"
    options: dict[str, object] = {"mode": "control", "interval_ns": 1_000_000,
                                  "batch": DEFAULT_BATCH, "strategies": CONTROL_STRATEGIES,
                                  "flight": run_dir / "flight.bin"}
    return run_jvm(jdk, agent, workload, run_dir, options, threads=threads,
                   millis=int(timeout_s * 1000), seed=seed)


def run_hotspot_stress(
    out_dir: Path, *, jdk: str | None = None, duration_s: float = 10.0, seed: int = 1,
    threads: int = 2, interval_us: int = 100, check_every_ms: int = 5,
    debug_non_safepoints: bool = True, examples: int = 3, argv: list[str] | None = None,
    on_tick: Callable[[dict[str, object]], None] | None = None,
) -> HotspotRun:
    """Per-thread sampling at interval_us; every trace checked against the shadow stack, and
    some against JVMTI GetStackTrace (held: exact; running: bottom frame)."""
    clock = RunClock.start()
    out_dir = out_dir.resolve()
    the_jdk, agent, workload = _prepare(jdk, seed)
    options = {"mode": "stress", "interval_ns": interval_us * 1000,
               "check_every_ms": check_every_ms}
    flags = DEBUG_NON_SAFEPOINTS if debug_non_safepoints else ()
    run = run_jvm(the_jdk, agent, workload, out_dir / "jvm", options, threads=threads,
                  millis=int(duration_s * 1000), seed=seed, jvm_flags=flags, on_tick=on_tick)
    findings = [*results.fault_findings(the_jdk, run, "stress"),
                *results.invalid_findings(the_jdk, run, "stress")]
    for extra in (results.watchdog_finding(the_jdk, run, "stress"),
                  results.crash_finding(the_jdk, run, "stress")):
        if extra:
            findings.append(extra)
    counters = _common_counters(the_jdk, run)
    counters.update(stress_counters(run))
    counters["debug_non_safepoints"] = debug_non_safepoints
    hs = HotspotRun(the_jdk, run, findings, counters)
    _save(out_dir, clock, examples, [(run, findings)])
    _write(out_dir, hs, "stress", clock, argv or sys.argv,
           {"execs": _series(run, "signals"), "exec_per_sec": _rate(_series(run, "signals"))},
           [f"workload seed {seed}: {workload.root}", f"interval {interval_us} us per thread",
            "invalid-trace rate = classified samples that are neither exact nor top-tolerated"])
    return hs


def stress_counters(run: JvmRun) -> dict[str, object]:
    """Samples per CPU-second, classes and rates, GetStackTrace agreement."""
    s = run.summary or {}
    classes = results.class_counts(_ints(s.get("classes")))
    compared = sum(n for c, n in classes.items() if c != "no-shadow")
    invalid = {c: n for c, n in classes.items() if c not in (*results.VALID_CLASSES, "no-shadow")}
    signals = int(str(s.get("signals", 0)))
    cpu = float(str(s.get("process_cpu_s", 0.0))) or 1e-9
    worker_cpu = float(str(s.get("worker_cpu_s", 0.0))) or 1e-9
    held, bottom = int(str(s.get("held_checks", 0))), int(str(s.get("bottom_checks", 0)))
    return {
        "samples": signals,
        "samples_per_cpu_s": round(signals / cpu),
        "samples_per_worker_cpu_s": round(signals / worker_cpu),
        "trace_classes": classes,
        "traces_compared": compared,
        "invalid_traces": sum(invalid.values()),
        "invalid_rate": round(sum(invalid.values()) / compared, 6) if compared else 0.0,
        "invalid_rate_by_class": {c: round(n / compared, 6) for c, n in invalid.items()}
        if compared else {},
        "gst_held_checks": held,
        "gst_held_agree": int(str(s.get("held_agree", 0))),
        "gst_bottom_checks": bottom,
        "gst_bottom_agree": int(str(s.get("bottom_agree", 0))),
        # The oracle's share: one held and one bottom check a period, of the holds the
        # workload offered and of all samples.
        "gst_holds_offered": int(str(s.get("holds", 0))),
        "gst_checked_of_samples": round((held + bottom) / signals, 6) if signals else 0.0,
    }
