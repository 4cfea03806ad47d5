"""Which build of the C core a process uses, and loading it: `ffi, lib = native.load()`.

The core is built in four flavours (fuzz/_build.py). A process uses one, chosen by the
environment variable `WALKFUZZ_NATIVE` (default `plain`) unless a caller names one:

  plain   walkfuzz._native         tests, stress, replay, triage
  cov     walkfuzz._native_cov     campaigns; loads atheris's libFuzzer (RTLD_GLOBAL) first
  asan    walkfuzz._native_asan    the ASan/UBSan run; the ASan runtime must be LD_PRELOADed
  srccov  walkfuzz._native_srccov  source-based coverage reports

`make test` runs tests/native a second time with `WALKFUZZ_NATIVE=asan`, so code that takes its
module from `load()` is exercised under the sanitizers without knowing about them.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import sys
from functools import cache
from pathlib import Path
from typing import Any, Literal, NamedTuple, get_args

from walkfuzz.errors import MissingDependencyError, UserError

Flavour = Literal["plain", "cov", "asan", "srccov"]
FLAVOURS: tuple[Flavour, ...] = get_args(Flavour)
FLAVOUR_ENV = "WALKFUZZ_NATIVE"
MODULES: dict[Flavour, str] = {
    "plain": "walkfuzz._native",
    "cov": "walkfuzz._native_cov",
    "asan": "walkfuzz._native_asan",
    "srccov": "walkfuzz._native_srccov",
}
ASAN_RUNTIME_HINT = "LD_PRELOAD=$(clang -print-file-name=libclang_rt.asan-x86_64.so)"


class Native(NamedTuple):
    """A loaded flavour of the core: cffi's `ffi` and `lib` objects."""

    ffi: Any
    lib: Any


def selected_flavour() -> Flavour:
    """The flavour named by $WALKFUZZ_NATIVE, `plain` when it is unset or empty."""
    value = os.environ.get(FLAVOUR_ENV) or "plain"
    if value not in FLAVOURS:
        raise UserError(f"{FLAVOUR_ENV}={value!r} is not a native flavour; one of {FLAVOURS}")
    return value


def load(flavour: Flavour | None = None) -> Native:
    """The core in `flavour` (default: the selected one), imported once per process."""
    return _load(flavour or selected_flavour())


def module_path(flavour: Flavour | None = None) -> Path:
    """The shared library of a loaded flavour, for dlsym and symbolization."""
    chosen = flavour or selected_flavour()
    _load(chosen)
    module_file = sys.modules[MODULES[chosen]].__file__
    assert module_file is not None, f"{MODULES[chosen]} has no file"
    return Path(module_file)


def function_address(name: str, flavour: Flavour | None = None) -> int:
    """Address of the exported C function `name` itself (cffi's `ffi.addressof` gives a wrapper)."""
    return _function_address(name, flavour or selected_flavour())


@cache
def _function_address(name: str, flavour: Flavour) -> int:
    library = ctypes.CDLL(str(module_path(flavour)))
    try:
        pointer = ctypes.cast(getattr(library, name), ctypes.c_void_p).value
    except AttributeError:
        raise UserError(f"the {flavour} core exports no function {name!r}") from None
    assert pointer is not None, f"{name} resolved to NULL"
    return pointer


@cache
def _load(flavour: Flavour) -> Native:
    if flavour == "cov":
        _load_libfuzzer()
    if flavour == "asan":
        _require_asan_runtime()
    try:
        module = _import_global(MODULES[flavour]) if flavour == "cov" else importlib.import_module(
            MODULES[flavour]
        )
    except ModuleNotFoundError as err:
        if err.name != MODULES[flavour]:
            raise
        raise MissingDependencyError(
            f"native module {MODULES[flavour]} is not built "
            f"(run `make build`, or `python fuzz/_build.py {flavour}`)"
        ) from None
    return Native(module.ffi, module.lib)


def _import_global(name: str) -> Any:
    """Import with RTLD_NOW|RTLD_GLOBAL, the recipe that lets the cov flavour find libFuzzer."""
    flags = sys.getdlopenflags()
    sys.setdlopenflags(os.RTLD_NOW | os.RTLD_GLOBAL)
    try:
        return importlib.import_module(name)
    finally:
        sys.setdlopenflags(flags)


def _load_libfuzzer() -> None:
    """The cov flavour calls libFuzzer's coverage callbacks: atheris's libFuzzer must be global."""
    try:
        _import_global("atheris.core_with_libfuzzer")
    except ImportError as err:
        raise MissingDependencyError(
            f"the cov flavour needs atheris with libFuzzer (pip install atheris): {err}"
        ) from None


def _require_asan_runtime() -> None:
    if not hasattr(ctypes.CDLL(None), "__asan_init"):
        raise MissingDependencyError(
            f"the asan flavour needs the ASan runtime loaded first: run under {ASAN_RUNTIME_HINT}"
        )
