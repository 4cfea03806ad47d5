"""Replay one perturb input of the native target and print what happened as JSON
(`python -m walkfuzz.targets.native.child_replay [--unwinder NAME] FILE`, libunwind by default):
the child process that `walkfuzz replay` and the reproducer check run, since an input may kill
the process that runs it. The walk is the Replayer's (walkfuzz.targets.native.replay), without a
watchdog; a finding is named by its signature, built as the harness builds it, so it compares
with the one a report stored. Exit 0 clean, 1 a finding."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from walkfuzz.core.paths import read_input
from walkfuzz.targets.native import TARGET
from walkfuzz.targets.native.inputs import PERTURB
from walkfuzz.targets.native.replay import Replayer
from walkfuzz.targets.native.unwinders import add_unwinder_flag
from walkfuzz.targets.protocol import StoredInput


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="walkfuzz.targets.native.child_replay")
    add_unwinder_flag(parser)
    parser.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    stored = StoredInput(str(args.file), TARGET, PERTURB, unwinder=args.unwinder)
    done = Replayer(hang_ns=0).run(read_input(args.file), stored)
    print(json.dumps(done.extra, indent=1))
    return 0 if done.finding is None else 1


if __name__ == "__main__":
    sys.exit(main())
