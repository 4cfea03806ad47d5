"""What `walkfuzz triage` (and `regress`) reads: stored findings and plain crash files.

Accepted arguments, each a file or a directory:
  - a walkfuzz output directory (it has `findings/`): every `findings/<signature>/<sha1>.bin`
    with the description next to it (target, harness, walker, stored signature), plus the
    top-level `crash-*` files that are not copies of those;
  - any other directory: its `crash-*` / `timeout-*` files (libFuzzer artifacts), or, if it
    has none, every regular file in it (a corpus, e.g. corpora/<harness>/regressions/);
  - `<out>/findings` or one `findings/<signature>/` directory: its described inputs;
  - a file: one input; a `<sha1>.bin` of a findings directory brings its description.
An input without a description takes --target/--harness/--walker from the command line;
a case file (magic "WFCS") needs no --harness (it is the `bytes` harness's input).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.engine.campaign import CAMPAIGN_FILE
from walkfuzz.findings.finding import CRASH_PREFIX, FINDINGS_DIR
from walkfuzz.report.files import REPORT_STEM

ARTIFACT_PREFIXES = (CRASH_PREFIX, "timeout-", "oom-", "leak-")


@dataclass(frozen=True)
class InputSpec:
    """One input to replay and what is known about it before it runs."""

    path: str
    target: str | None = None
    harness: str | None = None
    walker: str | None = None
    stored_signature: str | None = None
    error: str | None = None  # known bad before replay (unreadable description)

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
        walker = details.get("walker") if isinstance(details, dict) else None
        return InputSpec(str(binary), _text(doc, "target"), _text(doc, "harness"),
                         walker if isinstance(walker, str) else None, _text(doc, "signature"))
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


def _output_dir(directory: Path) -> list[InputSpec]:
    found = [_described(b) for b in sorted((directory / FINDINGS_DIR).glob("*/*.bin"))]
    stored = {Path(s.path).stem for s in found}
    for artifact in sorted(directory.glob(f"{CRASH_PREFIX}*")):
        name = artifact.name.removeprefix(CRASH_PREFIX)
        if artifact.is_file() and name not in stored and _sha1(artifact) not in stored:
            found.append(InputSpec(str(artifact)))
    return found


def _is_description(path: Path) -> bool:
    return path.suffix == ".json" and path.with_suffix(".bin").is_file()


def _one_file(path: Path) -> InputSpec:
    described = path.suffix == ".bin" and path.with_suffix(".json").is_file()
    return _described(path) if described else InputSpec(str(path))


def _plain_dir(directory: Path) -> list[InputSpec]:
    files = sorted(p for p in directory.iterdir()
                   if p.is_file() and not p.name.startswith(".") and not _is_description(p))
    artifacts = [p for p in files if p.name.startswith(ARTIFACT_PREFIXES)]
    return [_one_file(p) for p in (artifacts or files)]


def discover(arguments: list[Path]) -> list[InputSpec]:
    """Every input named by the arguments, in order; UserError for a path that is not there."""
    found: list[InputSpec] = []
    for argument in arguments:
        if argument.is_dir() and argument.name == FINDINGS_DIR:
            found += [_described(b) for b in sorted(argument.glob("*/*.bin"))]
        elif argument.is_dir():
            found += _output_dir(argument) if is_output_dir(argument) else _plain_dir(argument)
        elif argument.is_file():
            found.append(_one_file(argument))
        else:
            raise UserError(f"{str(argument)!r} is neither a file nor a directory")
    return found


def resolve(spec: InputSpec, defaults: Defaults) -> InputSpec:
    """Fill target/harness/walker from the command line: --walker overrides a description
    (to replay stored findings on another walker); the others only fill gaps."""
    return InputSpec(
        spec.path,
        target=spec.target or defaults.target or "minivm",
        harness=spec.harness or defaults.harness,
        walker=defaults.walker or spec.walker or "reference",
        stored_signature=spec.stored_signature,
        error=spec.error,
    )
