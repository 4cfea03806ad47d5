"""The flags many commands share, declared here once each with one help text: `--target`,
`--walker`, `--unwinder`, `--harness`, `--out`, `--json`. What a command's flag means there
besides (what --out defaults to, what --walker walks) is a parameter, not a declaration of
its own. A module whose name starts with "_" is no command, so the CLI does not load this one
as one.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from walkfuzz.targets.native.unwinders import DEFAULT as DEFAULT_UNWINDER
from walkfuzz.targets.native.unwinders import unwinder_help
from walkfuzz.targets.table import DEFAULT_TARGET, target_arg, target_help, unwinder_arg

UNWINDER_HELP = (f"--target native: {unwinder_help(default=DEFAULT_UNWINDER)}; each runs in "
                 "worker processes of its own. `all` or a comma list: the differential oracle, "
                 "every one of them on the same inputs (docs/native-unwinders.md)")


def add_target(parser: argparse.ArgumentParser, *, of: str = "",
               default: str | None = DEFAULT_TARGET) -> None:
    """--target; `of`: what it is the target of (FILE), `default` None: the command finds it
    out from its inputs, as `of` says."""
    parser.add_argument("--target", type=target_arg, default=default,
                        help=f"target of {of}; {target_help(default)}" if of
                        else target_help(default))


def add_walker(parser: argparse.ArgumentParser, role: str, *, repeatable: bool = False) -> None:
    """--walker, a minivm walker library; `role`: what the command does with it and, where
    it has one, its default."""
    text = f"minivm: a walker library {role}" + (" (repeatable)" if repeatable else "")
    if repeatable:
        parser.add_argument("--walker", action="append", default=[], metavar="PATH.so",
                            help=text)
    else:
        parser.add_argument("--walker", metavar="PATH.so", help=text)


def add_unwinder(parser: argparse.ArgumentParser) -> None:
    """--unwinder of the native target: one unwinder, `all` or a comma list."""
    parser.add_argument("--unwinder", type=unwinder_arg, metavar="NAME", help=UNWINDER_HELP)


def add_harness(parser: argparse.ArgumentParser, role: str) -> None:
    """--harness; `role`: which harness it names there and when it may be left out."""
    parser.add_argument("--harness", help=f"harness {role}")


def add_out(parser: argparse.ArgumentParser, default: str, *,
            what: str = "output directory") -> None:
    """--out, a folder the command writes; `default`: where it writes without one (the one
    rule of walkfuzz.targets.table.default_out, said for this command)."""
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help=f"{what} (default {default}; created if missing)")


def add_json(parser: argparse.ArgumentParser, what: str, *, to_file: bool = False,
             target: str = "") -> None:
    """--json: `what` as JSON, printed, or `to_file` written to the FILE it names; `target`:
    the one target it applies to."""
    text = f"{'write' if to_file else 'print'} {what} as JSON"
    text = f"{target}: {text}" if target else text
    if to_file:
        parser.add_argument("--json", type=Path, metavar="FILE", help=text)
    else:
        parser.add_argument("--json", action="store_true", help=text)
