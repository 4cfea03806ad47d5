"""`--load N`: N processes that keep a CPU busy while a stress run samples, so a run shows what
a walker does on a machine with every core taken (CI's machines are shared; a check that
holds only on an idle machine is no check).

Each hog is a Python busy loop in a process of its own (a thread would share our GIL). It
watches its parent and exits once the parent is gone, so a killed run leaves no hog behind.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from walkfuzz.core.errors import UserError
from walkfuzz.engine.child import DEVNULL, kill_group, python_command, start_child

MAX_LOAD = 64
_HOG = (
    "import os\n"
    "parent = os.getppid()\n"
    "while os.getppid() == parent:\n"
    "    for _ in range(200_000):\n"
    "        pass\n"
)


def check_load(n: int) -> int:
    if not 0 <= n <= MAX_LOAD:
        raise UserError(f"load {n} is not in 0..{MAX_LOAD} (CPU-hog processes)")
    return n


@contextmanager
def cpu_load(n: int) -> Iterator[list[subprocess.Popen[str]]]:
    """Run n CPU-hog processes for the duration of the block."""
    hogs = [start_child(python_command("-c", _HOG), stdin=DEVNULL, stdout=DEVNULL,
                        stderr=DEVNULL) for _ in range(check_load(n))]
    try:
        yield hogs
    finally:
        for hog in hogs:
            kill_group(hog)


def cores() -> int:
    """CPUs this process may run on: one hog each takes them all."""
    return len(os.sched_getaffinity(0))
