"""The offline summarizer and pi's compact() composition."""

from __future__ import annotations

from inspector import load_session
from inspector.compaction import CompactionSettings, prepare_compaction
from inspector.summarize import SPLIT_TURN_SEPARATOR, get_summarizer, summarize_compaction
from inspector.summarize.offline import estimate

from .conftest import FIXTURES, SessionBuilder, need_shared


def _latest_request(prep) -> str:  # type: ignore[no-untyped-def]
    users = [m.message for m in (*prep.messagesToSummarize, *prep.turnPrefixMessages) if m.role == "user"]
    c = users[-1].content
    return c if isinstance(c, str) else "".join(b.text for b in c if getattr(b, "type", "") == "text")


def test_offline_summary_of_before_compaction_keeps_modified_files_and_latest_request() -> None:
    need_shared()
    s = load_session(FIXTURES / "before-compaction.jsonl")
    prep = prepare_compaction(s.path_entries(), path_indexes=s.path())
    res = summarize_compaction(prep, get_summarizer("offline"))
    for f in prep.fileOps.modified_files:
        assert f in res.text, f
    assert " ".join(_latest_request(prep).split())[:150] in " ".join(res.text.split())
    assert res.summarizer == "offline extractive"
    assert SPLIT_TURN_SEPARATOR in res.text  # keep 20000 splits a turn here (pi's own preparation)
    assert res.text.rstrip().endswith("</modified-files>")


def test_offline_summary_is_deterministic_updates_previous_and_respects_budget() -> None:
    b = SessionBuilder()
    b.user("Make the parser stream.")  # already summarised by the earlier compaction
    kept = b.user("Now update the tests. You must keep the public API stable.")
    b.add("compaction", summary="## Goal\nOld goal from before\n\n## Key Decisions\n- **Earlier**: reason",
          firstKeptEntryId=kept, tokensBefore=10)
    b.assistant("I'll use a generator.", tools=[("edit", {"path": "src/p.ts", "oldText": "a", "newText": "b"})])
    b.tool_result("ok", tool="edit")
    b.assistant("done")
    b.user("x" * 100)
    s = b.session()
    prep = prepare_compaction(s.path_entries(), CompactionSettings(keepRecentTokens=1), path_indexes=s.path())
    a = summarize_compaction(prep, get_summarizer())
    assert a.text == summarize_compaction(prep, get_summarizer()).text
    assert "Old goal from before" in a.text and "**Earlier**" in a.text  # previous summary kept
    assert "must keep the public API stable" in a.text and "src/p.ts" in a.text
    tight = CompactionSettings(keepRecentTokens=1, reserveTokens=200)  # 0.8 × 200 = 160 tokens
    prep2 = prepare_compaction(s.path_entries(), tight, path_indexes=s.path())
    res = get_summarizer().summarize(__import__("inspector.summarize.base", fromlist=["x"]).SummaryRequest(
        prep2.messagesToSummarize, prep2.previousSummary, None, 160))
    assert estimate(res.text) <= 160
