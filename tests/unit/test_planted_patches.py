"""The planted bugs are patches kept out of the reference walker: one per bug, each applying to
today's reference sources, the bugs planted together by the triage test applying together, and
each built walker's code differing from the reference's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from walkfuzz.core.errors import UserError
from walkfuzz.targets.minivm import planted, planted_sources

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from planted_corpus import COMBINED


def code_of(library: Path) -> bytes:
    with library.open("rb") as file:
        return ELFFile(file).get_section_by_name(".text").data()


def test_every_planted_bug_has_one_patch_and_every_patch_a_bug() -> None:
    patches = {path.stem for path in planted_sources.PATCHES.glob("*.patch")}
    assert patches == {bug.name for bug in planted.PLANTED_BUGS}


def test_the_reference_walker_holds_no_planted_bug() -> None:
    for name in planted.WALKER_FILES:
        text = (planted.WALKER_SOURCES / name).read_text()
        assert "WF_PLANT" not in text and "planted bug" not in text, name


@pytest.mark.parametrize("bug", [bug.name for bug in planted.PLANTED_BUGS])
def test_each_patch_applies_to_the_reference_sources_and_changes_them(
        bug: str, tmp_path: Path) -> None:
    written = planted_sources.write([bug], tmp_path, planted.WALKER_FILES)
    changed = [p.name for p in written
               if p.read_text() != (planted.WALKER_SOURCES / p.name).read_text()]
    assert changed, f"{bug}.patch changes no reference source"


def test_the_combined_bugs_apply_together(tmp_path: Path) -> None:
    written = planted_sources.write(COMBINED, tmp_path, planted.WALKER_FILES)
    walker = next(p for p in written if p.name == "ref_walker.c").read_text()
    for bug in COMBINED:  # every bug's added lines are in the combined source
        for edits in planted_sources.edits([planted_sources.patch_path(bug)]).values():
            for edit in edits:
                assert "\n".join(edit.lines) in walker, bug


def test_every_bug_applies_with_every_other(tmp_path: Path) -> None:
    """All of them in one library (the minimize tests' walker): a check one bug deletes goes
    with what another bug changes inside it."""
    names = [bug.name for bug in planted.PLANTED_BUGS]
    written = planted_sources.write(names, tmp_path, planted.WALKER_FILES)
    walker = next(p for p in written if p.name == "ref_walker.c").read_text()
    assert "WF_WALK_MAX_DEPTH)" not in walker  # fp-cycle's deletion, depth-off-by-one's bound
    assert "peek_caller_profile(it, &s);" in walker and "mix_up_anchor_fp(it, s);" in walker


def test_two_patches_changing_the_same_lines_are_refused(tmp_path: Path) -> None:
    patch = planted_sources.patch_path("fp-cycle")
    twice = tmp_path / "twice.patch"
    twice.write_text(patch.read_text())
    with pytest.raises(UserError, match="change the same lines"):
        planted_sources.edits([patch, twice])


def test_a_patch_that_no_longer_applies_names_its_hunk(tmp_path: Path) -> None:
    stale = tmp_path / "stale.patch"
    stale.write_text(planted_sources.patch_path("ignores-ret").read_text().replace(
        " static int first_frame_unbuilt", " static int some_other_function"))
    with pytest.raises(UserError, match=r"stale.patch: the hunk at ref_walker.c:\d+ no longer"):
        planted_sources.edits([stale])


@pytest.mark.parametrize("bug", planted.PLANTED_BUGS, ids=lambda bug: bug.name)
def test_each_planted_walker_is_built_differently_from_the_reference(
        bug: planted.PlantedBug) -> None:
    reference = code_of(planted.build(planted.REFERENCE, "plain"))
    assert code_of(planted.build(bug, "plain")) != reference
