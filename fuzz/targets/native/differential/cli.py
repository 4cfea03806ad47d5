"""`--unwinder all` or a comma list on `walkfuzz fuzz|stress|replay --target native`: the
differential runs (walkfuzz.targets.native.differential.run, .stress, .replay), from the parsed
command line to the exit status.

    all           every unwinder built here; the others are named, one line each, and skipped
    A,B,...       those unwinders: an unknown name is bad input (status 2), a named one that
                  is not built here a missing tool (status 3)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from walkfuzz.core.errors import MissingDependencyError, UserError
from walkfuzz.core.exit_status import INTERRUPTED, judged
from walkfuzz.engine.progress import Progress, human
from walkfuzz.targets.native.extension import available
from walkfuzz.targets.native.stress_run import StressConfig
from walkfuzz.targets.native.unwinders import UNWINDERS, names

ALL = "all"
DEFAULT_SECONDS = 60.0
DEFAULT_BUDGET_MS = 500.0


def is_differential(text: str | None) -> bool:
    """Whether --unwinder names several unwinders (`all` or a comma list)."""
    return text is not None and (text == ALL or "," in text)


def chosen_unwinders(text: str) -> list[str]:
    """The unwinders --unwinder names, in the registry's order (rules in the module doc)."""
    built = available()
    if text == ALL:
        for name, unwinder in UNWINDERS.items():
            if name not in built:
                why = unwinder.missing() or f"{unwinder.module} is not built"
                print(f"unwinder {name}: skipped: {why}", file=sys.stderr)
        chosen = list(built)
    else:
        wanted = [w.strip() for w in text.split(",")]
        for name in wanted:
            if name not in UNWINDERS:
                raise UserError(f"--unwinder {text!r}: unknown unwinder {name!r} "
                                f"(known: {', '.join(names())}, or all)")
            if name not in built:
                why = UNWINDERS[name].missing() or f"{UNWINDERS[name].module} is not built"
                raise MissingDependencyError(f"--unwinder {text!r}: unwinder {name}: {why}")
        chosen = [n for n in names() if n in wanted]
    if len(chosen) < 2:
        raise MissingDependencyError(f"--unwinder {text!r}: a differential run needs two "
                                     f"unwinders; built here: {', '.join(built) or 'none'}")
    return chosen


def out_label(text: str) -> str:
    """The default output folder's label: native-all, or native-A+B for a list."""
    return f"native-{ALL if text == ALL else '+'.join(w.strip() for w in text.split(','))}"


def fuzz_differential(out: Path, text: str, *, seconds: float | None, runs: int | None,
                      seed: int, budget_ms: float, argv: list[str]) -> int:
    """The generator stream walked by every chosen unwinder; 1 when anything was found."""
    from walkfuzz.targets.native.differential.report import diff_report, summary_lines
    from walkfuzz.targets.native.differential.run import run_differential
    from walkfuzz.targets.native.reporting import report_printed

    unwinders = chosen_unwinders(text)
    if runs is not None and runs < 1:
        raise UserError(f"--runs {runs} is not positive")
    if seconds is not None and seconds <= 0:
        raise UserError(f"--time {seconds:g} is not positive")
    started = time.time()
    with Progress() as progress:
        def tick(elapsed: float, c: dict[str, object]) -> None:
            progress.update(elapsed, f"inputs {human(float(str(c['inputs'])))}  disagreements "
                            f"{c['disagreements']} ({c['classes']} classes)  deaths "
                            f"{c['deaths']}", (c["classes"],))

        result = run_differential(
            out, unwinders, names(), progress=tick, seed=seed, budget_ms=budget_ms, runs=runs,
            seconds=(DEFAULT_SECONDS if runs is None else float("inf"))
            if seconds is None else seconds)
    paths = diff_report(out, result, argv, started)
    print("\n".join(summary_lines(result)))
    if report_printed(paths, result.interrupted, "the inputs walked"):
        return INTERRUPTED
    return judged(bool(result.findings))


def replay_differential_file(path: Path, text: str) -> int:
    from walkfuzz.targets.native.differential.replay import replay_differential

    if not path.is_file():
        raise UserError(f"input {str(path)!r} is not a file")
    return replay_differential(path, chosen_unwinders(text), names())


def stress_differential_run(out: Path, text: str, cfg: StressConfig, argv: list[str]) -> int:
    """Every chosen unwinder's stress run, each sample also walked by fp in its process."""
    from walkfuzz.targets.native.differential.stress import stress_differential

    cfg.check()
    return stress_differential(out, chosen_unwinders(text), cfg, argv)
