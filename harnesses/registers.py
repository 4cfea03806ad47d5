#!/usr/bin/env python3
"""minivm harness `registers`: a generated layout walked from mutated register contexts (sp/fp/pc:
small offsets, bit flips, pointers into other regions, misalignment).

Run by a campaign (`walkfuzz fuzz --harness registers`) or by hand with libFuzzer arguments:
`harnesses/registers.py CORPUS_DIR` fuzzes, `harnesses/registers.py crash-FILE` replays one input.
"""

from walkfuzz.targets.minivm.harness import MinivmHarness

if __name__ == "__main__":
    MinivmHarness("registers").fuzz()
