"""`walkfuzz coverage CORPUS...`: the source coverage of the walker that several corpora reach
together, each replayed by its own harness (walkfuzz.coverage.run does the work).

Prints the union per walker source file (lines, branches, functions) and a harness x file table
(lines % / branches %); writes the union's HTML and coverage.json (per file, union and each
harness) in the output folder.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from walkfuzz.commands._flags import add_harness, add_out, add_target, add_walker
from walkfuzz.coverage.run import CoverageRequest, measure_coverage
from walkfuzz.coverage.table import render

# What --help shows under "examples" (walkfuzz.commands._help).
EXAMPLES = (
    ("walkfuzz coverage corpora/layouts corpora/bytes corpora/queue corpora/registers",
     "the union of the shipped corpora, each replayed by the harness it is named after"),
    ("walkfuzz coverage reports/fuzz-layouts/corpus",
     "what a campaign's corpus reaches (its harness read from its campaign.json)"),
    ("walkfuzz coverage my-seeds --harness bytes --walker my-srccov.so --out cov",
     "your seeds on your walker, built with --flavour srccov for per-file figures"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "coverage", help="source coverage of the walker reached by corpora, per file",
        description="Replay each CORPUS with its harness on the source-coverage build; print "
                    "the union per walker source file and per harness; write HTML and "
                    "coverage.json.",
    )
    p.add_argument("corpus", type=Path, nargs="+", metavar="CORPUS",
                   help="corpus folder, replayed by the harness it is named after "
                        "(corpora/queue) or that its campaign ran (reports/fuzz-bytes/corpus)")
    add_target(p)
    add_harness(p, "to replay every CORPUS with instead")
    add_walker(p, "to replay with (default: the reference walker)")
    add_out(p, "reports/coverage-HARNESS for corpora of one harness, reports/coverage-minivm "
            "for several")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    result = measure_coverage(CoverageRequest(
        corpora=args.corpus, target=args.target, harness=args.harness, walker=args.walker,
        out=args.out))
    print(render(result))
    return 0
