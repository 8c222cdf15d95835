"""The agent's own recorded pruning (``recorded``) and Claude Code's reported time-based
microcompact (``claude-code-microcompact``)."""

from __future__ import annotations

from inspector.importers import load_any
from inspector.pruning.recorded import CLEARED, recorded_prune
from inspector.replay import ReplaySettings, prune_at, replay

from .support.builder import SessionBuilder
from .support.paths import REPO

CC = REPO / "sample_sessions" / "claude-code-session.jsonl"
T0 = 1767225600000


def _pruned(res) -> list[int]:  # type: ignore[no-untyped-def]
    return [d.entry_index for d in res.decisions if d.action == "pruned"]


def test_claude_code_microcompact_boundary_marks_the_results_it_cleared() -> None:
    s = load_any(CC)
    marked = {
        e.message.toolCallId: recorded_prune(e.message)
        for e in s.entries
        if getattr(getattr(e, "message", None), "role", "") == "toolResult"
    }
    assert [k for k, v in marked.items() if v is not None] == ["toolu_01"]
    assert marked["toolu_01"].agent == "Claude Code" and marked["toolu_01"].marker == CLEARED
    mc = next(
        e for e in s.entries if getattr(e, "customType", "") == "claude-code/system:microcompact_boundary"
    )
    assert mc.data["compactedToolIds"] == ["toolu_01"] and mc.data["tokensSaved"] == 560


def test_recorded_strategy_clears_from_the_call_after_the_mark() -> None:
    s = load_any(CC)
    r = replay(s, ReplaySettings(strategy="recorded"))
    read_result = next(
        i
        for i, e in enumerate(s.entries)
        if getattr(getattr(e, "message", None), "toolCallId", "") == "toolu_01"
    )
    pruned_at = [k for k in range(len(r.steps)) if read_result in _pruned(r.step_detail(k).prune)]
    assert pruned_at == [2]  # the answer after the microcompact; the compaction removes it after that
    assert all(read_result not in _pruned(r.step_detail(k).prune) for k in (0, 1))
    assert r.metrics.tokens_pruned > 0


def test_recorded_strategy_reads_opencode_marks_and_their_time() -> None:
    b = SessionBuilder()
    b.user("go", timestamp=T0)
    b.assistant(tools=[("read", {"path": "a.ts"})], timestamp=T0 + 1000)
    b.tool_result("x" * 4000, details={"opencode": {"compacted": T0 + 5000}}, timestamp=T0 + 2000)
    b.assistant("done", timestamp=T0 + 3000)
    b.user("next", timestamp=T0 + 6000)
    b.assistant("ok", timestamp=T0 + 7000)
    s = b.session()
    assert _pruned(prune_at(s, "recorded", at_step=1)) == []  # answered before OpenCode pruned it
    res = prune_at(s, "recorded", at_step=2)
    assert _pruned(res) == [2]
    d = next(d for d in res.decisions if d.action == "pruned")
    assert "OpenCode cleared it" in d.reason and d.marker == CLEARED


def _idle_session(gap_minutes: float, results: int = 7) -> object:
    b = SessionBuilder()
    t = T0
    b.user("go", timestamp=t)
    for k in range(results):
        t += 1000
        b.assistant(tools=[("read", {"path": f"f{k}.ts"})], timestamp=t)
        t += 1000
        b.tool_result("y" * 2000, timestamp=t)
    t += 1000
    b.assistant("done", timestamp=t)
    b.user("back again", timestamp=t + int(gap_minutes * 60_000))
    b.assistant("ok", timestamp=t + int(gap_minutes * 60_000) + 1000)
    return b.session()


def test_microcompact_clears_all_but_the_newest_five_after_an_idle_hour() -> None:
    s = _idle_session(61)
    last = len(replay(s).steps) - 1
    res = prune_at(s, "claude-code-microcompact", at_step=last)
    results = [
        i for i, e in enumerate(s.entries) if getattr(getattr(e, "message", None), "role", "") == "toolResult"
    ]
    assert _pruned(res) == results[:2]  # 7 results, the newest 5 kept
    assert prune_at(s, "claude-code-microcompact", at_step=last - 1).decisions  # before the gap: nothing
    assert _pruned(prune_at(s, "claude-code-microcompact", at_step=last - 1)) == []


def test_microcompact_needs_more_than_the_gap_and_its_settings_apply() -> None:
    assert _pruned(prune_at(_idle_session(59), "claude-code-microcompact")) == []
    s = _idle_session(61)
    assert len(_pruned(prune_at(s, "claude-code-microcompact", {"keep_recent": "2"}))) == 5
    assert _pruned(prune_at(s, "claude-code-microcompact", {"tools": "bash"})) == []
    assert len(_pruned(prune_at(_idle_session(30), "claude-code-microcompact", {"gap_minutes": "20"}))) == 2
