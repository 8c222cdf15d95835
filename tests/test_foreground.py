"""Background warming gives way while the app draws a page (inspector.foreground)."""

from __future__ import annotations

import threading

from inspector import foreground
from inspector.session.loader import load_session
from inspector.session.models import MessageEntry
from inspector.summarize.offline import remember_facts

from .support.paths import REPO


def test_give_way_waits_while_a_rerun_is_busy_and_returns_when_it_ends() -> None:
    assert foreground.give_way(0) is True  # idle
    waited: list[bool] = []
    with foreground.busy():
        with foreground.busy():  # two browser sessions at once
            pass
        assert foreground.give_way(0) is False  # still one busy
        t = threading.Thread(target=lambda: waited.append(foreground.give_way(30)))
        t.start()
        t.join(0.2)
        assert t.is_alive()  # waiting for the rerun
    t.join(30)
    assert waited == [True]
    assert foreground.give_way(0) is True


def test_give_way_stops_waiting_after_its_limit() -> None:
    with foreground.busy():
        assert foreground.give_way(0.05) is False  # gave up: the caller goes on


def test_remember_facts_pauses_every_200_messages() -> None:
    s = load_session(REPO / "sample_sessions" / "long-session.jsonl")
    msgs = [e.message for e in s.entries if isinstance(e, MessageEntry)]
    calls: list[int] = []
    remember_facts(msgs, pause=lambda: calls.append(1))
    assert len(calls) == -(-len(msgs) // 200)
