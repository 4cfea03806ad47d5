# The libunwind target (issue 9): its own extension walkfuzz._unwind (needs libunwind-dev),
# its tests and its benchmark.
#   make build-libunwind   build fuzz/_unwind*.so (also part of `make build`)
#   make test-libunwind    tests/native/test_libunwind_*.py (`make test` runs them in test-core)
#   make bench-libunwind   perturbed walks/s and ns per unw_step (part of `make bench`)

UNWIND_SOURCES := $(wildcard native/agents/libunwind/*.c native/agents/libunwind/*.h \
  native/src/guard*.c native/include/wf_guard.h) fuzz/libunwind/chaingen.py fuzz/_build.py

.PHONY: build-libunwind test-libunwind bench-libunwind

.stamp-unwind: .stamp-build $(UNWIND_SOURCES)
	$(PY) fuzz/_build.py unwind
	@touch $@

build-libunwind: .stamp-unwind
build: .stamp-unwind

# walkfuzz._unwind is built plain only and never loads the flavoured core: not in the ASan run.
ASAN_IGNORE += $(wildcard tests/native/test_libunwind_*.py)

test-libunwind: .stamp-unwind
	@$(RUN_PYTEST) libunwind -- $(PYTEST) $(wildcard tests/native/test_libunwind_*.py)

bench-libunwind: .stamp-unwind
	$(PY) bench/runner.py libunwind
