"""`walkfuzz merge DIR... [--out DIR]`: output folders of one kind, from many machines, made one.

Campaign folders: corpora through libFuzzer's -merge=1, findings deduplicated by signature
(hits summed, the earliest first sighting kept), sessions kept; stress folders: counters summed
with one breakdown per host. The result is an output folder like its inputs (report.{json,
html,md}; `walkfuzz triage` and `replay` read it; a campaign's resumes with `walkfuzz fuzz`).

Exit status (walkfuzz.core.exit_status): 0 merged, no findings; 1 merged, with findings;
2 bad input (a folder that is missing or no walkfuzz output, folders of different kinds or
targets, an --out that is an input, not empty or not writable: one line naming it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from walkfuzz.commands._flags import add_out
from walkfuzz.core.exit_status import judged
from walkfuzz.targets.merge import CAMPAIGN, merge_outputs

# What --help shows under "examples" (walkfuzz.commands._help).
EXAMPLES = (
    ("walkfuzz merge ci-1/fuzz-layouts ci-2/fuzz-layouts --out reports/fuzz-layouts-all",
     "two machines' campaigns of one harness: one corpus, findings by signature"),
    ("walkfuzz merge host-a/stress-signal host-b/stress-signal --out reports/stress-all",
     "stress runs of many hosts: samples, invalid traces and faults summed and per host"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "merge", help="combine campaign or stress output folders of many machines into one",
        description="Merge output folders of one kind and target: campaign folders (corpora "
        "through libFuzzer's -merge=1, findings by signature with hits summed and the first "
        "sighting kept) or stress folders (figures summed, one breakdown per host).")
    p.add_argument("inputs", type=Path, nargs="+", metavar="DIR",
                   help="output folders of `walkfuzz fuzz` or `walkfuzz stress`")
    add_out(p, "reports/merge-HARNESS for minivm campaigns, reports/merge-MODE for minivm "
            "stress runs, reports/merge-TARGET otherwise", what="the merged folder, new or empty")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    result = merge_outputs(args.inputs, args.out, ["walkfuzz", *sys.argv[1:]])
    what = "campaigns" if result.kind == CAMPAIGN else f"{result.kind} runs"
    print(f"merged {result.inputs} {what} into {result.out}: {result.signatures} signatures, "
          f"{result.stored_inputs} stored inputs")
    if result.corpus is not None:
        print(f"corpus: {result.corpus.files} inputs, {result.corpus.features} features, "
              f"{result.corpus.edges} edges (libFuzzer -merge=1)")
    print(f"report: {result.report['html']} (also {result.report['json'].name}, "
          f"{result.report['md'].name})")
    return judged(result.signatures > 0)
