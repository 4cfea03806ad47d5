# Every reproducer a report prints runs (tests/native/test_reproducers.py, in test-core): real
# findings per target, the command copied from the report, run as a user runs it.
#   make test-reproducers   only those tests

# They run campaigns, JVMs and `walkfuzz` processes with a user's environment (the default
# build), never the flavoured core in the test process: not in the ASan run.
ASAN_DESELECT += tests/native/test_reproducers.py
# The same for the deep seeds' `walkfuzz replay` (the decoder and walk it runs are in the same
# file's in-process tests, which the ASan run takes).
ASAN_DESELECT += tests/native/test_deep_stacks.py::test_the_shipped_deep_seeds_replay_from_the_cli_at_and_past_the_limit

.PHONY: test-reproducers
test-reproducers: .stamp-build .stamp-unwind
	@$(RUN_PYTEST) reproducers -- $(PYTEST) tests/native/test_reproducers.py
