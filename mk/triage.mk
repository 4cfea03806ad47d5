# Triage (issue 7): grouping, classification, minimization, regression replays.
#   tests/unit/test_triage*.py, test_minimize.py and the regression-corpus replay run in
#   `make test-core` (tests/unit); the planted-bug corpus checks (315 findings of 7 bugs, one
#   library each -> 7 groups; 225 findings of 5 bugs planted in one library -> 5 groups;
#   minimized reproducers) are a quality suite, about a minute.

.PHONY: test-triage

test: test-triage
test-triage: .stamp-build
	@$(RUN_PYTEST) triage -- $(PYTEST) -m quality tests/quality/test_triage_planted.py
