# The safepoint queue API (issue 4): ref_queue.c, section 9 of a case, the Python model.
# Its native tests run with tests/native in `make test` (plain and ASan), its signal stress test
# with tests/stress (test-stress); its benchmark bench/bench_queue.py runs in `make bench`.
#   make test-queue     only the queue tests (model vs C state machine, truth, API, codec, stress)
#   make bench-queue    only the queue benchmark
.PHONY: test-queue bench-queue

test-queue: .stamp-build
	@$(RUN_PYTEST) queue -- $(PYTEST) tests/native/test_queue_model.py \
	  tests/native/test_queue_truth.py tests/native/test_queue_api.py \
	  tests/native/test_queue_codec.py
	@$(RUN_PYTEST) queue-stress -- $(PYTEST) -m stress tests/stress/test_queue_signal.py

bench-queue: .stamp-build
	$(PY) bench/runner.py queue
