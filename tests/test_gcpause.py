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
    gcpause._SWEPT[0] = 0
    yield
    gc.unfreeze()
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


def test_settled_frees_earlier_garbage_then_freezes_what_was_built(clean_gc: None) -> None:
    garbage = _Node()
    probe = weakref.ref(garbage)
    del garbage
    with gcpause.settled():
        assert not gc.isenabled()  # built with the collector paused
        built = [_Leaf() for _ in range(500)]
    assert gc.isenabled()
    assert probe() is None  # collected before the freeze, not frozen with the rest
    assert gc.get_freeze_count() >= 500
    assert not any(o is built[0] for o in gc.get_objects())


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
    gc.collect()
    r = replay(s, settings)
    assert gc.collect() == 0  # and it left no cycles behind while it was built
    del r
    assert gc.collect() == 0


def test_retention_scores_and_reads_entries_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Scoring builds many small acyclic objects, as the replay does: automatic collections took
    about 15 % of its time on the 10k-call bench session. Both the reading of the entries and the
    scoring run with the collector paused, and it is back on after."""
    import inspector.retention as retention_mod
    from inspector.retention import extract

    seen: list[bool] = []
    judge, facts_of = retention_mod.score_text, extract.facts_of

    def spy_judge(*a, **k):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return judge(*a, **k)

    def spy_facts(*a, **k):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return facts_of(*a, **k)

    monkeypatch.setattr(retention_mod, "score_text", spy_judge)
    monkeypatch.setattr(extract, "facts_of", spy_facts)
    s = load_session(REPO / "sample_sessions" / "long-session.jsonl")
    assert gc.isenabled()
    report = retention_mod.retention(replay(s, ReplaySettings(compaction="pi", context_window=32_000)))
    assert report.compactions and seen and not any(seen)
    assert gc.isenabled()


@pytest.mark.parametrize(
    "name", ["claude-code-session.jsonl", "codex-session.jsonl", "opencode-session.json"]
)
def test_other_agents_files_are_imported_with_the_collector_paused(
    name: str, monkeypatch: pytest.MonkeyPatch, clean_gc: None
) -> None:
    """As pi's own loader: an importer builds many small acyclic objects (a 50,000-line Claude
    Code transcript imported in 2.27 s with the collector running, 1.36 s paused); what it built
    is frozen after, and the collector is back on."""
    from inspector import importers
    from inspector.importers import load_any

    _, mod = importers._detect((REPO / "sample_sessions" / name).read_bytes()[: importers.HEAD_BYTES])
    seen: list[bool] = []
    parse = mod.parse

    def spy(*a, **k):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return parse(*a, **k)

    monkeypatch.setattr(mod, "parse", spy)
    frozen = gc.get_freeze_count()
    s = load_any(REPO / "sample_sessions" / name)
    assert s.entries and seen == [False] and gc.isenabled() and gc.get_freeze_count() > frozen
    importers.parse_any((REPO / "sample_sessions" / name).read_bytes(), source=name)
    assert seen == [False, False] and gc.isenabled()
