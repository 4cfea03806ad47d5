"""The mode of the files walkfuzz writes: what open() would give them, 0666 less the umask.
Files written through a temporary name (mkstemp: 0600) are set to it, so reports and findings
are as readable by the group as any other file the user writes."""

from __future__ import annotations

import os
from pathlib import Path


def new_file_mode() -> int:
    """0666 less the process's umask, read from /proc (setting the umask to learn it would
    race with other threads creating files at that moment)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return 0o666 & ~int(line.split()[1], 8)
    umask = os.umask(0o022)  # a kernel older than 4.7 shows no Umask line
    os.umask(umask)
    return 0o666 & ~umask
