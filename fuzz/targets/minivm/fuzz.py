"""`walkfuzz fuzz --target minivm`: a libFuzzer campaign on harnesses/<H>.py
(walkfuzz.targets.campaign_run). Takes the parsed arguments of `walkfuzz fuzz` (the flags the
target does not take were refused already) and returns the exit status: 0 no findings, 1
findings."""

from __future__ import annotations

import argparse

from walkfuzz.targets.campaign_run import run_campaign


def fuzz(args: argparse.Namespace) -> int:
    return run_campaign(args)
