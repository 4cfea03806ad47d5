"""The rows a differential worker writes (wf_uw_diff_row, native/agents/native/wf_uw_diff.h),
read back as walks, and the per-unwinder table a finding and the replay show.

Rows are read with `struct`, not with an extension's ffi: the supervisor loads no unwinder
(their symbols clash), and every unwinder's extension writes this same layout.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from walkfuzz.targets.native.differential.judge import UNKNOWN, Walk
from walkfuzz.targets.native.inputs import decode
from walkfuzz.targets.native.outcome import FIXED_IDS, ID_WORK_BASE, STOP_NAMES

DIFF_IDS = 24  # WF_UW_DIFF_IDS
# status, stop, invalid, perturbations, frames, steps, id[24], walk_ns, fault_pc, signo, rc
ROW = struct.Struct(f"<4i2I{DIFF_IDS}i2Q2i")
ID_BOTTOM, ID_ROOT = 32, 33


def walks_of(unwinder: str, blob: bytes, count: int) -> list[Walk]:
    """The first `count` rows of `blob` as walks of `unwinder`."""
    walks = []
    for fields in ROW.iter_unpack(blob[:count * ROW.size]):
        status, stop, _, _, frames, steps = fields[:6]
        ids = tuple(fields[6:6 + DIFF_IDS])
        walk_ns, fault_pc = fields[6 + DIFF_IDS], fields[7 + DIFF_IDS]
        walks.append(Walk(unwinder=unwinder, stop=STOP_NAMES[stop], frames=min(frames, DIFF_IDS),
                          ids=ids, status=status, fault_pc=fault_pc, steps=steps,
                          walk_ns=walk_ns))
    return walks


def perturbed(blob: bytes, index: int) -> bool:
    return bool(ROW.unpack_from(blob, index * ROW.size)[3])


def truth(data: bytes) -> tuple[int, ...] | None:
    """The known chain of an unperturbed input, innermost first; None for a perturbed one."""
    case = decode(data)
    if not case.unperturbed:
        return None
    return (ID_BOTTOM, *reversed(case.path), ID_ROOT)


def frame_name(frame_id: int) -> str:
    if frame_id == UNKNOWN:
        return "?"
    if frame_id in FIXED_IDS:
        return FIXED_IDS[frame_id]
    if frame_id >= ID_WORK_BASE:
        return f"work_{frame_id - ID_WORK_BASE}"
    return f"chain_{frame_id}"


def walk_text(ids: Sequence[int]) -> str:
    return " ".join(frame_name(i) for i in ids)


def table_rows(walks: Sequence[Walk]) -> list[dict[str, object]]:
    """One row per unwinder: its stop, its frame count, its walk by frame names."""
    return [{"unwinder": w.unwinder, "stop": w.stop, "frames": w.frames,
             "walk": walk_text(w.ids[:w.frames])} for w in walks]


def table_text(rows: Sequence[dict[str, object]], truth_ids: Sequence[int] | None) -> str:
    """The per-unwinder table as aligned text (the replay prints it)."""
    lines = [("unwinder", "stop", "frames", "walk")]
    if truth_ids is not None:
        lines.append(("(truth)", "root", str(len(truth_ids)), walk_text(truth_ids)))
    lines += [(str(r["unwinder"]), str(r["stop"]), str(r["frames"]), str(r["walk"]))
              for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(3)]
    return "\n".join(f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c:>{widths[2]}}  {d}"
                     for a, b, c, d in lines)
