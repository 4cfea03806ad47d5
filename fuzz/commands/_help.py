"""The closing part of every command's --help, the same for all: the command's examples, and,
where it applies, the one duration grammar and the one output-folder rule.

Each command module names its examples in `EXAMPLES` (command line, what it does); walkfuzz.cli
gives every sub-parser its epilog from them (`finish`). A module whose name starts with "_"
is no command, so the CLI does not load this one as one.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence

from walkfuzz.core.duration import DURATION_GRAMMAR, DurationType
from walkfuzz.targets.table import OUTPUT_RULE

Example = tuple[str, str]  # (the command line, what it does)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, but a paragraph with an indented line (examples) is kept as
    written; every other paragraph is filled to the terminal as argparse fills it."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in text.split("\n\n"):
            if any(line.startswith("  ") for line in paragraph.splitlines()):
                paragraphs.append(textwrap.indent(paragraph, indent))
            else:
                paragraphs.append(super()._fill_text(paragraph, width, indent))
        return "\n\n".join(paragraphs)


def _takes(parser: argparse.ArgumentParser, test: type) -> bool:
    return any(isinstance(a.type, test) for a in parser._actions)


def _writes_out(parser: argparse.ArgumentParser) -> bool:
    return any("--out" in a.option_strings for a in parser._actions)


def epilog(parser: argparse.ArgumentParser, examples: Sequence[Example]) -> str:
    """The examples, then the grammar of durations (if the command takes one) and the rule of
    the output folder (if it writes one)."""
    lines = [f"  {line}\n      {what}" for line, what in examples]
    parts = ["examples:\n" + "\n".join(lines)]
    if _takes(parser, DurationType):
        parts.append(DURATION_GRAMMAR)
    if _writes_out(parser):
        parts.append(OUTPUT_RULE)
    return "\n\n".join(parts)


def finish(parser: argparse.ArgumentParser, examples: Sequence[Example]) -> None:
    """Give `parser` its epilog and the formatter that keeps the examples' lines."""
    if not examples:
        raise ValueError(f"{parser.prog}: a command's --help needs at least one example")
    parser.epilog = epilog(parser, examples)
    parser.formatter_class = HelpFormatter
