"""libFuzzer-layout corpus directories: one file per input, named by the SHA-1 of its bytes.

A campaign fuzzes one corpus, `<out>/corpus`, which libFuzzer grows as it finds new coverage.
Seeds (the shipped `corpora/<harness>/`, `--corpus DIR`) are imported into it first: each file
is checked, and a corrupt one (empty, over the size limit, or rejected by the target's case
check) is skipped with a warning naming it, while an unreadable one stops the campaign with one
error line, because it means the user pointed at the wrong thing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import require_corpus_dir
from walkfuzz.findings.store import write_atomic

# A case check returns None for a good input, else a short description of what is wrong.
CaseCheck = Callable[[bytes], str | None]


@dataclass
class ImportResult:
    imported: int = 0
    present: int = 0
    warnings: list[str] = field(default_factory=list)


def entries(directory: Path) -> list[Path]:
    """Input files of a corpus directory (libFuzzer ignores subdirectories and dot files)."""
    return sorted(p for p in directory.iterdir() if p.is_file() and not p.name.startswith("."))


def read_entry(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise UserError(f"corpus entry {str(path)!r} is unreadable: {err.strerror}") from err


def import_seeds(
    sources: Iterable[Path], dest: Path, max_len: int, check: CaseCheck | None = None
) -> ImportResult:
    """Copy every good input of `sources` into `dest` under its SHA-1 name."""
    dest.mkdir(parents=True, exist_ok=True)
    result = ImportResult()
    for source in sources:
        require_corpus_dir(source)
        for path in entries(source):
            data = read_entry(path)
            problem = _problem(data, max_len, check)
            if problem is not None:
                result.warnings.append(f"corpus entry {str(path)!r} skipped: {problem}")
                continue
            target = dest / hashlib.sha1(data).hexdigest()
            if target.exists():
                result.present += 1
            else:
                write_atomic(target, data)
                result.imported += 1
    return result


def _problem(data: bytes, max_len: int, check: CaseCheck | None) -> str | None:
    if not data:
        return "empty file"
    if len(data) > max_len:
        return f"{len(data)} bytes, over the {max_len}-byte limit (-max_len)"
    return check(data) if check is not None else None
