"""Where an input lies says what it is: the target and harness of a standalone fuzzer's
libFuzzer artifact (docs/ci.md: one fuzzer per harness script, named after it), for every
target of the table alike."""

from __future__ import annotations

import json
import re
from pathlib import Path

from walkfuzz.targets.table import list_harnesses, script_stem, target_names

# How OSS-Fuzz names a testcase it lets one download: the fuzzer's name, then the testcase id.
_CLUSTERFUZZ_TESTCASE = re.compile(r"clusterfuzz-testcase-(?:minimized-)?([A-Za-z0-9_]+)-\d+")
FUZZER_FOLDERS = 2  # ClusterFuzzLite keeps artifacts in <fuzzer>/<sanitizer>/


def fuzzer_of_path(path: Path) -> tuple[str, str, str] | None:
    """The target and harness of a libFuzzer artifact from a standalone fuzzer (docs/ci.md:
    one per harness script, named after it: `layouts`, `libunwind_perturb`), and how it is
    known: ClusterFuzzLite keeps them in <fuzzer>/<sanitizer>/crash-<sha1>, so one of the two
    folders above the file is named after its fuzzer; OSS-Fuzz names a downloaded testcase
    clusterfuzz-testcase-minimized-<fuzzer>-<id>. None when neither says."""
    fuzzers = {stem: (target, harness) for target in target_names()
               for harness in list_harnesses(target)
               for stem in (script_stem(target, harness),)}
    named = _CLUSTERFUZZ_TESTCASE.fullmatch(path.name)
    if named and named.group(1) in fuzzers:
        return (*fuzzers[named.group(1)], f"its name says fuzzer {named.group(1)}")
    for folder in path.resolve().parents[:FUZZER_FOLDERS]:
        if folder.name in fuzzers:
            return (*fuzzers[folder.name], f"it lies in {folder.name}/, the {folder.name} "
                    "fuzzer's artifacts")
    return None


def json_field(path: Path, key: str) -> object:
    """`key` of the JSON object in `path`; None when it is unreadable, no object or lacks it."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return doc.get(key) if isinstance(doc, dict) else None
