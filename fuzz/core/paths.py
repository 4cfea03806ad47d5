"""Where the checkout's parts are, for code that builds or reads them (native sources, walker
libraries, harness scripts): the repository root is two folders above this package's core/;
the one check of a corpus folder given on the command line; the one reader of an input file
(a regular file of at most MAX_INPUT_BYTES); and where a command writes: its output folder or
file, checked before any work starts."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from walkfuzz.core.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "fuzz"

# The largest input file walkfuzz reads (replay, minimize, triage, regress). Far above any input
# it writes (libFuzzer's -max_len is at most 32 KiB here; a native snapshot of a deep stack is
# a few MiB); what is larger is no input, and reading it whole could exhaust the memory.
MAX_INPUT_BYTES = 64 << 20

# What a path that is no regular file is, for the message that refuses it.
_FILE_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
               (stat.S_ISSOCK, "a socket"))


def input_file(path: Path, cap: int = MAX_INPUT_BYTES) -> Path:
    """`path` checked as an input file before anything reads it: UserError naming it unless it
    is a regular file of at most `cap` bytes. Checked on its status, never by opening it: a
    FIFO's open would wait for a writer, a device's read would never end."""
    try:
        mode, size = (status := path.stat()).st_mode, status.st_size
    except OSError as err:
        raise UserError(f"input {str(path)!r} cannot be read: {err.strerror}") from None
    if not stat.S_ISREG(mode):
        kind = next((name for is_kind, name in _FILE_KINDS if is_kind(mode)), "no regular file")
        raise UserError(f"input {str(path)!r} is {kind}, not an input file")
    if size > cap:
        raise UserError(f"input {str(path)!r} is {size} bytes, over the {cap}-byte limit of an "
                        "input file")
    return path


def read_input(path: Path, cap: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of input file `path`, checked as input_file does; a file that grew past `cap`
    since is refused too, having read no more than one byte over it."""
    input_file(path, cap)
    try:
        with path.open("rb") as stream:
            data = stream.read(cap + 1)
    except OSError as err:
        raise UserError(f"input {str(path)!r} cannot be read: {err.strerror}") from None
    if len(data) > cap:
        raise UserError(f"input {str(path)!r} is over the {cap}-byte limit of an input file")
    return data


def require_corpus_dir(path: Path) -> None:
    """UserError unless `path` is a folder of inputs, saying what it is instead: a file is not
    a corpus (a corpus is a folder with one input per file), a missing path does not exist."""
    if path.exists() and not path.is_dir():
        raise UserError(f"corpus {str(path)!r} is a file, not a folder: a corpus is a folder "
                        "with one input per file")
    if not path.is_dir():
        raise UserError(f"corpus directory {str(path)!r} does not exist")


def output_dir(path: Path, flag: str = "--out") -> Path:
    """`path` checked as a run's output folder before the run starts, so that a run never ends
    in a traceback after its work: UserError naming it if it is a file, or if the folder it is
    (or the nearest existing one above it, where the run will create it) is a file or cannot
    be written. Creating it is left to the run: bad input found later leaves no empty folder."""
    if path.exists() and not path.is_dir():
        raise UserError(f"{flag} {str(path)!r} is a file, not a folder")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise UserError(f"{flag} {str(path)!r}: {str(existing)!r} is a file, not a folder")
    _probe_writable(existing, f"{flag} {str(path)!r}")
    return path


def output_file(path: Path, flag: str) -> Path:
    """`path` checked before the run as a file the command will write: its folder is created
    if missing; UserError naming it if it is a folder or its folder cannot be written."""
    if path.is_dir():
        raise UserError(f"{flag} {str(path)!r} is a folder; name a file in it")
    parent = path.parent
    if parent.exists() and not parent.is_dir():
        raise UserError(f"{flag} {str(path)!r}: {str(parent)!r} is a file, not a folder")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"{flag} {str(path)!r}: folder {str(parent)!r} cannot be created: "
                        f"{err.strerror}") from None
    _probe_writable(parent, f"{flag} {str(path)!r}")
    return path


def _probe_writable(folder: Path, what: str) -> None:
    """UserError naming `what` unless a file can be made in `folder`. Made and removed at
    once, since permission bits do not tell: root passes every os.access check, and /proc or
    a read-only mount refuse root too."""
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"{what}: {str(folder)!r} is not writable")
    try:
        fd, probe = tempfile.mkstemp(prefix=".walkfuzz-probe-", dir=folder)
    except OSError as err:
        raise UserError(f"{what}: {str(folder)!r} is not writable: {err.strerror}") from None
    os.close(fd)
    os.unlink(probe)
