"""The runtime of a harness process (one libFuzzer worker of a campaign, or a standalone run).

A harness script in harnesses/ is a few lines:

    worker = Worker.from_environment("layouts")
    native = worker.load_native()           # libFuzzer first, then the core (walkfuzz.core.native)
    def one_input(data: bytes) -> None:
        result = native.lib.wf_fuzz_...(...) # the one C call; it journals the input first
        if <result is a finding>:
            worker.report(Finding(...))
    worker.fuzz(one_input)

A harness whose one C call is known to the core (the minivm harnesses: wf_worker_fuzz) passes
`worker.fuzz(one_input, loop=...)`: libFuzzer then calls that C function itself, and Python
runs only on a finding (`report_from_c`), so an input costs what it costs a C harness.

The supervisor passes the campaign through the environment (see `WorkerEnv`), so that every
argument on the command line belongs to libFuzzer and a harness also runs by hand:
`harnesses/layouts.py crash-0123...` replays one input and saves what it finds, and exits 1
if it was a finding (libFuzzer's own replay of a crash input exits non-zero too), else 0.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.core import native
from walkfuzz.core.errors import FindingCrash
from walkfuzz.core.exit_status import judged
from walkfuzz.engine.journal import DEFAULT_CAPACITY, JOURNAL_NAME, JournalWriter
from walkfuzz.findings.finding import Finding
from walkfuzz.findings.hits import CLOCK_ENV, RunClock
from walkfuzz.findings.store import FindingSink

ENV_OUT = "WALKFUZZ_OUT"
ENV_WORKER_DIR = "WALKFUZZ_WORKER_DIR"
ENV_TARGET = "WALKFUZZ_TARGET"
ENV_WALKER = "WALKFUZZ_WALKER"
# What a finding does: `save` it under the output folder and go on (a campaign, a run by hand),
# or `crash`: raise it, so that libFuzzer writes the input as a crash artifact and exits with its
# crash status, the one signal ClusterFuzzLite and OSS-Fuzz read (the fuzzers
# .clusterfuzzlite/build.sh makes set it).
ENV_ON_FINDING = "WALKFUZZ_ON_FINDING"
ON_FINDING = ("save", "crash")
DEFAULT_OUT = "walkfuzz-out"


@dataclass(frozen=True)
class WorkerEnv:
    """What the supervisor tells a worker, read from the environment."""

    out_dir: Path
    worker_dir: Path | None  # None when run by hand: no journal
    target: str
    walker: str  # "reference" or the path of a walker library
    native: native.Flavour  # build flavour of the core to load
    clock: RunClock | None = None  # the campaign's; None when run by hand (a run of its own)
    crash_on_finding: bool = False  # $WALKFUZZ_ON_FINDING=crash: a standalone fuzzer's

    @classmethod
    def read(cls, environ: dict[str, str] | None = None) -> WorkerEnv:
        env = dict(os.environ if environ is None else environ)
        worker_dir = env.get(ENV_WORKER_DIR)
        clock = env.get(CLOCK_ENV)
        on_finding = env.get(ENV_ON_FINDING) or "save"
        if on_finding not in ON_FINDING:
            raise SystemExit(f"${ENV_ON_FINDING}={on_finding!r} is not one of "
                             f"{', '.join(ON_FINDING)}")
        return cls(
            out_dir=Path(env.get(ENV_OUT, DEFAULT_OUT)),
            worker_dir=Path(worker_dir) if worker_dir else None,
            target=env.get(ENV_TARGET, "minivm"),
            walker=env.get(ENV_WALKER, "") or "reference",
            native=native.selected_flavour(env, unset=native.HARNESS_FLAVOUR),
            clock=RunClock.from_text(clock) if clock else None,
            crash_on_finding=on_finding == "crash",
        )

    def to_environ(self) -> dict[str, str]:
        env = {
            ENV_OUT: str(self.out_dir),
            ENV_TARGET: self.target,
            ENV_WALKER: self.walker,
            native.FLAVOUR_ENV: self.native,
        }
        if self.worker_dir is not None:
            env[ENV_WORKER_DIR] = str(self.worker_dir)
        if self.clock is not None:
            env[CLOCK_ENV] = self.clock.to_text()
        if self.crash_on_finding:
            env[ENV_ON_FINDING] = "crash"
        return env


class Worker:
    """One harness process: journal, deduplicating finding sink, libFuzzer set-up."""

    def __init__(self, harness: str, env: WorkerEnv) -> None:
        self.harness = harness
        self.env = env
        self.sink = FindingSink(env.out_dir, clock=env.clock)
        self.journal = (
            JournalWriter(env.worker_dir / JOURNAL_NAME) if env.worker_dir is not None else None
        )
        self.record: Callable[[bytes], None] = (
            self.journal.record if self.journal is not None else _no_journal
        )
        self.findings = 0  # inputs reported as findings by this process

    @classmethod
    def from_environment(cls, harness: str) -> Worker:
        return cls(harness, WorkerEnv.read())

    def load_native(self) -> native.Native:
        """libFuzzer first, whatever the flavour (walker libraries built for coverage call it,
        and the harness runs it), then the core of the chosen flavour."""
        native.load_libfuzzer()
        core = native.load(self.env.native)
        if self.env.worker_dir is not None:
            self._journal_in_c(core)
        return core

    def _journal_in_c(self, core: native.Native) -> None:
        """Move the journal into C: the harness's one C call per input records the input
        itself (a Python copy costs about 400 ns an input)."""
        assert self.env.worker_dir is not None
        path = str(self.env.worker_dir / JOURNAL_NAME).encode()
        if self.journal is not None:
            self.journal.close()
            self.journal = None
        rc = core.lib.wf_journal_open(path, DEFAULT_CAPACITY)
        if rc != 0:
            raise SystemExit(f"cannot open the input journal {path.decode()}: {os.strerror(-rc)}")
        self.record = _no_journal

    def report(self, finding: Finding) -> Path | None:
        """Save a finding (deduplicated); say so once per signature on stderr. Returns its
        directory when it was stored (a harness may keep more beside it). A standalone fuzzer
        raises it instead: libFuzzer's crash artifact is then the stored input."""
        self.findings += 1
        if self.env.crash_on_finding:
            raise FindingCrash(f"walkfuzz {finding.kind} finding in {finding.location} "
                               f"(harness {finding.harness}, signature {finding.signature})")
        saved = self.sink.offer(finding)
        if saved is not None and self.sink.seen[finding.signature] == 1:
            print(f"walkfuzz: {finding.kind} finding saved in {saved}", file=sys.stderr)
        return saved

    def fuzz(self, one_input: Callable[[bytes], None], argv: Sequence[str] | None = None,
             mutator: Callable[[bytes, int, int], bytes] | None = None,
             crossover: Callable[[bytes, bytes, int, int], bytes] | None = None,
             loop: Callable[[list[str]], int] | None = None) -> None:
        """Hand control to libFuzzer; returns only when it is done. Run by hand on input files,
        run them here instead and exit with their verdict (`replay_files`). `mutator` and
        `crossover`, if given, are libFuzzer's custom mutator (data, max_size, seed) -> bytes
        and crossover (data1, data2, max_size, seed) -> bytes: a harness whose input has parts
        that must not change mutates and splices only the others. `loop`, when given (and
        neither of them), is a C fuzz loop doing what `one_input` does: called with libFuzzer's
        command line, it runs libFuzzer with a C callback and returns libFuzzer's status."""
        args = list(sys.argv if argv is None else argv)
        files = input_files(args[1:])
        # A standalone fuzzer leaves its input files to libFuzzer, as its engine expects: a
        # finding is then a crash with libFuzzer's exit status.
        if self.env.worker_dir is None and files and not self.env.crash_on_finding:
            sys.exit(self.replay_files(one_input, files, runs_per_file(args[1:])))
        native.load_custom_hooks(mutator is not None, crossover is not None)
        native.load_libfuzzer()
        if loop is not None:
            sys.exit(loop(args))
        import atheris

        # A sanitizer campaign's runtime brings libFuzzer (walkfuzz.core.sanitizer): run that
        # one, the copy the instrumented code reports its coverage to.
        extra = {name: f for name, f in (("custom_mutator", mutator),
                                         ("custom_crossover", crossover)) if f is not None}
        atheris.Setup(args, one_input, internal_libfuzzer=not native.libfuzzer_preloaded(),
                      **extra)
        atheris.Fuzz()

    def report_from_c(self, finding: Callable[[], Finding]) -> int:
        """`report(finding())` for a C fuzz loop's callback, which cannot take an exception:
        0 to go on; 1 to end the process as a crash (a standalone fuzzer's finding, or an
        error), the exception printed first, as atheris prints one it did not expect."""
        try:
            self.report(finding())
        except BaseException:  # any error ends the fuzz loop as a crash, as under atheris
            print("\n === Uncaught Python exception: ===")  # on stdout, where atheris says it
            traceback.print_exc(file=sys.stdout)
            sys.stdout.flush()
            sys.stderr.flush()
            return 1
        return 0

    def replay_files(self, one_input: Callable[[bytes], None], files: Sequence[Path],
                     runs: int = 1) -> int:
        """Each input `runs` times, as libFuzzer runs input files, and the exit status: 1 if
        one was a finding. libFuzzer exits 0 after inputs that returned, and a finding here
        returns (it is saved, not a crash), so its status would call a finding clean."""
        found = 0
        for path in files:
            print(f"Running: {path}", file=sys.stderr)
            data, before = path.read_bytes(), self.findings
            for _ in range(runs):
                one_input(data)
            found += self.findings > before
        print(f"walkfuzz: {found} of {len(files)} inputs were findings (saved under "
              f"{self.env.out_dir})", file=sys.stderr)
        return judged(found > 0)


# libFuzzer flags that make a run on input files something other than running them (shrinking
# a crash, merging corpora, fuzzing in child processes): such a command line goes to libFuzzer.
OTHER_FILE_MODES = ("-minimize_crash=", "-cleanse_crash=", "-merge=", "-set_cover_merge=",
                    "-fork=", "-jobs=", "-workers=")


def input_files(args: Sequence[str]) -> list[Path]:
    """The input files of a libFuzzer command line (its arguments that are not flags), when
    every one is a file and no flag asks for more than running them: libFuzzer would run
    each once (-runs=N: N times) instead of fuzzing."""
    if any(a.startswith(OTHER_FILE_MODES) for a in args):
        return []
    paths = [Path(a) for a in args if not a.startswith("-")]
    return paths if paths and all(p.is_file() for p in paths) else []


def runs_per_file(args: Sequence[str]) -> int:
    """libFuzzer's -runs=N for input files: each runs N times (default once)."""
    given = [a.removeprefix("-runs=") for a in args if a.startswith("-runs=")]
    return max(1, int(given[-1])) if given and given[-1].isdigit() else 1


def _no_journal(data: bytes) -> None:
    """Run by hand: the input is a file already."""

