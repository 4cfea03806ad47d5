"""JUnit XML for CI jobs: one test suite, one test case per item, failures with a message.

The subset every CI system reads (Jenkins, GitLab, GitHub test reporters): <testsuites> with
one <testsuite name tests failures skipped time>, <testcase classname name time>, and inside
a case an optional <failure message type> or <skipped message>, plus <system-out> text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.findings.store import write_atomic


@dataclass(frozen=True)
class TestCase:
    classname: str
    name: str
    failure: str | None = None  # message of a failure; None: passed
    skipped: str | None = None
    output: str = ""
    seconds: float = 0.0


def to_xml(suite: str, cases: list[TestCase], seconds: float = 0.0) -> bytes:
    """The JUnit document of one suite."""
    root = ET.Element("testsuites")
    failures = sum(1 for c in cases if c.failure is not None)
    skipped = sum(1 for c in cases if c.skipped is not None and c.failure is None)
    node = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)),
                         failures=str(failures), errors="0", skipped=str(skipped),
                         time=f"{seconds:.3f}")
    for c in cases:
        case = ET.SubElement(node, "testcase", classname=c.classname, name=c.name,
                             time=f"{c.seconds:.3f}")
        if c.failure is not None:
            ET.SubElement(case, "failure", message=c.failure, type="new-signature").text = c.output
        elif c.skipped is not None:
            ET.SubElement(case, "skipped", message=c.skipped)
        if c.output:
            ET.SubElement(case, "system-out").text = c.output
    ET.indent(root)
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))


def write_junit(path: Path, suite: str, cases: list[TestCase], seconds: float = 0.0) -> None:
    write_atomic(path, to_xml(suite, cases, seconds))
