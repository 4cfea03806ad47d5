# Sanitizer campaigns (`walkfuzz fuzz --sanitizer address|undefined`): the asan core (also the
# ASan test run's, built by .stamp-asan, or by the first sanitizer campaign) with atheris's
# asan_with_fuzzer.so preloaded in each worker (walkfuzz.core.sanitizer).
#   make test-sanitizer    tests/unit/test_cli_sanitizer.py (test-core runs it in `make test`)
#   make bench-sanitizer   exec/s of an ASan campaign next to the cov build (part of `make bench`)

.PHONY: test-sanitizer bench-sanitizer

test-sanitizer: .stamp-build
	@$(RUN_PYTEST) sanitizer -- $(PYTEST) -n 2 tests/unit/test_cli_sanitizer.py

bench-sanitizer: .stamp-build
	$(PY) bench/runner.py sanitizer
