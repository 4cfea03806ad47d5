# Remote-memory mode (native/agents/snapshot/, docs/native-snapshots.md): its extension
# walkfuzz._snapshot (libunwind's generic library and libdw; libunwind-dev, libdw-dev), its tests
# and its benchmark.
#   make build-snapshot   fuzz/_snapshot*.so (part of `make build`; the ASan flavour
#                         fuzz/_snapshot_asan*.so by `make build-asan`, in `make test`'s
#                         prepare step)
#   make test-snapshot    tests/native/test_snapshot_*.py (`make test` runs them in test-core,
#                         the in-process ones again against the ASan flavour in test-asan)
#   make bench-snapshot   snapshot walks/s per unwinder (part of `make bench`)

SNAPSHOT_SOURCES := $(wildcard native/agents/snapshot/*.[ch] native/src/guard/*.[ch] \
  native/include/wf_guard.h native/include/wf_ucontext.h native/include/wf_arch.h \
  native/include/arch/*/*.h) fuzz/targets/native/chaingen.py \
  fuzz/core/_build.py

.PHONY: build-snapshot test-snapshot bench-snapshot clean-snapshot

.stamp-snapshot: .stamp-pip $(SNAPSHOT_SOURCES)
	$(PY) fuzz/core/_build.py snapshot
	@touch $@

build-snapshot: .stamp-snapshot
build: .stamp-snapshot

.stamp-snapshot-asan: .stamp-pip $(SNAPSHOT_SOURCES)
	CC=clang LDSHARED="clang -shared" $(PY) fuzz/core/_build.py snapshot-asan
	@touch $@

build-asan: .stamp-snapshot-asan

# The native target's libdw unwinder (built with every unwinder by mk/native.mk) shares
# remote-memory mode's Dwfl walker, native/agents/snapshot/wf_snap_dw.c.
.stamp-unwind .stamp-unwind-asan: $(SNAPSHOT_SOURCES)

# They run `walkfuzz` and gcore with a user's environment (the default build), never the
# flavoured extension in the test process: not in the ASan run.
ASAN_DESELECT += tests/native/test_snapshot_cli.py
# The same for a native campaign's findings replayed from their report and by triage (the
# capture of a finding's walk is checked in-process in the same file, in the ASan run too).
ASAN_DESELECT += tests/native/test_native_finding_snapshots.py::test_native_findings_replay_from_the_report_and_in_triage

test-snapshot: .stamp-snapshot .stamp-unwind
	@$(RUN_PYTEST) snapshot -- $(PYTEST) $(wildcard tests/native/test_snapshot_*.py) \
	  tests/native/test_native_libdw_walks.py

bench-snapshot: .stamp-snapshot
	$(PY) bench/runner.py snapshot

clean: clean-snapshot
clean-snapshot:
	rm -f fuzz/_snapshot*.so fuzz/_snapshot*.c .stamp-snapshot .stamp-snapshot-asan
