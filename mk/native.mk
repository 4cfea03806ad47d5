# The native target: real unwinders (fuzz/targets/native/unwinders.py) on real native stacks,
# one extension per unwinder (walkfuzz._unwind for libunwind, walkfuzz._unwind_<name> for the
# others), its tests and its benchmark.
#   make build-native      build fuzz/_unwind*.so of every unwinder this machine can build
#                          (also part of `make build`; the ASan flavours by `make
#                          build-asan`, in `make test`'s prepare step); `make build-libunwind`
#                          is its old name
#   make test-native       tests/native/test_native_*.py (`make test` runs them in test-core
#                          and again, against the ASan flavours, in test-asan)
#   make bench-libunwind   perturbed walks/s and ns per unw_step (part of `make bench`)
#   make bench-native      every unwinder built here on the same inputs (a differential run):
#                          faults, cycles, wrong walks per million and ns per step, written
#                          into docs/native-unwinders.md (`make bench` prints it)

UNWIND_SOURCES := $(wildcard native/agents/native/*.c native/agents/native/*.h \
  native/agents/native/unwinders/*.c native/src/guard/*.[ch] native/include/wf_guard.h \
  native/include/wf_ucontext.h native/include/wf_arch.h native/include/arch/*/*.h) \
  fuzz/targets/native/chaingen.py fuzz/targets/native/unwinders.py fuzz/core/_build.py

.PHONY: build-native build-libunwind test-native test-libunwind bench-libunwind bench-native

.stamp-unwind: .stamp-pip $(UNWIND_SOURCES)
	$(PY) fuzz/core/_build.py unwinders
	@touch $@

build-native: .stamp-unwind
build-libunwind: build-native
build: .stamp-unwind

# The ASan run: walkfuzz.targets.native.extension.load() takes each unwinder's asan module
# (walkfuzz._unwind_asan, _unwind_llvm_asan, ...: the agent and the guard built like the asan
# core) under WALKFUZZ_NATIVE=asan, in the tests and in the worker processes they start, so every
# tests/native/test_native_*.py runs there too. The
# guard's handlers go over ASan's and catch the faults the unwinder takes on perturbed contexts;
# only the supervisor test turns ASan's SIGSEGV handler off in its workers (handle_segv=0), since
# the death it simulates (a fault while libunwind blocks signals) bypasses every handler.
.stamp-unwind-asan: .stamp-pip $(UNWIND_SOURCES)
	CC=clang LDSHARED="clang -shared" $(PY) fuzz/core/_build.py unwinders-asan
	@touch $@

# In `make test`'s prepare step: test-core's libunwind sanitizer campaign runs on _unwind_asan
# too, and would otherwise build it itself (walkfuzz.core.sanitizer.ensure_built).
build-asan: .stamp-unwind-asan

test-native: .stamp-unwind
	@$(RUN_PYTEST) native -- $(PYTEST) $(wildcard tests/native/test_native_*.py)
test-libunwind: test-native

bench-libunwind: .stamp-unwind
	$(PY) bench/runner.py libunwind

bench-native: .stamp-unwind
	$(PY) bench/bench_native.py --write docs/native-unwinders.md

# The generator and stress runs of tests/native/test_native_unwinders.py run the CLI in a
# user's environment (the plain builds): the ASan run would run the same thing twice. Its
# replays of known chains run in the test's environment, on the asan builds there.
ASAN_DESELECT += tests/native/test_native_unwinders.py::test_generator_findings_name_the_unwinder_and_replay_on_it
ASAN_DESELECT += tests/native/test_native_unwinders.py::test_fp_stress_judges_frame_pointer_samples_and_counts_its_known_limit

# The differential run end to end walks 1000 inputs on two unwinders in worker processes and
# replays one in two more; the plain run covers it (its ASan twin took 40 s of the budget, and
# the asan flavour of libunwind is walked by every other test here).
ASAN_DESELECT += tests/native/test_native_differential.py::test_a_differential_run_reports_every_unwinder_and_its_reproducers_replay

# The Replayer's test of a faulting input walks it (and the generated inputs before it) in the
# test's own process: a fault inside libunwind while it has signals blocked ends the process
# whatever handler is installed, which killed an ASan xdist worker once beside a CPU hog (the
# same test passed alone under ASan). The plain run covers it; its other tests run here.
ASAN_DESELECT += tests/native/test_native_replayer.py::test_an_input_replays_to_the_same_finding_under_either_target_name
