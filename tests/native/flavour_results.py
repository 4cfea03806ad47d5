#!/usr/bin/env python3
"""Child of test_flavours_agree.py: runs inputs through the harnesses' one C call
(wf_worker_run) on the reference walker in the flavour $WALKFUZZ_NATIVE names, and prints one
JSON line per input: the run's result fields and a hash of the case it ran (encoded after any
mutation, with its queue program) and of the frames walked (the api harness: of its ops).

    flavour_results.py INPUTS      INPUTS: one "HARNESS HEX" line per input
"""

import hashlib
import json
import sys
from typing import Any

from walkfuzz.core import native
from walkfuzz.targets.minivm.queue.cases import encoded

ffi, lib = native.load()   # cov: loads atheris's libFuzzer first
FIELDS = ("status", "finding", "check", "oracle", "run_result", "end_code", "state_after",
          "frames", "diff_index", "mutations", "queue_op")
API = 5  # WF_HARNESS_API


def run(harness: int, data: bytes, case: Any, result: Any) -> dict[str, Any]:
    lib.wf_worker_run(harness, lib.wf_walker_reference(), data, len(data), case, result)
    line: dict[str, Any] = {"harness": harness, "fault": result.fault.kind}
    line.update((name, getattr(result, name)) for name in FIELDS)
    if result.status == 0:
        digest = hashlib.sha1(encoded(ffi, lib, case))
        # the api harness records no walk (its frames count is an iterator's position): the
        # operations it ran are what it did
        walked = api_ops() if harness == API else frames(result.frames)
        digest.update(repr(walked).encode())
        line["digest"] = digest.hexdigest()
    return line


def frames(count: int) -> list[tuple[int, ...]]:
    """The last walk's frames field by field (the struct's padding bytes are not data)."""
    walked = lib.wf_run_frames()
    return [(f.type, f.comp_level, f.bci, *(int(ffi.cast("uintptr_t", p))
                                            for p in (f.method, f.pc, f.sp, f.fp)))
            for f in (walked[i] for i in range(count))]


def api_ops() -> list[int]:
    return [lib.wf_api_fuzz_op(i) for i in range(lib.wf_api_fuzz_op_count())]


def main(path: str) -> None:
    case = ffi.gc(lib.wf_case_new(), lib.wf_case_free)
    result = ffi.new("wf_run_result *")
    with open(path) as inputs:
        for entry in inputs:
            harness, hexdata = entry.split()
            print(json.dumps(run(int(harness), bytes.fromhex(hexdata), case, result)))


main(sys.argv[1])
