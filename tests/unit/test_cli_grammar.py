"""One grammar for the command line: every flag that takes a time takes every duration form
(`10s`, `1h`, `5min`, `100us`, a bare number in the unit its help names), and every command's
--help shows examples, the duration grammar where it takes a duration and the output-folder
rule where it writes a folder."""

from __future__ import annotations

import argparse
import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.test_cli import COMMANDS, DURATION_OPTIONS, argv_with
from walkfuzz import cli
from walkfuzz.core.duration import NS_PER_S, DurationType, Nanoseconds, parse_ns
from walkfuzz.core.errors import DurationError

WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
FORMS = ("10s", "1h", "5min", "100us", "2.5ms", "1.5m", "90")
UNIT_WORDS = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}
# An option named like a time; each must take the one grammar (a path such as regress's
# --baseline FILE is no time).
TIME_NAME = re.compile(r"time|duration|interval|budget|baseline|seconds|timeout|hang|-ms$|-us$")
IDS = {"ids": lambda v: " ".join(v) if isinstance(v, tuple) else v}


def option(command: tuple[str, ...], name: str) -> argparse.Action:
    return next(a for a in COMMANDS[command]._actions if name in a.option_strings)


@functools.cache  # one process per command's help, however many tests read it
def help_of(command: tuple[str, ...]) -> str:
    done = subprocess.run([str(WALKFUZZ), *command, "--help"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("command", "name"), DURATION_OPTIONS, **IDS)
def test_every_duration_flag_takes_every_form(command: tuple[str, ...], name: str,
                                              form: str) -> None:
    kind = option(command, name).type
    assert isinstance(kind, DurationType)
    try:
        want_ns = parse_ns(form, kind.default_unit, zero_ok=kind.zero_ok, at_most=kind.at_most)
    except DurationError as err:  # above the flag's limit: refused in one line naming it
        assert "is more than" in str(err)
        return
    args = cli.build_parser().parse_args(argv_with(command, name, form))
    got = getattr(args, option(command, name).dest)
    assert got == (want_ns if isinstance(kind, Nanoseconds) else want_ns / NS_PER_S)


def test_duration_forms_mean_what_they_say() -> None:
    assert parse_ns("5min", "s") == parse_ns("5m", "s") == parse_ns("300", "s")
    assert parse_ns("1h", "us") == parse_ns("3600s", "us")
    assert parse_ns("100", "us") == parse_ns("100us", "s") == parse_ns("0.1ms", "s")


@pytest.mark.parametrize(("command", "name"), DURATION_OPTIONS, **IDS)
def test_a_duration_flag_s_help_names_the_unit_of_a_bare_number(command: tuple[str, ...],
                                                                 name: str) -> None:
    action = option(command, name)
    assert isinstance(action.type, DurationType)
    unit = UNIT_WORDS[action.type.default_unit]
    assert f"a bare number is {unit}" in str(action.help), action.help


def test_every_option_named_like_a_time_takes_the_duration_grammar() -> None:
    named = [(c, a.option_strings[0]) for c, p in COMMANDS.items() for a in p._actions
             if a.option_strings and TIME_NAME.search(a.option_strings[-1])
             and a.type is not Path and a.nargs != 0]
    assert named and set(named) <= set(DURATION_OPTIONS), set(named) - set(DURATION_OPTIONS)


@pytest.mark.parametrize("command", sorted(COMMANDS), ids=" ".join)
def test_every_command_s_help_has_examples_and_its_rules(command: tuple[str, ...]) -> None:
    text = help_of(command)
    examples = text.split("examples:\n", 1)[1]
    assert examples.startswith(f"  walkfuzz {' '.join(command)}"), text
    takes_duration = any(c == command for c, _ in DURATION_OPTIONS)
    assert ("durations: a number and a unit" in text) == takes_duration
    assert "a bare number is in the unit its flag's help names" in text or not takes_duration
    writes_out = any("--out" in a.option_strings for a in COMMANDS[command]._actions)
    assert ("output: --out DIR" in text) == writes_out
    assert "reports/COMMAND-LABEL" in text or not writes_out


def test_every_example_in_help_parses() -> None:
    """The examples are commands a user can paste: each parses with the current flags."""
    parser = cli.build_parser()
    for command in COMMANDS:
        text = help_of(command).split("examples:\n", 1)[1].split("\n\n", 1)[0]
        for line in text.splitlines():
            if line.startswith("  walkfuzz "):
                parser.parse_args(line.split()[1:])  # a usage error exits: the test fails


@pytest.mark.parametrize("command", ["fuzz", "stress"])
def test_an_interval_below_what_hotspot_takes_is_named_as_given(command: str,
                                                                tmp_path: Path) -> None:
    done = subprocess.run([str(WALKFUZZ), command, "--target", "hotspot", "--interval", "500ns",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=60,
                          check=False)
    lines = done.stderr.splitlines()
    assert done.returncode == 2
    assert len(lines) == 1 and "--interval 500ns is below 1us" in lines[0], lines
