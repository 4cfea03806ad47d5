# Sanitizer campaigns (`walkfuzz fuzz --sanitizer address|undefined`): the sancov core (ASan,
# UBSan and coverage; a campaign also builds it when missing or stale) with atheris's
# asan_with_fuzzer.so preloaded in each worker (walkfuzz.core.sanitizer). Part of `make build`,
# so the sanitizer tests of test-core find it built.
#   make test-sanitizer    tests/unit/test_cli_sanitizer.py (test-core runs it in `make test`)
#   make bench-sanitizer   exec/s of an ASan campaign next to the cov build (part of `make bench`)

.PHONY: test-sanitizer bench-sanitizer

.stamp-sancov: .stamp-build $(NATIVE_SOURCES)
	CC=clang LDSHARED="clang -shared" $(PY) fuzz/core/_build.py sancov
	@touch $@

build: .stamp-sancov

test-sanitizer: .stamp-build
	@$(RUN_PYTEST) sanitizer -- $(PYTEST) -n 2 tests/unit/test_cli_sanitizer.py

bench-sanitizer: .stamp-build
	$(PY) bench/runner.py sanitizer
