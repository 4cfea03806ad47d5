"""The HotSpot target's replay: `walkfuzz replay --target hotspot FILE` runs the finding's
perturbation record alone on live contexts of a fresh JVM (seconds). Triage does not: its
Replayer gives the finding as stored beside the input (walkfuzz.targets.protocol.stored_replay),
grouped by that description, not replayed."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from walkfuzz.targets.protocol import Replay, StoredInput, stored_replay

JVM_FAULT_CLASS = "jvm-fault"  # a fault in libjvm.so: the JVM's own regions are unknown here


def replay(args: argparse.Namespace) -> int:
    """The finding's perturbation record alone, on live contexts of a fresh JVM."""
    from walkfuzz.targets.hotspot.runs import replay_and_judge

    return replay_and_judge(Path(args.file))


def _fault_class(doc: Mapping[str, object]) -> str:
    return JVM_FAULT_CLASS


class Replayer:
    """A stored HotSpot finding as its description says: a JVM run per input is too slow."""

    def __init__(self, hang_ns: int, key: str) -> None:
        del hang_ns, key  # nothing runs in this process

    def run(self, data: bytes, stored: StoredInput) -> Replay:
        return stored_replay(stored, _fault_class)


def process_key(stored: StoredInput) -> str:
    return ""


def alternatives(stored: StoredInput) -> list[StoredInput]:
    return []
