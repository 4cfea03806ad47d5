"""Which build of the C core a process uses, and loading it: `ffi, lib = native.load()`.

The core is built in four flavours (fuzz/_build.py). A process uses one, chosen by the
environment variable `WALKFUZZ_NATIVE` (default `plain`) unless a caller names one:

  plain   walkfuzz._native         tests, stress, replay, triage
  cov     walkfuzz._native_cov     campaigns; loads atheris's libFuzzer (RTLD_GLOBAL) first
  asan    walkfuzz._native_asan    the ASan/UBSan run; the ASan runtime must be LD_PRELOADed
  srccov  walkfuzz._native_srccov  source-based coverage reports

`make test` runs tests/native a second time with `WALKFUZZ_NATIVE=asan`, so code that takes its
module from `load()` is exercised under the sanitizers without knowing about them.

What only tests and benchmarks call (the crash guard's fault instruments, timing loops, the
queue's signal stress: native/testing/) is not in the core but in a testing extension per
flavour, `load_testing()`: walkfuzz._native_testing, _native_testing_cov, _native_testing_asan.
It is linked against its flavour's core and binds to the copy `load()` loaded, so a process
still has one VM and one guard.
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
TESTING_MODULES: dict[Flavour, str] = {
    "plain": "walkfuzz._native_testing",
    "cov": "walkfuzz._native_testing_cov",
    "asan": "walkfuzz._native_testing_asan",
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


def load_testing(flavour: Flavour | None = None) -> Native:
    """The testing extension of `flavour` (default: the selected one): the functions only tests
    and benchmarks call (native/testing/). Loads the core first; `ffi` shares the core's types,
    so cdata of either module's `ffi` passes to either module's functions."""
    chosen = flavour or selected_flavour()
    if chosen not in TESTING_MODULES:
        raise UserError(f"the {chosen} core has no testing extension; one of {[*TESTING_MODULES]}")
    return _load_testing(chosen)


def module_path(flavour: Flavour | None = None) -> Path:
    """The shared library of a loaded flavour, for dlsym and symbolization."""
    chosen = flavour or selected_flavour()
    _load(chosen)
    return _module_file(MODULES[chosen])


def function_address(name: str, flavour: Flavour | None = None) -> int:
    """Address of the exported C function `name` itself (cffi's `ffi.addressof` gives a wrapper):
    the core's, or else its testing extension's (loaded for it)."""
    return _function_address(name, flavour or selected_flavour())


def _module_file(module: str) -> Path:
    module_file = sys.modules[module].__file__
    assert module_file is not None, f"{module} has no file"
    return Path(module_file)


def _exported(library: Path, name: str) -> int | None:
    try:
        pointer = ctypes.cast(getattr(ctypes.CDLL(str(library)), name), ctypes.c_void_p).value
    except AttributeError:
        return None
    assert pointer is not None, f"{name} resolved to NULL"
    return pointer


@cache
def _function_address(name: str, flavour: Flavour) -> int:
    pointer = _exported(module_path(flavour), name)
    if pointer is None and flavour in TESTING_MODULES:
        _load_testing(flavour)
        pointer = _exported(_module_file(TESTING_MODULES[flavour]), name)
    if pointer is None:
        raise UserError(f"the {flavour} core exports no function {name!r}")
    return pointer


@cache
def _load(flavour: Flavour) -> Native:
    if flavour == "cov":
        _load_libfuzzer()
    if flavour == "asan":
        _require_asan_runtime()
    module = _import_built(MODULES[flavour], flavour, global_symbols=flavour == "cov")
    return Native(module.ffi, module.lib)


@cache
def _load_testing(flavour: Flavour) -> Native:
    _load(flavour)  # first: the testing extension binds to this copy of the core
    target = "testing" if flavour == "plain" else f"testing-{flavour}"
    module = _import_built(TESTING_MODULES[flavour], target)
    return Native(module.ffi, module.lib)


def _import_built(name: str, target: str, global_symbols: bool = False) -> Any:
    """Import an extension module, or say how to build it (fuzz/_build.py TARGET)."""
    try:
        return _import_global(name) if global_symbols else importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name != name:
            raise
        raise MissingDependencyError(
            f"native module {name} is not built "
            f"(run `make build`, or `python fuzz/_build.py {target}`)"
        ) from None


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
