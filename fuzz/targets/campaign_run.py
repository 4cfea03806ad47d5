"""One session of a coverage-guided libFuzzer campaign (`walkfuzz fuzz --target minivm`, and
`--target libunwind` with its default engine): the spec from the command's arguments, the
supervised workers, a status line a second, the report at the end.

Running again into the same output directory resumes the campaign (walkfuzz.engine.campaign).
Exit status: 0 no findings, 1 findings, 130 interrupted (Ctrl-C, SIGTERM); a session that ran no
input (a libFuzzer that cannot start) fails with the reason from the worker's log, status 2.
The report is written in every case.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from walkfuzz.core import sanitizer
from walkfuzz.core.errors import UserError
from walkfuzz.core.exit_status import INTERRUPTED, judged, sigterm_as_interrupt
from walkfuzz.core.native import Flavour
from walkfuzz.core.paths import output_dir, require_corpus_dir
from walkfuzz.engine.campaign import CampaignDir, CampaignSpec, Sample, Session, build_report
from walkfuzz.engine.corpus import import_seeds
from walkfuzz.engine.pool import STOP_GRACE, Supervisor
from walkfuzz.engine.progress import Progress, human
from walkfuzz.engine.run_report import write_run_report
from walkfuzz.targets.minivm.walker_library import check_walker_library
from walkfuzz.targets.table import (
    default_out,
    find_harness,
    list_harnesses,
    lookup,
    run_label,
)

TICK = 1.0  # seconds between samples
# libFuzzer flags the campaign sets itself; the message says which option to use instead.
OWNED_FLAGS = {
    "-artifact_prefix": "the campaign's --out", "-max_total_time": "--time",
    "-runs": "--runs", "-jobs": "-j", "-workers": "-j", "-fork": "-j", "-max_len": "--max-len",
}
DEFAULT_JOBS = 1


def libfuzzer_flags(raw: list[str]) -> list[str]:
    flags = raw[1:] if raw[:1] == ["--"] else raw
    for flag in flags:
        if not re.match(r"^-[a-z_]+=", flag):
            raise UserError(f"libFuzzer flag {flag!r} is not of the form -name=value")
        name = flag.split("=", 1)[0]
        if name in OWNED_FLAGS:
            raise UserError(f"libFuzzer flag {flag!r} is set by walkfuzz; use {OWNED_FLAGS[name]}")
    return flags


def harness_name(args: argparse.Namespace) -> str:
    """--harness, or the target's only harness when it has one; UserError otherwise."""
    if args.harness is not None:
        return str(args.harness)
    available = list_harnesses(args.target)
    if len(available) == 1:
        return available[0]
    raise UserError(f"--harness is required for target {args.target!r}; available: "
                    f"{', '.join(available) or 'none'}")


def campaign_out(target: str, harness: str) -> Path:
    """The default output directory: a target's campaigns told apart by harness where the
    table says so (minivm's)."""
    return default_out("fuzz", target, run_label(target, harness))


def build_spec(args: argparse.Namespace, argv: list[str]) -> CampaignSpec:
    jobs = DEFAULT_JOBS if args.jobs is None else args.jobs
    if jobs < 1:
        raise UserError(f"-j {jobs}: need at least one worker")
    if args.runs is not None and args.runs < 1:
        raise UserError(f"--runs {args.runs}: need at least one input")
    native = campaign_flavour(args)
    walker = "reference"
    if args.walker is not None:  # minivm only (walkfuzz.targets.table)
        walker = str(check_walker_library(args.walker, sanitized=native == sanitizer.FLAVOUR))
    for directory in args.corpus:  # named before any other problem, as the walker is
        require_corpus_dir(directory)
    harness = find_harness(args.target, harness_name(args))
    return CampaignSpec(
        target=args.target, harness=harness.name, script=str(harness.script), walker=walker,
        jobs=jobs, time_budget=args.time, runs=args.runs,
        max_len=args.max_len or harness.max_len,
        stop_on_first=args.stop_on_first, libfuzzer_flags=libfuzzer_flags(args.libfuzzer_flags),
        command=argv, native=native,
    )


def campaign_flavour(args: argparse.Namespace) -> Flavour:
    """The core the workers load: --build (cov by default), or the sanitizer build."""
    if getattr(args, "sanitizer", None) is None:
        return "plain" if getattr(args, "build", None) == "plain" else "cov"
    if getattr(args, "build", None) == "plain":
        raise UserError(f"--build plain and --sanitizer {args.sanitizer} disagree (the "
                        "sanitizer build has coverage feedback)")
    sanitizer.runtime()  # its absence is one line before any work
    return sanitizer.FLAVOUR


def sanitizer_builds(target: str) -> tuple[str, ...]:
    """What a sanitizer campaign of `target` loads (fuzz/core/_build.py names)."""
    return lookup(target).sanitizer_builds


def run_campaign(args: argparse.Namespace) -> int:
    """The campaign the arguments describe, in --out or the default directory."""
    spec = build_spec(args, ["walkfuzz", *sys.argv[1:]])
    out = CampaignDir(output_dir(args.out or campaign_out(spec.target, spec.harness)))
    with out.locked():
        return run_session(args, spec, out)


def status_line(sample: Sample, sup: Supervisor, kinds: dict[str, int]) -> str:
    found = ", ".join(f"{k} {n}" for k, n in kinds.items() if n) or "none"
    return (
        f"execs {human(sample.execs)}  exec/s {human(sample.exec_per_sec)}  "
        f"cov {sample.coverage}  ft {sample.features}  corpus {sample.corpus}  "
        f"findings {sample.findings} ({found})  workers {sup.running()}/{len(sup.slots)}"
    )


def supervise(sup: Supervisor, out: CampaignDir, progress: Progress, stop_on_first: bool) -> None:
    """The campaign's loop: one sample per TICK until the workers are done or it must stop."""
    initial = sum(out.signatures_by_kind().values())
    while not sup.finished():
        time.sleep(TICK)
        sup.read_logs()
        sup.reap()
        for message in sup.messages:
            progress.message(message)
        sup.messages.clear()
        sample = sup.sample()
        out.append_sample(sample)
        kinds = out.signatures_by_kind()
        progress.update(sample.t, status_line(sample, sup, kinds), key=sample.findings)
        if sup.failure is not None:  # a worker that cannot start: the campaign stops
            return
        if stop_on_first and sample.findings > initial:
            progress.message("stopping at the first new finding (--stop-on-first)")
            return
        left = sup.time_left()
        if left is not None and left < -STOP_GRACE:
            return


def run_session(args: argparse.Namespace, spec: CampaignSpec, out: CampaignDir) -> int:
    sessions = out.prepare(spec)
    progress = Progress()
    if spec.native == sanitizer.FLAVOUR:
        sanitizer.ensure_built(sanitizer_builds(spec.target),
                               lambda text: progress.message(f"walkfuzz fuzz: {text}"))
    shipped = None if args.no_seeds else find_harness(spec.target, harness_name(args)).seeds
    seeds = [shipped] if shipped is not None else []
    imported = import_seeds([*seeds, *args.corpus], out.corpus, spec.max_len)
    for warning in imported.warnings:
        progress.message(f"walkfuzz fuzz: warning: {warning}")
    verb = "resuming" if sessions else "starting"
    progress.message(f"walkfuzz fuzz: {verb} campaign in {out.root} ({spec.harness} on "
                     f"{spec.walker}, -j {spec.jobs}); {imported.imported} seeds imported")
    session = Session(started_at=time.time())
    sessions.append(session)
    out.save(spec, sessions)
    previous = out.samples()
    sup = Supervisor(spec, out, time.monotonic(), previous[-1] if previous else None)
    with sigterm_as_interrupt():
        try:
            sup.start_all()
            supervise(sup, out, progress, spec.stop_on_first)
            session.status = "completed"
        except KeyboardInterrupt:
            session.status = "interrupted"
        finally:
            sup.stop_all()
            progress.close()
    failure = session_failure(sup, session.status)
    if failure is not None:
        session.status = "failed"
    out.append_sample(sup.sample(closing=True))
    session.ended_at = time.time()
    session.counters = {**sup.counters, "corpus_imported": imported.imported,
                        "corpus_skipped": len(imported.warnings)}
    out.save(spec, sessions)
    notes = [*imported.warnings, *sup.notes, *([str(failure)] if failure else [])]
    doc = build_report(out, spec, sessions, notes)
    if "--walker" not in lookup(spec.target).fuzz.flags:  # it walks with its own walker
        doc.meta.walker = spec.target
    # inputs of a live walk; Ctrl-C asks for the report now, not for replays first
    check = lookup(spec.target).reproducer_check(spec.harness)
    if check is not None and session.status != "interrupted":
        check(doc.findings)
    paths = write_run_report(out.root, doc)
    print(summary(doc.series, len(doc.findings), paths["html"]))
    if failure is not None:
        raise failure
    if session.status == "interrupted":
        return INTERRUPTED
    return judged(bool(doc.findings))


def session_failure(sup: Supervisor, status: str) -> UserError | None:
    """Why a session that was not interrupted failed: a worker that cannot start, or no input
    run at all (a session that did no work is never a completed one)."""
    if status == "interrupted":
        return None
    if sup.failure is not None:
        return UserError(sup.failure)
    idle = sup.idle_reason()
    return None if idle is None else UserError(f"the campaign ran no input: {idle}")


def summary(series: dict[str, list[tuple[float, float]]], findings: int, html: Path) -> str:
    def last(name: str) -> float:
        points = series.get(name)
        return points[-1][1] if points else 0.0

    elapsed = series["execs"][-1][0] if series.get("execs") else 0.0
    rate = last("execs") / elapsed if elapsed else 0.0
    return (
        f"walkfuzz fuzz: {human(last('execs'))} execs in {elapsed:.0f} s ({human(rate)} exec/s), "
        f"coverage {last('coverage'):.0f}, corpus {last('corpus'):.0f}, "
        f"{findings} distinct findings; report: {html}"
    )
