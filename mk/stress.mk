# Live stress (issue 6): the simulated VM sampled live, every trace checked (docs/stress.md).
#   make test-stress   the short profile (~1.5 s a test, mode x interval x workload, -n auto)
#   make soak          the same matrix, STRESS_SOAK_SECONDS (default 120) a test
#   make bench-stress  the delivery limit with an empty handler (bench_limit), then per mode at
#                      100 us and 10 us samples per CPU-second, slowdown and queue figures as
#                      fractions of it; delivered samples with capture off and on, ns per capture
#   make stress-hosts TX="--tx ssh=HOST//python=PY ..."
#                      the stress tests spread over other machines' gateways (docs/stress.md,
#                      "On many machines"): reports per host and their sum
# Each writes one aggregated report: reports/stress-tests/report.{json,html,md}.

STRESS_SOAK_SECONDS ?= 120
STRESS_JOBS ?= auto

.PHONY: test-stress soak-stress bench-stress stress-hosts

test: test-stress
test-stress: .stamp-build
	@$(RUN_PYTEST) stress -- $(PYTEST) -m stress -n $(STRESS_JOBS) tests/stress

soak: soak-stress
soak-stress: .stamp-build
	@$(RUN_PYTEST) soak-stress -- env WALKFUZZ_STRESS_SECONDS=$(STRESS_SOAK_SECONDS) \
	  WALKFUZZ_STRESS_WALKS=0 $(PYTEST) -m stress -n $(STRESS_JOBS) tests/stress/test_live_matrix.py

bench-stress: .stamp-build
	$(PY) bench/runner.py limit stress capture

# No path arguments: without rsync, pytest-xdist refuses paths for a remote worker; testpaths
# selects the folder instead, in each host's checkout (tests/stress/conftest.py moves the
# worker there: this checkout's path, or the spec's //env:WALKFUZZ_CHECKOUT=DIR).
stress-hosts: .stamp-build
	@test -n "$(TX)" || { echo 'make stress-hosts: TX="--tx SPEC ..." names the hosts' \
	  '(docs/stress.md, "On many machines")'; exit 2; }
	@$(RUN_PYTEST) stress-hosts -- $(PYTEST) -m stress --dist load $(TX) -o testpaths=tests/stress
