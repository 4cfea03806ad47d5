"""What `walkfuzz replay --target T FILE` runs for the native target and its libunwind alias,
as named in walkfuzz.targets.table.TARGETS (every other target's is its package's
replay.replay). Each takes the parsed arguments and returns the replay's exit status: 0 clean,
1 the finding again."""

from __future__ import annotations

import argparse
from pathlib import Path


def replay_libunwind(args: argparse.Namespace) -> int:
    """The input once more in a fresh process (walkfuzz.targets.native.runs)."""
    from walkfuzz.targets.native.runs import replay_and_judge

    return replay_and_judge(Path(args.file))


def replay_native(args: argparse.Namespace) -> int:
    """The input once more in a fresh process, walked by --unwinder's extension; with
    --unwinder all or a comma list, by every one of them, the per-unwinder table printed
    (walkfuzz.targets.native.differential.cli)."""
    from walkfuzz.targets.native.differential.cli import is_differential, replay_differential_file
    from walkfuzz.targets.native.runs import replay_and_judge
    from walkfuzz.targets.native.unwinders import DEFAULT

    if is_differential(args.unwinder):
        return replay_differential_file(Path(args.file), args.unwinder)
    return replay_and_judge(Path(args.file), args.unwinder or DEFAULT)
