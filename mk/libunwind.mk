# The libunwind target (issue 9): its own extension walkfuzz._unwind (needs libunwind-dev),
# its tests and its benchmark.
#   make build-libunwind   build fuzz/_unwind*.so (also part of `make build`; the ASan flavour
#                          fuzz/_unwind_asan*.so is built by `make test-asan`)
#   make test-libunwind    tests/native/test_libunwind_*.py (`make test` runs them in test-core
#                          and again, against the ASan flavour, in test-asan)
#   make bench-libunwind   perturbed walks/s and ns per unw_step (part of `make bench`)

UNWIND_SOURCES := $(wildcard native/agents/libunwind/*.c native/agents/libunwind/*.h \
  native/src/guard/*.[ch] native/include/wf_guard.h native/include/wf_ucontext.h) fuzz/targets/libunwind/chaingen.py fuzz/core/_build.py

.PHONY: build-libunwind test-libunwind bench-libunwind

.stamp-unwind: .stamp-build $(UNWIND_SOURCES)
	$(PY) fuzz/core/_build.py unwind
	@touch $@

build-libunwind: .stamp-unwind
build: .stamp-unwind

# The ASan run: walkfuzz.targets.libunwind.native.load() takes walkfuzz._unwind_asan (the agent and the
# guard built like the asan core) under WALKFUZZ_NATIVE=asan, in the tests and in the worker
# processes they start, so every tests/native/test_libunwind_*.py runs there too. The guard's
# handlers go over ASan's and catch the faults libunwind takes on perturbed contexts; only the
# supervisor test turns ASan's SIGSEGV handler off in its workers (handle_segv=0), since the
# death it simulates (a fault while libunwind blocks signals) bypasses every handler.
.stamp-unwind-asan: .stamp-build $(UNWIND_SOURCES)
	CC=clang LDSHARED="clang -shared" $(PY) fuzz/core/_build.py unwind-asan
	@touch $@

test-asan: .stamp-unwind-asan

test-libunwind: .stamp-unwind
	@$(RUN_PYTEST) libunwind -- $(PYTEST) $(wildcard tests/native/test_libunwind_*.py)

bench-libunwind: .stamp-unwind
	$(PY) bench/runner.py libunwind
