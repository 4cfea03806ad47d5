"""The one registry of the native target's unwinders: name -> its extension module, library,
how it is initialised, and what building it needs.

Each unwinder is a backend file `native/agents/native/unwinders/wf_unw_<name>.c` built with the
common walk, fuzz and stress sources into an extension of its own (their `unw_*` and
`_Unwind_*` symbols clash in one process), by `python fuzz/core/_build.py unwind-<name>`.
An unwinder is available here when its extension imports; `missing` says in one line why one
cannot be built (no backend file in this tree, a header or library not installed).

Imported by fuzz/core/_build.py by path (it runs before the package is installed): standard
library only.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # fuzz/targets/native/unwinders.py
BACKENDS = ROOT / "native" / "agents" / "native" / "unwinders"
DEFAULT = "libunwind"
LLVM_LIBUNWIND = "/usr/lib/llvm-14/lib/libunwind.so.1"


@dataclass(frozen=True)
class Unwinder:
    name: str
    about: str  # one line for --help and doctor
    library: str  # what a finding names: the soname, or the path it is linked by
    init: str  # how a walk starts, one line
    deb: str  # the Debian package that provides the library (DEB_PACKAGES in the Makefile)
    libraries: tuple[str, ...] = ()  # linked with -l
    link_args: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()  # files the build needs (headers, libraries by path)
    asan: bool = False  # has an ASan flavour (unwind-<name>-asan), for make test's ASan run
    # C files the backend shares with another part of native/ (compiled in, their folder on the
    # include path), relative to the checkout
    shared: tuple[str, ...] = ()

    @property
    def module(self) -> str:
        """The extension: walkfuzz._unwind for libunwind (its name before the others came),
        walkfuzz._unwind_<name> for the others."""
        return "walkfuzz._unwind" if self.name == DEFAULT else f"walkfuzz._unwind_{self.name}"

    @property
    def asan_module(self) -> str:
        return f"{self.module}_asan"

    @property
    def backend(self) -> Path:
        return BACKENDS / f"wf_unw_{self.name}.c"

    @property
    def flavour(self) -> str:
        """fuzz/core/_build.py's name for its build (`unwind` for libunwind, as before)."""
        return "unwind" if self.name == DEFAULT else f"unwind-{self.name}"

    def missing(self) -> str | None:
        """Why it cannot be built here, in one line; None when it can."""
        if not self.backend.is_file():
            return f"not built: no backend {self.backend.relative_to(ROOT)} in this tree"
        for path in self.needs:
            if not Path(path).exists():
                return f"{path} is missing (Debian package {self.deb})"
        return None


UNWINDERS: dict[str, Unwinder] = {u.name: u for u in (
    Unwinder("libunwind", "Debian's libunwind 1.6 (nongnu): unw_init_local2 + unw_step",
             library="libunwind.so.8", deb="libunwind-dev",
             init="unw_init_local2(ucontext, UNW_INIT_SIGNAL_FRAME or 0), then unw_step",
             libraries=("unwind",),
             needs=("/usr/include/x86_64-linux-gnu/libunwind.h",), asan=True),
    Unwinder("llvm", "LLVM's libunwind 14: unw_init_local + unw_step on its own unw_context_t",
             library=LLVM_LIBUNWIND, deb="libunwind-14",
             init="unw_init_local(LLVM unw_context_t filled from the ucontext), then unw_step",
             link_args=(LLVM_LIBUNWIND, "-Wl,-rpath,/usr/lib/llvm-14/lib"),
             needs=(LLVM_LIBUNWIND,), asan=True),
    Unwinder("libgcc", "libgcc_s's _Unwind_Backtrace, through a fake signal frame",
             library="libgcc_s.so.1", deb="libgcc-s1",
             init="_Unwind_Backtrace from a fake rt_sigframe holding the ucontext",
             libraries=("gcc_s",)),
    Unwinder("libdw", "elfutils' libdw: dwfl_attach_state + dwfl_thread_getframes",
             library="libdw.so.1", deb="libdw-dev",
             init="dwfl_linux_proc_report(getpid()), Dwfl_Thread_Callbacks over the ucontext",
             libraries=("dw", "elf"), needs=("/usr/include/elfutils/libdwfl.h",),
             # the Dwfl_Thread_Callbacks walker of remote-memory mode, on live memory here
             shared=("native/agents/snapshot/wf_snap_dw.c",), asan=True),
    Unwinder("fp", "a plain frame-pointer walk (rbp chain), reads through the guard",
             library="walkfuzz (built in)", deb="",
             init="pc, sp, rbp from the ucontext, then [rbp] and [rbp+8] per frame",
             asan=True),
)}


def names() -> tuple[str, ...]:
    return tuple(UNWINDERS)


def get(name: str) -> Unwinder | None:
    return UNWINDERS.get(name)


def unwinder_help(choices: Sequence[str] | None = None, default: str | None = None) -> str:
    """The one help text of --unwinder, the command's and a child process's: the unwinder that
    walks, one of `choices` (None: every one)."""
    listed = ", ".join(names() if choices is None else choices)
    return f"the unwinder that walks, one of {listed}" + (f" (default {default})"
                                                          if default else "")


def add_unwinder_flag(parser: argparse.ArgumentParser, choices: Sequence[str] | None = None, *,
                      repeat: bool = False, required: bool = False) -> None:
    """--unwinder of a child process's parser (the command's is walkfuzz.commands._flags'):
    one of `choices` (None: every one), DEFAULT when not given; `repeat`: any number of them,
    None when not given; `required`: no default."""
    listed = list(names() if choices is None else choices)
    default = None if repeat or required else DEFAULT
    parser.add_argument("--unwinder", choices=listed, action="append" if repeat else "store",
                        default=default, required=required,
                        help=unwinder_help(listed, default))
