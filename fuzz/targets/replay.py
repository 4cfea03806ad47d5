"""What `walkfuzz replay --target T FILE` runs for the targets other than minivm and native
(whose replays are walkfuzz.targets.minivm.replay and walkfuzz.targets.native.replay), as named
in walkfuzz.targets.table.TARGETS. Each takes the
parsed arguments and returns the replay's exit status: 0 clean, 1 the finding again."""

from __future__ import annotations

import argparse
from pathlib import Path


def replay_hotspot(args: argparse.Namespace) -> int:
    """The finding's perturbation record alone, on live contexts of a fresh JVM."""
    from walkfuzz.targets.hotspot.runs import replay_and_judge

    return replay_and_judge(Path(args.file))
