"""Typed errors. Every message names the bad value, so one line is enough to act on.

A `UserError` ends a CLI command with one line on stderr and a non-zero exit status; anything
else escaping a command is a bug in walkfuzz and keeps its traceback.
"""

from __future__ import annotations

from walkfuzz.core.exit_status import BAD_INPUT, MISSING_TOOL


class WalkfuzzError(Exception):
    """Base of every error walkfuzz raises on purpose."""


class UserError(WalkfuzzError):
    """Bad input from the user: a flag, a path, a file. Exit status 2."""

    exit_status = BAD_INPUT


class CaseFormatError(UserError):
    """A case file that does not decode: truncated, garbage, wrong version, empty."""

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"{source}: {problem}")
        self.source = source
        self.problem = problem


class MissingDependencyError(UserError):
    """A tool or library the command needs is not installed; the message names it."""

    exit_status = MISSING_TOOL


class WalkerLibraryError(UserError):
    """A --walker library that cannot be loaded or lacks API symbols (named in the message)."""


class DurationError(UserError):
    """A duration that does not parse ("5x", "-1s", "fast") or is out of range; the message
    repeats the text as given."""

    def __init__(self, text: str, problem: str, what: str | None = None) -> None:
        super().__init__(f"{what} {text!r} {problem}" if what else f"{text!r} {problem}")
        self.text = text


class UnknownTargetError(UserError):
    """A --target that is not in the target table (walkfuzz.targets.table); the message names it and
    lists the known ones."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        super().__init__(f"unknown target {name!r}; known targets: {', '.join(known)}")
        self.name = name


class FindingCrash(WalkfuzzError):
    """A finding of a harness run as a standalone fuzzer (ClusterFuzzLite, OSS-Fuzz), raised out
    of the input's call: atheris reports it as an uncaught exception and libFuzzer writes the
    input as its crash artifact, which is how those engines learn of a finding. The message
    names the finding's kind, location and signature, the part of the report they show."""
