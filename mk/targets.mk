# Every target behind the shared commands (`walkfuzz fuzz|stress --target minivm|hotspot|
# libunwind`): tests/unit/test_targets_cli.py (dispatch, refusals; in test-core) and
# tests/native/test_targets_e2e.py (one short real run per target; in test-core).

# The end-to-end runs start a JVM and load walkfuzz._unwind, never the flavoured core: not in
# the ASan run.
ASAN_IGNORE += tests/native/test_targets_e2e.py
