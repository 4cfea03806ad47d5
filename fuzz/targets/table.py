"""The targets walkfuzz runs on, in one table: each entry names its package, and every command
reaches a target only through it (the Target protocol: walkfuzz.targets.protocol).

A target is a package `walkfuzz.targets.<package>` with five modules (fuzz, stress, replay,
finding, inputs). `walkfuzz fuzz|stress|replay --target T` read TARGETS: what each action runs
for T (by default the package's module of the action's name, `fuzz.fuzz`, `stress.stress`,
`replay.replay`, imported only when that action runs, so that the command line starts without
a JVM's or libunwind's modules) and which of the action's target-specific flags T takes (a
flag given to a target that does not take it is refused in one line, never ignored). What
triage, minimize, merge and regress need to know of a target is an attribute of its entry.
Adding a target is its five modules and one entry here. An alias (`libunwind`) is an entry of
its own naming another target's package: its parts read `args.target` for its own defaults.

Where a run writes without --out, for every target and action: `default_out`.

A harness is an executable atheris script. For the simulated VM (`minivm`) it is
`harnesses/<harness>.py`; for another target T it is `harnesses/<T>_<harness>.py`. Seeds
shipped with the project are in `corpora/<script stem>/`, named after the harness script
(`corpora/layouts/`, `corpora/libunwind_perturb/`; libFuzzer layout: one file per input, named
by its SHA-1). `--harness` also accepts the path of a harness script of one's own.
"""

from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from walkfuzz.core.errors import UnknownTargetError, UserError
from walkfuzz.core.paths import ROOT
from walkfuzz.core.sanitizer import FLAVOUR as SANITIZER_FLAVOUR
from walkfuzz.targets.flags import refuse_inapplicable
from walkfuzz.targets.native import ALIAS as LIBUNWIND
from walkfuzz.targets.native import TARGET as NATIVE
from walkfuzz.targets.native.inputs import PERTURB as PERTURB_HARNESS
from walkfuzz.targets.native.unwinders import DEFAULT as DEFAULT_UNWINDER
from walkfuzz.targets.native.unwinders import names as unwinder_names
from walkfuzz.targets.native.walk_snapshot import SUFFIX as NATIVE_SNAPSHOT_SUFFIX

if TYPE_CHECKING:
    from walkfuzz.targets.protocol import Minimizer, ReplayModule

# The target names, here (the native target's and its alias's from its package) and nowhere
# else.
MINIVM = "minivm"
HOTSPOT = "hotspot"

HARNESS_DIR = ROOT / "harnesses"
CORPORA_DIR = ROOT / "corpora"
DEFAULT_TARGET = MINIVM
REPORTS_DIR = Path("reports")
DEFAULT_MAX_LEN = 4096
# Harnesses whose inputs are whole case files need room for a stack image.
MAX_LEN = {"bytes": 16384, "snapshot": 32768}  # and a native stack snapshot's


# Flags of each action that only some targets take, as typed -> their argparse dest (the flags
# every target takes are not listed). Each has a not-given default (None, False or []), which
# is how walkfuzz.targets.flags tells a given flag.
LIBFUZZER_FLAGS = "-- (libFuzzer flags)"
TARGET_FLAGS: dict[str, dict[str, str]] = {
    "fuzz": {
        "--walker": "walker", "--harness": "harness", "--runs": "runs", "--corpus": "corpus",
        "--no-seeds": "no_seeds", "--stop-on-first": "stop_on_first", "--max-len": "max_len",
        "--build": "build", "--sanitizer": "sanitizer", "--engine": "engine", "--jdk": "jdk",
        "--seed": "seed",
        "--threads": "threads", "--control": "control", "--corpus-only": "corpus_only",
        "--batch": "batch", "--interval": "interval_ns", "--walk-budget": "walk_budget_ns",
        "--unwinder": "unwinder", LIBFUZZER_FLAGS: "libfuzzer_flags",
    },
    "stress": {
        "--walker": "walker", "--mode": "mode", "--workload": "workload",
        "--baseline": "baseline_ns", "--walk-budget": "walk_budget_ns", "--jdk": "jdk",
        "--walks": "walks", "--stop-on-first": "stop_on_first", "--max-depth": "max_depth",
        "--no-debug-nonsafepoints": "no_debug_nonsafepoints", "--tx": "tx",
        "--unwinder": "unwinder", "--source": "source",
    },
    "replay": {"--walker": "walker", "--json": "json", "--sanitizer": "sanitizer",
               "--unwinder": "unwinder"},
}
# A libFuzzer campaign's own flags (walkfuzz.targets.campaign_run), for the targets that run one.
CAMPAIGN_FLAGS = ("--harness", "--runs", "--corpus", "--no-seeds", "--stop-on-first",
                  "--max-len", LIBFUZZER_FLAGS)


@dataclass(frozen=True)
class Action:
    """What `walkfuzz ACTION --target T` does for one target."""

    run: str  # "module:function" taking the command's parsed request, returning the status
    flags: tuple[str, ...] = ()  # the action's target-specific flags (TARGET_FLAGS) it takes

    def runner(self) -> Callable[..., int]:
        module, name = self.run.split(":")
        return cast(Callable[..., int], getattr(importlib.import_module(module), name))


def part(package: str, action: str, flags: tuple[str, ...] = ()) -> Action:
    """The action as the Target protocol has it: walkfuzz.targets.<package>.<action>:<action>."""
    return Action(f"walkfuzz.targets.{package}.{action}:{action}", flags)


@dataclass(frozen=True)
class Hook:
    """A target's step after a libFuzzer campaign of `harness`: "module:function" called with
    the campaign's finding groups and `argument`."""

    harness: str
    run: str
    argument: str


@dataclass(frozen=True)
class Target:
    name: str
    about: str  # one line for --help
    package: str  # walkfuzz.targets.<package>: the five modules of the Target protocol
    fuzz: Action
    stress: Action
    replay: Action
    # the harness scripts' prefix: harnesses/<prefix><harness>.py ("" for the default target)
    script_prefix: str
    # a run's default folder is labelled by its kind (a campaign's harness, a stress run's
    # mode), not by the target: default_out
    labels_by_kind: bool = False
    # an input with no description and no harness: its harness from where it lies (the
    # package's inputs.placed_harness)
    harness_from_place: bool = False
    source_coverage: bool = False  # `walkfuzz coverage`: its harnesses have an srccov build
    minimizer: str = ""  # "module:function" of `walkfuzz minimize`; "" the target has none
    not_minimized: str = ""  # why its inputs keep their size, said under triage's table
    # what a sanitizer campaign loads (fuzz/core/_build.py names)
    sanitizer_builds: tuple[str, ...] = (SANITIZER_FLAVOUR,)
    # files saved beside a stored input that are no input: (suffix, what it is)
    side_files: tuple[tuple[str, str], ...] = ()
    # after a campaign of its harness: the reproducers checked in fresh processes
    reproducer_checks: tuple[Hook, ...] = ()

    def action(self, name: str) -> Action:
        return {"fuzz": self.fuzz, "stress": self.stress, "replay": self.replay}[name]

    def part(self, name: str) -> ModuleType:
        """The package's module `name` (one of protocol.PARTS), imported now."""
        return importlib.import_module(f"walkfuzz.targets.{self.package}.{name}")

    def replayer(self) -> ReplayModule:
        """The replay part: Replayer, process_key, alternatives (walkfuzz.targets.protocol)."""
        return cast("ReplayModule", self.part("replay"))

    def reproducer_check(self, harness: str) -> Callable[[list[Any]], None] | None:
        """What checks the reproducers of a campaign of `harness`, its argument bound; None
        when nothing does."""
        for hook in self.reproducer_checks:
            if hook.harness == harness:
                module, name = hook.run.split(":")
                check = getattr(importlib.import_module(module), name)
                return lambda groups: check(groups, hook.argument)
        return None

    def minimize(self) -> Minimizer | None:
        """The target's minimizer, imported now; None when it has none."""
        if not self.minimizer:
            return None
        module, name = self.minimizer.split(":")
        return cast("Minimizer", getattr(importlib.import_module(module), name))


# Why a native input is left as it is, where a minivm case's minimal size is `walkfuzz minimize`'s.
NATIVE_NOT_MINIMIZED = ("native inputs are not minimized: an input is a fixed 59-byte record (a "
                        "chain and up to 4 perturbations) and a snapshot a captured stack; "
                        "`walkfuzz minimize` shrinks minivm cases")
NATIVE_SIDE_FILES = ((NATIVE_SNAPSHOT_SUFFIX, "the snapshot of the walk of the input next to "
                      "it (replayed when the input is not)"),)
# native's replay part with the differential findings it does not group by description yet

TARGETS: tuple[Target, ...] = (
    Target(
        MINIVM, "the simulated VM, walked by the reference walker or --walker PATH.so",
        "minivm",
        fuzz=part("minivm", "fuzz", (*CAMPAIGN_FLAGS, "--walker", "--build", "--sanitizer")),
        stress=part("minivm", "stress", ("--walker", "--mode", "--source", "--workload",
                                         "--baseline", "--walk-budget", "--walks",
                                         "--stop-on-first", "--tx")),
        replay=part("minivm", "replay", ("--walker", "--json", "--sanitizer")),
        script_prefix="", labels_by_kind=True, harness_from_place=True, source_coverage=True,
        minimizer="walkfuzz.targets.minivm.minimize:minimize"),
    Target(
        HOTSPOT, "AsyncGetCallTrace in a real JVM (--jdk 17, 25 or a JDK path)", "hotspot",
        fuzz=part("hotspot", "fuzz", ("--harness", "--corpus", "--jdk", "--seed", "--threads",
                                      "--control", "--corpus-only", "--batch", "--interval")),
        stress=part("hotspot", "stress", ("--jdk", "--no-debug-nonsafepoints")),
        replay=part("hotspot", "replay"),
        script_prefix="hotspot_"),
    Target(
        NATIVE, "real unwinders on real native stacks, one per run (--unwinder "
        f"{'|'.join(unwinder_names())}; default {DEFAULT_UNWINDER})", "native",
        # each unwinder's own extension in its own worker processes: the generator engine
        fuzz=part("native", "fuzz",
                  ("--unwinder", "--engine", "--seed", "--walk-budget", *CAMPAIGN_FLAGS)),
        stress=part("native", "stress",
                    ("--unwinder", "--mode", "--baseline", "--walk-budget", "--max-depth")),
        replay=part("native", "replay", ("--unwinder",)),
        script_prefix="native_", not_minimized=NATIVE_NOT_MINIMIZED,
        side_files=NATIVE_SIDE_FILES),
    Target(
        LIBUNWIND, "--target native --unwinder libunwind (Debian's libunwind), by its first "
        "name; its fuzz runs a libFuzzer campaign by default", "native",
        # its harness loads walkfuzz._unwind: no --walker, no --build flavour
        fuzz=part("native", "fuzz",
                  (*CAMPAIGN_FLAGS, "--engine", "--seed", "--walk-budget", "--sanitizer")),
        stress=part("native", "stress", ("--mode", "--baseline", "--walk-budget", "--max-depth")),
        replay=part("native", "replay"),
        script_prefix="libunwind_", not_minimized=NATIVE_NOT_MINIMIZED,
        sanitizer_builds=("unwind-asan",), side_files=NATIVE_SIDE_FILES,
        # its campaign's unwinder is libunwind, by the alias's name
        reproducer_checks=(Hook(PERTURB_HARNESS,
                                "walkfuzz.targets.native.fresh_replay:check_reproducers",
                                LIBUNWIND),)),
)


def target_names() -> tuple[str, ...]:
    return tuple(t.name for t in TARGETS)


def lookup(name: str) -> Target:
    """The table's entry for `name`; UnknownTargetError naming it and the known targets."""
    for target in TARGETS:
        if target.name == name:
            return target
    raise UnknownTargetError(name, target_names())


def side_files() -> dict[str, str]:
    """Every target's files saved beside a stored input that are no input: suffix -> what."""
    return {suffix: what for t in TARGETS for suffix, what in t.side_files}


def target_arg(text: str) -> str:
    """argparse `type=` of --target: an unknown name is the parser's one usage line."""
    try:
        return lookup(text).name
    except UnknownTargetError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def unwinder_arg(text: str) -> str:
    """argparse `type=` of --unwinder: a name, `all` or a comma list of names (the
    differential oracle); an unknown name is the parser's one usage line."""
    for name in ([] if text == "all" else text.split(",")):
        if name not in unwinder_names():
            raise argparse.ArgumentTypeError(
                f"unknown unwinder {name!r}; one of {', '.join(unwinder_names())}, or all, or a "
                "comma list")
    return text


def target_help(default: str | None = DEFAULT_TARGET) -> str:
    """--target's help: every target of the table with its one line."""
    return "; ".join(f"{t.name}{' (default)' if t.name == default else ''}: {t.about}"
                     for t in TARGETS)


def runner_for(action: str, args: argparse.Namespace) -> Callable[..., int]:
    """The function that runs `walkfuzz ACTION --target T`, once no flag T does not take was
    given (UserError naming the first such flag)."""
    target = lookup(args.target)
    refuse_inapplicable(args, target.name, TARGET_FLAGS[action], target.action(action).flags)
    return target.action(action).runner()


def default_out(action: str, target: str, kind: str | None = None) -> Path:
    """Where a run writes without --out, for every target and action: reports/ACTION-LABEL.

    LABEL is the target's name; where a target has several kinds of run for the action whose
    output must not mix (a campaign resumes whatever its folder holds), `kind` names the kind
    instead: a minivm campaign's harness (reports/fuzz-layouts), a minivm stress run's mode
    (reports/stress-signal), libunwind's generator engine (reports/fuzz-libunwind-generator),
    the native target's unwinder (reports/fuzz-native-llvm, reports/stress-native-fp).
    """
    lookup(target)
    return REPORTS_DIR / f"{action}-{kind or target}"


def run_label(target: str, kind: str) -> str | None:
    """The `kind` of default_out for a run of `target` of that kind: the kind where the
    target's runs are told apart by kind (labels_by_kind), else None (the target's name)."""
    return kind if lookup(target).labels_by_kind else None


# The rule of default_out as every command that writes a folder states it in --help.
OUTPUT_RULE = ("output: --out DIR, created if missing; without --out, reports/COMMAND-LABEL in "
               "the current directory, LABEL being the harness, mode or target (--out's help "
               "says which). With the same --out again a campaign resumes; another run "
               "replaces the report there.")


@dataclass(frozen=True)
class HarnessSpec:
    name: str
    target: str
    script: Path
    seeds: Path | None  # the shipped seed corpus, if there is one
    max_len: int  # default largest input


def script_stem(target: str, harness: str) -> str:
    """The harness script's name without .py, which a standalone fuzzer built from it keeps."""
    return f"{lookup(target).script_prefix}{harness}"


def _script_name(target: str, harness: str) -> str:
    return f"{script_stem(target, harness)}.py"


def list_harnesses(target: str) -> list[str]:
    """Harness names available for `target`, from the scripts in harnesses/."""
    names = []
    for script in sorted(HARNESS_DIR.glob("*.py")):
        stem = script.stem
        prefix = lookup(target).script_prefix
        if prefix:
            if stem.startswith(prefix):
                names.append(stem.removeprefix(prefix))
        elif not stem.startswith((*(t.script_prefix for t in TARGETS if t.script_prefix),
                                  "_")):
            names.append(stem)
    return names


def find_harness(target: str, harness: str) -> HarnessSpec:
    """The harness named `harness` for `target`, or a harness script given by path."""
    lookup(target)  # an unknown target is named before its harness
    if os.sep in harness or harness.endswith(".py"):
        script = Path(harness).resolve()
        if not script.is_file():
            raise UserError(f"harness script {harness!r} does not exist")
        name = script.stem
    else:
        script = HARNESS_DIR / _script_name(target, harness)
        name = harness
        if not script.is_file():
            known = ", ".join(list_harnesses(target)) or "none yet"
            raise UserError(
                f"unknown harness {harness!r} for target {target!r}; available: {known}"
            )
    if not os.access(script, os.X_OK):
        raise UserError(f"harness script {str(script)!r} is not executable (chmod +x it)")
    seeds = CORPORA_DIR / script.stem
    return HarnessSpec(name, target, script, seeds if seeds.is_dir() else None,
                       MAX_LEN.get(name, DEFAULT_MAX_LEN))
