"""An expensive run that several tests check, made once per test session, whichever xdist
worker asks first.

A module- or session-scoped fixture is made once per xdist worker: tests spread over two
workers would run the same campaign twice, side by side. `shared(factory, name)` is a folder
of the session's temporary directory that every worker of the session sees, held under an
exclusive lock while the caller makes (or reads) what is in it. The first caller makes the
run; the others wait for it and read it. A caller that fails (an assertion) leaves no marker
behind, and the next one makes the run again and fails on its own.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


def session_dir(factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this test session shares: an xdist worker's base temporary
    directory is popen-gwN inside the session's own."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextmanager
def shared(factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """The session's folder `name` (not created), locked against the other workers."""
    root = session_dir(factory) / "shared"
    root.mkdir(exist_ok=True)
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield root / name


def once(factory: pytest.TempPathFactory, name: str,
         make: Callable[[Path], Mapping[str, Any]]) -> dict[str, Any]:
    """`make(folder)`'s JSON result, made in the shared folder `name` by the first caller of
    the session and read back by every later one."""
    with shared(factory, name) as folder:
        result = folder / "result.json"
        if not result.exists():
            folder.mkdir(exist_ok=True)
            made = make(folder)
            result.write_text(json.dumps(made))
        loaded: dict[str, Any] = json.loads(result.read_text())
        return loaded
