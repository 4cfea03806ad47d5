"""The `walkfuzz` command line: version, and one clear line for bad input, for every command."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from walkfuzz import __version__, cli

MISSING = "/nonexistent/walkfuzz-test-missing"
PATH_METAVAR = re.compile(r"PATH|FILE|DIR|CORPUS|CASE|\.so$")


def subcommands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> dict[
        tuple[str, ...], argparse.ArgumentParser]:
    """Every leaf command, as its argv prefix -> its parser (nested ACTIONs included)."""
    leaves: dict[tuple[str, ...], argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                leaves.update(subcommands(child, (*prefix, name)))
    if not leaves and prefix:
        leaves[prefix] = parser
    return leaves


COMMANDS = subcommands(cli.build_parser())


def path_arguments() -> list[tuple[tuple[str, ...], str]]:
    """(command, option or positional metavar) for every argument that names an input path."""
    found = []
    for command, parser in COMMANDS.items():
        for action in parser._actions:
            metavar = str(action.metavar or action.dest).upper()
            is_path = action.type is Path or bool(PATH_METAVAR.search(metavar))
            if is_path and action.dest != "out" and action.nargs not in ("*", "...", "?"):
                found.append((command, action.option_strings[0] if action.option_strings
                              else metavar))
    return found


def argv_with_missing(command: tuple[str, ...], tested: str) -> list[str]:
    """The command with `tested` set to a missing path and every other required argument
    filled in: its first choice if it has choices, else the same missing path."""
    parser = COMMANDS[command]
    argv = list(command)
    for action in parser._actions:
        metavar = str(action.metavar or action.dest).upper()
        name = action.option_strings[0] if action.option_strings else metavar
        if name != tested and not action.required:
            continue
        value = str(next(iter(action.choices))) if action.choices and name != tested else MISSING
        argv += [name, value] if action.option_strings else [value]
    return argv


def error_lines(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, list[str]]:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    return int(exit_info.value.code or 0), capsys.readouterr().err.splitlines()


def test_version_is_printed_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"walkfuzz {__version__}\n"


def test_console_script_reports_the_version() -> None:
    script = Path(sys.executable).with_name("walkfuzz")
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, f"walkfuzz {__version__}\n")


def test_every_command_is_discovered() -> None:
    assert ("doctor",) in COMMANDS


def test_unknown_top_level_flag_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, lines = error_lines(capsys, ["--no-such-flag"])
    assert status == 2
    assert len(lines) == 1 and "--no-such-flag" in lines[0]


@pytest.mark.parametrize("command", sorted(COMMANDS), ids=" ".join)
def test_wrong_flag_is_one_line_and_nonzero(capsys: pytest.CaptureFixture[str],
                                            command: tuple[str, ...]) -> None:
    status, lines = error_lines(capsys, [*command, "--no-such-flag"])
    assert status != 0
    assert len(lines) == 1, lines
    assert lines[0].startswith("walkfuzz")


@pytest.mark.parametrize(("command", "argument"), path_arguments(),
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else v)
def test_missing_path_is_one_line_naming_it(command: tuple[str, ...], argument: str) -> None:
    # A child process with a timeout: a command that does not check its path would start work.
    done = subprocess.run([sys.executable, "-m", "walkfuzz.cli",
                           *argv_with_missing(command, argument)],
                          capture_output=True, text=True, timeout=120, check=False)
    lines = done.stderr.splitlines()
    assert done.returncode != 0
    assert len(lines) == 1, lines
    assert MISSING in lines[0]
