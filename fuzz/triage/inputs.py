"""What `walkfuzz triage` (and `regress`) reads: stored findings and plain crash files.

Accepted arguments, each a file or a directory:
  - a walkfuzz output directory (it has `findings/`): every `findings/<signature>/<sha1>.bin`
    with the description next to it (target, harness, walker, stored signature), plus every
    other top-level file (`crash-*`, `timeout-*`, anything put there) that is not a copy of
    those nor one of the run's own files;
  - any other directory: every regular file in it, whatever its name (libFuzzer artifacts, a
    corpus such as corpora/<harness>/regressions/, `testcase-1`), and the libFuzzer artifacts
    (`crash-*`, `timeout-*`, `oom-*`, `leak-*`) in its subfolders: ClusterFuzzLite's
    artifacts folder holds `<fuzzer>/<sanitizer>/crash-<sha1>` and a `.summary` beside each;
  - `<out>/findings` or one `findings/<signature>/` directory: its described inputs;
  - a file: one input; a `<sha1>.bin` of a findings directory brings its description.
In a directory, what is plainly no input is skipped and `Found.skipped` says which file and
why: a hidden file, a description next to its input, a log, a report, another JSON file or
a crash's stack trace (`.summary`), a native finding's snapshot beside its input (`.wfsnap`:
the driver replays it when the input does not reproduce).
An input without a description takes --target/--harness/--walker from the command line;
a case file (magic "WFCS") needs no --harness (it is the `bytes` harness's input).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from walkfuzz.core.errors import UnknownTargetError, UserError
from walkfuzz.engine.campaign import CAMPAIGN_FILE
from walkfuzz.findings.finding import CRASH_PREFIX, FINDINGS_DIR, TIMEOUT_PREFIX
from walkfuzz.report.files import REPORT_STEM
from walkfuzz.targets.artifacts import fuzzer_of_path
from walkfuzz.targets.protocol import StoredInput
from walkfuzz.targets.table import DEFAULT_TARGET, lookup, side_files

ARTIFACT_PREFIXES = (CRASH_PREFIX, TIMEOUT_PREFIX, "oom-", "leak-")
# Files of a directory that are no input, by suffix: why.
NOT_INPUT_SUFFIXES = {".log": "a log", ".json": "a JSON file (a description or report)",
                      ".jsonl": "a JSON-lines file (a run's time series)",
                      ".md": "a report", ".html": "a report", ".sarif": "a SARIF log",
                      ".xml": "an XML file (a JUnit report)",
                      ".summary": "a crash's stack trace (ClusterFuzzLite's .summary)"}
RUN_FILES = frozenset({".lock"})  # a campaign's own files that have no telling suffix


@dataclass(frozen=True)
class InputSpec:
    """One input to replay and what is known about it before it runs."""

    path: str
    target: str | None = None
    harness: str | None = None
    walker: str | None = None
    stored_signature: str | None = None
    error: str | None = None  # known bad before replay (unreadable description)
    unwinder: str | None = None  # the native target's: which unwinder walked it

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Defaults:
    """--target / --harness / --walker: fill what a description does not say, or override."""

    target: str | None = None
    harness: str | None = None
    walker: str | None = None


def _described(binary: Path) -> InputSpec:
    description = binary.with_suffix(".json")
    try:
        doc = json.loads(description.read_text())
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        details = doc.get("details") or {}
        details = details if isinstance(details, dict) else {}
        walker, unwinder = details.get("walker"), details.get("unwinder")
        return InputSpec(str(binary), _text(doc, "target"), _text(doc, "harness"),
                         walker if isinstance(walker, str) else None, _text(doc, "signature"),
                         unwinder=unwinder if isinstance(unwinder, str) else None)
    except (OSError, ValueError) as err:
        return InputSpec(str(binary), error=f"{description}: unreadable description: {err}")


def _text(doc: dict[str, object], key: str) -> str | None:
    value = doc.get(key)
    return value if isinstance(value, str) else None


def _sha1(path: Path) -> str | None:
    try:
        return hashlib.sha1(path.read_bytes()).hexdigest()
    except OSError:
        return None


def is_output_dir(directory: Path) -> bool:
    """A walkfuzz run's output folder (a campaign's or a stress run's), findings or none: a
    clean run has no findings/, but its campaign.json or report.json says what it is."""
    return directory.is_dir() and any(
        (directory / name).exists()
        for name in (FINDINGS_DIR, CAMPAIGN_FILE, f"{REPORT_STEM}.json"))


def _not_input(path: Path) -> str | None:
    """Why a file of a directory is no input (None: it is one)."""
    if path.name.startswith("."):
        return "a hidden file"
    if _is_description(path):
        return "the description of the input next to it"
    side = side_files().get(path.suffix)
    if side is not None and path.with_suffix(".bin").is_file():
        return side
    return NOT_INPUT_SUFFIXES.get(path.suffix)


@dataclass
class Found:
    """The inputs named by the arguments, and the files of their directories left out."""

    inputs: list[InputSpec] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)

    def take_dir(self, directory: Path, exclude: frozenset[str] = frozenset()) -> None:
        """Every regular file of `directory` but the `exclude`d names and what is no input."""
        for path in sorted(directory.iterdir()):
            if not path.is_file() or path.name in exclude:
                continue
            why = _not_input(path)
            if why is None:
                self.inputs.append(_one_file(path))
            else:
                self.skipped.append((str(path), why))


    def take_artifacts_below(self, directory: Path) -> None:
        """The libFuzzer artifacts (crash-, timeout-, oom-, leak-) in the folders under
        `directory`, at any depth: ClusterFuzzLite keeps them in <fuzzer>/<sanitizer>/."""
        for path in sorted(directory.glob("*/**/*")):
            if path.is_file() and path.name.startswith(ARTIFACT_PREFIXES) and \
                    not any(part.startswith(".") for part in path.relative_to(directory).parts):
                why = _not_input(path)
                if why is None:
                    self.inputs.append(_one_file(path))


def _output_dir(directory: Path, found: Found) -> None:
    described = [_described(b) for b in sorted((directory / FINDINGS_DIR).glob("*/*.bin"))]
    found.inputs += described
    stored = {Path(s.path).stem for s in described}
    # the libFuzzer-style copies of stored findings (crash-<sha1>) and the run's own files
    copies = {p.name for p in directory.iterdir()
              if p.name.startswith(ARTIFACT_PREFIXES) and p.is_file() and
              (p.name.split("-", 1)[1] in stored or _sha1(p) in stored)}
    before = len(found.skipped)
    found.take_dir(directory, frozenset(copies) | RUN_FILES)
    # the report and state files every run writes are no news to the user
    found.skipped[before:] = [(p, why) for p, why in found.skipped[before:]
                              if Path(p).suffix not in NOT_INPUT_SUFFIXES]


def _is_description(path: Path) -> bool:
    return path.suffix == ".json" and path.with_suffix(".bin").is_file()


def _one_file(path: Path) -> InputSpec:
    described = path.suffix == ".bin" and path.with_suffix(".json").is_file()
    return _described(path) if described else InputSpec(str(path))


def find_inputs(arguments: list[Path]) -> Found:
    """Every input named by the arguments, in order, and what their directories held that is
    no input; UserError for a path that is not there."""
    found = Found()
    for argument in arguments:
        if argument.is_dir() and argument.name == FINDINGS_DIR:
            found.inputs += [_described(b) for b in sorted(argument.glob("*/*.bin"))]
        elif is_output_dir(argument):
            _output_dir(argument, found)
        elif argument.is_dir():
            found.take_dir(argument)
            found.take_artifacts_below(argument)
        elif argument.is_file():
            found.inputs.append(_one_file(argument))
        else:
            raise UserError(f"{str(argument)!r} is neither a file nor a directory")
    return found


def discover(arguments: list[Path]) -> list[InputSpec]:
    """Every input named by the arguments (find_inputs without what was skipped)."""
    return find_inputs(arguments).inputs


def _placed_harness(target: str, path: Path, fuzzer: tuple[str, str, str] | None
                   ) -> str | None:
    """The harness of an input nothing describes, from where it lies: the target's own rule
    (its inputs.placed_harness, where the table says it has one), else a standalone fuzzer's
    artifact's."""
    entry = lookup(target)
    if entry.harness_from_place:
        placed = entry.part("inputs").placed_harness(path)
        return placed if isinstance(placed, str) else None
    return fuzzer[1] if fuzzer else None


def resolve(spec: InputSpec, defaults: Defaults) -> InputSpec:
    """Fill target/harness/walker from the command line: --walker overrides a description
    (to replay stored findings on another walker); the others only fill gaps, and where
    nothing says an input's target and harness, where it lies may (a generator harness's seed
    in corpora/<harness>/, a campaign folder's campaign.json, a standalone fuzzer's artifact:
    walkfuzz.targets.artifacts.fuzzer_of_path)."""
    fuzzer = None if spec.target or defaults.target else fuzzer_of_path(Path(spec.path))
    target = spec.target or defaults.target or (fuzzer[0] if fuzzer else DEFAULT_TARGET)
    harness = spec.harness or defaults.harness
    if not harness:
        try:
            harness = _placed_harness(target, Path(spec.path), fuzzer)
        except UnknownTargetError:  # its replay names it
            harness = None
    return InputSpec(
        spec.path,
        target=target,
        harness=harness,
        walker=defaults.walker or spec.walker or "reference",
        stored_signature=spec.stored_signature,
        error=spec.error,
        unwinder=spec.unwinder,
    )


def stored_input(spec: InputSpec) -> StoredInput:
    """A resolved input as its target's replay part takes it (walkfuzz.targets.protocol)."""
    return StoredInput(spec.path, spec.target or DEFAULT_TARGET, spec.harness or "",
                       spec.walker or "reference", spec.unwinder or "")
