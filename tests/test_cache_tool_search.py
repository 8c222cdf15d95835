"""Claude Code's ToolSearch and the prompt cache: a search that loads a deferred tool makes the
next request read only the system prompt and tools (claude-code #53132, #91514; the shared
transcript ta93abe). The transcripts are written by hand in the shape Claude Code 2.1 writes."""

from __future__ import annotations

import pytest

from inspector.cache import cache_replay
from inspector.doctor import diagnose
from inspector.replay import ReplaySettings, replay
from inspector.session.models import ToolResultMessage
from tests.support.claude_code import CachedTranscript as Transcript
from tests.support.paths import SHARED

SYSTEM = 16_000  # the prefix every request shares: Claude Code's system prompt and tools


def _searching() -> Transcript:
    """Calls 0–1 grow the cache; call 2 searches (loads WebSearch); call 3 sends its result and reads
    only the system prefix, as recorded; call 4 reads what call 3 wrote; call 5 loads WebFetch, and
    call 6 again reads only the system prefix; call 7 searches for WebSearch again, and call 8 reads
    on (nothing new was loaded). Two floors recorded: the session's own hidden prefix is read off them."""
    t = Transcript()
    t.user("find out how the site is scored")
    t.cached(0, SYSTEM + 20_000)
    t.user("go on")
    t.cached(SYSTEM + 20_000, 3_000)
    t.user("look it up on the web")
    t.search(SYSTEM + 23_000, 1_000, "ts1", "WebSearch")
    t.cached(SYSTEM, 24_100, ("ws1", "WebSearch", {"query": "agent ready"}))
    t.user([{"type": "tool_result", "tool_use_id": "ws1", "content": "results"}])
    t.search(SYSTEM + 24_100, 2_000, "ts2", "WebFetch")
    t.cached(SYSTEM, 26_200)
    t.user("search again")
    t.search(SYSTEM + 26_200, 500, "ts3", "WebSearch")
    t.cached(SYSTEM + 26_700, 300)
    return t


def test_the_importer_keeps_the_tools_a_search_loaded() -> None:
    s = _searching().session()
    results = [e.message for e in s.entries if isinstance(getattr(e, "message", None), ToolResultMessage)]
    searches = [m for m in results if m.toolName == "ToolSearch"]
    assert [m.details["claudeCode"]["toolReferences"] for m in searches] == [
        ["WebSearch"],
        ["WebFetch"],
        ["WebSearch"],
    ]
    assert [m.details for m in results if m.toolName == "WebSearch"] == [None]


def test_the_call_after_a_search_that_loads_a_tool_reads_only_the_system_prefix() -> None:
    s = _searching().session()
    c = cache_replay(replay(s, ReplaySettings()))
    loads = [x for x in c.steps if x.invalidation and x.invalidation["cause"] == "tool-load"]
    assert [x.step for x in loads] == [3, 5]  # the third search loads nothing new: no break there
    assert c.fit.hidden == SYSTEM  # the recorded floor
    for x in loads:
        assert (x.read, x.write) == (x.recorded_read, x.recorded_write) == (SYSTEM, x.prompt - SYSTEM - 2)
        assert x.invalidation["brokenAtEntryIndex"] == x.entry_index - 1  # the search's result
        lost = c.steps[x.step - 1].prompt - 2 - SYSTEM  # what the call before cached, less the floor
        assert x.invalidation["tokensRewritten"] == lost
    assert c.steps[4].read == c.steps[3].prompt - 2  # the next call reads what it wrote
    assert c.steps[7].read == c.steps[6].prompt - 2
    assert all(x.read == x.recorded_read and x.disagreement is None for x in c.steps[1:])


def test_a_search_in_a_pi_file_changes_nothing() -> None:
    """The rule is Claude Code's: a pi session whose tool is named ToolSearch keeps its cache."""
    import dataclasses

    s = dataclasses.replace(_searching().session(), format="pi")
    c = cache_replay(replay(s, ReplaySettings()))
    assert not any(x.invalidation for x in c.steps)
    assert c.steps[3].read > c.steps[3].recorded_read  # the recorded floor is now a disagreement


def test_the_doctor_expects_the_break_after_a_search_that_loads_a_tool() -> None:
    s = _searching().session()
    found = [f for f in diagnose(s).findings if f.kind == "cache-break"]
    assert [(f.severity, f.entries) for f in found] == [("info", [7, 5, 6]), ("info", [11, 9, 10])]
    assert "ToolSearch loaded WebSearch at entry 6" in found[0].message
    assert "ToolSearch loaded WebFetch at entry 10" in found[1].message
    assert all("claude-code #53132" in f.message for f in found)


def test_a_microcompacted_search_result_keeps_the_tools_it_loaded() -> None:
    """Claude Code's microcompact marks the results it cleared in the same ``details.claudeCode``:
    both marks stay."""
    from inspector.pruning.recorded import recorded_prune

    t = _searching()
    t.line(
        "system",
        subtype="microcompact_boundary",
        content="Context microcompacted",
        microcompactMetadata={
            "trigger": "auto",
            "preTokens": 50_000,
            "tokensSaved": 10,
            "compactedToolIds": ["ts1"],
        },
    )
    s = t.session()
    (m,) = [e.message for e in s.entries if getattr(getattr(e, "message", None), "toolCallId", "") == "ts1"]
    assert m.details["claudeCode"]["toolReferences"] == ["WebSearch"]
    assert recorded_prune(m) is not None


def test_a_search_loading_many_or_long_named_tools_is_said_in_one_short_line() -> None:
    t = _searching()
    refs = [{"type": "tool_reference", "tool_name": n} for n in ["x" * 5000, "B", "C", "D", "E"]]
    t.lines[6]["message"]["content"][0]["content"] = refs  # the first search's result
    (f, _) = [f for f in diagnose(t.session()).findings if f.kind == "cache-break"]
    assert f.severity == "info" and "x" * 79 + "…, B, C and 2 more at entry 6" in f.message
    assert len(f.message) < 600


TA93ABE = SHARED / "real-sessions" / "claude-code" / "ta93abe-me-abd0788e9d-0.jsonl"


@pytest.mark.skipif(not TA93ABE.is_file(), reason="../shared/real-sessions is not beside this clone")
def test_the_shared_transcript_reads_its_floor_where_the_model_says() -> None:
    """ta93abe (Claude Code 2.1.177): its one ToolSearch loads WebSearch, and the next call reads only
    the 16,222-token prefix, as recorded; the session's reads within 5 % of the recorded total."""
    from inspector.importers import load_any

    c = cache_replay(replay(load_any(TA93ABE), ReplaySettings()))
    (x,) = [x for x in c.steps if x.invalidation and x.invalidation["cause"] == "tool-load"]
    assert (x.entry_index, x.invalidation["brokenAtEntryIndex"]) == (53, 52)
    assert (x.read, x.write) == (x.recorded_read, x.recorded_write) == (16_222, 87_737)
    predicted = sum(s.read for s in c.steps if s.recorded_read is not None)
    recorded = sum(s.recorded_read for s in c.steps if s.recorded_read is not None)
    assert abs(predicted - recorded) / recorded < 0.05  # +9.1 % before the rule


def test_an_unexplained_floor_read_in_claude_code_cites_what_its_users_measured() -> None:
    """A Claude Code break the file does not explain, reading only the prefix other breaks read too,
    is still a warning, and says Claude Code users measured such intermittent floor reads."""
    import dataclasses

    t = _searching()
    t.user("and now?")
    t.cached(SYSTEM, 27_300)  # the floor again, nothing in the file before it
    s = t.session()
    (f,) = [f for f in diagnose(s).findings if f.kind == "cache-break" and f.severity == "warning"]
    assert f.entries[0] == len(s.entries) - 1 and "claude-code #87966" in f.message
    pi = [f for f in diagnose(dataclasses.replace(s, format="pi")).findings if f.kind == "cache-break"]
    assert not any("#87966" in f.message for f in pi)
