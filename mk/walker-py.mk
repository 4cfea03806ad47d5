# Python half of the reference walker (issue 3): case format, walker spec, replay.
#   make test-walker-py   unit + native tests of the case codec and the walker spec (fast; `make
#                         test` runs the same files in test-core and test-asan)
#   make soak-walker-py   the same with the big Hypothesis profile
#   make million-walker-py  >= 1,000,000 guarded walks, a sample compared with the spec
.PHONY: test-walker-py soak-walker-py million-walker-py
WALKER_PY_TESTS := tests/unit/test_case.py tests/unit/test_case_json.py tests/unit/test_spec.py \
  tests/native/test_case_vs_c.py tests/native/test_walker_vs_spec.py

test-walker-py: .stamp-build
	@$(RUN_PYTEST) walker-py -- $(PYTEST) $(WALKER_PY_TESTS)

soak: soak-walker-py
soak-walker-py: .stamp-build
	@$(RUN_PYTEST) soak-walker-py -- env WALKFUZZ_HYPOTHESIS=soak $(PYTEST) $(WALKER_PY_TESTS)

million-walker-py: .stamp-build
	@$(RUN_PYTEST) million-walker-py -- env WALKFUZZ_MILLION=1 $(PYTEST) -s -m quality \
	  tests/quality/test_walker_vs_spec_million.py
