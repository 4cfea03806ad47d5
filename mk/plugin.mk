# User walkers for the simulated VM (issue 9): the example walker of examples/walker/ built as a
# walker library, and the tests any walker library can be put through.
#   make build-walkers   build/walkers/example-walker-{plain,cov}.so (part of `make build`)
#   make test-plugin     tests/native/test_user_walker*.py on the example walker
#   WALKFUZZ_TEST_WALKER=path/to/my-walker.so make test-plugin    the same tests on yours
# `make test` runs these tests with the rest of tests/native (test-core, test-asan).

.PHONY: build-walkers test-plugin

.stamp-walkers: .stamp-build examples/walker/example_walker.c fuzz/targets/minivm/user_walker.py \
  $(wildcard native/include/*.h native/include/arch/*/*.h)
	$(PY) -m walkfuzz.targets.minivm.user_walker plain cov
	@touch $@

build-walkers: .stamp-walkers
build: .stamp-walkers

test-plugin: .stamp-walkers
	@$(RUN_PYTEST) plugin -- $(PYTEST) tests/native/test_user_walker.py \
	  tests/native/test_user_walker_load.py
