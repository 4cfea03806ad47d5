# Fuzz campaigns (issue 5): `make fuzz` from a fresh clone, and the engine's tests.
#   make fuzz      set up, build, 60 s campaign on the reference walker, print where the report is
#   make test-fuzz the quality suite: each planted bug found by a campaign run until it finds it
#                  (part of `make test`; prints the seconds and inputs each took, also in
#                  build/quality-times.json; the engine's unit tests are in tests/unit)
#   .venv/bin/python tools/planted_times.py   the same over several libFuzzer seeds (docs/fuzzing.md)
#   FUZZ_HARNESS=bytes FUZZ_TIME=10m FUZZ_JOBS=2 make fuzz    to change the campaign
# Exit status of `make fuzz`: 0 no findings, 1 findings (the report lists them), 2+ errors.

FUZZ_HARNESS ?= layouts
FUZZ_TIME ?= 60s
FUZZ_JOBS ?= 2
FUZZ_OUT ?= reports/fuzz-$(FUZZ_HARNESS)

.PHONY: test-fuzz

fuzz: .stamp-build
	@status=0; $(WALKFUZZ) fuzz --target minivm --harness $(FUZZ_HARNESS) --time $(FUZZ_TIME) \
	  -j $(FUZZ_JOBS) --out $(FUZZ_OUT) || status=$$?; \
	echo "fuzz report: $(FUZZ_OUT)/report.html (also report.json, report.md)"; exit $$status

test: test-fuzz
test-fuzz: build
	@$(RUN_PYTEST) fuzz-quality -- $(PYTEST) -m quality tests/quality/test_planted.py
