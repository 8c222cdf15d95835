"""Keeping what the app caches out of the garbage collector's reach (inspector.gcpause)."""

from __future__ import annotations

import gc
import weakref

import pytest

from inspector import gcpause
from inspector.replay import ReplaySettings, replay
from inspector.session.loader import load_session

from .support.paths import REPO


class _Leaf:
    """An object the collector tracks (a dict of plain values is untracked once seen)."""


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


@pytest.fixture
def clean_gc():
    gc.unfreeze()
    gcpause._PENDING.clear()
    gcpause._SWEPT[0] = 0
    yield
    gc.unfreeze()
    gcpause._PENDING.clear()
    gcpause._SWEPT[0] = 0


def test_settle_freezes_what_is_alive_and_frees_garbage_cycles_first(clean_gc: None) -> None:
    kept = [_Leaf() for _ in range(1000)]
    garbage = _Node()
    del garbage
    gcpause.settle()
    assert gc.get_freeze_count() >= 1000
    assert not any(type(o) is _Node for o in gc.get_objects())  # freed, not frozen
    assert not any(o is kept[0] for o in gc.get_objects())  # frozen: no generation walks it
    gcpause.thaw()
    assert gc.get_freeze_count() == 0
    assert any(o is kept[0] for o in gc.get_objects())


def test_settle_later_waits_for_the_next_ask(clean_gc: None) -> None:
    assert gcpause.settle_if_asked() is False
    assert gc.get_freeze_count() == 0
    gcpause.settle_later()
    assert gcpause.settle_if_asked() is True
    assert gc.get_freeze_count() > 0
    assert gcpause.settle_if_asked() is False


def test_garbage_frozen_by_mistake_is_swept_once_the_frozen_count_doubles(clean_gc: None) -> None:
    gcpause.settle()
    base = gc.get_freeze_count()
    nodes = [_Node() for _ in range(base // 4)]  # alive at the settle, garbage after it
    probe = weakref.ref(nodes[0])
    gcpause.settle()
    assert gcpause._SWEPT[0] == base  # under twice the base: no sweep
    del nodes
    gc.collect()
    assert probe() is not None  # frozen garbage: held
    more = [_Leaf() for _ in range(base)]
    gcpause.settle()  # frozen count now over 2 × base: thawed, swept, frozen again
    assert probe() is None  # freed by the sweep
    assert gcpause._SWEPT[0] == gc.get_freeze_count() < 2 * base + len(more)


@pytest.mark.parametrize(
    "settings",
    [
        ReplaySettings(),
        ReplaySettings(compaction="pi", context_window=32_000),
        ReplaySettings(compaction="opencode", strategy="opencode", context_window=32_000),
        ReplaySettings(compaction="never", strategy="dcp"),
    ],
)
def test_a_replay_holds_no_reference_cycles(settings: ReplaySettings) -> None:
    """Frozen in the app's cache, a replay must still be freed by reference counting when the
    cache drops it: it holds no cycles."""
    s = load_session(REPO / "sample_sessions" / "long-session.jsonl")
    r = replay(s, settings)
    gc.collect()
    del r
    assert gc.collect() == 0
