"""Parsing libFuzzer's status output into numbers.

libFuzzer prints one status line per event, e.g.

    #4096	pulse  cov: 187 ft: 402 corp: 51/1337b lim: 43 exec/s: 2048 rss: 61Mb
    #10577	NEW    cov: 190 ft: 410 corp: 52/1402b lim: 43 exec/s: 3525 rss: 61Mb L: 9/43 MS: 2 ...
    #65536	DONE   cov: 212 ft: 498 corp: 63/1.7Kb lim: 63 exec/s: 21845 rss: 62Mb

and, when it stops on its own, `==<pid>== ERROR: libFuzzer: deadly signal` or `timeout`.
`LogTail` follows a worker's log file as it grows (the file outlives the worker, so nothing is
lost when the supervisor is slow or the worker dies).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_STATUS = re.compile(
    r"^#(?P<execs>\d+)\s+(?P<event>[A-Za-z]+)\s+"
    r"(?:cov: (?P<cov>\d+) )?(?:ft: (?P<ft>\d+) )?"
    r"(?:corp: (?P<corp>\d+)/(?P<corp_size>[\d.]+[KMG]?b) )?"
    r"(?:lim: \d+ )?(?:exec/s: (?P<eps>\d+) )?(?:rss: (?P<rss>\d+)Mb)?"
)
_ERROR = re.compile(r"==\d+== ERROR: libFuzzer: (?P<what>.+)$")


@dataclass(frozen=True)
class Status:
    """One libFuzzer status line."""

    execs: int
    event: str  # INITED, NEW, REDUCE, pulse, DONE, RELOAD, ...
    coverage: int | None
    features: int | None
    corpus: int | None
    exec_per_sec: int | None
    rss_mb: int | None


def parse_status(line: str) -> Status | None:
    """The numbers of a status line, or None for any other line."""
    m = _STATUS.match(line)
    if m is None:
        return None

    def num(name: str) -> int | None:
        value = m.group(name)
        return int(value) if value is not None else None

    return Status(
        execs=int(m.group("execs")),
        event=m.group("event"),
        coverage=num("cov"),
        features=num("ft"),
        corpus=num("corp"),
        exec_per_sec=num("eps"),
        rss_mb=num("rss"),
    )


def parse_error(line: str) -> str | None:
    """What libFuzzer stopped for ('deadly signal', 'timeout after 3 seconds', ...), or None."""
    m = _ERROR.search(line)
    return m.group("what").strip() if m else None


class LogTail:
    """Reads the complete lines appended to a file since the last call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self._partial = b""

    def new_lines(self) -> list[str]:
        try:
            with self.path.open("rb") as log:
                log.seek(self.offset)
                chunk = log.read()
        except FileNotFoundError:
            return []
        self.offset += len(chunk)
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        return [line.decode("utf-8", "replace").rstrip("\r") for line in lines]
