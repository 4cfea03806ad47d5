"""Where the checkout's parts are, for code that builds or reads them (native sources, walker
libraries, harness scripts): the repository root is two folders above this package's core/."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "fuzz"
