"""The `walkfuzz` command: discovers subcommands in walkfuzz.commands and runs one."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from walkfuzz import __version__, commands
from walkfuzz.commands._help import finish
from walkfuzz.core.errors import UserError
from walkfuzz.core.exit_status import BAD_INPUT, INTERRUPTED, sigterm_as_interrupt


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and the exit status of bad input."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(UserError.exit_status,
                  f"walkfuzz: error: {message} (see '{self.prog} --help')\n")


def command_modules() -> list[str]:
    """The modules of walkfuzz.commands that are a subcommand each (`build_walker` is
    `walkfuzz build-walker`)."""
    return sorted(info.name for info in pkgutil.iter_modules(commands.__path__)
                  if not info.name.startswith("_"))  # a helper of the commands, not one


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or, when the command line `argv` starts with one, of
    that one alone: each command's module imports what it runs (most of walkfuzz, for some),
    and a command should start paying only for its own. --help, --version and a misspelt
    command get every subcommand."""
    parser = _Parser(prog="walkfuzz", description="Fuzz and stress-test stack walkers.")
    parser.add_argument("--version", action="version", version=f"walkfuzz {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    modules = command_modules()
    by_command = {name.replace("_", "-"): name for name in modules}
    named = by_command.get(argv[0]) if argv else None
    for module_name in [named] if named is not None else modules:
        module = importlib.import_module(f"walkfuzz.commands.{module_name}")
        before = set(sub.choices)
        module.register(sub)
        for name in set(sub.choices) - before:
            finish(sub.choices[name], module.EXAMPLES)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return BAD_INPUT
    try:
        with sigterm_as_interrupt():
            status: int = args.func(args)
    except UserError as err:
        print(f"walkfuzz {args.command}: error: {err}", file=sys.stderr)
        return err.exit_status
    except KeyboardInterrupt:
        # A command that keeps what it found on an interrupt returns INTERRUPTED itself; one
        # that had nothing to keep yet ends here.
        print(f"walkfuzz {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    return status


if __name__ == "__main__":
    sys.exit(main())
