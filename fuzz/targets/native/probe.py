"""`python -m walkfuzz.targets.native.probe NAME`: can unwinder NAME walk here? (`walkfuzz
doctor` runs it once per unwinder, each in a process of its own: their symbols clash in one.)

Loads the unwinder's extension, walks one unperturbed known chain and prints one line: its
library and the walk's verdict. Exit 0 when the walk is the known chain; 3 (a missing tool)
with the one-line reason when the extension cannot be loaded; 1 when it loads but the walk is
not the known chain.
"""

from __future__ import annotations

import sys

from walkfuzz.core.errors import WalkfuzzError
from walkfuzz.core.exit_status import FINDINGS, MISSING_TOOL
from walkfuzz.targets.native.extension import load
from walkfuzz.targets.native.inputs import INPUT_SIZE
from walkfuzz.targets.native.outcome import STOP_NAMES


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        native = load(args[0])
    except WalkfuzzError as err:
        print(err)
        return MISSING_TOOL
    ffi, lib = native.ffi, native.lib
    result = ffi.new("wf_uw_result *")
    # all zeros: chain function 0 alone (a frame-pointer function), unperturbed
    status = int(lib.wf_uw_fuzz_one(bytes(INPUT_SIZE), INPUT_SIZE, result))
    library = ffi.string(lib.wf_uw_unwinder_library()).decode()
    verdict = "walks the known chain" if status == 0 else \
        f"the known chain walked wrong (stop {STOP_NAMES[result.stop]})"
    print(f"{library}: {verdict}")
    return 0 if status == 0 else FINDINGS


if __name__ == "__main__":
    sys.exit(main())
