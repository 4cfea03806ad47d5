"""`walkfuzz bench [--walker PATH.so ...] [--stack NAME ...]`: how fast walkers walk deep
synthetic stacks, in ns per frame, next to a bare frame-pointer chain over the same memory (the
floor) and the reference walker (walkfuzz.targets.minivm.walk_speed). Exit status 1 if a walker
walked a stack wrongly (it is then not timed on it)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from walkfuzz.commands._flags import add_json, add_walker
from walkfuzz.core.duration import Seconds
from walkfuzz.targets.minivm import walk_speed
from walkfuzz.targets.minivm.case import native as case_native
from walkfuzz.targets.minivm.walker_library import check_walker_library

REFERENCE = "reference"
MOST_SECONDS = "600s"


# What --help shows under "examples" (walkfuzz.commands._help).
EXAMPLES = (
    ("walkfuzz bench", "time the reference walker on every stack, 2 s each"),
    ("walkfuzz bench --walker my.so --stack mixed --seconds 10s --json",
     "your walker next to the reference on the mixed stack, as JSON"),
)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "bench", help="time walkers on deep synthetic stacks, next to an fp-chain floor",
        description="Walk deep synthetic stacks with the reference walker and each --walker, "
        "check each walk against the true trace, and time them as a profiler calls them: ns "
        "per physical frame (next to a bare frame-pointer chain over the same memory) and "
        "per frame returned.")
    add_walker(p, "to time next to the reference walker", repeatable=True)
    p.add_argument("--stack", action="append", choices=sorted(walk_speed.STACKS),
                   help="a stack to walk (repeatable; default: all)")
    p.add_argument("--rounds", type=_rounds, default=5, metavar="N",
                   help="timing rounds at least; each figure is the fastest batch of all "
                   "(default 5)")
    p.add_argument("--seconds", type=Seconds("s", zero_ok=True, at_most=MOST_SECONDS),
                   default=2.0, metavar="T",
                   help="go on with rounds until T per stack has passed, to meet a "
                   "spell without neighbours on a shared machine (default 2; at most 600; "
                   "a bare number is seconds)")
    add_json(p, "the figures")
    p.set_defaults(func=run)


def _rounds(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 1000:
        raise argparse.ArgumentTypeError(f"--rounds {text!r}: a whole number from 1 to 1000")
    return int(text)


def run(args: argparse.Namespace) -> int:
    libraries = {str(check_walker_library(path)): path for path in args.walker}
    walkers = {REFERENCE: case_native.load_walker(None)}
    for resolved, given in libraries.items():
        walkers[given] = case_native.load_walker(resolved)
    stacks = [walk_speed.STACKS[name] for name in args.stack or walk_speed.STACKS]
    timings = [walk_speed.measure(stack, walkers, args.rounds, args.seconds) for stack in stacks]
    if args.json:
        print(json.dumps([_to_json(t) for t in timings], indent=2))
    else:
        for t in timings:
            print("\n".join(_table(t)))
    return 1 if any(w.wrong for t in timings for w in t.walkers) else 0


def _per_frame(t: walk_speed.StackTiming, ns_per_walk: float,
               returned: int) -> tuple[float, float]:
    """ns per physical frame and per frame returned."""
    return ns_per_walk / t.physical, ns_per_walk / max(returned, 1)


def _table(t: walk_speed.StackTiming) -> list[str]:
    reference = next(w for w in t.walkers if w.name == REFERENCE)
    ref_ns = reference.ns_per_walk / t.physical if reference.ns_per_walk is not None else None
    floor = "fp chain (floor)"
    width = max(len(floor), *(len(w.name) for w in t.walkers))
    lines = [f"{t.stack.name}: {t.stack.what}, {t.physical} physical frames "
             f"(fastest of {t.rounds} rounds)",
             f"  {'walker':<{width}} {'ns/physical':>11} {'x floor':>8} {'x reference':>11} "
             f"{'returned':>8} {'ns/returned':>11}",
             f"  {floor:<{width}} {t.floor_ns:>11.2f} {1.0:>7.2f}x"]
    for w in t.walkers:
        if w.ns_per_walk is None:
            lines.append(f"  {w.name:<{width}} not timed: walks this stack wrongly, {w.wrong}")
            continue
        physical, returned = _per_frame(t, w.ns_per_walk, w.returned)
        versus = f"{physical / ref_ns:>10.2f}x" if ref_ns else f"{'-':>11}"
        lines.append(f"  {w.name:<{width}} {physical:>11.2f} {physical / t.floor_ns:>7.2f}x "
                     f"{versus} {w.returned:>8} {returned:>11.2f}")
    return lines


def _to_json(t: walk_speed.StackTiming) -> dict[str, Any]:
    walkers = []
    for w in t.walkers:
        entry: dict[str, Any] = {"walker": w.name, "wrong": w.wrong}
        if w.ns_per_walk is not None:
            physical, returned = _per_frame(t, w.ns_per_walk, w.returned)
            entry.update(frames_returned=w.returned, ns_per_physical_frame=physical,
                         ns_per_frame_returned=returned, x_floor=physical / t.floor_ns)
        walkers.append(entry)
    return {"stack": t.stack.name, "what": t.stack.what, "physical_frames": t.physical,
            "rounds": t.rounds,
            "floor_ns_per_link": t.floor_ns, "walkers": walkers}
