"""What a session's own usage proves about its model's window (inspector.window)."""

from __future__ import annotations

from inspector.window import AnsweredPeak, answered_peak

from .support.builder import SessionBuilder


def test_the_largest_answered_call_bounds_the_window() -> None:
    b = SessionBuilder()
    b.user("a")
    b.assistant("x", usage=120_000)
    b.user("b")
    b.assistant("", usage=400_000, stop="error")  # failed: proves nothing
    b.user("c")
    b.assistant("", usage=500_000, stop="aborted")  # aborted: proves nothing
    b.user("d")
    peak_id = b.assistant("y", usage=312_658)
    b.user("e")
    b.assistant("z", usage=312_658)  # as large: the first stands
    s = b.session()
    peak = answered_peak(s)
    assert peak == AnsweredPeak(312_658, s.by_id[peak_id])
    assert peak.window_floor() == 313_000
    assert answered_peak(s) is peak  # memoised


def test_no_usage_no_bound() -> None:
    b = SessionBuilder()
    b.user("a")
    b.assistant("x")
    assert answered_peak(b.session()) is None
    assert AnsweredPeak(200_000, 1).window_floor() == 200_000
