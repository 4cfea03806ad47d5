"""The `walkfuzz` command line: version, and one clear line for bad input, for every command."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from walkfuzz import __version__, cli
from walkfuzz.core.duration import DurationType
from walkfuzz.core.errors import UserError
from walkfuzz.targets.table import target_names

MISSING = "/nonexistent/walkfuzz-test-missing"
BAD_DURATION = "5 fortnights"
UNKNOWN_TARGET = "no-such-target"
USAGE_ERROR = UserError.exit_status
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
            takes_value = action.nargs not in (0, "*", "...", "?")  # not a switch or optional
            if is_path and action.dest != "out" and takes_value:
                found.append((command, action.option_strings[0] if action.option_strings
                              else metavar))
    return found


def options_where(test: object) -> list[tuple[tuple[str, ...], str]]:
    """(command, option) for every option whose argparse action passes `test`."""
    return [(command, action.option_strings[0]) for command, parser in COMMANDS.items()
            for action in parser._actions if action.option_strings and test(action)]


DURATION_OPTIONS = options_where(lambda a: isinstance(a.type, DurationType))
TARGET_OPTIONS = options_where(lambda a: a.option_strings == ["--target"])


def argv_with(command: tuple[str, ...], tested: str, value: str) -> list[str]:
    """The command with `tested` set to `value` and every other required argument filled in:
    its first choice if it has choices, else a missing path."""
    parser = COMMANDS[command]
    argv = list(command)
    for action in parser._actions:
        metavar = str(action.metavar or action.dest).upper()
        name = action.option_strings[0] if action.option_strings else metavar
        if name != tested and not action.required:
            continue
        given = value if name == tested else (
            str(next(iter(action.choices))) if action.choices else MISSING)
        argv += [name, given] if action.option_strings else [given]
    return argv


def argv_with_missing(command: tuple[str, ...], tested: str) -> list[str]:
    return argv_with(command, tested, MISSING)


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


def test_a_command_imports_its_own_module_and_help_lists_every_command() -> None:
    """`walkfuzz merge ...` imports no other command's module (each imports what it runs);
    `walkfuzz --help` still names every command."""
    others = [f"walkfuzz.commands.{m}" for m in cli.command_modules() if m != "merge"]
    probe = ("import sys; from walkfuzz import cli; cli.build_parser(['merge']); "
             f"print(sorted(set({others!r}) & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout == "[]\n", done.stdout
    helped = subprocess.run([sys.executable, "-m", "walkfuzz.cli", "--help"], capture_output=True,
                            text=True, timeout=60, check=False)
    assert helped.returncode == 0, helped.stderr
    listed = {line.split()[0] for line in helped.stdout.splitlines() if line.startswith("    ")}
    assert {name for (name, *_) in COMMANDS} <= listed, helped.stdout


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


def test_commands_with_durations_and_targets_are_found() -> None:
    assert {c for c, _ in DURATION_OPTIONS} >= {("fuzz",), ("stress",), ("minimize",),
                                                ("triage",)}
    assert {c for c, _ in TARGET_OPTIONS} >= {("fuzz",), ("stress",), ("replay",)}


@pytest.mark.parametrize(("command", "option"), DURATION_OPTIONS,
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else v)
def test_bad_duration_is_one_line_naming_it(capsys: pytest.CaptureFixture[str],
                                            command: tuple[str, ...], option: str) -> None:
    status, lines = error_lines(capsys, argv_with(command, option, BAD_DURATION))
    assert status == USAGE_ERROR
    assert len(lines) == 1, lines
    assert option in lines[0] and repr(BAD_DURATION) in lines[0]


@pytest.mark.parametrize(("command", "option"), TARGET_OPTIONS,
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else v)
def test_unknown_target_is_named_with_the_known_ones(capsys: pytest.CaptureFixture[str],
                                                     command: tuple[str, ...],
                                                     option: str) -> None:
    status, lines = error_lines(capsys, argv_with(command, option, UNKNOWN_TARGET))
    assert status == USAGE_ERROR
    assert len(lines) == 1, lines
    assert repr(UNKNOWN_TARGET) in lines[0]
    assert f"known targets: {', '.join(target_names())}" in lines[0]
