# The reference walker and the simulated VM, C side (issue 3). Its tests are in tests/native
# (run by `make test`) and its benchmark is bench/bench_walker.py (run by `make bench`).
#   make test-walker      only tests/native/test_reference_walker*.py
#   make million-walker   one million guarded perturbed walks (opt-in, about two minutes)
.PHONY: test-walker million-walker

test-walker: .stamp-build
	$(PY) -m pytest -q tests/native/test_reference_walker.py \
	  tests/native/test_reference_walker_decode.py tests/native/test_reference_walker_plugin.py \
	  tests/native/test_reference_walker_runner.py

million-walker: .stamp-build
	WALKFUZZ_MILLION=1 $(PY) -m pytest -q -s -m quality tests/quality/test_reference_walker_million.py
