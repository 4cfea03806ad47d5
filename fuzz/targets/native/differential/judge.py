"""The differential oracle's judgement of one input walked by several unwinders.

The unwinders run in different processes (their symbols clash), so addresses differ between
their walks; what they share is the frame id of every walked frame (the chain function, the
bottom, the root, or -1: code the chain does not know). Everything here compares ids.

Unperturbed input (the truth is the known chain, bottom .. root):

- a full unwinder (every one but `fp`) must walk it exactly and end at the root;
- `fp` (a frame-pointer walk) has two known limits: it skips a function that keeps no frame
  pointer (its caller's return address is not on the rbp chain) and it may stop early where
  rbp is not a frame pointer (a walk into unknown code, or one that ends). It is wrong only
  when it reports a frame that is not on the stack or out of order: its known frames must be
  a subsequence of the truth, starting at the bottom.

Perturbed input (no truth: the registers lie), the unwinders are compared with each other,
when they were given the same context in frame ids (`comparable`: each extension lays its
code out its own way, so a pc perturbed by some bytes or bits may land in different functions
in different processes; such an input is counted as incomparable, not judged):

- the full unwinders' walks up to the first frame any of them flags as unknown (past it, one
  walk is in code nobody knows and comparing is meaningless); walks that faulted or hung are
  not compared (they are crash and hang findings of their own). Different walks split the
  unwinders into groups; the largest group is the majority (ties: the group of the unwinder
  first in the registry), the others are the odd ones. The kind is what differs at the first
  differing frame: `different-frame`, `ends-early-<stop>` when the odd group's walk had
  already ended there (with that stop), `walks-on-after-<stop>` when the majority's had;
- `fp` against the majority's walk, with the same subsequence rule as against the truth:
  `fp-frame-not-in-walk` when it reports a frame the majority walked past (or one out of
  order), `fp-walks-on-after-<stop>` when it walks on with known frames where the majority's
  walk had ended (with that stop).

Every disagreement is an `invalid-trace` finding whose location is its class,
"<odd unwinders> vs <the rest>: <kind>", so a class is one finding however often it comes back
(its hits are counted): a known difference is never a stream of new findings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

UNKNOWN = -1
FP = "fp"
UNCOMPARED_STOPS = ("fault", "hang", "cycle")


@dataclass(frozen=True)
class Walk:
    """One unwinder's walk of one input, as its worker reported it."""

    unwinder: str
    stop: str  # walkfuzz.targets.native.outcome.STOP_NAMES
    frames: int  # frames walked; ids holds the first ones
    ids: tuple[int, ...]
    status: int = 0  # wf_uw_status
    fault_pc: int = 0
    steps: int = 0
    walk_ns: int = 0

    def known(self) -> tuple[int, ...]:
        """The ids up to the first unknown frame."""
        ids = self.ids[:self.frames]
        return ids[:ids.index(UNKNOWN)] if UNKNOWN in ids else ids

    def cut(self) -> int | None:
        """Index of its first unknown frame, None when every frame is known."""
        ids = self.ids[:self.frames]
        return ids.index(UNKNOWN) if UNKNOWN in ids else None


@dataclass(frozen=True)
class Verdict:
    """A disagreement: the odd unwinders, the rest, and what differs."""

    odd: tuple[str, ...]
    rest: tuple[str, ...]
    kind: str
    at: int  # index of the first differing frame

    @property
    def location(self) -> str:
        rest = ",".join(self.rest) if self.rest else "truth"
        return f"{','.join(self.odd)} vs {rest}: {self.kind}"


def _fp_faithful(fp: Sequence[int], walk: Sequence[int], walk_ended: bool
                 ) -> tuple[int, bool] | None:
    """fp's first frame that breaks the subsequence rule against `walk` and whether `walk`
    had already ended there (fp walked on past its end), else None. `walk_ended`: the walk
    ended at a known frame; otherwise it was cut at an unknown frame and fp's frames past the
    cut are not judged."""
    position = 0
    for i, frame_id in enumerate(fp):
        if i == 0:
            if not walk or walk[0] != frame_id:
                return (0, not walk) if walk_ended or walk else None
            position = 1
            continue
        try:
            position = walk.index(frame_id, position) + 1
        except ValueError:
            return (i, position >= len(walk)) if walk_ended else None
    return None


def judge_truth(walks: Sequence[Walk], truth: Sequence[int]) -> Verdict | None:
    """An unperturbed input: the unwinders that did not walk the known chain, grouped by how
    they went wrong (one verdict: the first kind, every unwinder of it)."""
    wrong: dict[str, list[str]] = {}
    at = len(truth)
    for walk in walks:
        if walk.stop in UNCOMPARED_STOPS:
            continue
        if walk.unwinder == FP:
            bad = _fp_faithful(walk.known(), truth, True)
            if bad is not None:
                wrong.setdefault("fp-frame-not-on-stack", []).append(walk.unwinder)
                at = min(at, bad[0])
            continue
        ids = walk.ids[:walk.frames]
        if tuple(ids) == tuple(truth) and walk.stop == "root":
            continue
        first = _first_difference(ids, truth)
        kind = ("different-frame" if first < min(len(ids), len(truth))
                else "walks-past-root" if len(ids) > len(truth) else f"ends-early-{walk.stop}")
        wrong.setdefault(kind, []).append(walk.unwinder)
        at = min(at, first)
    if not wrong:
        return None
    kind = sorted(wrong)[0]
    odd = tuple(sorted(wrong[kind]))
    return Verdict(odd=odd, rest=(), kind=kind, at=at)


def comparable(walks: Sequence[Walk]) -> bool:
    """Whether the walks started from the same context, in frame ids: their first frames (the
    perturbed pc) are in one function. Each extension lays its code out its own way, so a pc
    moved by a few bytes or bits can land in another function in one process than in another:
    the unwinders were then not given the same context, and comparing their walks says
    nothing."""
    return len({w.ids[0] for w in walks if w.frames}) <= 1


def _first_difference(a: Sequence[int], b: Sequence[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)))


def judge_walks(walks: Sequence[Walk], order: Sequence[str]) -> Verdict | None:
    """A perturbed input: the unwinders compared with each other (rules in the module doc).
    `order` is the registry's order of unwinder names (the tie-break of the majority)."""
    compared = [w for w in walks if w.stop not in UNCOMPARED_STOPS]
    if not comparable(compared):
        return None
    full = [w for w in compared if w.unwinder != FP]
    if not full:
        return None
    cuts = [c for c in (w.cut() for w in full) if c is not None]
    horizon = min(cuts) if cuts else None
    prefix = {w.unwinder: w.ids[:w.frames][:horizon] for w in full}
    groups: dict[tuple[int, ...], list[str]] = {}
    for walk in full:
        groups.setdefault(tuple(prefix[walk.unwinder]), []).append(walk.unwinder)
    rank = {name: i for i, name in enumerate(order)}
    majority_ids, majority = max(groups.items(), key=lambda kv: (
        len(kv[1]), -min(rank.get(n, len(rank)) for n in kv[1])))
    if len(groups) > 1:
        return _split(groups, majority_ids, {w.unwinder: w for w in full})
    fp = next((w for w in compared if w.unwinder == FP), None)
    if fp is None:
        return None
    bad = _fp_faithful(fp.known(), majority_ids, horizon is None)
    if bad is None:
        return None
    at, past_end = bad
    leader = next(w for w in full if w.unwinder == majority[0])
    kind = f"fp-walks-on-after-{leader.stop}" if past_end else "fp-frame-not-in-walk"
    return Verdict(odd=(FP,), rest=tuple(sorted(majority)), kind=kind, at=at)


def _split(groups: dict[tuple[int, ...], list[str]], majority_ids: tuple[int, ...],
           by_name: dict[str, Walk]) -> Verdict:
    """The odd groups against the majority; the first of them to differ names the kind."""
    odd_ids = [ids for ids in groups if ids != majority_ids]
    at = min(_first_difference(ids, majority_ids) for ids in odd_ids)
    first = next(ids for ids in odd_ids if _first_difference(ids, majority_ids) == at)
    if at >= len(first):
        kind = f"ends-early-{by_name[groups[first][0]].stop}"
    elif at >= len(majority_ids):
        kind = f"walks-on-after-{by_name[groups[majority_ids][0]].stop}"
    else:
        kind = "different-frame"
    odd = sorted(name for ids in odd_ids for name in groups[ids])
    return Verdict(odd=tuple(odd), rest=tuple(sorted(groups[majority_ids])), kind=kind, at=at)


def judge(walks: Sequence[Walk], truth: Sequence[int] | None,
          order: Sequence[str]) -> Verdict | None:
    """The verdict on one input: against the truth when it is known, else among the walks."""
    return judge_truth(walks, truth) if truth is not None else judge_walks(walks, order)
