"""Findings of several output folders made one folder's: every stored input copied under its
signature (an input stored in two folders is one file: its name is the SHA-1 of its bytes),
and each signature's hits merged (walkfuzz.findings.hits.Hits.merge: the counts summed, the
earliest first hit and the latest last hit, by wall time).

A merged folder's clock starts at the earliest start among its inputs (`since`): hits are
moved onto it, so a first-seen time reads the same in every merged signature.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from walkfuzz.findings.finding import CRASH_PREFIX, FINDINGS_DIR, TIMEOUT_PREFIX
from walkfuzz.findings.hits import Hits, load_hits
from walkfuzz.findings.store import write_atomic


def copy_findings(source: Path, out: Path) -> int:
    """Copy every file under source's findings/ that out does not hold yet, with the
    libFuzzer-style copy of each input (crash-<sha1>, timeout-<sha1> for a hang) next to
    findings/ as a run writes it; returns how many inputs were new."""
    new = 0
    for path in sorted((source / FINDINGS_DIR).glob("*/*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        dest = out / FINDINGS_DIR / path.parent.name / path.name
        if dest.exists():
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(dest, path.read_bytes())
        if path.suffix == ".bin":
            new += 1
            _copy_artifact(source, out, path)
    return new


def _copy_artifact(source: Path, out: Path, binary: Path) -> None:
    for prefix in (CRASH_PREFIX, TIMEOUT_PREFIX):
        artifact = source / f"{prefix}{binary.stem}"
        if artifact.is_file() and not (out / artifact.name).exists():
            write_atomic(out / artifact.name, artifact.read_bytes())


def merged_hits(sources: Iterable[Path]) -> dict[str, Hits]:
    """Every signature's hits over all `sources` (each folder's hits/, walkfuzz.findings.
    finding.load_hits)."""
    merged: dict[str, Hits] = {}
    for source in sources:
        for signature, hits in load_hits(source).items():
            merged[signature] = hits if signature not in merged else merged[signature].merge(hits)
    return merged


def rebased(hits: Hits, since: float) -> Hits:
    """`hits` with their run seconds counted from the wall time `since`."""
    return replace(hits, first_s=max(0.0, hits.first_at - since),
                   last_s=max(0.0, hits.last_at - since))


def rebased_all(hits: Mapping[str, Hits], since: float) -> dict[str, Hits]:
    """Every signature's `hits` on the merged clock (rebased)."""
    return {signature: rebased(h, since) for signature, h in hits.items()}
