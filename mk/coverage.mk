# Source coverage of the reference walker by the shipped corpora (docs/fuzzing.md, "Coverage
# of corpora").
#   make coverage   every corpora/<harness> folder of the minivm target replayed by its harness
#                   on the srccov build: the union per walker file and the harness x file
#                   table; HTML and coverage.json in $(COVERAGE_OUT)
# A minivm harness is harnesses/<name>.py not prefixed by another target's name (libunwind_,
# hotspot_) nor by "_"; its seeds are corpora/<name>.

COVERAGE_OUT ?= reports/coverage-minivm
COVERAGE_CORPORA = $(wildcard $(filter-out corpora/libunwind_% corpora/hotspot_%,\
  $(patsubst harnesses/%.py,corpora/%,$(wildcard harnesses/[!_]*.py))))

.PHONY: coverage

coverage: .stamp-build
	@$(WALKFUZZ) coverage --target minivm $(COVERAGE_CORPORA) --out $(COVERAGE_OUT)

# The source-coverage core (fuzz/_native_srccov*.so), part of `make build` so that the coverage
# tests of test-core find it built (`walkfuzz coverage` also builds it when missing or stale).
.stamp-srccov: .stamp-pip $(NATIVE_SOURCES)
	CC=clang LDSHARED="clang -shared" $(PY) fuzz/core/_build.py srccov
	@touch $@

build: .stamp-srccov
