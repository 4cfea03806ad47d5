#!/usr/bin/env python3
"""minivm harness `bytes`: raw libFuzzer mutation of a materialized case file (docs/case-
format.md); inputs that do not decode are rejected by the decoder.

Run by a campaign (`walkfuzz fuzz --harness bytes`) or by hand with libFuzzer arguments:
`harnesses/bytes.py CORPUS_DIR` fuzzes, `harnesses/bytes.py crash-FILE` replays one input.
"""

from walkfuzz.targets.minivm.harness import MinivmHarness

if __name__ == "__main__":
    MinivmHarness("bytes").fuzz()
