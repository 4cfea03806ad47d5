"""What the case decoders report (fuzz/targets/minivm/case/format.py and the section decoders it
calls, walkfuzz.targets.minivm.case.queue_program and walkfuzz.targets.minivm.case.expected): the
sections of a case, the status of a decode (wf_case_status) and `CaseDecodeError`, which names where
the first bad rule is. """

from __future__ import annotations

from enum import IntEnum

from walkfuzz.core.errors import CaseFormatError


class Section(IntEnum):
    HEADER = 0  # not a section: where header errors are reported
    CLASSES = 1
    METHODS = 2
    CODE = 3
    THREAD = 4
    STACK = 5
    CONTEXT = 6
    WALK = 7
    TRUTH = 8
    # optional: a program of queue operations (§7, walkfuzz.targets.minivm.case.queue_program)
    QUEUE = 9
    CODE_BYTES = 10  # code heap bytes other than the 0xCC fill
    # optional: a live sample's expected trace (walkfuzz.targets.minivm.case.expected)
    EXPECTED = 11


class CaseStatus(IntEnum):
    """wf_case_status; `label` is the short name wf_case_status_name() gives."""

    OK = 0
    TRUNCATED = -1
    MAGIC = -2
    VERSION = -3
    UNKNOWN_SECTION = -4
    SECTION_ORDER = -5
    MISSING_SECTION = -6
    SECTION_LENGTH = -7
    LIMIT = -8
    BAD_FIELD = -9
    BAD_STRING = -10
    MAP = -11

    @property
    def label(self) -> str:
        return _STATUS_LABELS[self]


_STATUS_LABELS = {
    CaseStatus.OK: "ok",
    CaseStatus.TRUNCATED: "truncated",
    CaseStatus.MAGIC: "bad-magic",
    CaseStatus.VERSION: "bad-version",
    CaseStatus.UNKNOWN_SECTION: "unknown-section",
    CaseStatus.SECTION_ORDER: "section-order",
    CaseStatus.MISSING_SECTION: "missing-section",
    CaseStatus.SECTION_LENGTH: "section-length",
    CaseStatus.LIMIT: "limit",
    CaseStatus.BAD_FIELD: "bad-field",
    CaseStatus.BAD_STRING: "bad-string",
    CaseStatus.MAP: "map-failed",
}


class CaseDecodeError(CaseFormatError):
    """Bytes that are no valid case: the status, section and offset of the first bad rule."""

    def __init__(self, source: str, status: CaseStatus, section: int, offset: int,
                 what: str) -> None:
        where = "header" if section == 0 else f"section {_section_name(section)}"
        super().__init__(source, f"{status.label} in {where} at byte {offset}: {what}")
        self.status = status
        self.section = section
        self.offset = offset
        self.what = what


def _section_name(section: int) -> str:
    try:
        return f"{section} ({Section(section).name})"
    except ValueError:
        return str(section)
