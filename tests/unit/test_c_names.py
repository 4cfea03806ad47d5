"""One file-naming rule under native/ (CONTRIBUTING.md, house rules): a C file is
`<prefix>_<idea>.c`, or `<prefix>.c` for its folder's central file, with one prefix per folder."""

from __future__ import annotations

from walkfuzz.core.paths import ROOT

NATIVE = ROOT / "native"
# folder -> the prefixes of its files (native/testing/: the core folder a file exercises)
PREFIXES = {
    **{f"src/{folder}": (folder,) for folder in
       ("api", "case", "gen", "guard", "live", "queue", "run", "vm")},
    "walkers/reference": ("ref",),
    "testing": ("guard", "live", "queue", "run"),
    "agents/hotspot": ("wf_hs",),
    "agents/native": ("wf_uw",),
    "agents/native/unwinders": ("wf_unw",),
    "agents/snapshot": ("wf_snap",),
}


def test_every_c_file_is_named_by_its_folders_prefix() -> None:
    misnamed = []
    for path in sorted(NATIVE.rglob("*.c")):
        folder = path.parent.relative_to(NATIVE).as_posix()
        assert folder in PREFIXES, f"{folder}/ has no prefix in CONTRIBUTING.md's rule"
        if not any(path.stem == p or path.stem.startswith(f"{p}_") for p in PREFIXES[folder]):
            misnamed.append(str(path.relative_to(ROOT)))
    assert misnamed == []
