"""The queue part of `walkfuzz replay`: a case with a section 9 program is run by the C
executor (walkfuzz.targets.minivm.queue.run, the in-core reference queue) and predicted by the
Python model (walkfuzz.targets.minivm.queue.model with a TruthOracle), and the two logs are shown
side by side with the first event where they differ. The model only predicts cases it can answer
from a true trace (a TRUTH section, contexts on the trace, POKEs of bcp slots); otherwise it says
why."""

from __future__ import annotations

from typing import Any

from walkfuzz.targets.minivm.case import format as C
from walkfuzz.targets.minivm.case.jsonform import Describer, frame_to_json
from walkfuzz.targets.minivm.queue.model import Event, EventKind, QueueModel, TruthOracle
from walkfuzz.targets.minivm.queue.run import NoQueueEntries, run_case


def event_to_json(event: Event, describe: Describer) -> dict[str, Any]:
    kind = EventKind(event.kind).name if event.kind in EventKind._value2member_map_ else event.kind
    out: dict[str, Any] = {"kind": kind, "op": event.op, "queue": event.queue, "code": event.code}
    if event.kind == EventKind.OP:
        out.update(size=event.size, capacity=event.capacity, attempts=event.attempts)
    else:
        out.update(arg=hex(event.arg), pc=hex(event.pc), sp=hex(event.sp), fp=hex(event.fp),
                   frames=[frame_to_json(f, describe) for f in event.frames])
    return out


def predict(case: C.Case) -> tuple[list[Event] | None, str | None]:
    """The model's log, or None and why it cannot predict this case."""
    assert case.queue is not None
    try:
        return QueueModel(TruthOracle(case)).run(case.queue), None
    except ValueError as err:
        return None, str(err)


def first_difference(native: list[Event], model: list[Event]) -> dict[str, Any] | None:
    for i, (got, want) in enumerate(zip(native, model, strict=False)):
        if got != want:
            fields = [k for k in want.__dataclass_fields__ if getattr(got, k) != getattr(want, k)]
            return {"what": "event", "index": i, "fields": fields}
    if len(native) != len(model):
        return {"what": "event count", "native": len(native), "model": len(model)}
    return None


def queue_report(data: bytes, case: C.Case, source: str,
                 walker: Any = None) -> dict[str, Any] | None:
    """None without a queue program; else the C log (the program run through `walker`, default
    the reference walker), the queue harness's verdict on it, the model's log and where they
    differ."""
    if case.queue is None:
        return None
    describe = Describer(case)
    try:
        native = run_case(data, source, walker)
    except NoQueueEntries as err:
        return {"walker": err.walker, "not_run": str(err)}
    model, why_not = predict(case)
    return {
        "walker": native.walker,
        "finding": native.finding,
        "check": native.check,
        "fault": None if native.fault is None else native.fault.to_json(),
        "status": native.status,
        "violations": native.violations,
        "violation": native.violation or None,
        "events": [event_to_json(e, describe) for e in native.events],
        "model": None if model is None else [event_to_json(e, describe) for e in model],
        "model_unavailable": why_not,
        "first_difference": None if model is None else first_difference(native.events, model),
    }


def summary_lines(report: dict[str, Any]) -> list[str]:
    if "not_run" in report:
        return [f"queue program: not run ({report['not_run']})"]
    lines = [f"queue program ({report['walker']}): status {report['status']}, "
             f"{len(report['events'])} events, {report['violations']} violations"
             + (f" ({report['violation']})" if report["violation"] else "")
             + f"; finding {report['finding']}"
             + (f" ({report['check']})" if report["check"] != "none" else "")]
    for e in report["events"]:
        if e["kind"] == "OP":
            lines.append(f"  op {e['op']:>3} queue {e['queue']:>2} -> {e['code']} "
                         f"(size {e['size']}, capacity {e['capacity']}, "
                         f"attempts {e['attempts']})")
        else:
            lines.append(f"  {e['kind']:<8} op {e['op']:>3} queue {e['queue']:>2} code "
                         f"{e['code']} arg {e['arg']} sp {e['sp']} {len(e['frames'])} frames")
    if report["model"] is None:
        lines.append(f"model: no prediction ({report['model_unavailable']})")
    else:
        diff = report["first_difference"]
        lines.append("queue: native == model" if diff is None
                     else f"queue: DIFFERS from the model: {diff}")
    return lines
