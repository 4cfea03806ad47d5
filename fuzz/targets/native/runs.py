"""Run a fuzz, stress or replay run of one unwinder, print its summary and judge its exit
status. `walkfuzz fuzz --target native --unwinder NAME` (and `--target libunwind --engine
generator`), `walkfuzz stress --target native|libunwind` and `walkfuzz replay --target
native|libunwind` end here:

    fuzz     0 no findings, 1 findings
    stress   0 clean, 1 a fault, a hang, a dead child, or an invalid trace (with
             --max-invalid-rate: an invalid-trace rate above it)
    replay   0 a clean walk, 1 a finding (or the child died)

(`walkfuzz fuzz --target libunwind` with its default engine is a libFuzzer campaign on
harnesses/libunwind_perturb.py, walkfuzz.targets.campaign_run; this module's fuzz run is the
supervised-process runner on the C generator stream.)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from walkfuzz.core.errors import UserError
from walkfuzz.core.exit_status import (
    FINDINGS,
    INTERRUPTED,
    invalid_rate_fails,
    invalid_rate_over,
    judged,
)
from walkfuzz.engine.progress import Progress, firsts, human
from walkfuzz.findings.hits import RunClock
from walkfuzz.report.figures import counts_text, slowdown_text
from walkfuzz.targets.native.child import walk_in_child
from walkfuzz.targets.native.unwinders import DEFAULT


def known_limit_text(counters: dict[str, Any]) -> str:
    """The walks the oracle did not judge (an unwinder's known limit), when there were any."""
    n = int(counters.get("known_limit", 0))
    return f"; {n} not judged (beyond the unwinder's known limit)" if n else ""


def _positive(name: str, value: float) -> None:
    if value <= 0:
        raise UserError(f"{name} {value} is not positive")


def fuzz_and_judge(out: Path, *, seconds: float, jobs: int, seed: int, budget_ms: float,
                   argv: list[str], unwinder: str = DEFAULT) -> int:
    """Supervised-process fuzzing of `unwinder` for `seconds`: 1 when it found anything,
    else 0."""
    from walkfuzz.targets.native.extension import load
    from walkfuzz.targets.native.reporting import fuzz_report, report_printed
    from walkfuzz.targets.native.supervisor import run_fuzz

    _positive("--time", seconds)
    _positive("--jobs", jobs)
    _positive("--walk-budget (ms)", budget_ms)
    load(unwinder)  # fail here, naming the module, rather than in every worker
    started = time.time()
    with Progress() as progress:
        def tick(elapsed: float, c: dict[str, object]) -> None:
            progress.update(elapsed, f"walks {human(float(str(c['walks'])))}  faults "
                            f"{c['faults']}  hangs {c['hangs']}  invalid {c['invalid']}",
                            firsts(int(str(c["faults"])), int(str(c["hangs"])),
                                   int(str(c["invalid"]))))

        result = run_fuzz(out, seconds, jobs=jobs, seed=seed, budget_ms=budget_ms,
                                    progress=tick, unwinder=unwinder)
    paths = fuzz_report(out, result, argv, started)
    c = result.counters
    print(f"{unwinder} fuzz: {c['walks']} walks in {result.seconds:.1f}s "
          f"({result.walks_per_second:.0f}/s, {jobs} jobs); faults {c['faults']}, "
          f"hangs {c['hangs']}, invalid {c['invalid']} of {c['unperturbed']} unperturbed; "
          f"worker deaths {c['worker_deaths']}{known_limit_text(c)}")
    for signature, count in sorted(result.signatures.items(), key=lambda kv: -kv[1]):
        print(f"  {count:8d}  {signature}")
    if report_printed(paths, result.interrupted, "the walks done"):
        return INTERRUPTED
    return judged(bool(result.findings))


def stress_and_judge(out: Path, *, seconds: float, threads: int, interval_us: float, mode: str,
                     seed: int, baseline_seconds: float, budget_ms: float, argv: list[str],
                     max_depth: int = 12, max_invalid_rate: float | None = None,
                     unwinder: str = DEFAULT) -> int:
    """Workload threads sampled every `interval_us`, walked from the handler and checked."""
    from walkfuzz.targets.native.extension import load
    from walkfuzz.targets.native.reporting import report_printed, stress_report
    from walkfuzz.targets.native.stress_run import StressConfig, run_stress, status_line

    load(unwinder)
    cfg = StressConfig(seconds=seconds, threads=threads, interval_us=interval_us, mode=mode,
                       max_depth=max_depth, seed=seed, baseline_seconds=baseline_seconds,
                       budget_ms=budget_ms, unwinder=unwinder)
    clock = RunClock.start()
    started = time.monotonic()
    with Progress() as progress:
        def show(status: dict[str, Any]) -> None:
            progress.update(time.monotonic() - started, status_line(status),
                            firsts(*(int(status.get(k, 0)) for k in ("faults", "hangs",
                                                                     "invalid"))))

        result = run_stress(cfg, show)
    paths = stress_report(out, result, argv, clock)
    c = result.counters
    if result.died is not None:
        print(f"{unwinder} stress: the child died (status {result.died})")
        print(f"report: {paths['html']}")
        return FINDINGS
    print(f"{unwinder} stress: {c['walked']} samples walked of {c['requested']} requested "
          f"({c['delivered']} delivered, {c['overruns']} overruns); match "
          f"{result.match_rate:.5%}, invalid {result.invalid} ({result.invalid_rate:.5%}; "
          f"by kind: {counts_text(c['invalid_kinds'])}); faults {c['faults']}, hangs {c['hangs']}; "
          f"slowdown {slowdown_text(result.slowdown)}{known_limit_text(c)}")
    if report_printed(paths, result.interrupted, "the samples walked"):
        return INTERRUPTED
    if not c["walked"]:  # a run that did no work is an error, never a clean run
        raise UserError(f"no sample was walked in --duration {seconds:g}s at --interval "
                        f"{interval_us:.0f}us per thread")
    failed = int(c["faults"]) + int(c["hangs"]) > 0
    if over := invalid_rate_over(result.invalid_rate, max_invalid_rate):
        print(over, file=sys.stderr)
    return judged(failed or invalid_rate_fails(result.invalid_rate, max_invalid_rate))


def replay_and_judge(path: Path, unwinder: str = DEFAULT) -> int:
    """Run one fuzz input in a child process (walkfuzz.targets.native.child_replay prints the
    case, the walk and the finding's signature as JSON); a child killed by a signal is named
    here, as the generator engine names a death of its worker."""
    if not path.is_file():
        raise UserError(f"input {str(path)!r} is not a file")
    from walkfuzz.targets.native.extension import load

    load(unwinder)  # a missing extension is one line here, not a traceback of the child
    end = walk_in_child("walkfuzz.targets.native.child_replay", ["--unwinder", unwinder, str(path)])
    if end.died is None:
        return end.returncode
    from walkfuzz.targets.native.finding import death_finding

    died = death_finding(unwinder, path.read_bytes(), end.returncode)
    print(json.dumps({"input": str(path), "process_died": end.died,
                      "location": died.location, "signature": died.signature}))
    return FINDINGS
