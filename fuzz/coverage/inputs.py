"""Which harness replays each corpus folder given to `walkfuzz coverage`.

A folder is replayed by the harness it is named after (`corpora/queue`, or a harness script's
stem, `<target>_<harness>`), or, for a campaign's corpus
(`reports/fuzz-layouts/corpus`), by the harness its campaign.json names. `--harness H` replays
every folder with H instead. A folder none of these names is refused before anything runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import require_corpus_dir
from walkfuzz.engine.campaign import CampaignDir
from walkfuzz.targets.table import HarnessSpec, find_harness, list_harnesses


@dataclass(frozen=True)
class CorpusInput:
    folder: Path
    harness: HarnessSpec

    @property
    def inputs(self) -> int:
        """Files libFuzzer replays: subfolders too (regressions/), but no dot folder."""
        return sum(1 for p in self.folder.rglob("*") if p.is_file() and not any(
            part.startswith(".") for part in p.relative_to(self.folder).parts[:-1]))


def _named_harness(folder: Path, target: str) -> str | None:
    """The harness `folder` is named after, or that its campaign ran, if any."""
    known = list_harnesses(target)
    name = folder.resolve().name
    for candidate in (name, name.removeprefix(f"{target}_")):
        if candidate in known:
            return candidate
    campaign = CampaignDir(folder.resolve().parent)
    if name == campaign.corpus.name and campaign.exists():
        spec, _ = campaign.load()
        if spec.get("target") == target and isinstance(spec.get("harness"), str):
            return str(spec["harness"])
    return None


def harness_of(folder: Path, target: str, given: str | None) -> HarnessSpec:
    """The harness that replays `folder`: `given` (--harness), else the one it is named after;
    UserError naming the folder when neither says."""
    name = given or _named_harness(folder, target)
    if name is None:
        known = ", ".join(list_harnesses(target)) or "none yet"
        raise UserError(
            f"cannot tell which harness replays {str(folder)!r}: name the folder after a "
            f"harness of {target} ({known}) or give --harness")
    return find_harness(target, name)


def corpus_inputs(folders: Sequence[Path], target: str,
                  given: str | None) -> list[CorpusInput]:
    """Each folder checked and paired with its harness, in the order given."""
    pairs = []
    for folder in folders:
        require_corpus_dir(folder)
        pairs.append(CorpusInput(folder, harness_of(folder, target, given)))
    return pairs
