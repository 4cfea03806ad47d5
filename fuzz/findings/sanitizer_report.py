"""A sanitizer's report (ASan, UBSan) read into a finding's kind and location.

A worker of a sanitizer campaign dies on the first report; the runtime wrote it to
`<worker dir>/sanitizer.<pid>` (walkfuzz.core.sanitizer). Its location is the error type and the
top frame that is not the runtime's, named as every fault location is (`function@file.c:LINE`,
the file's base name):

    ==12345==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6020...
        #0 0x7f.. in ASGST_NextFrame /src/walker.c:260:20        -> asan
                                                                    heap-buffer-overflow in
                                                                    ASGST_NextFrame@walker.c:260
    /src/walker.c:88:9: runtime error: signed integer overflow: 2147483647 + 1 cannot be ...
        #0 0x7f.. in step /src/walker.c:88:9                      -> ubsan
                                                                    signed integer overflow in
                                                                    step@walker.c:88

UBSan's message is kept up to its first ": " (the values after it differ from hit to hit), and
any numbers or addresses left in it are replaced by N, so one bug hit with other values has one
signature.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.findings.finding import FindingKind

_ASAN = re.compile(r"==\d+==ERROR: AddressSanitizer: (?P<error>[\w-]+)")
_UBSAN = re.compile(r"runtime error: (?P<message>.+)$", re.M)
_FRAME = re.compile(r"^\s+#\d+ 0x[0-9a-f]+ in (?P<function>\S+) (?P<file>/\S+?):(?P<line>\d+)",
                    re.M)
_RUNTIME_FUNCTION = re.compile(r"^(__asan|__interceptor|__sanitizer|__ubsan|__lsan)")
_VALUE = re.compile(r"0x[0-9a-fA-F]+|-?\d+(\.\d+)?")
_MESSAGE_MAX = 60  # of a UBSan message kept in the location


@dataclass(frozen=True)
class SanitizerReport:
    kind: FindingKind  # "asan" or "ubsan"
    error: str  # heap-buffer-overflow, SEGV, signed integer overflow, load of misaligned ...
    frame: str  # function@file.c:LINE, or "unknown" without a symbolized frame of our code
    text: str  # the whole report

    @property
    def location(self) -> str:
        return f"{self.error} in {self.frame}"


def _top_frame(text: str) -> str:
    for m in _FRAME.finditer(text):
        if not _RUNTIME_FUNCTION.match(m.group("function")):
            return f"{m.group('function')}@{Path(m.group('file')).name}:{m.group('line')}"
    return "unknown"


def parse_report(text: str) -> SanitizerReport | None:
    """The report in `text` (a runtime's log file); None when it holds none."""
    asan = _ASAN.search(text)
    if asan is not None:
        return SanitizerReport("asan", asan.group("error"), _top_frame(text[asan.start():]),
                               text)
    ubsan = _UBSAN.search(text)
    if ubsan is not None:
        message = ubsan.group("message").strip().split(": ")[0]
        message = _VALUE.sub("N", message)[:_MESSAGE_MAX].rstrip()
        return SanitizerReport("ubsan", message, _top_frame(text[ubsan.start():]), text)
    return None


def read_report(path: Path) -> SanitizerReport | None:
    """The report a runtime wrote to `path`; None when there is no file or no report in it."""
    try:
        return parse_report(path.read_text(errors="replace"))
    except OSError:
        return None
