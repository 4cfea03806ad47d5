"""Loading walker libraries: a library missing one ASGST symbol is refused with a message naming
exactly that symbol — by the C loader (wf_walker_load), and by the CLI (`walkfuzz fuzz
--walker`, `walkfuzz replay --walker`: one error line, non-zero exit); a path that is not a
shared library is one clear error line; `walkfuzz build-walker` builds a library that loads.

The libraries missing a symbol are the example walker compiled with -DWF_EXAMPLE_OMIT_<SYMBOL>.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from walkfuzz.core.errors import WalkerLibraryError
from walkfuzz.targets.minivm import user_walker
from walkfuzz.targets.minivm.case import native as case_native
from walkfuzz.targets.minivm.walk import Walker
from walkfuzz.targets.minivm.walker_library import check_walker_library

# The functions wf_walker_load binds (native/src/run/run_walker.c), in table order.
REQUIRED = ("ASGST_RunWithIterator", "ASGST_RunWithIteratorFromFrame", "ASGST_NextFrame",
            "ASGST_RewindIterator", "ASGST_State", "ASGST_ThreadState", "ASGST_GetMethodInfo",
            "ASGST_GetClassInfo", "ASGST_Capabilities")
WALKFUZZ = Path(sys.executable).with_name("walkfuzz")
SANITIZER_ENV = ("LD_PRELOAD", "WALKFUZZ_NATIVE", "PYTHONMALLOC")


def without(symbol: str, tmp: Path) -> Path:
    """The example walker without `symbol` (the helpers only it used are then unused)."""
    return user_walker.build_walker([user_walker.EXAMPLE_SOURCE], tmp / f"no-{symbol}.so",
                                    extra_flags=[f"-DWF_EXAMPLE_OMIT_{symbol}",
                                                 "-Wno-unused-function"], check=False)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it: without the sanitizer run's preload (its runtime's
    messages are not the CLI's)."""
    env = {k: v for k, v in os.environ.items() if k not in SANITIZER_ENV}
    return subprocess.run([str(WALKFUZZ), *args], capture_output=True, text=True, timeout=120,
                          env=env)


def assert_one_error_line(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode != 0, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.fixture(scope="module")
def case_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("case") / "case.bin"
    path.write_bytes(case_native.generate(seed=1))
    return path


@pytest.mark.parametrize("symbol", REQUIRED)
def test_the_c_loader_names_the_one_missing_symbol(symbol: str, tmp_path: Path) -> None:
    with pytest.raises(WalkerLibraryError) as caught:
        Walker.library(str(without(symbol, tmp_path)))
    named = [s for s in REQUIRED if s in str(caught.value).split()]
    assert named == [symbol], str(caught.value)


def test_the_complete_example_walker_loads() -> None:
    walker = Walker.library(str(user_walker.example_walker("plain")))
    assert walker.table.next_frame != case_native._native()[0].NULL


@pytest.mark.parametrize("symbol", ["ASGST_NextFrame", "ASGST_GetClassInfo"])
def test_fuzz_refuses_a_walker_missing_a_symbol(symbol: str, tmp_path: Path) -> None:
    done = cli("fuzz", "--target", "minivm", "--walker", str(without(symbol, tmp_path)),
               "--harness", "registers", "--runs", "10", "--out", str(tmp_path / "out"))
    assert_one_error_line(done, symbol)
    assert not (tmp_path / "out" / "findings").exists()  # refused before any worker ran


@pytest.mark.parametrize("symbol", ["ASGST_RunWithIterator", "ASGST_State"])
def test_replay_refuses_a_walker_missing_a_symbol(symbol: str, tmp_path: Path,
                                                  case_file: Path) -> None:
    done = cli("replay", "--walker", str(without(symbol, tmp_path)), str(case_file))
    assert_one_error_line(done, symbol)
    assert done.stdout == ""


def test_a_file_that_is_no_shared_library_is_one_error_line(tmp_path: Path,
                                                            case_file: Path) -> None:
    text = tmp_path / "walker.so"
    text.write_text("not a library\n")
    with pytest.raises(WalkerLibraryError, match="not an ELF shared library"):
        check_walker_library(str(text))
    for command in (["replay", "--walker", str(text), str(case_file)],
                    ["fuzz", "--target", "minivm", "--walker", str(text), "--harness",
                     "registers", "--runs", "10", "--out", str(tmp_path / "out")]):
        assert_one_error_line(cli(*command), str(text), "not an ELF shared library")


def test_an_object_file_is_refused_with_the_loader_reason(tmp_path: Path,
                                                          case_file: Path) -> None:
    obj = tmp_path / "walker.o"
    subprocess.run(["cc", "-c", "-fPIC", f"-I{user_walker.INCLUDE}",
                    str(user_walker.EXAMPLE_SOURCE), "-o", str(obj)], check=True)
    done = cli("replay", "--walker", str(obj), str(case_file))
    assert_one_error_line(done, "cannot load walker", str(obj))


def test_a_missing_path_is_one_error_line(tmp_path: Path, case_file: Path) -> None:
    done = cli("replay", "--walker", str(tmp_path / "nope.so"), str(case_file))
    assert_one_error_line(done, "nope.so", "does not exist")


def test_build_walker_builds_a_loadable_library_and_names_a_missing_symbol(
        tmp_path: Path) -> None:
    out = tmp_path / "mine.so"
    done = cli("build-walker", str(user_walker.EXAMPLE_SOURCE), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert str(out) in done.stdout and out.is_file()
    done = cli("build-walker", str(user_walker.EXAMPLE_SOURCE), "-o", str(out),
               "-D", "WF_EXAMPLE_OMIT_ASGST_State")
    assert_one_error_line(done, "ASGST_State")


REFERENCE = Path(__file__).resolve().parents[2] / "native" / "walkers" / "reference"


def test_build_walker_builds_the_reference_walker_as_the_readme_shows(tmp_path: Path) -> None:
    out = tmp_path / "ref.so"
    sources = sorted(str(p.relative_to(REFERENCE.parents[2])) for p in REFERENCE.glob("*.c"))
    env = {k: v for k, v in os.environ.items() if k not in SANITIZER_ENV}
    done = subprocess.run([str(WALKFUZZ), "build-walker", *sources, "-o", str(out)],
                          capture_output=True, text=True, timeout=120, env=env,
                          cwd=REFERENCE.parents[2])
    assert done.returncode == 0, done.stderr
    assert check_walker_library(str(out)) == out.resolve()


def test_a_library_whose_api_is_hidden_is_told_to_export_it(tmp_path: Path) -> None:
    # the reference walker's sources away from their folder: built without WF_REF_EXPORT, their
    # `#pragma GCC visibility push(hidden)` keeps every symbol local to the library
    for source in REFERENCE.glob("*.c"):
        (tmp_path / source.name).write_bytes(source.read_bytes())
    done = cli("build-walker", *map(str, sorted(tmp_path.glob("*.c"))), "-o",
               str(tmp_path / "ref.so"))
    assert_one_error_line(done, "lacks:", f"{len(REQUIRED)} of them are defined but hidden",
                          "visibility", "-D WF_REF_EXPORT")
    with pytest.raises(WalkerLibraryError, match=r"9 of them are defined but hidden.*visibility"):
        user_walker.build_walker([user_walker.EXAMPLE_SOURCE], tmp_path / "hidden.so",
                                 extra_flags=["-fvisibility=hidden"])
    assert not (tmp_path / "hidden.so").exists()
