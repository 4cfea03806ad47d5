"""`walkfuzz fuzz --target native --harness snapshot --unwinder libunwind|libdw`: the libFuzzer
campaign engine (walkfuzz.targets.campaign_run) on harnesses/native_snapshot.py, its workers told
the unwinder through the environment (UNWINDER_ENV). Without --out it writes
reports/fuzz-native-snapshot-<unwinder>: campaigns of the two unwinders resume apart."""

from __future__ import annotations

import argparse
import os

from walkfuzz.core.errors import UserError
from walkfuzz.targets.campaign_run import run_campaign
from walkfuzz.targets.native.snapshot.native import load
from walkfuzz.targets.native.snapshot.walk import UNWINDER_ENV, UNWINDERS
from walkfuzz.targets.table import default_out

DEFAULT_UNWINDER = "libunwind"


def fuzz_snapshot(args: argparse.Namespace) -> int:
    unwinder = args.unwinder or DEFAULT_UNWINDER
    if unwinder not in UNWINDERS:
        raise UserError(f"--unwinder {unwinder!r} does not walk snapshots; --harness snapshot "
                        f"takes {', '.join(sorted(UNWINDERS))}")
    load()  # a missing extension is one line here, not one in every worker
    os.environ[UNWINDER_ENV] = unwinder
    args.out = args.out or default_out("fuzz", "native", f"native-snapshot-{unwinder}")
    return run_campaign(args)
