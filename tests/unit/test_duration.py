"""The one duration parser (walkfuzz.core.duration): units, the caller's default unit for a bare
number, and a typed error that repeats the bad text, also through argparse."""

from __future__ import annotations

import argparse

import pytest

from walkfuzz.core.duration import Nanoseconds, Seconds, parse_ns, parse_seconds
from walkfuzz.core.errors import DurationError, UserError


@pytest.mark.parametrize(("text", "unit", "ns"), [
    ("100us", "us", 100_000), ("10 µs", "us", 10_000), ("2.5s", "s", 2_500_000_000),
    ("5m", "s", 300_000_000_000), ("2min", "s", 120_000_000_000),
    ("1.5h", "s", 5_400_000_000_000), ("7", "us", 7_000), ("7", "ms", 7_000_000),
    ("3ms", "s", 3_000_000), ("250ns", "s", 250), (".5s", "ms", 500_000_000),
    (" 90 ", "s", 90_000_000_000)])
def test_durations_in_every_unit(text: str, unit: str, ns: int) -> None:
    assert parse_ns(text, unit) == ns


def test_seconds() -> None:
    assert [parse_seconds(t) for t in ("90", "90s", "1.5m", "2h")] == [90, 90, 90, 7200]
    assert parse_seconds("500", "ms") == 0.5


@pytest.mark.parametrize("text", ["", "fast", "10 parsecs", "5x", "-1s", "1e3", "s", "1..5s"])
def test_bad_text_is_a_typed_error_repeating_it(text: str) -> None:
    with pytest.raises(DurationError, match="is not a duration") as err:
        parse_ns(text, "us", what="--interval")
    assert f"--interval {text!r}" in str(err.value)
    assert isinstance(err.value, UserError) and err.value.text == text


@pytest.mark.parametrize("text", ["0", "0us", "0.0s", "0.1ns"])
def test_zero_is_refused_unless_the_caller_allows_it(text: str) -> None:
    with pytest.raises(DurationError, match=f"{text!r} is not positive"):
        parse_ns(text, "s")
    assert parse_ns(text, "s", zero_ok=True) == 0


def test_an_upper_limit_is_named() -> None:
    assert parse_ns("10m", "s", at_most="600s") == 600_000_000_000
    with pytest.raises(DurationError, match="'601' is more than 600s"):
        parse_ns("601", "s", at_most="600s")


def test_the_message_names_the_default_unit() -> None:
    with pytest.raises(DurationError, match=r"a bare number is in ms"):
        parse_ns("soon", "ms")


def test_argparse_types_give_the_parsers_error() -> None:
    assert Nanoseconds("us")("100") == 100_000
    assert Seconds()("2m") == 120.0
    assert Seconds(zero_ok=True)("0") == 0.0
    with pytest.raises(argparse.ArgumentTypeError, match="'5x' is not a duration"):
        Seconds()("5x")
    with pytest.raises(ValueError, match="'fortnights'"):
        Nanoseconds("fortnights")
