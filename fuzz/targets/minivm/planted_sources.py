"""The sources of a walker with planted bugs: the reference walker's files with one patch per bug
applied, as mutation-testing tools keep their mutants out of the source they test.

Each bug is a unified diff, `native/testing/planted/<bug>.patch`, against today's reference
sources (`git apply --check` takes them as they are). Every patch is placed on the pristine
sources by its context, and all of them are applied at once, so that several bugs planted in
one library combine whatever their order, as long as no two change the same lines (but for
lines one deletes outright: `edits`).

       pristine line   patch A          patch B           combined
       a               a                a                 a
       b             - b                b               - b
       c               c              + x                 c
                                        c               + x
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import ROOT

PATCHES = ROOT / "native" / "testing" / "planted"
REFERENCE_SOURCES = ROOT / "native" / "walkers" / "reference"
HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


@dataclass(frozen=True)
class Edit:
    """Lines [start, end) of a pristine file replaced by `lines` (start == end: inserted)."""
    start: int
    end: int
    lines: tuple[str, ...]
    patch: str


@dataclass(frozen=True)
class _Hunk:
    file: str  # the file's name in REFERENCE_SOURCES
    old_start: int  # 1-based, as the hunk header gives it
    old: tuple[str, ...]  # context and removed lines
    new: tuple[str, ...]  # context and added lines


def patch_path(bug: str) -> Path:
    return PATCHES / f"{bug}.patch"


def _reference_file(header: str, patch: Path) -> str:
    """The file a `--- a/...` or `+++ b/...` line names, which must be a reference source."""
    path = header[4:].split("\t")[0].strip()
    relative = path.split("/", 1)[1] if path.startswith(("a/", "b/")) else path
    if (ROOT / relative).parent != REFERENCE_SOURCES:
        raise UserError(f"{patch}: {path!r} is not a file of {REFERENCE_SOURCES}")
    return (ROOT / relative).name


def _hunks(patch: Path) -> list[_Hunk]:
    lines = patch.read_text().splitlines()
    hunks: list[_Hunk] = []
    file = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("+++ "):
            file = _reference_file(line, patch)
            continue
        header = HUNK_HEADER.match(line)
        if header is None:
            continue  # commentary, the `---` line
        count = int(header.group(2) if header.group(2) is not None else 1)
        old: list[str] = []
        new: list[str] = []
        while i < len(lines) and lines[i][:1] in (" ", "-", "+", "\\", ""):
            body, i = lines[i], i + 1
            if body.startswith("\\"):
                continue  # "\ No newline at end of file"
            text = body[1:]
            if body[:1] != "+":
                old.append(text)
            if body[:1] != "-":
                new.append(text)
            if len(old) == count and (i >= len(lines) or not lines[i].startswith("+")):
                break
        if not file or len(old) != count:
            raise UserError(f"{patch}: hunk {line!r} is not a whole unified-diff hunk")
        hunks.append(_Hunk(file, int(header.group(1)), tuple(old), tuple(new)))
    if not hunks:
        raise UserError(f"{patch} holds no unified-diff hunk")
    return hunks


def _place(hunk: _Hunk, pristine: Sequence[str], patch: Path) -> Edit:
    """The hunk as an edit of the pristine file, found by its context nearest its line."""
    size = len(hunk.old)
    starts = [s for s in range(len(pristine) - size + 1) if tuple(pristine[s:s + size]) == hunk.old]
    if not starts:
        raise UserError(f"{patch}: the hunk at {hunk.file}:{hunk.old_start} no longer applies "
                        f"to {REFERENCE_SOURCES / hunk.file}")
    start = min(starts, key=lambda s: abs(s - (hunk.old_start - 1)))
    lead = 0
    while lead < min(len(hunk.old), len(hunk.new)) and hunk.old[lead] == hunk.new[lead]:
        lead += 1
    trail = 0
    while (trail < min(len(hunk.old), len(hunk.new)) - lead
           and hunk.old[-1 - trail] == hunk.new[-1 - trail]):
        trail += 1
    return Edit(start + lead, start + size - trail,
                hunk.new[lead:len(hunk.new) - trail], patch.stem)


def edits(patches: Sequence[Path]) -> dict[str, list[Edit]]:
    """Every patch's edits of each reference file, in file order. Lines one patch deletes
    outright take with them what another changes inside them (fp-cycle drops the depth check
    whose bound depth-off-by-one moves); any other two edits of the same lines are an error
    naming both patches."""
    pristine = {p.name: p.read_text().splitlines() for p in REFERENCE_SOURCES.glob("*.c")}
    by_file: dict[str, list[Edit]] = {}
    for patch in patches:
        for hunk in _hunks(patch):
            if hunk.file not in pristine:
                raise UserError(f"{patch}: no reference source {hunk.file!r}")
            by_file.setdefault(hunk.file, []).append(_place(hunk, pristine[hunk.file], patch))
    return {file: _without_overlaps(file, file_edits) for file, file_edits in by_file.items()}


def _deletes(outer: Edit, inner: Edit) -> bool:
    return not outer.lines and outer.start <= inner.start and inner.end <= outer.end


def _without_overlaps(file: str, file_edits: list[Edit]) -> list[Edit]:
    kept: list[Edit] = []
    for edit in sorted(file_edits, key=lambda e: (e.start, e.end)):
        if not kept or kept[-1].end <= edit.start:
            kept.append(edit)
        elif _deletes(kept[-1], edit):
            continue
        elif _deletes(edit, kept[-1]):
            kept[-1] = edit
        else:
            raise UserError(f"planted bugs {kept[-1].patch!r} and {edit.patch!r} change the same "
                            f"lines of {file} (line {edit.start + 1})")
    return kept


def write(bugs: Sequence[str], folder: Path, files: Sequence[str]) -> list[Path]:
    """`files` of the reference walker written into `folder` with the patches of `bugs`
    applied; returns their paths in the order of `files`."""
    changes = edits([patch_path(bug) for bug in bugs])
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in files:
        lines = (REFERENCE_SOURCES / name).read_text().splitlines()
        for edit in reversed(changes.get(name, [])):
            lines[edit.start:edit.end] = edit.lines
        out = folder / name
        out.write_text("\n".join(lines) + "\n")
        written.append(out)
    return written
