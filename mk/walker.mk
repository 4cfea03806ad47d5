# The reference walker and the simulated VM, C side (issue 3). Its tests are in tests/native
# (run by `make test`) and its benchmark is bench/bench_walker.py (run by `make bench`).
#   make test-walker      only tests/native/test_reference_walker*.py
#   make million-walker   one million guarded perturbed walks (opt-in, about two minutes)
.PHONY: test-walker million-walker

test-walker: .stamp-build
	@$(RUN_PYTEST) walker -- $(PYTEST) tests/native/test_reference_walker.py \
	  tests/native/test_reference_walker_decode.py tests/native/test_reference_walker_plugin.py \
	  tests/native/test_reference_walker_runner.py

million-walker: .stamp-build
	@$(RUN_PYTEST) million-walker -- env WALKFUZZ_MILLION=1 $(PYTEST) -s -m quality \
	  tests/quality/test_reference_walker_million.py
