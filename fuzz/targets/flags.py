"""Which flags of a shared command (`walkfuzz fuzz`, `walkfuzz stress`) apply to which target.

A command lists its target-specific flags as {flag as typed: argparse dest} and, per target,
the flags that mean something there. A flag given for a target it does not apply to is
refused with one line naming both, instead of being silently ignored. "Given" means set to
something other than its not-given default (None, False or an empty list), so every flag in
such a table has one of those as its argparse default.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection, Mapping

from walkfuzz.core.errors import UserError


def given(value: object) -> bool:
    return value is not None and value is not False and value != []


def refuse_inapplicable(args: argparse.Namespace, target: str, flags: Mapping[str, str],
                        applicable: Collection[str]) -> None:
    """UserError naming the first flag in `flags` that was given but is not `applicable`."""
    for flag, dest in flags.items():
        if flag not in applicable and given(getattr(args, dest, None)):
            raise UserError(f"{flag} does not apply to target {target!r} "
                            f"(it takes: {', '.join(sorted(applicable)) or 'none of these'})")
