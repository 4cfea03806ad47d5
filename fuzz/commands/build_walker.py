"""`walkfuzz build-walker SOURCE.c... -o PATH.so [--flavour plain|cov|asan|srccov]`: compile a
user's walker for the simulated VM against the API headers (native/include), then check it the way
`--walker` will (every ASGST symbol present) before it is renamed to PATH.so, so a library
at PATH.so is one that loads."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from walkfuzz.core.paths import output_file
from walkfuzz.targets.minivm.planted import WALKER_SOURCES
from walkfuzz.targets.minivm.user_walker import FLAVOURS, build_walker

# The define that exports the reference walker's ASGST symbols: the core compiles the same
# sources in with them hidden, so that a walker library loaded beside it binds to its own.
REFERENCE_EXPORT = "WF_REF_EXPORT"

# What --help shows under "examples" (walkfuzz.commands._help).
EXAMPLES = (
    ("walkfuzz build-walker my_walker.c -o my.so",
     "a walker library for --walker (plain: loads in every command)"),
    ("walkfuzz build-walker my_walker.c -o my-cov.so --flavour cov -D MY_FIX=1",
     "the coverage build a campaign wants"),
    ("walkfuzz build-walker my_walker.c -o my-asan.so --flavour asan",
     "the build `walkfuzz fuzz --sanitizer address --walker my-asan.so` wants"),
)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "build-walker", help="compile a walker library for --walker and check it loads",
        description="Compile C sources against asgst.h and wf_vm.h into a walker library, then "
        "load it as --walker does. See docs/writing-a-walker.md.")
    p.add_argument("sources", nargs="+", type=Path, metavar="SOURCE.c")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="PATH.so")
    p.add_argument("--flavour", choices=sorted(FLAVOURS), default="plain",
                   help="plain (default; loads anywhere), cov (coverage feedback for "
                   "`walkfuzz fuzz`; clang -fsanitize=fuzzer-no-link), asan (ASan, UBSan and "
                   "coverage feedback, for `walkfuzz fuzz --sanitizer`) or srccov (the walker's "
                   "own files in `walkfuzz coverage`; clang -fcoverage-mapping)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="a preprocessor definition (repeatable)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    defines = list(args.defines)
    if any(source.resolve().parent == WALKER_SOURCES for source in args.sources) and \
            REFERENCE_EXPORT not in {d.partition("=")[0] for d in defines}:
        defines.append(REFERENCE_EXPORT)  # the reference walker's API is hidden without it
    out = build_walker(args.sources, output_file(args.output, "--output"), args.flavour,
                       [f"-D{d}" for d in defines])
    print(f"built {out.resolve()}")
    return 0
