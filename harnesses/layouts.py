#!/usr/bin/env python3
"""minivm harness `layouts`: structure-aware generation of frame layouts; byte 0 chooses between
walking the layout as generated (checked against its true trace) and applying layout mutations
(frames removed or resized, kinds changed, return pcs moved, anchor corrupted, thread state
changed; checked against the reference walker).

Run by a campaign (`walkfuzz fuzz --harness layouts`) or by hand with libFuzzer arguments:
`harnesses/layouts.py CORPUS_DIR` fuzzes, `harnesses/layouts.py crash-FILE` replays one input.
"""

from walkfuzz.targets.minivm.harness import MinivmHarness

if __name__ == "__main__":
    MinivmHarness("layouts").fuzz()
