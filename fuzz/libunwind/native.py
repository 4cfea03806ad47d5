"""Loading walkfuzz._unwind, the libunwind target's own extension (built apart from the core,
so the core builds where libunwind is absent)."""

from __future__ import annotations

import importlib
from types import ModuleType

from walkfuzz.errors import MissingDependencyError

MODULE = "walkfuzz._unwind"
BUILD_COMMAND = "python fuzz/_build.py unwind  (needs libunwind-dev)"


def load() -> ModuleType:
    """The compiled module (ffi, lib); MissingDependencyError naming the module if absent."""
    try:
        return importlib.import_module(MODULE)
    except ImportError as err:
        raise MissingDependencyError(
            f"{MODULE} is not built or libunwind is missing ({err}); build it with "
            f"{BUILD_COMMAND}"
        ) from err
