"""Case <-> readable JSON (walkfuzz.targets.minivm.case.jsonform): lossless, and the annotations say
what words are."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given

from walkfuzz.core.errors import CaseFormatError
from walkfuzz.targets.minivm.case import decode as dec
from walkfuzz.targets.minivm.case import encode as enc
from walkfuzz.targets.minivm.case import format as C
from walkfuzz.targets.minivm.case import jsonform as case_json
from walkfuzz.targets.minivm.case.builder import PC_COMPILED, PC_INTERPRETED, CaseBuilder
from walkfuzz.targets.minivm.case.queue_program import Opcode, QueueOp
from walkfuzz.targets.minivm.case.strategies import profile, valid_cases


@profile()
@given(valid_cases())
def test_json_round_trip(case: C.Case) -> None:
    doc = json.loads(json.dumps(case_json.case_to_json(case)))
    assert case_json.case_from_json(doc) == case


def test_stack_words_are_annotated() -> None:
    b = CaseBuilder(8)
    fp = b.interpreted_frame(b.hi - 32, ret=PC_COMPILED, caller_fp=0, method=1, bci=4)
    doc = case_json.case_to_json(b.case(context=(PC_INTERPRETED, fp - 16, fp)))
    notes = {w["addr"]: w.get("is") for w in doc["stack"]}
    assert notes[hex(fp - 8)] == "handle of method 1 pkg/A.middle"
    assert notes[hex(fp - 16)] == "bcp of method 1 pkg/A.middle bci 4"
    assert notes[hex(fp + 8)].startswith("blob 1 COMPILED pkg/A.outer")
    assert doc["context"]["pc_is"] == "blob 0 INTERPRETER +0x10"


def test_bad_json_names_the_path() -> None:
    doc = case_json.case_to_json(dec.decode(enc.encode(CaseBuilder(2).case(context=(0, 0, 0)))))
    doc["thread"]["state"] = "SLEEPING"
    with pytest.raises(CaseFormatError, match=r"thread\.state"):
        case_json.case_from_json(doc, "x.json")


def _queue_ops() -> tuple[QueueOp, ...]:
    return tuple(QueueOp(code, **{name: value for name, value in zip(
        case_json.QUEUE_OPERANDS[code], (1, 2, 3, 4, 5), strict=False)})
        for code in Opcode)


def test_queue_program_round_trips_through_json() -> None:
    base = dec.decode(enc.encode(CaseBuilder(2).case(context=(0, 0, 0))))
    case = replace(base, queue=_queue_ops())
    doc = json.loads(json.dumps(case_json.case_to_json(case)))
    assert [o["op"] for o in doc["queue"]] == [c.name for c in Opcode]
    assert doc["queue"][2] == {"index": 2, "op": "ENQUEUE", "queue": 1, "pc": "0x2",
                               "sp": "0x3", "fp": "0x4", "arg": "0x5", "pc_is": "data"}
    assert case_json.case_from_json(doc) == case
    assert case_json.case_to_json(base)["queue"] is None


def test_bad_queue_op_names_the_path() -> None:
    base = dec.decode(enc.encode(CaseBuilder(2).case(context=(0, 0, 0))))
    doc = case_json.case_to_json(replace(base, queue=(QueueOp(Opcode.SIZE_INFO, queue=1),)))
    doc["queue"][0]["op"] = "FLUSH"
    with pytest.raises(CaseFormatError, match=r"queue\[0\]\.op"):
        case_json.case_from_json(doc, "x.json")
