"""Durations on the command line, for every flag that takes a time: one parser.

    "5s", "100us", "10 µs", "250ms", "2m", "1.5h", or a bare number in the unit the flag
    names as its default ("--interval 100" is 100 us, "--time 90" is 90 s)

Units: ns, us (µs), ms, s, m (min), h. A bad text is a DurationError repeating it. The
argparse `type=` helpers (`Nanoseconds`, `Seconds`) turn that error into argparse's, so a
bad value is the parser's one usage line (exit status 2), never a traceback.
"""

from __future__ import annotations

import argparse
import re

from walkfuzz.core.errors import DurationError

UNITS_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
            "m": 60_000_000_000, "min": 60_000_000_000, "h": 3_600_000_000_000}
NS_PER_S = 1_000_000_000
_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([a-zµ]*)\s*$")
EXAMPLES = "100us, 2.5s, 5m or 1.5h"
# The grammar as every command's --help states it (walkfuzz.commands._help).
DURATION_GRAMMAR = ("durations: a number and a unit, one of ns, us (µs), ms, s, m (min), h: "
                    "100us, 2.5s, 5min, 1.5h; a bare number is in the unit its flag's help names "
                    "(--interval: microseconds; --time, --duration: seconds).")


def format_ns(ns: float) -> str:
    """`ns` nanoseconds in the largest unit that keeps it at least 1 (`100us`, `2.5s`), as
    parse_ns reads it back."""
    for unit, size in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= size:
            return f"{ns / size:g}{unit}"
    return f"{ns:g}ns"


def parse_ns(text: str, default_unit: str, *, what: str | None = None,
             zero_ok: bool = False, at_most: str | None = None) -> int:
    """`text` in nanoseconds; a bare number is in `default_unit`. Positive unless `zero_ok`
    (a phase that may be left out), at most the duration `at_most` if given. `what` names the
    value in the message."""
    if default_unit not in UNITS_NS:  # a caller's mistake, not the user's
        raise ValueError(f"default unit {default_unit!r} is not one of {', '.join(UNITS_NS)}")
    match = _DURATION.match(text)
    unit = (match.group(2) if match else "") or default_unit
    if match is None or unit not in UNITS_NS:
        raise DurationError(text, f"is not a duration like {EXAMPLES} (a bare number is in "
                            f"{default_unit})", what)
    ns = round(float(match.group(1)) * UNITS_NS[unit])
    if ns == 0 and not zero_ok:
        raise DurationError(text, "is not positive", what)
    if at_most is not None and ns > parse_ns(at_most, default_unit):
        raise DurationError(text, f"is more than {at_most}", what)
    return ns


def parse_seconds(text: str, default_unit: str = "s", *, what: str | None = None,
                  zero_ok: bool = False, at_most: str | None = None) -> float:
    """`text` in seconds; as parse_ns."""
    return parse_ns(text, default_unit, what=what, zero_ok=zero_ok, at_most=at_most) / NS_PER_S


class DurationType:
    """An argparse `type=` for a duration flag: a bare number is in `default_unit`."""

    def __init__(self, default_unit: str, *, zero_ok: bool = False,
                 at_most: str | None = None) -> None:
        # a bad unit or limit fails when the parser is built, not in a user's run
        parse_ns(at_most or "1", default_unit)
        self.default_unit = default_unit
        self.zero_ok = zero_ok
        self.at_most = at_most

    def ns(self, text: str) -> int:
        try:
            return parse_ns(text, self.default_unit, zero_ok=self.zero_ok, at_most=self.at_most)
        except DurationError as err:  # argparse prefixes the flag: "argument --time: '5x' ..."
            raise argparse.ArgumentTypeError(str(err)) from None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.default_unit!r})"


class Nanoseconds(DurationType):
    """The duration in nanoseconds (an int)."""

    def __call__(self, text: str) -> int:
        return self.ns(text)


class Seconds(DurationType):
    """The duration in seconds (a float)."""

    def __init__(self, default_unit: str = "s", *, zero_ok: bool = False,
                 at_most: str | None = None) -> None:
        super().__init__(default_unit, zero_ok=zero_ok, at_most=at_most)

    def __call__(self, text: str) -> float:
        return self.ns(text) / NS_PER_S
