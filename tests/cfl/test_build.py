""".clusterfuzzlite/build.sh run on this machine the way the ClusterFuzzLite / OSS-Fuzz builder
runs it: the source copied to $SRC/walkfuzz, $OUT and $WORK empty folders, CC=clang and the
builder's ASan flags, tools/compile_python_fuzzer standing in for OSS-Fuzz's helper. Then every
fuzzer it produced runs 1000 inputs from its seed corpus, with its .options applied the way the
runner applies them, and the layouts fuzzer on a planted-bug walker crashes as a libFuzzer
fuzzer does. Opt-in (`make test-cfl`, WALKFUZZ_CFL=1): six PyInstaller bundles take minutes.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from walkfuzz.targets.minivm import planted

pytestmark = pytest.mark.cfl

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
WALKFUZZ = VENV_BIN / "walkfuzz"
# What OSS-Fuzz's base-builder sets for SANITIZER=address (-O1, frame pointers, line tables,
# ASan, the libFuzzer coverage instrumentation without its main).
CFLAGS = ("-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address "
          "-fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link")
NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "build", "reports", "__pycache__", "*.so",
                                    ".stamp-*")
LIBFUZZER_CRASH = 77
BUILD_TIMEOUT = 1800
RUN_TIMEOUT = 600
FINDING_LINE = re.compile(r"FindingCrash: walkfuzz (\S+) finding in .*signature (\S+)\)")
LOADED_COUNTERS = re.compile(r"INFO: Loaded \d+ modules\s+\((\d+) inline 8-bit counters\)")
COVERAGE = re.compile(r"\scov: (\d+)")


def expected_fuzzers() -> set[str]:
    """mk/coverage.mk's minivm harnesses (harnesses/<name>.py, no other target's prefix, no _)
    and the libunwind harness."""
    return {p.stem for p in (ROOT / "harnesses").glob("*.py")
            if not p.name.startswith(("_", "hotspot_")) and p.stem != "native_snapshot"}


@dataclass(frozen=True)
class Build:
    src: Path  # $SRC/walkfuzz
    out: Path
    log: str


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    base = tmp_path_factory.mktemp("cfl")
    src, out, work = base / "src", base / "out", base / "work"
    shutil.copytree(ROOT, src / "walkfuzz", ignore=NOT_COPIED)  # the Dockerfile's COPY
    out.mkdir()
    work.mkdir()
    env = {**os.environ, "SRC": str(src), "OUT": str(out), "WORK": str(work), "CC": "clang",
           "CFLAGS": CFLAGS, "SANITIZER": "address", "FUZZING_LANGUAGE": "python",
           "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(src / "walkfuzz" / ".clusterfuzzlite" / "build.sh")],
                          cwd=src / "walkfuzz", env=env, capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    symbolizer = shutil.which("llvm-symbolizer")
    if symbolizer:  # the runner image has one next to the fuzzers; the wrapper names it
        (out / "llvm-symbolizer").symlink_to(symbolizer)
    return Build(src / "walkfuzz", out, done.stdout + done.stderr)


def runner_env(fuzzer: Path, **extra: str) -> dict[str, str]:
    """The environment the runner gives a fuzzer: its .options file's [asan] and [ubsan]
    sections as ASAN_OPTIONS and UBSAN_OPTIONS."""
    options = configparser.ConfigParser()
    options.read(fuzzer.with_name(f"{fuzzer.name}.options"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WALKFUZZ_", "LD_PRELOAD"))}
    for section, variable in (("asan", "ASAN_OPTIONS"), ("ubsan", "UBSAN_OPTIONS")):
        if options.has_section(section):
            env[variable] = ":".join(f"{k}={v}" for k, v in options.items(section))
    return {**env, **extra}


def run_fuzzer(fuzzer: Path, args: list[str], cwd: Path,
               **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(fuzzer), *args], cwd=cwd, env=runner_env(fuzzer, **extra),
                          capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)


def seeds(build: Build, name: str, into: Path) -> Path:
    corpus = into / f"{name}-corpus"
    corpus.mkdir()
    with zipfile.ZipFile(build.out / f"{name}_seed_corpus.zip") as archive:
        archive.extractall(corpus)
    return corpus


def test_every_harness_has_a_packaged_fuzzer_with_seeds_and_options(build: Build) -> None:
    fuzzers = {p.name for p in build.out.iterdir() if p.is_file() and os.access(p, os.X_OK)
               and p.suffix == "" and p.name != "llvm-symbolizer"}
    assert fuzzers == expected_fuzzers(), build.log[-3000:]
    for name in fuzzers:
        wrapper = (build.out / name).read_text()
        assert "LLVMFuzzerTestOneInput" in wrapper and "sanitizer_with_fuzzer.so" in wrapper
        assert (build.out / f"{name}.pkg").stat().st_size > 0
        shipped = {p.name for p in (ROOT / "corpora" / name).iterdir() if p.is_file()}
        with zipfile.ZipFile(build.out / f"{name}_seed_corpus.zip") as archive:
            assert {Path(n).name for n in archive.namelist() if not n.endswith("/")} >= shipped
        options = configparser.ConfigParser()
        options.read(build.out / f"{name}.options")
        assert options.get("asan", "allow_user_segv_handler") == "1"
    assert (build.out / "bytes.dict").read_text().count('="') >= 8


def test_the_core_was_built_with_the_builders_sanitizer(build: Build) -> None:
    core = next(build.src.glob("fuzz/_native_cov.*.so"))
    symbols = subprocess.run(["llvm-nm", "-D", "--undefined-only", str(core)],
                             capture_output=True, text=True, check=True).stdout
    assert "__asan_report_load8" in symbols  # -fsanitize=address from $CFLAGS
    assert "__sanitizer_cov_8bit_counters_init" in symbols  # -fsanitize=fuzzer-no-link


@pytest.mark.parametrize("name", sorted(expected_fuzzers()))
def test_every_fuzzer_runs_a_thousand_inputs(build: Build, name: str, tmp_path: Path) -> None:
    corpus = seeds(build, name, tmp_path)
    fuzzer = build.out / name
    dictionary = [f"-dict={fuzzer}.dict"] if Path(f"{fuzzer}.dict").exists() else []
    done = run_fuzzer(fuzzer, ["-runs=1000", "-seed=1", *dictionary, str(corpus)], tmp_path)
    output = done.stdout + done.stderr
    # The wrapper's preloaded runtime is the libFuzzer that runs (walkfuzz loads atheris's own
    # only when none is preloaded, and the libunwind harness's atheris says which it uses: never
    # its built-in one), and it sees the core's (or for libunwind, the outcome function's)
    # coverage: instrumented modules registered with it, coverage found in the runs.
    assert "Using built-in libfuzzer" not in output, output[-3000:]
    if name.startswith("libunwind_"):
        assert "Using preloaded libfuzzer" in output, output[-3000:]
    loaded = LOADED_COUNTERS.search(output)
    assert loaded is not None and int(loaded.group(1)) > 0, output[-3000:]
    assert max(map(int, COVERAGE.findall(output)), default=0) > 0, output[-3000:]
    if name.startswith("libunwind_") and done.returncode == LIBFUZZER_CRASH:
        # libunwind's own bugs (docs/native.md: cycles, faults) are found within a thousand
        # inputs: a crash is then a walkfuzz finding, and it replays as one.
        assert FINDING_LINE.search(output), output[-3000:]
        artifact = next(tmp_path.glob("crash-*"))
        replayed = subprocess.run([str(WALKFUZZ), "replay", "--target", "libunwind",
                                   str(artifact)], capture_output=True, text=True,
                                  timeout=RUN_TIMEOUT, check=False)
        assert replayed.returncode == 1, replayed.stdout + replayed.stderr
        return
    assert done.returncode == 0, output[-3000:]
    assert re.search(r"Done 1000 runs", output), output[-3000:]


def test_a_planted_bug_is_a_libfuzzer_crash_with_an_artifact(build: Build,
                                                             tmp_path: Path) -> None:
    walker = str(planted.build(planted.planted_bug("frame-size-off-by-one"), "cov"))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    done = run_fuzzer(build.out / "layouts", ["-runs=100000", "-seed=1", str(corpus)], tmp_path,
                      WALKFUZZ_WALKER=walker)
    output = done.stdout + done.stderr
    assert done.returncode == LIBFUZZER_CRASH, output[-3000:]
    raised = FINDING_LINE.search(output)
    assert raised is not None, output[-3000:]
    kind, signature = raised.groups()
    artifacts = sorted(tmp_path.glob("crash-*"))
    assert len(artifacts) == 1, output[-3000:]
    replayed = subprocess.run([str(WALKFUZZ), "replay", "--harness", "layouts", "--walker",
                               walker, str(artifacts[0])], capture_output=True, text=True,
                              timeout=RUN_TIMEOUT, check=False)
    assert replayed.returncode == 1, replayed.stderr
    assert f"finding: {kind} {signature}" in replayed.stdout
