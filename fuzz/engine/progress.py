"""Progress of a long run: one status line rewritten in place on a terminal, plain log lines
(every `LOG_EVERY` seconds and whenever something new is found) otherwise."""

from __future__ import annotations

import sys
from typing import TextIO

LOG_EVERY = 10.0


def human(value: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.1f}{unit}"
    return f"{value:.0f}"


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes:02}:{secs:02}"


class Progress:
    def __init__(self, stream: TextIO = sys.stderr, live: bool | None = None) -> None:
        self.stream = stream
        self.live = stream.isatty() if live is None else live
        self._last_log = -LOG_EVERY
        self._last_key: object = None
        self._dirty = False

    def update(self, elapsed: float, line: str, key: object = None) -> None:
        """Show `line`; `key` changing (e.g. the findings count) forces a log line."""
        if self.live:
            self.stream.write(f"\r\x1b[K[{clock(elapsed)}] {line}")
            self._dirty = True
        elif elapsed - self._last_log >= LOG_EVERY or key != self._last_key:
            self.stream.write(f"[{clock(elapsed)}] {line}\n")
            self._last_log = elapsed
        self._last_key = key
        self.stream.flush()

    def message(self, text: str) -> None:
        """A line that stays (a warning, a finding, a restart)."""
        if self._dirty:
            self.stream.write("\r\x1b[K")
            self._dirty = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._dirty:
            self.stream.write("\n")
            self._dirty = False
        self.stream.flush()
