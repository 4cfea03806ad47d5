"""Run a HotSpot fuzz, stress or replay run, print its summary and judge its exit status.

`walkfuzz fuzz|stress|replay --target hotspot` end here:

    fuzz     0 no findings, 1 findings (or the JVM did not survive)
    stress   0 clean, 1 a fault, a hang, a dead JVM, or an invalid trace (with
             --max-invalid-rate: an invalid-trace rate above it)
    replay   0 the record ran clean, 1 it faulted again
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.core.exit_status import INTERRUPTED, invalid_rate_fails, invalid_rate_over, judged
from walkfuzz.core.paths import read_input
from walkfuzz.engine.progress import Progress, firsts, human
from walkfuzz.targets.hotspot.campaign import (
    DEFAULT_BATCH,
    DEFAULT_FUZZ_INTERVAL_US,
    HotspotRun,
    run_hotspot_fuzz,
    run_hotspot_stress,
)
from walkfuzz.targets.hotspot.inputs import RecordError, decode

MAX_THREADS = 64
# Strategy bits (wf_hs_perturb.c): all nine, or "corpus" alone (apply the given records, nothing
# else).
ALL_STRATEGIES = 0x1FF
CORPUS_ONLY = 1 << 8
REPLAY_SECONDS = 10.0


def interval_us(interval_ns: int) -> int:
    """--interval in the whole microseconds the agent takes; UserError naming it if below 1 us."""
    if interval_ns < 1000:
        raise UserError(f"--interval {interval_ns}ns is below 1us, the finest interval of the "
                        "hotspot target")
    return interval_ns // 1000


def check_threads(threads: int) -> None:
    if not 1 <= threads <= MAX_THREADS:
        raise UserError(f"threads {threads} is outside 1..{MAX_THREADS}")


def _jvm_end(hs: HotspotRun) -> str:
    c = hs.counters
    if c.get("jvm_alive_at_end"):
        return "the JVM ran to its end"
    return f"the JVM DIED (exit {c.get('jvm_exit')}, watchdog {c.get('watchdog')})"


def fuzz_summary(hs: HotspotRun) -> str:
    """The one summary line of a fuzz run (every counter is in the report)."""
    c = hs.counters
    return (f"hotspot fuzz ({c['jdk']}): {c['asgct_calls']} perturbed AsyncGetCallTrace calls "
            f"in {c['wall_s']} s ({c['perturbed_calls_per_s']}/s, {c['threads']} threads); "
            f"faults caught {c['faults']}, {len({f.signature for f in hs.findings})} finding "
            f"signatures; {_jvm_end(hs)}")


def stress_summary(hs: HotspotRun) -> str:
    """The one summary line of a stress run (every counter is in the report)."""
    c = hs.counters
    rate = float(str(c.get("invalid_rate", 0.0)))
    return (f"hotspot stress ({c['jdk']}): {c['samples']} samples ({c['samples_per_cpu_s']}"
            f"/CPU-s), {c['traces_compared']} traces compared, invalid {c['invalid_traces']} "
            f"({100 * rate:.3f}%); faults {c['faults']}; {_jvm_end(hs)}")


def _print_summary(hs: HotspotRun, line: str) -> None:
    print(line)
    print(f"report: {hs.report.get('html')}")
    if hs.run.interrupted:
        print("interrupted: the report has what the JVM ran until then", file=sys.stderr)


def _tick_line(mode: str, tick: dict[str, object]) -> str:
    signals, calls = float(str(tick.get("signals", 0))), float(str(tick.get("calls", 0)))
    done = f"calls {human(calls)}" if mode == "fuzz" else f"samples {human(signals)}"
    return (f"{done}  faults caught {tick.get('faults', 0)}  signals outside Java "
            f"{human(float(str(tick.get('skipped_not_java', 0))))}  threads "
            f"{tick.get('threads', 0)}")


def _ticks(progress: Progress, mode: str) -> Callable[[dict[str, object]], None]:
    # a first fault in stress is news (a line of its own); fuzzing catches hundreds a second
    def show(tick: dict[str, object]) -> None:
        progress.update(float(str(tick.get("t", 0))), _tick_line(mode, tick),
                        firsts(int(str(tick.get("faults", 0)))) if mode == "stress" else None)
    return show


def fuzz_and_judge(out: Path, *, jdk: str | None, duration_s: float, seed: int, threads: int,
                   corpus: Path | None, argv: list[str], control: bool = False,
                   corpus_only: bool = False, batch: int = DEFAULT_BATCH,
                   interval_us: int = DEFAULT_FUZZ_INTERVAL_US) -> int:
    """A guarded fuzz run: 1 when it found anything (or the JVM died), else 0."""
    check_threads(threads)
    if corpus is not None and not corpus.exists():
        raise UserError(f"--corpus {str(corpus)!r} does not exist")
    if corpus_only and corpus is None:
        raise UserError("--corpus-only needs --corpus")
    if interval_us < 1:
        raise UserError(f"interval {interval_us} us must be at least 1 us")
    with Progress() as progress:
        hs = run_hotspot_fuzz(out, jdk=jdk, duration_s=duration_s, seed=seed, threads=threads,
                              corpus=corpus, control=control, batch=batch,
                              interval_us=interval_us, argv=argv, on_tick=_ticks(progress, "fuzz"),
                              strategies=CORPUS_ONLY if corpus_only else ALL_STRATEGIES)
    _print_summary(hs, fuzz_summary(hs))
    if hs.run.interrupted:
        return INTERRUPTED
    alive = bool(hs.counters.get("jvm_alive_at_end"))
    return judged(bool(hs.findings) or not alive)


def stress_and_judge(out: Path, *, jdk: str | None, duration_s: float, seed: int, threads: int,
                     interval_us: int, argv: list[str], max_invalid_rate: float | None = None,
                     debug_non_safepoints: bool = True) -> int:
    """A sampled run checked against the oracles: 1 on a fault, a hang, a dead JVM or an
    invalid trace (a rate above max_invalid_rate when given), else 0."""
    check_threads(threads)
    if interval_us < 1:
        raise UserError(f"interval {interval_us} us must be at least 1 us")
    with Progress() as progress:
        hs = run_hotspot_stress(out, jdk=jdk, duration_s=duration_s, seed=seed, threads=threads,
                                interval_us=interval_us, argv=argv,
                                debug_non_safepoints=debug_non_safepoints,
                                on_tick=_ticks(progress, "stress"))
    _print_summary(hs, stress_summary(hs))
    if hs.run.interrupted:
        return INTERRUPTED
    if not hs.counters.get("samples"):  # a run that did no work is an error, never clean
        raise UserError(f"no sample was taken in --duration {duration_s:g}s at --interval "
                        f"{interval_us}us per thread")
    # Every finding fails the run but the invalid traces --max-invalid-rate tolerates.
    others = [f for f in hs.findings if f.kind != "invalid-trace"]
    failed = bool(others) or not hs.counters.get("jvm_alive_at_end")
    invalid, compared = (int(str(hs.counters.get(k, 0)))
                         for k in ("invalid_traces", "traces_compared"))
    rate = invalid / compared if compared else 0.0  # the counter's is rounded to 6 places
    over = (invalid_rate_fails(rate, max_invalid_rate) if max_invalid_rate is not None
            else len(others) < len(hs.findings) or invalid > 0)
    if line := invalid_rate_over(rate, max_invalid_rate):
        print(line, file=sys.stderr)
    return judged(failed or over)


def _stored_description(finding: Path) -> dict[str, object]:
    try:
        doc = json.loads(finding.with_suffix(".json").read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def replay_and_judge(finding: Path, jdk: str | None = None,
                     seconds: float = REPLAY_SECONDS) -> int:
    """Apply one finding's perturbation record (and nothing else) to the workload's live Java
    contexts in a fresh JVM for `seconds`; print what faulted. JDK: `jdk`, else the one the
    finding names in its description. The record is applied exactly (never nudged). Records
    that add/xor, or set a register relative to a base (the stack top, the interrupted sp,
    the code cache, libjvm, the heap, the next thread's stack), mean the same in any JVM; a
    version-1 record that sets an absolute address depends on the old run's layout."""
    if not finding.is_file():
        raise UserError(f"input {str(finding)!r} is not a file")
    data = read_input(finding)
    if not data:
        raise UserError(f"input {str(finding)!r} holds no perturbation record (hang and "
                        "invalid-trace findings replay only with their run)")
    try:
        record = decode(data)
    except RecordError as e:
        raise RecordError(f"input {str(finding)!r}: {e}") from None
    stored = _stored_description(finding)
    details = stored.get("details")
    label = details.get("jdk") if isinstance(details, dict) else None
    the_jdk = jdk or (label if isinstance(label, str) else None)
    with tempfile.TemporaryDirectory(prefix="walkfuzz-hotspot-replay-") as tmp:
        hs = run_hotspot_fuzz(Path(tmp), jdk=the_jdk, duration_s=seconds, corpus=finding,
                              strategies=CORPUS_ONLY, argv=["walkfuzz", *sys.argv[1:]])
    signatures = hs.counters.get("faults_by_signature", {})
    doc = {"input": str(finding), "jdk": hs.jdk.label, "jdk_version": hs.jdk.version,
           "perturbation": record.describe(), "record_version": record.version,
           "asgct_calls": hs.counters.get("asgct_calls"), "faults": hs.counters.get("faults"),
           "signatures": signatures, "stored_signature": stored.get("signature"),
           "reproduced": isinstance(signatures, dict) and stored.get("signature") in signatures,
           "jvm_alive_at_end": hs.counters.get("jvm_alive_at_end")}
    print(json.dumps(doc, indent=1, default=str))
    return INTERRUPTED if hs.run.interrupted else judged(bool(hs.findings))
