#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build (docs/ci.md): one standalone atheris fuzzer per harness into
# $OUT, packaged by compile_python_fuzzer (a PyInstaller executable and a wrapper that preloads
# the sanitizer runtime with libFuzzer), each with its seed corpus, options and dictionary.
#
# The builder sets $SRC, $OUT, $WORK, $CC and $CFLAGS (the sanitizer and
# -fsanitize=fuzzer-no-link). The C core is built by the project's one build module,
# fuzz/core/_build.py, as the `cov` flavour (the module a harness loads): setuptools adds the
# builder's $CFLAGS to that flavour's flags, so the core carries the sanitizer as well.
#
# Outside the builder (tests/cfl/test_build.py, docs/ci.md "Trying the build"): set the same
# variables; where compile_python_fuzzer is absent, tools/compile_python_fuzzer stands in.

set -eu  # also when run as `bash build.sh`, which ignores the options of the first line
ROOT=${WALKFUZZ_SRC:-$SRC/walkfuzz}
cd "$ROOT"

# Fuzzers: the minivm harnesses (harnesses/<name>.py, not prefixed by another target's name nor
# by "_", the rule of mk/coverage.mk) and the libunwind harness.
fuzzers=()
for harness in harnesses/[!_]*.py; do
  name=$(basename "$harness" .py)
  # native_snapshot: its seeds are live samples of the fuzzer's own modules, taken at run time,
  # and it needs libdw; not packaged yet.
  case "$name" in hotspot_*|native_snapshot) continue ;; esac
  fuzzers+=("$name")
done
# $WALKFUZZ_FUZZERS (names, space-separated) builds only those.
if [ -n "${WALKFUZZ_FUZZERS:-}" ]; then
  read -r -a fuzzers <<< "$WALKFUZZ_FUZZERS"
fi

# The project's runtime dependencies, where the builder lacks them (pyproject.toml lists them;
# tools/pip_requirements.py prints them shell-quoted, which xargs reads).
python3 tools/pip_requirements.py | xargs python3 -m pip install -q

export LDSHARED="$CC -shared"
python3 fuzz/core/_build.py cov
python3 fuzz/core/_build.py unwind

# PyInstaller finds the package `walkfuzz` (the folder fuzz/) through a link of that name.
package_path=$WORK/walkfuzz-package
mkdir -p "$package_path"
ln -sfn "$ROOT/fuzz" "$package_path/walkfuzz"

# The runtime the wrapper preloads: atheris's ASan or UBSan runtime with libFuzzer linked in.
# OSS-Fuzz's compile step puts it there; copied when it is not.
if [ ! -f "$OUT/sanitizer_with_fuzzer.so" ]; then
  case "${SANITIZER:-address}" in
    undefined) runtime=ubsan_with_fuzzer.so ;;
    *) runtime=asan_with_fuzzer.so ;;
  esac
  cp "$(python3 -c 'import atheris; print(atheris.path())')/$runtime" \
    "$OUT/sanitizer_with_fuzzer.so"
fi

compile=$(command -v compile_python_fuzzer || echo "$ROOT/tools/compile_python_fuzzer")
entries=$WORK/walkfuzz-fuzzers
mkdir -p "$entries"
for name in "${fuzzers[@]}"; do
  # The harness as it is, after a line that makes a finding a crash (walkfuzz.engine.worker,
  # WALKFUZZ_ON_FINDING): libFuzzer then writes the input as crash-<sha1> and exits with its
  # crash status, which is what ClusterFuzzLite and OSS-Fuzz read.
  { echo 'import os; os.environ.setdefault("WALKFUZZ_ON_FINDING", "crash")'
    cat "harnesses/$name.py"; } > "$entries/$name.py"
  extension=walkfuzz._native_cov
  case "$name" in libunwind_*) extension=walkfuzz._unwind ;; esac
  "$compile" "$entries/$name.py" --paths "$package_path" --hidden-import _cffi_backend \
    --hidden-import "$extension"

  if [ -d "corpora/$name" ]; then
    rm -f "$OUT/${name}_seed_corpus.zip"
    (cd "corpora/$name" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)
  fi
  if [ -f ".clusterfuzzlite/$name.dict" ]; then
    cp ".clusterfuzzlite/$name.dict" "$OUT/$name.dict"
  fi
  # The crash guard installs its SIGSEGV and SIGBUS handlers over ASan's (docs/guard.md,
  # "Sanitizers"); ClusterFuzz's default options forbid that, a fuzzer's .options file allows it.
  # The generator's hashes wrap unsigned integers on purpose: OSS-Fuzz's UBSan flags check
  # unsigned overflow, and its own UBSAN_OPTIONS silence it, as these do.
  cat > "$OUT/$name.options" <<OPTIONS
[asan]
allow_user_segv_handler = 1
handle_segv = 1
handle_sigbus = 1
detect_leaks = 0
[ubsan]
print_stacktrace = 1
halt_on_error = 1
silence_unsigned_overflow = 1
OPTIONS
done
