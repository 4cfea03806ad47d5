#!/usr/bin/env python3
"""minivm harness `api`: sequences of iterator API operations (wf_api_fuzz.h). Byte 0 chooses
between info calls on the handles a walk showed and info calls on arbitrary handles too; the
generator lays out a case from the next bytes (as in `layouts`) and the rest becomes operations
run inside the walk's callback: NextFrame, RewindIterator anywhere (mid-walk, between inlined
scopes, after the end), State, GetMethodInfo / GetClassInfo with buffers of every capacity,
RunWithIteratorFromFrame from a walked frame and a nested RunWithIterator (each with
operations of its own), Capabilities, ThreadState. Each result is checked in C as it comes:
against the true trace, the reference walker's walk from a frame, and the mapped VM's records.

Run by a campaign (`walkfuzz fuzz --harness api`) or by hand with libFuzzer arguments:
`harnesses/api.py CORPUS_DIR` fuzzes, `harnesses/api.py crash-FILE` replays one input.
"""

from walkfuzz.targets.minivm.harness import MinivmHarness

if __name__ == "__main__":
    MinivmHarness("api").fuzz()
