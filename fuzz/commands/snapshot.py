"""`walkfuzz snapshot capture|core`: make snapshots for remote-memory mode
(docs/native-snapshots.md) — a live sample of known call chains in this process, or a thread of
a core file — each replayed by `walkfuzz replay [--unwinder U] FILE`.

    capture [--out DIR] [--count N | --chain I,J,...] sampled chains, with their truth
    core CORE -o FILE [--thread N]                    a core file's thread (gcore's or the
                                                      kernel's), no truth
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from walkfuzz.commands._flags import add_out
from walkfuzz.commands._help import finish
from walkfuzz.core.errors import UserError
from walkfuzz.core.paths import output_dir, output_file
from walkfuzz.findings.store import write_atomic
from walkfuzz.targets.native.snapshot.capture import MAX_DEPTH, capture_chain, capture_seeds
from walkfuzz.targets.native.snapshot.core import from_core
from walkfuzz.targets.table import REPORTS_DIR

CAPTURE_EXAMPLES = (
    ("walkfuzz snapshot capture --out snaps --count 8",
     "8 live samples of known chains (depths 1..8), one file each"),
    ("walkfuzz snapshot capture --out snaps --chain 3,0,7",
     "one sample of root -> chain_3 -> chain_0 -> chain_7 -> bottom"),
)
CORE_EXAMPLES = (
    ("walkfuzz snapshot core core.1234 -o p1234.wfsnap",
     "the first thread of a core (gcore -o core 1234) as a snapshot"),
    ("walkfuzz snapshot core core.1234 -o t2.wfsnap --thread 2", "its third thread"),
)
EXAMPLES = (*CAPTURE_EXAMPLES, *CORE_EXAMPLES)
DEFAULT_OUT = REPORTS_DIR / "snapshot-capture"


def replay_command(path: Path) -> str:
    return f"walkfuzz replay {path}"


def chain_arg(text: str) -> list[int]:
    try:
        path = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--chain {text!r} is not comma-separated "
                                         "function numbers") from None
    return path


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("snapshot", help="make native stack snapshots for replay and "
                              "remote-memory fuzzing: live samples or a core file",
                              description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = p.add_subparsers(dest="snapshot_command", metavar="capture|core", required=True)
    cap = sub.add_parser("capture", help="live samples of known chains, with their truth")
    add_out(cap, str(DEFAULT_OUT), what="the folder of the snapshots")
    group = cap.add_mutually_exclusive_group()
    group.add_argument("--count", type=int, default=4,
                       help="chains to sample, depths 1, 2, ... (default 4)")
    group.add_argument("--chain", type=chain_arg, metavar="I,J,...",
                       help=f"one chain: up to {MAX_DEPTH} function numbers 0..15, outermost "
                       "first")
    cap.set_defaults(func=run_capture)
    finish(cap, CAPTURE_EXAMPLES)
    core = sub.add_parser("core", help="a thread of a core file as a snapshot")
    core.add_argument("core", type=Path, metavar="CORE")
    core.add_argument("-o", "--output", type=Path, required=True, metavar="FILE")
    core.add_argument("--thread", type=int, default=0,
                      help="thread number in the core's note order (default 0)")
    core.set_defaults(func=run_core)
    finish(core, CORE_EXAMPLES)


def run_capture(args: argparse.Namespace) -> int:
    out = output_dir(args.out or DEFAULT_OUT)
    if args.chain is not None:
        out.mkdir(parents=True, exist_ok=True)
        written = [out / f"chain-{'-'.join(map(str, args.chain))}.wfsnap"]
        write_atomic(written[0], capture_chain(args.chain).encode())
    else:
        if not 1 <= args.count <= 256:
            raise UserError(f"--count {args.count}: 1 to 256 snapshots")
        written = capture_seeds(out, args.count)
    for path in written:
        print(f"wrote {path}; replay: {replay_command(path)}")
    return 0


def run_core(args: argparse.Namespace) -> int:
    if not args.core.is_file():
        raise UserError(f"core file {str(args.core)!r} does not exist")
    target = output_file(args.output, "--output")
    snapshot = from_core(args.core, args.thread)
    write_atomic(target, snapshot.encode())
    print(f"wrote {target} ({len(snapshot.stack)} stack bytes, "
          f"{len({m.path for m in snapshot.mappings()})} modules); "
          f"replay: {replay_command(target)}")
    return 0
