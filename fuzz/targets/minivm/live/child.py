"""`python -m walkfuzz.targets.minivm.live.child OPTIONS_JSON`: one live stress run, its result as
one JSON document on stdout, and its counts so far on stderr while it runs
(walkfuzz.engine.progress.report_status). A bad option prints one line on stderr and exits 2."""

from __future__ import annotations

import json
import signal
import sys

from walkfuzz.core.errors import UserError
from walkfuzz.engine.progress import report_status
from walkfuzz.targets.minivm.live.live import run_live
from walkfuzz.targets.minivm.live.options import StressOptions


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m walkfuzz.targets.minivm.live.child OPTIONS_JSON", file=sys.stderr)
        return 2
    try:
        result = run_live(StressOptions.from_json(json.loads(argv[1])), report_status)
    except UserError as err:
        print(f"walkfuzz stress: {err}", file=sys.stderr)
        return 2
    # the run is over and its result made: an interrupt now (the parent passing a Ctrl-C on)
    # must not cut the one line the parent reads
    for signo in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signo, signal.SIG_IGN)
    json.dump(result, sys.stdout)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
