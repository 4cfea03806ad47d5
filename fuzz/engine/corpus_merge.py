"""Corpora of several campaigns made one by libFuzzer's own `-merge=1`: the harness script
runs every input of the inputs' corpora and keeps, into an empty folder, the smallest set that
reaches every coverage feature any of them reaches (files named by the SHA-1 of their bytes).

The harness runs as a campaign's worker runs it (walkfuzz.engine.worker.WorkerEnv: target,
walker, the core's build), with the venv's python first on PATH: libFuzzer's merge starts the
script again for its inner pass, through the script's `#!/usr/bin/env python3` line.
Findings the inputs show while they run again are saved under a scratch folder and dropped:
the campaigns' own findings are merged from their folders (walkfuzz.findings.merge).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from walkfuzz.core import sanitizer
from walkfuzz.core.errors import UserError
from walkfuzz.core.native import HARNESS_FLAVOUR, Flavour
from walkfuzz.engine.child import python_command, run_child
from walkfuzz.engine.corpus import entries
from walkfuzz.engine.pool import DEFAULT_TIMEOUT
from walkfuzz.engine.worker import WorkerEnv

# libFuzzer's summary of a merge: "MERGE-OUTER: 12 new files with 345 new features added;
# 67 new coverage edges" (into an empty folder: every file, feature and edge kept).
_SUMMARY = re.compile(r"MERGE-OUTER: (\d+) new files with (\d+) new features added; "
                      r"(\d+) new coverage edges")
LOG_TAIL = 5  # lines of libFuzzer's output an error quotes


@dataclass(frozen=True)
class MergeHarness:
    """What runs the inputs: the harness script and the campaign it belonged to."""

    script: Path
    target: str
    walker: str
    native: Flavour
    max_len: int


@dataclass(frozen=True)
class MergedCorpus:
    files: int  # inputs kept
    features: int
    edges: int


def merge_corpora(harness: MergeHarness, corpora: Sequence[Path], dest: Path) -> MergedCorpus:
    """Merge `corpora` into the empty (or new) folder `dest` with `-merge=1`; UserError
    quoting libFuzzer's last lines when the merge fails."""
    dest.mkdir(parents=True, exist_ok=True)
    if not corpora:
        return MergedCorpus(0, 0, 0)
    with tempfile.TemporaryDirectory(prefix="walkfuzz-merge-") as scratch:
        # libFuzzer runs in the scratch folder: every path it is given is absolute
        argv = python_command(str(harness.script.resolve()), "-merge=1",
                              f"-artifact_prefix={scratch}/", f"-max_len={harness.max_len}",
                              f"-timeout={DEFAULT_TIMEOUT}", str(dest.resolve()),
                              *(str(corpus.resolve()) for corpus in corpora))
        run = run_child(argv, stdin="", cwd=scratch, env=_environ(harness, Path(scratch)))
    found = _SUMMARY.search(run.stderr)
    if run.returncode != 0 or found is None:
        tail = " | ".join(run.stderr.strip().splitlines()[-LOG_TAIL:])
        raise UserError(f"libFuzzer's merge of {', '.join(map(str, corpora))} with "
                        f"{harness.script} failed ({run.returncode}): {tail}")
    return MergedCorpus(len(entries(dest)), int(found.group(2)), int(found.group(3)))


def _environ(harness: MergeHarness, scratch: Path) -> dict[str, str]:
    # A campaign without coverage feedback (--build plain) has none to merge by either.
    flavour = harness.native if harness.native == sanitizer.FLAVOUR else HARNESS_FLAVOUR
    env = WorkerEnv(scratch / "findings", None, harness.target, harness.walker, flavour)
    venv_bin = str(Path(sys.executable).parent)
    extra = sanitizer.environ(scratch) if flavour == sanitizer.FLAVOUR else {}
    return {**os.environ, **env.to_environ(), **extra,
            "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
