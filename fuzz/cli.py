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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="walkfuzz", description="Fuzz and stress-test stack walkers.")
    parser.add_argument("--version", action="version", version=f"walkfuzz {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):  # a helper of the commands, not one
            continue
        module = importlib.import_module(f"walkfuzz.commands.{info.name}")
        before = set(sub.choices)
        module.register(sub)
        for name in set(sub.choices) - before:
            finish(sub.choices[name], module.EXAMPLES)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
