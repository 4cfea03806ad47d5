"""Building user walker libraries for the simulated VM: the example walker the package ships
(examples/walker/example_walker.c) and any walker a user writes (`walkfuzz build-walker`).

A walker library is C sources compiled against native/include (asgst.h for the API, wf_vm.h
for the VM it walks) into a shared library that wf_walker_load can dlopen. Two flavours:

  plain  cc, -O2: loads anywhere (replay, tests, stress, fuzz without coverage feedback)
  cov    clang -fsanitize=fuzzer-no-link: `walkfuzz fuzz` gets coverage feedback from the
         walker's own branches; it only loads where libFuzzer is (a fuzz worker, --walker check)
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from walkfuzz.core.errors import MissingDependencyError, UserError
from walkfuzz.core.paths import ROOT

INCLUDE = ROOT / "native" / "include"
EXAMPLE_SOURCE = ROOT / "examples" / "walker" / "example_walker.c"
BUILD_DIR = ROOT / "build" / "walkers"
CFLAGS = ["-shared", "-fPIC", "-O2", "-g", "-std=gnu11", "-Wall", "-Wextra", "-Werror"]
# flavour: (compiler environment variable, default compiler, extra flags)
FLAVOURS: dict[str, tuple[str, str, list[str]]] = {
    "plain": ("CC", "cc", []),
    "cov": ("CLANG", "clang", ["-fsanitize=fuzzer-no-link"]),
}


def _compiler(flavour: str) -> list[str]:
    variable, default, _ = FLAVOURS[flavour]
    command = shlex.split(os.environ.get(variable, default))
    if not command or shutil.which(command[0]) is None:
        raise MissingDependencyError(
            f"compiler {default!r} not found on PATH (set ${variable}; needed for the "
            f"{flavour} flavour of a walker library)")
    return command


def build_walker(sources: Sequence[Path], out: Path, flavour: str = "plain",
                 extra_flags: Sequence[str] = ()) -> Path:
    """Compile `sources` into the walker library `out`."""
    if flavour not in FLAVOURS:
        raise UserError(f"unknown walker flavour {flavour!r}; one of {sorted(FLAVOURS)}")
    for source in sources:
        if not source.is_file():
            raise UserError(f"walker source {str(source)!r} does not exist")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")  # atomic: parallel builds are safe
    command = [*_compiler(flavour), *CFLAGS, *FLAVOURS[flavour][2], *extra_flags,
               f"-I{INCLUDE}", *map(str, sources), "-o", str(tmp)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tmp.unlink(missing_ok=True)
        first = (result.stderr.strip().splitlines() or ["no compiler output"])[0]
        raise UserError(f"building walker {out.name!r} failed: {first}")
    tmp.replace(out)
    return out


def example_walker(flavour: str = "plain") -> Path:
    """The example walker library of `flavour`, built if missing or stale."""
    out = BUILD_DIR / f"example-walker-{flavour}.so"
    inputs = [EXAMPLE_SOURCE, *INCLUDE.glob("*.h"), Path(__file__)]
    if out.exists() and out.stat().st_mtime >= max(p.stat().st_mtime for p in inputs):
        return out
    return build_walker([EXAMPLE_SOURCE], out, flavour)


def main(argv: Sequence[str]) -> int:
    """`python -m walkfuzz.targets.minivm.user_walker [FLAVOUR...]`: build the example walker (make
    build)."""
    try:
        for flavour in argv or ["plain"]:
            print(f"built {example_walker(flavour).relative_to(ROOT)}")
    except UserError as err:
        print(f"walkfuzz: example walker: {err}", file=sys.stderr)
        return err.exit_status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
