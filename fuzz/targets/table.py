"""The targets walkfuzz runs on, in one table, and where a campaign's pieces live.

`walkfuzz fuzz|stress|replay --target T` read TARGETS: what each action runs for T (a function
named "module:function", imported only when that action runs, so that the command line starts
without a JVM's or libunwind's modules) and which of the action's target-specific flags T
takes (a flag given to a target that does not take it is refused in one line, never ignored).
Adding a target is one entry here and its run functions.

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
from typing import cast

from walkfuzz.core.errors import UnknownTargetError, UserError
from walkfuzz.core.paths import ROOT
from walkfuzz.targets.flags import refuse_inapplicable
from walkfuzz.targets.native.unwinders import DEFAULT as DEFAULT_UNWINDER
from walkfuzz.targets.native.unwinders import names as unwinder_names

HARNESS_DIR = ROOT / "harnesses"
CORPORA_DIR = ROOT / "corpora"
DEFAULT_TARGET = "minivm"
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


@dataclass(frozen=True)
class Target:
    name: str
    about: str  # one line for --help
    fuzz: Action
    stress: Action
    replay: Action

    def action(self, name: str) -> Action:
        return {"fuzz": self.fuzz, "stress": self.stress, "replay": self.replay}[name]


TARGETS: tuple[Target, ...] = (
    Target(
        "minivm", "the simulated VM, walked by the reference walker or --walker PATH.so",
        fuzz=Action("walkfuzz.targets.fuzz:fuzz_minivm",
                    (*CAMPAIGN_FLAGS, "--walker", "--build", "--sanitizer")),
        stress=Action("walkfuzz.targets.stress:stress_minivm",
                      ("--walker", "--mode", "--source", "--workload", "--baseline",
                       "--walk-budget", "--walks", "--stop-on-first", "--tx")),
        replay=Action("walkfuzz.targets.minivm.replay:replay_minivm",
                      ("--walker", "--json", "--sanitizer"))),
    Target(
        "hotspot", "AsyncGetCallTrace in a real JVM (--jdk 17, 25 or a JDK path)",
        fuzz=Action("walkfuzz.targets.fuzz:fuzz_hotspot",
                    ("--harness", "--corpus", "--jdk", "--seed", "--threads", "--control",
                     "--corpus-only", "--batch", "--interval")),
        stress=Action("walkfuzz.targets.stress:stress_hotspot",
                      ("--jdk", "--no-debug-nonsafepoints")),
        replay=Action("walkfuzz.targets.replay:replay_hotspot")),
    Target(
        "native", "real unwinders on real native stacks, one per run (--unwinder "
        f"{'|'.join(unwinder_names())}; default {DEFAULT_UNWINDER})",
        # each unwinder's own extension in its own worker processes: the generator engine
        fuzz=Action("walkfuzz.targets.native.fuzz:fuzz",
                    ("--unwinder", "--engine", "--seed", "--walk-budget", *CAMPAIGN_FLAGS)),
        stress=Action("walkfuzz.targets.native.stress:stress",
                      ("--unwinder", "--mode", "--baseline", "--walk-budget", "--max-depth")),
        replay=Action("walkfuzz.targets.native.replay:replay", ("--unwinder",))),
    Target(
        "libunwind", "--target native --unwinder libunwind (Debian's libunwind), by its first "
        "name; its fuzz runs a libFuzzer campaign by default",
        # its harness loads walkfuzz._unwind: no --walker, no --build flavour
        fuzz=Action("walkfuzz.targets.native.fuzz:fuzz",
                    (*CAMPAIGN_FLAGS, "--engine", "--seed", "--walk-budget", "--sanitizer")),
        stress=Action("walkfuzz.targets.native.stress:stress",
                      ("--mode", "--baseline", "--walk-budget", "--max-depth")),
        replay=Action("walkfuzz.targets.native.replay:replay")),
)


def target_names() -> tuple[str, ...]:
    return tuple(t.name for t in TARGETS)


def lookup(name: str) -> Target:
    """The table's entry for `name`; UnknownTargetError naming it and the known targets."""
    for target in TARGETS:
        if target.name == name:
            return target
    raise UnknownTargetError(name, target_names())


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


UNWINDER_HELP = ("--target native: the unwinder that walks, one of "
                 f"{', '.join(unwinder_names())} (default {DEFAULT_UNWINDER}); each runs in "
                 "worker processes of its own. `all` or a comma list: the differential oracle, "
                 "every one of them on the same inputs (docs/native-unwinders.md)")


def target_help(default: str | None = DEFAULT_TARGET) -> str:
    """--target's help: every target of the table with its one line."""
    return "; ".join(f"{t.name}{' (default)' if t.name == default else ''}: {t.about}"
                     for t in TARGETS)


def runner_for(action: str, args: argparse.Namespace) -> Callable[..., int]:
    """The function that runs `walkfuzz ACTION --target T`, once no flag T does not take was
    given (UserError naming the first such flag)."""
    target = lookup(args.target)
    step = target.action(action)
    refuse_inapplicable(args, target.name, TARGET_FLAGS[action], step.flags)
    return step.runner()


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
    return harness if target == DEFAULT_TARGET else f"{target}_{harness}"


def _script_name(target: str, harness: str) -> str:
    return f"{script_stem(target, harness)}.py"


def list_harnesses(target: str) -> list[str]:
    """Harness names available for `target`, from the scripts in harnesses/."""
    names = []
    for script in sorted(HARNESS_DIR.glob("*.py")):
        stem = script.stem
        if target == DEFAULT_TARGET:
            others = tuple(f"{t}_" for t in target_names())
            if not stem.startswith(others) and not stem.startswith("_"):
                names.append(stem)
        elif stem.startswith(f"{target}_"):
            names.append(stem.removeprefix(f"{target}_"))
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
