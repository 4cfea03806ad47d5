#!/usr/bin/env python3
"""minivm harness `queue`: sequences of safepoint queue operations (wf_queue_fuzz.h). Byte 0
chooses between well-formed programs and programs with wild operands and stack pokes; the
generator lays out a case from the next bytes and the rest becomes a queue program (register,
enqueue from a frame's context, set an element's arg, compression, resize, handlers,
safepoints with ops inside a handler, deregister, thread exit). Checked in C: safety,
documented codes, queue bookkeeping, insertion order, and element walks against the true
trace at enqueue time. Needs a walker with the queue API (ASGST_REGISTER_QUEUE).

Run by a campaign (`walkfuzz fuzz --harness queue`) or by hand with libFuzzer arguments:
`harnesses/queue.py CORPUS_DIR` fuzzes, `harnesses/queue.py crash-FILE` replays one input.
"""

from walkfuzz.targets.minivm.harness import MinivmHarness

if __name__ == "__main__":
    MinivmHarness("queue").fuzz()
