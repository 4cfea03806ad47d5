"""Progress of a long run, the one way every command and target shows it: a status line, kept
in place on a terminal and rewritten as the run goes on, appended as a plain log line
otherwise (every `every` seconds, and sooner when the line's key, e.g. the distinct findings
count, changes: at most KEY_LINES such lines per `every`, so a key that changes all the time
still leaves a log one line per `every / KEY_LINES`); lines that stay (a warning, a finding,
a restart) print above it; and at the end the run prints its one summary line. Every target
keys its line on what is new to a reader (a distinct finding, a first fault), never on a
count of hits, so every target's log gets the same cadence.

On a terminal the line is rich's `Live` display: it cuts the line to the terminal's width (a
line that wraps cannot be rewritten in place with a carriage return), prints what the run
says meanwhile above it instead of through it, and restores the cursor however the run ends.

A run in a child process reports its counts with `report_status` (a `STATUS_PREFIX` line on
its stderr, every STATUS_EVERY seconds); the parent runs it with walkfuzz.engine.child's
`run_child`, which hands each report (`status_of`) to a callback and returns the child's
output without those lines.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from types import TracebackType
from typing import Any, TextIO

from rich.console import Console
from rich.live import Live
from rich.text import Text

LOG_EVERY = 10.0  # seconds between appended lines, unless WALKFUZZ_PROGRESS_EVERY says
EVERY_VARIABLE = "WALKFUZZ_PROGRESS_EVERY"
REDRAW_EVERY = 0.2  # seconds between redraws of the line in place
KEY_LINES = 10  # lines a changing key may add to a log per `every`
STATUS_EVERY = 0.5  # seconds between a child's status reports
STATUS_PREFIX = "walkfuzz-status "


def human(value: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.1f}{unit}"
    return f"{value:.0f}"


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes:02}:{secs:02}"


def log_every() -> float:
    """Seconds between appended progress lines: WALKFUZZ_PROGRESS_EVERY (a number of seconds)
    or LOG_EVERY; a value that is no positive number is ignored."""
    try:
        every = float(os.environ.get(EVERY_VARIABLE, LOG_EVERY))
    except ValueError:
        return LOG_EVERY
    return every if every > 0 else LOG_EVERY


def firsts(*counts: int) -> tuple[bool, ...]:
    """A key for counts of hits, which grow all the time: it changes when one of them first
    leaves zero (the first fault, the first hang), so a log gets a line then, not one per
    hit."""
    return tuple(count > 0 for count in counts)


class Progress:
    """One run's status line; a context manager that closes it however the run ends."""

    def __init__(self, stream: TextIO | None = None, live: bool | None = None,
                 every: float | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.every = log_every() if every is None else every
        self._last_log = -self.every
        self._last_draw = -REDRAW_EVERY
        self._last_key: object = None
        self._key_changed = False  # since the last appended line
        self._display: Live | None = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def update(self, elapsed: float, line: str, key: object = None) -> None:
        """Show `line`; `key` changing (e.g. the distinct findings count) brings a log line
        forward, at most KEY_LINES times per `every`."""
        text = f"[{clock(elapsed)}] {line}"
        self._key_changed = self._key_changed or key != self._last_key
        since = elapsed - self._last_log
        if self.live:
            if key != self._last_key or elapsed - self._last_draw >= REDRAW_EVERY:
                self._draw(text)
                self._last_draw = elapsed
        elif since >= self.every or (self._key_changed and since >= self.every / KEY_LINES):
            self.stream.write(text + "\n")
            self.stream.flush()
            self._last_log = elapsed
            self._key_changed = False
        self._last_key = key

    def _draw(self, text: str) -> None:
        line = Text(text, no_wrap=True, overflow="ellipsis")
        if self._display is None:
            console = Console(file=self.stream, force_terminal=True, highlight=False,
                              markup=False, emoji=False)
            # what the run writes to stderr meanwhile goes above the line (rich's proxy);
            # stdout is left alone: a run prints its results there, after close()
            self._display = Live(line, console=console, auto_refresh=False,
                                 redirect_stdout=False,
                                 redirect_stderr=self.stream is sys.stderr)
            self._display.start()
        self._display.update(line, refresh=True)

    def message(self, text: str) -> None:
        """A line that stays (a warning, a finding, a restart)."""
        if self._display is not None:
            self._display.console.print(Text(text), soft_wrap=True)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def close(self) -> None:
        """End the status line (the last state stays on screen); idempotent."""
        if self._display is not None:
            self._display.stop()
            self._display = None
        self.stream.flush()


def report_status(counts: Mapping[str, object], stream: TextIO | None = None) -> None:
    """In a child process: one status report of the run's counts so far, for `run_child`."""
    out = stream if stream is not None else sys.stderr
    out.write(STATUS_PREFIX + json.dumps(dict(counts)) + "\n")
    out.flush()


def status_of(line: str) -> dict[str, Any] | None:
    """The counts of a `report_status` line, None for any other line or for a report cut
    short by the child's death."""
    if not line.startswith(STATUS_PREFIX):
        return None
    try:
        status = json.loads(line[len(STATUS_PREFIX):])
    except ValueError:
        return None
    return status if isinstance(status, dict) else None
