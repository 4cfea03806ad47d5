"""The live stress's timer pacing (native/include/wf_live_pace.h), handler by handler, on made-up
clocks: a worker whose next handler comes sooner after the last one than that handler took is
starved, and its window grows until it has its own time again."""

from __future__ import annotations

from typing import Any

from walkfuzz.core.native import load

US = 1_000
INTERVAL = 10 * US


def handlers(lib: Any, pace: Any, events: list[tuple[int, int, bool]]) -> list[int]:
    """Each (entered, length, late) handler in turn: the first expiry it restarted with."""
    firsts = []
    for entered, length, late in events:
        firsts.append(int(lib.wf_live_pace_next(pace, entered, entered + length, late, INTERVAL)))
        lib.wf_live_pace_done(pace, entered, entered + length)
    return firsts


def test_a_worker_with_its_own_time_keeps_the_plain_period() -> None:
    ffi, lib = load()
    pace = ffi.new("wf_live_pace *")
    # 3 us handlers every 10 us: 7 us of own time after each, more than a handler's length
    events = [(k * INTERVAL, 3 * US, False) for k in range(1, 20)]
    assert handlers(lib, pace, events) == [0] * len(events)
    assert pace.shift == 0


def test_a_late_signal_restarts_the_period_with_one_interval() -> None:
    ffi, lib = load()
    pace = ffi.new("wf_live_pace *")
    assert handlers(lib, pace, [(INTERVAL, 3 * US, True)]) == [INTERVAL]
    assert handlers(lib, pace, [(5 * INTERVAL, 30 * US, True)]) == [30 * US]  # its own length


def test_a_starved_worker_gets_a_window_that_doubles_until_it_runs() -> None:
    ffi, lib = load()
    pace = ffi.new("wf_live_pace *")
    # Each handler starts 1 us after the last one ended (the window passed while the worker
    # waited for a CPU): starved every time, the window doubles up to 2^MAX_SHIFT handlers.
    events, t = [], 100 * US
    for _ in range(14):
        events.append((t, 20 * US, True))
        t += 20 * US + 1 * US
    firsts = handlers(lib, pace, events)
    assert firsts[0] == 20 * US  # the first handler had no predecessor: late only
    shifts = [min(k, lib.WF_LIVE_PACE_MAX_SHIFT) for k in range(1, len(events))]
    assert firsts[1:] == [(20 * US) << s for s in shifts]
    # The worker then ran for longer than a handler: back to the plain period.
    assert handlers(lib, pace, [(t + 50 * US, 20 * US, False)]) == [0]
    assert pace.shift == 0


def test_a_handler_longer_than_the_interval_leaves_the_worker_as_much_time() -> None:
    ffi, lib = load()
    pace = ffi.new("wf_live_pace *")
    # 15 us handlers under a 10 us period: the next signal is pending as each one returns.
    firsts = handlers(lib, pace, [(100 * US, 15 * US, False), (115 * US + 500, 15 * US, False)])
    assert firsts == [0, (15 * US) << 1]  # at least its own length, doubled: starved once
