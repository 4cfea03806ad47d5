"""A merged report names a native finding's snapshot reproducer where the merge copied it: the
snapshot lies beside its input, and moves with it."""

from __future__ import annotations

from pathlib import Path

from walkfuzz.report.document import FindingGroup, RunMeta, RunReport
from walkfuzz.report.merge import merged_groups

SOURCE, MERGED = Path("/runs/a/findings/hang.x"), Path("/merged/findings/hang.x")


def _report(reproducer: str) -> RunReport:
    group = FindingGroup(signature="hang.x", kind="hang", target="native", harness="perturb",
                         location="libdw:check:cycle", shape=[], count=1,
                         examples=[str(SOURCE / "1.bin"), str(SOURCE / "2.bin")],
                         reproducer=reproducer)
    meta = RunMeta("libunwind", ["walkfuzz", "fuzz"], "native", "perturb", 1.0, 2.0)
    return RunReport(meta=meta, findings=[group])


def _relocate(path: str) -> str:
    return str(MERGED / Path(path).name)


def test_a_snapshot_reproducer_is_relocated_with_its_input() -> None:
    report = _report(f"walkfuzz replay --unwinder libdw {SOURCE / '2.wfsnap'}")
    [group] = merged_groups([report], 0.0, _relocate)
    assert group.reproducer == f"walkfuzz replay --unwinder libdw {MERGED / '2.wfsnap'}"


def test_an_input_reproducer_is_relocated_as_before() -> None:
    report = _report(f"walkfuzz replay --target native --unwinder libdw {SOURCE / '1.bin'}")
    [group] = merged_groups([report], 0.0, _relocate)
    assert group.reproducer.endswith(f" {MERGED / '1.bin'}") and str(SOURCE) not in \
        group.reproducer
