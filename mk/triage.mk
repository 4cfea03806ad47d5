# Triage (issue 7): grouping, classification, minimization, regression replays.
#   tests/unit/test_triage*.py, test_minimize.py and the regression-corpus replay run in
#   `make test-core` (tests/unit); the planted-bug corpus check (the findings of
#   tests/fixtures/planted_corpus.py grouped by bug, minimized reproducers) is a quality suite.

.PHONY: test-triage

test: test-triage
test-triage: .stamp-build
	@$(RUN_PYTEST) triage -- $(PYTEST) -m quality tests/quality/test_triage_planted.py
