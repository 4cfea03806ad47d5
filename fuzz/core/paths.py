"""Where the checkout's parts are, for code that builds or reads them (native sources, walker
libraries, harness scripts): the repository root is two folders above this package's core/;
and the one check of a corpus folder given on the command line."""

from __future__ import annotations

from pathlib import Path

from walkfuzz.core.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "fuzz"


def require_corpus_dir(path: Path) -> None:
    """UserError unless `path` is a folder of inputs, saying what it is instead: a file is not
    a corpus (a corpus is a folder with one input per file), a missing path does not exist."""
    if path.exists() and not path.is_dir():
        raise UserError(f"corpus {str(path)!r} is a file, not a folder: a corpus is a folder "
                        "with one input per file")
    if not path.is_dir():
        raise UserError(f"corpus directory {str(path)!r} does not exist")
