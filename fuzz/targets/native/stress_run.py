"""`run_stress`: native workload threads sampled by per-thread POSIX timers, each
sample walked by one unwinder (libunwind unless the config names another) from inside the
signal handler and compared with the thread's
shadow stack (native/agents/native/wf_uw_sampler.c says how).

The run happens in a child process (`python -m walkfuzz.targets.native.stress_run`), so a
fault the guard cannot catch costs the child, not the caller; the child prints one JSON
document.
A baseline phase without sampling first gives the workload's unperturbed speed.

Findings: a few invalid samples are kept as examples; every invalid sample is counted in C
by its signature's parts, with the CLOCK_MONOTONIC times of the first and the last
(`signature_hits`, turned into walkfuzz.findings.hits.Hits on the caller's run clock).
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from walkfuzz.core.errors import UserError
from walkfuzz.engine.child import run_child, walkfuzz_command
from walkfuzz.engine.interrupt import stop_on_interrupt
from walkfuzz.engine.progress import STATUS_EVERY, human, report_status
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.hits import Hits, RunClock
from walkfuzz.targets.native.extension import load
from walkfuzz.targets.native.finding import counted_finding, sample_finding
from walkfuzz.targets.native.outcome import INVALID_NAMES, STOP_NAMES, Namer
from walkfuzz.targets.native.unwinders import DEFAULT, names

MODES = ("ucontext", "sigframe", "alternate")
HIST_BUCKETS = 32
KEPT = 16  # WF_UW_KEPT_INVALID: invalid samples kept as examples, per run
CHILD_GRACE = 30.0  # seconds beyond the run's own length before the child is killed
PROGRESS_FIELDS = ("delivered", "walked", "matched", "tolerated", "faults", "hangs")
STOP_POLL_SECONDS = 0.02  # how often the main thread may run a signal handler during a run


@dataclass(frozen=True)
class StressConfig:
    seconds: float = 5.0
    threads: int = 2
    interval_us: float = 100.0
    mode: str = "alternate"
    max_depth: int = 12
    spin: int = 200
    signo: int = int(signal.SIGPROF)
    seed: int = 1
    baseline_seconds: float = 1.0
    budget_ms: float = 50.0
    unwinder: str = DEFAULT
    companion: bool = False  # every sample also walked by the fp walk (wf_uw_companion.h)

    def check(self) -> None:
        if self.unwinder not in names():
            raise UserError(f"unknown unwinder {self.unwinder!r}; one of {', '.join(names())}")
        if self.mode not in MODES:
            raise UserError(f"stress mode {self.mode!r} is not one of {', '.join(MODES)}")
        if not 1 <= self.threads <= 64:
            raise UserError(f"threads {self.threads} is not in 1..64")
        if not 1 <= self.max_depth <= 63:
            raise UserError(f"max depth {self.max_depth} is not in 1..63")
        if self.interval_us < 1:
            raise UserError(f"interval {self.interval_us} µs is below 1 µs")
        if self.seconds <= 0:
            raise UserError(f"duration {self.seconds} s is not positive")


@dataclass
class StressResult:
    config: StressConfig
    counters: dict[str, Any]
    interval_hist: list[int]
    latency_hist: list[int]
    kept: list[dict[str, Any]]
    baseline_units_per_cpu_s: float
    died: int | None = None  # the child's exit status if it did not finish
    interrupted: bool = False  # Ctrl-C or SIGTERM ended the sampled time early
    findings: list[Finding] = field(default_factory=list)
    signature_counts: list[dict[str, Any]] = field(default_factory=list)
    companion: dict[str, Any] | None = None  # the fp companion's counts (companion_doc)

    def signature_hits(self, clock: RunClock) -> dict[str, Hits]:
        """Every invalid sample's hits by finding signature, on `clock`."""
        found: dict[str, Hits] = {}
        for c in self.signature_counts:
            signature = counted_finding(c, self.config.unwinder, KEPT).signature
            hits = clock.span(int(c["count"]), c["first_ns"] / 1e9, c["last_ns"] / 1e9)
            found[signature] = hits if signature not in found else found[signature].merge(hits)
        return found

    def all_findings(self) -> list[Finding]:
        """The kept examples, then one finding for each counted signature none of them has
        (its samples came after the examples were all kept)."""
        have = {f.signature for f in self.findings}
        counted = (counted_finding(c, self.config.unwinder, KEPT) for c in self.signature_counts)
        extra = {f.signature: f for f in counted if f.signature not in have}
        return [*self.findings, *extra.values()]

    @property
    def walked(self) -> int:
        return int(self.counters.get("walked", 0))

    @property
    def judged(self) -> int:
        """Samples the oracle judged: all but those beyond the unwinder's known limit."""
        return self.walked - int(self.counters.get("known_limit", 0))

    @property
    def match_rate(self) -> float:
        """Judged samples whose walk equals the shadow stack (tolerated top frame included)."""
        good = int(self.counters.get("matched", 0)) + int(self.counters.get("tolerated", 0))
        return good / self.judged if self.judged else 0.0

    @property
    def invalid(self) -> int:
        return sum(int(v) for v in self.counters.get("invalid_kinds", {}).values())

    @property
    def invalid_rate(self) -> float:
        return self.invalid / self.judged if self.judged else 0.0

    @property
    def slowdown(self) -> float | None:
        """Workload progress per CPU-second lost to sampling (0.25 = a quarter slower); None
        without a baseline phase (or without CPU time) to compare with."""
        cpu_s = float(self.counters.get("cpu_ns", 0)) / 1e9
        units = float(self.counters.get("work_units", 0))
        if not cpu_s or not self.baseline_units_per_cpu_s:
            return None
        return 1.0 - (units / cpu_s) / self.baseline_units_per_cpu_s


def percentile_ns(hist: list[int], q: float) -> int:
    """Upper edge (2^(b+1) ns) of the log2 bucket holding quantile q; 0 for no samples."""
    total = sum(hist)
    if not total:
        return 0
    seen = 0
    for bucket, count in enumerate(hist):
        seen += count
        if seen >= q * total:
            return int(2 ** (bucket + 1))
    return int(2 ** len(hist))


# ---- the child ---------------------------------------------------------------------------

def _run_native(native: Any, cfg: StressConfig, seconds: float, interval_ns: int) -> Any:
    """One phase (interval_ns 0: unsampled), its counts reported on stderr as it runs."""
    ffi, lib = native.ffi, native.lib
    c = ffi.new("wf_uw_stress_config *")
    c.threads, c.interval_ns, c.duration_ns = cfg.threads, interval_ns, int(seconds * 1e9)
    c.max_depth, c.spin, c.signo = cfg.max_depth, cfg.spin, cfg.signo
    c.mode, c.seed, c.walk_budget_ns = MODES.index(cfg.mode), cfg.seed, int(cfg.budget_ms * 1e6)
    stats = ffi.new("wf_uw_stress_stats *")
    # On a thread of its own (cffi releases the GIL), so that this one reports its counts
    # and runs the signal handler of stop_on_interrupt while it goes on.
    rc: list[int] = []
    run = threading.Thread(target=lambda: rc.append(lib.wf_uw_stress_run(c, stats)),
                           name="wf_uw_stress_run")
    run.start()
    counts = ffi.new("wf_uw_stress_stats *")
    reported = time.monotonic()  # the first report after STATUS_EVERY
    while run.is_alive():
        run.join(STOP_POLL_SECONDS)
        if run.is_alive() and time.monotonic() - reported >= STATUS_EVERY:
            reported = time.monotonic()
            lib.wf_uw_stress_progress(counts)
            report_status({"sampling": interval_ns != 0, **progress_of(counts)})
    if rc != [0]:
        raise UserError(f"{cfg.unwinder} stress could not run: "
                        f"{ffi.string(stats.error).decode()}")
    if interval_ns != 0:  # the sampled phase's final counts: the line ends on what it did
        report_status({"sampling": True, **progress_of(stats)})
    return stats


def progress_of(counts: Any) -> dict[str, int]:
    """The counts so far of a running stress (wf_uw_stress_progress)."""
    doc = {f: int(getattr(counts, f)) for f in PROGRESS_FIELDS}
    doc["invalid"] = sum(int(counts.invalid_kinds[i]) for i in range(1, len(INVALID_NAMES)))
    return doc


def status_line(status: dict[str, Any]) -> str:
    """The progress line of a running native stress, from the child's status report."""
    if not status.get("sampling"):
        return "unsampled baseline phase (the workload's own speed)"
    walked, invalid = int(status["walked"]), int(status["invalid"])
    matched = int(status["matched"]) + int(status["tolerated"])  # as the summary counts
    return (f"walks {human(walked)}  match {human(matched)}  invalid "
            f"{human(invalid)} ({100 * invalid / walked if walked else 0:.2f}%)  faults "
            f"{status['faults']}  hangs {status['hangs']}")


def _kept(stats: Any, namer: Namer) -> list[dict[str, Any]]:
    kept = []
    for i in range(stats.kept):
        k = stats.kept_samples[i]
        kept.append({
            "invalid": INVALID_NAMES[k.invalid], "first_diff": int(k.first_diff),
            "mode": MODES[k.mode], "stop": STOP_NAMES[k.stop],
            "walked": [namer.kind(int(k.walked[j]), 0) for j in range(k.walked_count)],
            "shadow": [namer.kind(int(k.shadow[j]), 0) for j in range(k.shadow_count)],
            "walked_ids": [int(k.walked[j]) for j in range(k.walked_count)],
            "shadow_ids": [int(k.shadow[j]) for j in range(k.shadow_count)],
            "pc0": namer.describe(int(k.pc0)),
        })
    return kept


def _signature_counts(stats: Any, namer: Namer) -> list[dict[str, Any]]:
    counts = []
    for i in range(stats.signature_slots):
        c = stats.signature_counts[i]
        counts.append({"invalid": INVALID_NAMES[c.invalid],
                       "kind": namer.kind(int(c.id), 0) if c.id >= 0 else None,
                       "count": int(c.count), "first_ns": int(c.first_ns),
                       "last_ns": int(c.last_ns)})
    return counts


def companion_doc(native: Any) -> dict[str, Any]:
    """The fp companion's counts since the last call, and the samples it kept."""
    c = native.ffi.new("wf_uw_companion_stats *")
    native.lib.wf_uw_companion_take(c)
    fields = ("walked", "fp_exact", "fp_faithful", "fp_wrong", "fp_faults", "fp_hangs",
              "fp_frames", "both_ok", "main_only_ok", "fp_only_ok", "both_wrong", "walk_ns")
    kept = [{"main_ok": bool(k.main_ok), "fp_ok": bool(k.fp_ok),
             "main_stop": STOP_NAMES[k.main_stop], "fp_stop": STOP_NAMES[k.fp_stop],
             "main": [int(k.main_ids[i]) for i in range(k.main_count)],
             "fp": [int(k.fp_ids[i]) for i in range(k.fp_count)],
             "truth": [int(k.truth[i]) for i in range(k.truth_count)]}
            for k in (c.kept_samples[i] for i in range(c.kept))]
    return {**{f: int(getattr(c, f)) for f in fields}, "kept": kept}


def child_run(cfg: StressConfig) -> dict[str, Any]:
    native = load(cfg.unwinder)
    native.lib.wf_uw_companion_set(int(cfg.companion))
    baseline_rate = 0.0
    # Ctrl-C or SIGTERM ends the run early (a stop in the baseline skips the sampled time
    # too): the stats so far are still the result.
    with stop_on_interrupt(native.lib.wf_uw_stress_request_stop) as interrupted:
        if cfg.baseline_seconds > 0:
            base = _run_native(native, cfg, cfg.baseline_seconds, 0)
            baseline_rate = base.work_units / (base.cpu_ns / 1e9) if base.cpu_ns else 0.0
        stats = _run_native(native, cfg, cfg.seconds, int(cfg.interval_us * 1000))
    fields = ("requested", "delivered", "overruns", "walked", "matched", "tolerated",
              "known_limit", "faults", "hangs", "frames", "work_units", "elapsed_ns", "cpu_ns")
    counters: dict[str, Any] = {n: int(getattr(stats, n)) for n in fields}
    counters["invalid_kinds"] = {n: int(stats.invalid_kinds[i])
                                 for i, n in enumerate(INVALID_NAMES) if i}
    counters["stops"] = {n: int(stats.stops[i]) for i, n in enumerate(STOP_NAMES) if i}
    counters["signatures_lost"] = int(stats.signatures_lost)
    namer = Namer(native)
    return {
        "counters": counters,
        "interval_hist": [int(stats.interval_hist[i]) for i in range(HIST_BUCKETS)],
        "latency_hist": [int(stats.latency_hist[i]) for i in range(HIST_BUCKETS)],
        "kept": _kept(stats, namer),
        "signature_counts": _signature_counts(stats, namer),
        "baseline_units_per_cpu_s": baseline_rate,
        "interrupted": bool(interrupted),
        "companion": companion_doc(native) if cfg.companion else None,
    }


# ---- the parent --------------------------------------------------------------------------

def run_stress(cfg: StressConfig,
                         on_status: Callable[[dict[str, Any]], None] | None = None,
                         ) -> StressResult:
    """Run the stress job in a child process and return what its samples found; `on_status`
    gets the child's counts so far while it runs (progress_of)."""
    cfg.check()
    argv = walkfuzz_command("walkfuzz.targets.native.stress_run", json.dumps(cfg.__dict__))
    timeout = cfg.seconds + cfg.baseline_seconds + CHILD_GRACE
    try:
        # graceful: a Ctrl-C or SIGTERM still gets the result, marked interrupted
        done = run_child(argv, timeout=timeout, on_status=on_status, graceful=True)
    except subprocess.TimeoutExpired:
        return StressResult(cfg, {}, [], [], [], 0.0, died=-int(signal.SIGKILL))
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-2000:])
        return StressResult(cfg, {}, [], [], [], 0.0, died=done.returncode)
    doc = json.loads(done.stdout)
    return StressResult(
        config=cfg, counters=doc["counters"], interval_hist=doc["interval_hist"],
        latency_hist=doc["latency_hist"], kept=doc["kept"],
        baseline_units_per_cpu_s=doc["baseline_units_per_cpu_s"],
        findings=[sample_finding(s, cfg.unwinder) for s in doc["kept"]],
        signature_counts=doc["signature_counts"],
        interrupted=bool(doc.get("interrupted")),
        companion=doc.get("companion"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="walkfuzz.targets.native.stress_run")
    parser.add_argument("config", help="StressConfig as JSON")
    args = parser.parse_args(argv)
    cfg = StressConfig(**json.loads(args.config))
    json.dump(child_run(cfg), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
