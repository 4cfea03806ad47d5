"""The flags many commands share (walkfuzz.commands._flags) read the same in every command:
one help text each, the command's own detail inside it, one metavar."""

from __future__ import annotations

import argparse

import pytest

from walkfuzz import cli

SHARED = {  # flag -> (how its help starts, how it ends, its metavars)
    "--walker": ("minivm: a walker library ", "", {"PATH.so"}),
    "--out": ("", "; created if missing)", {"DIR"}),
    "--harness": ("harness ", "", {None}),
    "--unwinder": ("--target native: the unwinder that walks, one of ", "", {"NAME"}),
    "--json": ("", " as JSON", {None, "FILE"}),  # printed, or written to a file
}


def leaves(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found += leaves(child) or [child]
    return found


def declarations(flag: str) -> list[argparse.Action]:
    return [action for parser in leaves(cli.build_parser()) for action in parser._actions
            if flag in action.option_strings]


@pytest.mark.parametrize("flag", sorted(SHARED))
def test_a_shared_flag_reads_the_same_in_every_command(flag: str) -> None:
    starts, ends, metavars = SHARED[flag]
    actions = declarations(flag)
    assert len(actions) >= 2, f"{flag} is shared by fewer than two commands"
    for action in actions:
        text = str(action.help)
        assert text.startswith(starts) and text.endswith(ends), text
        assert action.metavar in metavars


def test_every_command_s_target_lists_every_target_and_its_default() -> None:
    from walkfuzz.targets.table import DEFAULT_TARGET, target_names

    actions = declarations("--target")
    assert len(actions) >= 4
    for action in actions:
        assert all(f"{name}" in str(action.help) for name in target_names())
        assert action.default in (DEFAULT_TARGET, None)
        assert (f"{DEFAULT_TARGET} (default)" in str(action.help)) == (action.default is not None)
