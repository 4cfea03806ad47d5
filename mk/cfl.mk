# ClusterFuzzLite / OSS-Fuzz packaging (.clusterfuzzlite/, docs/ci.md).
#   make test-cfl   .clusterfuzzlite/build.sh in a simulated builder (temporary $SRC, $OUT,
#                   $WORK; CC=clang with ASan; tools/compile_python_fuzzer standing in for
#                   OSS-Fuzz's helper), then every fuzzer it made runs 1000 inputs and one finds
#                   a planted bug (tests/cfl). Not part of `make test`: six PyInstaller bundles
#                   take five to eight minutes on 2 cores, past its 15. CI runs it as a second
#                   job, after a passing `make test` (.ci/run).
#   make cfl-build  the same build, its fuzzers left in $(CFL_OUT)

CFL_OUT ?= build/cfl/out
CFL_CFLAGS := -O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address \
  -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link

.PHONY: test-cfl cfl-build

test-cfl: .stamp-build
	@$(RUN_PYTEST) cfl -- env WALKFUZZ_CFL=1 $(PYTEST) tests/cfl

# The source is copied first, as the Dockerfile does: the build replaces fuzz/_native_cov*.so
# with the sanitizer build.
cfl-build: .stamp-build
	rm -rf build/cfl && mkdir -p build/cfl/src/walkfuzz build/cfl/work $(CFL_OUT)
	git ls-files -z --cached --others --exclude-standard | \
	  xargs -0 cp --parents -t build/cfl/src/walkfuzz
	cd build/cfl/src/walkfuzz && PATH=$(CURDIR)/$(VENV)/bin:$$PATH SRC=$(CURDIR)/build/cfl/src \
	  OUT=$(abspath $(CFL_OUT)) WORK=$(CURDIR)/build/cfl/work CC=clang SANITIZER=address \
	  CFLAGS="$(CFL_CFLAGS)" bash .clusterfuzzlite/build.sh
