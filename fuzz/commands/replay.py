"""`walkfuzz replay [--target T] FILE`: one input again, as the run that found it ran it.

    --target minivm      decode the case, print it as JSON, walk it natively and with the
                         Python spec, show the first difference and the finding
                         (walkfuzz.targets.minivm.replay)
    --target native      the input once more in a fresh process, walked by --unwinder NAME,
                         its walk and signature as JSON
    --target libunwind   the same with --unwinder libunwind
    --target hotspot     a fresh JVM applying only FILE's perturbation record for 10 s
    a native snapshot    (any --target: it is known by its bytes) walked twice by --unwinder
                         libunwind or libdw, or by both when not given, in a fresh process,
                         the walks as JSON (walkfuzz.targets.native.snapshot)

Exit status: 0 clean; 1 a finding (or, minivm, a walk unlike the spec's); 2 a file that is no
input of the target, or a flag the target does not take.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from walkfuzz.commands._flags import add_harness, add_json, add_target, add_unwinder, add_walker
from walkfuzz.core import sanitizer
from walkfuzz.core.paths import input_file
from walkfuzz.core.sanitizer import SANITIZERS
from walkfuzz.targets.native.snapshot.format import is_snapshot_file
from walkfuzz.targets.native.snapshot.replay import replay_and_judge, unwinders_of
from walkfuzz.targets.table import (
    runner_for,
)

# What --help shows under "examples" (walkfuzz.commands._help).
EXAMPLES = (
    ("walkfuzz replay reports/fuzz-bytes/crash-0123abcd --walker my.so",
     "decode a case, walk it natively and with the spec, show the first difference"),
    ("walkfuzz replay corpora/layouts/00ef84916b3a5ac6f24e1997006361b012b279d7",
     "a generator harness's input (its harness known from corpora/layouts/)"),
    ("walkfuzz replay --sanitizer address reports/fuzz-bytes/crash-0123abcd --walker my-asan.so",
     "an asan finding again on the sanitizer build: the report on stderr"),
    ("walkfuzz replay --target libunwind reports/fuzz-libunwind/crash-0123abcd",
     "a libunwind finding once more in a fresh process"),
    ("walkfuzz replay --unwinder libdw snaps/chain-3-0-7.wfsnap",
     "a native stack snapshot walked by libdw through its accessors, twice"),
)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("replay", help="run one input again: a case, a finding, a record")
    p.add_argument("file", help="a case file (corpus entry, finding, crash-*), or the input of "
                   "a libunwind or hotspot finding")
    add_json(p, "the whole report", target="minivm")
    add_walker(p, "to walk FILE with")
    add_unwinder(p)
    add_target(p, of="FILE")
    add_harness(p, "that made FILE: bytes (a case file, the default), or a generator harness "
                "(registers, layouts) whose input is first turned into the case it generates; "
                "a live stress capture (stress) is known by its bytes. libunwind and hotspot: "
                "perturb (their only one)")
    p.add_argument("--sanitizer", choices=SANITIZERS,
                   help="minivm: replay on the sanitizer build (ASan and UBSan), as a "
                   "`walkfuzz fuzz --sanitizer` campaign ran it; reports print it for its findings")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if Path(args.file).exists():  # a device, a FIFO or a huge file: refused before it is read
        input_file(Path(args.file))
    if is_snapshot_file(Path(args.file)):  # a snapshot is the native target's, whatever --target
        return replay_and_judge(Path(args.file), unwinders_of(args.unwinder))
    runner = runner_for("replay", args)  # refuses the flags the target does not take first
    if args.sanitizer is not None:
        sanitizer.run_under_runtime()
    return runner(args)
