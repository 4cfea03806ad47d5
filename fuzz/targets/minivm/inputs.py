"""minivm's inputs: a case file (magic "WFCS", walkfuzz.targets.minivm.case), a live stress
capture (a case file with section 11 EXPECTED, harness `stress`), or a generator harness's
bytes (registers, layouts, api) that the hot path turns into a case. What an input is, when
nothing stored beside it says: its bytes, or where it lies."""

from __future__ import annotations

from pathlib import Path

from walkfuzz.targets.artifacts import fuzzer_of_path, json_field
from walkfuzz.targets.minivm.case.decode import decode
from walkfuzz.targets.minivm.case.expected import has_expected
from walkfuzz.targets.minivm.case.status import CaseDecodeError
from walkfuzz.targets.protocol import ReplayError
from walkfuzz.targets.table import MINIVM

BYTES_HARNESS = "bytes"  # a case file is its own input
LIVE_HARNESS = "stress"  # a live capture: a case file whose EXPECTED section is the oracle
GENERATOR_HARNESSES = frozenset({"registers", "layouts", "api"})
CASE_MAGIC = b"WFCS"


def case_error(data: bytes, source: str) -> str:
    """The Python decoder's one-line account of why `data` is no case (it agrees with C)."""
    if not data:
        return "empty file: no case header"
    try:
        decode(data, source)
    except CaseDecodeError as err:
        return err.problem
    return "the C decoder refused it (the Python decoder did not)"


def sniff_harness(data: bytes, source: str) -> str:
    """The harness of a plain crash file with no description: a case file is `bytes`, or
    `stress` when it carries a live sample's EXPECTED section."""
    if data[:4] == CASE_MAGIC:
        return LIVE_HARNESS if has_expected(data) else BYTES_HARNESS
    what = "empty file" if not data else f"starts with {data[:4]!r}, not {CASE_MAGIC!r}"
    raise ReplayError(f"{source}: not a case file ({what}) and no --harness says which "
                      "generator harness made it")


def harness_of_path(path: Path) -> tuple[str, str] | None:
    """The generator harness whose input `path` is, known from where it lies, and how it is
    known; None when nothing says. A finding's description names its harness; a campaign's
    folder (its campaign.json) names the harness of everything in it; a shipped seed lies in
    corpora/<harness>/; a libFuzzer artifact of a ClusterFuzzLite or OSS-Fuzz fuzzer lies in
    a folder named after the fuzzer, or is named after it (fuzzer_of_path)."""
    resolved = path.resolve()
    described = resolved.with_suffix(".json")
    harness = json_field(described, "harness") if described != resolved else None
    if harness in GENERATOR_HARNESSES:
        return str(harness), f"{described} says so"
    for campaign in (d / "campaign.json" for d in resolved.parents):
        spec = json_field(campaign, "spec")
        harness = spec.get("harness") if isinstance(spec, dict) else None
        if harness in GENERATOR_HARNESSES:
            return str(harness), f"{campaign} says so"
    parts = resolved.parts
    for i, part in enumerate(parts[:-2]):
        if part == "corpora" and parts[i + 1] in GENERATOR_HARNESSES:
            return parts[i + 1], f"it is in corpora/{parts[i + 1]}/"
    fuzzer = fuzzer_of_path(path)
    if fuzzer is not None and fuzzer[0] == MINIVM and fuzzer[1] in GENERATOR_HARNESSES:
        return fuzzer[1], fuzzer[2]
    return None


def placed_harness(path: Path) -> str | None:
    """The generator harness of an input that is no case file, known from where it lies
    (harness_of_path); None when nothing says (a case file needs nothing to say)."""
    try:
        with path.open("rb") as data:
            if data.read(len(CASE_MAGIC)) == CASE_MAGIC:
                return None
    except OSError:
        return None  # the replay names the unreadable file
    placed = harness_of_path(path)
    return placed[0] if placed else None
