"""pi's cut-point rules, each quirk of ALGORITHMS.md §4.3–4.5 on a hand-built path."""

from __future__ import annotations

from inspector.compaction import (
    CompactionSettings,
    find_cut_point,
    find_turn_start_index,
    prepare_compaction,
    should_compact,
)
from inspector.context import build_session_context

from .support.builder import SessionBuilder

D = CompactionSettings()


def test_should_compact_is_strict_and_can_be_disabled() -> None:
    assert not should_compact(111616, 128000, D)
    assert should_compact(111617, 128000, D)
    assert not should_compact(10**9, 128000, D.model_copy(update={"enabled": False}))
    assert should_compact(0, 0, D)


def _linear(sizes: list[tuple[str, int]]) -> list:
    b = SessionBuilder()
    for role, n in sizes:
        if role == "user":
            b.user("u" * n)
        elif role == "assistant":
            b.assistant("a" * n)
        elif role == "tool":
            b.tool_result("t" * n)
        elif role == "bash":
            b.msg("bashExecution", command="", output="b" * n, exitCode=0, cancelled=False, truncated=False)
        else:
            b.add(role, thinkingLevel="high") if role == "thinking_level_change" else b.add(role)
    s = b.session()
    return list(s.entries)


def test_walk_stops_at_budget_inclusive_and_cuts_at_that_message() -> None:
    # each message is 100 tokens (400 chars); keep 200 is reached exactly at the 2nd newest
    p = _linear([("user", 400), ("assistant", 400), ("user", 400), ("assistant", 400)])
    c = find_cut_point(p, 0, len(p), 200)
    assert (c.firstKeptEntryIndex, c.turnStartIndex, c.isSplitTurn) == (2, -1, False)
    c = find_cut_point(p, 0, len(p), 201)  # one token more: one message further back
    assert (c.firstKeptEntryIndex, c.isSplitTurn) == (1, True) and c.turnStartIndex == 0


def test_cut_snaps_forward_past_tool_results() -> None:
    p = _linear([("user", 400), ("assistant", 400), ("tool", 4000), ("assistant", 40)])
    c = find_cut_point(p, 0, len(p), 500)  # budget reached at the tool result (index 2)
    assert c.firstKeptEntryIndex == 3 and c.snapped_to == 3 and c.walked_to == 2


def test_newest_tool_result_alone_over_budget_falls_back_to_first_cut_point() -> None:
    p = _linear([("user", 40), ("assistant", 40), ("tool", 40000)])
    c = find_cut_point(p, 0, len(p), 2000)
    assert c.firstKeptEntryIndex == 0 and c.fallback == "no-cut-point-after"


def test_budget_never_reached_keeps_everything() -> None:
    p = _linear([("user", 40), ("assistant", 40)])
    c = find_cut_point(p, 0, len(p), 20000)
    assert c.firstKeptEntryIndex == 0 and c.fallback == "budget-not-reached"


def test_no_cut_point_returns_start_and_minus_one() -> None:
    p = _linear([("tool", 40), ("tool", 40)])
    c = find_cut_point(p, 0, len(p), 1)
    assert (c.firstKeptEntryIndex, c.turnStartIndex, c.isSplitTurn) == (0, -1, False)


def test_cut_moves_back_over_settings_entries_and_turn_prefix_becomes_previous_turn() -> None:
    p = _linear(
        [("user", 400), ("assistant", 400), ("thinking_level_change", 0), ("user", 400), ("assistant", 400)]
    )
    c = find_cut_point(p, 0, len(p), 200)  # reaches user at 3, moves back onto the setting at 2
    assert c.firstKeptEntryIndex == 2 and c.moved_back == 1
    assert c.isSplitTurn and c.turnStartIndex == 0  # the previous turn is the "prefix"


def test_cut_at_bash_execution_is_split_turn_with_empty_prefix() -> None:
    p = _linear([("user", 400), ("assistant", 400), ("bash", 400)])
    c = find_cut_point(p, 0, len(p), 50)
    assert (c.firstKeptEntryIndex, c.turnStartIndex, c.isSplitTurn) == (2, 2, True)


def test_custom_messages_and_branch_summaries_weigh_nothing_in_the_walk() -> None:
    b = SessionBuilder()
    b.user("u" * 400)
    b.add("custom_message", customType="x", content="c" * 40000, display=True)
    b.assistant("a" * 400)
    p = list(b.session().entries)
    c = find_cut_point(p, 0, len(p), 150)  # only the two 100-token messages count
    assert c.firstKeptEntryIndex == 0


def test_the_cut_story_says_what_the_walk_did_not_count() -> None:
    """Another agent's attachments are imported as custom messages: sent, but not in pi's walk.
    The story says so when they weigh 5 % of keepRecentTokens or more."""
    from inspector.compaction import CompactionSettings
    from inspector.explain import explain_compaction

    def story(custom_chars: int, keep: int) -> list[str]:
        b = SessionBuilder()
        b.user("u" * 400)
        b.add("custom_message", customType="x", content="c" * custom_chars, display=True)
        b.assistant("a" * 400)
        b.user("u" * 400)
        b.assistant("a" * 400)
        plan = explain_compaction(b.session(), settings=CompactionSettings(keepRecentTokens=keep))
        assert plan is not None
        return [x for x in plan.steps if "counts message entries only" in x]

    assert story(40_000, 20_000) == [  # the walk: 400 tokens; the context holds 10,000 more
        "pi counts message entries only: 1 custom message in that range (10,000 tokens): sent to the "
        "model, not counted."
    ]
    assert story(40_000, 150) == []  # past the walked part: not in the range
    assert story(3_000, 20_000) == []  # 750 tokens, under 5 % of keepRecentTokens


def test_turn_start_recognises_user_bash_custom_message_and_branch_summary() -> None:
    b = SessionBuilder()
    b.add("branch_summary", fromId="x", summary="s")
    b.assistant("a")
    b.add("custom_message", customType="x", content="c", display=False)
    b.assistant("a")
    p = list(b.session().entries)
    assert find_turn_start_index(p, 1, 0) == 0 and find_turn_start_index(p, 3, 0) == 2
    assert find_turn_start_index(p, 3, 3) == -1


def _compacted() -> SessionBuilder:
    b = SessionBuilder()
    b.user("u" * 400)
    b.assistant("a" * 400, tools=[("read", {"path": "old.py"})])
    kept = b.user("u" * 400)
    b.assistant("a" * 400, tools=[("edit", {"path": "k.py"})])
    b.add(
        "compaction",
        summary="prev",
        firstKeptEntryId=kept,
        tokensBefore=1000,
        details={"readFiles": ["r.md"], "modifiedFiles": ["m.py"]},
    )
    b.user("u" * 400)
    b.assistant("a" * 400, usage=500, tools=[("write", {"path": "w.py"}), ("read", {"path": "k.py"})])
    b.user("u" * 400)
    return b


def test_prepare_073_starts_at_previous_first_kept_and_skips_the_compaction() -> None:
    s = _compacted().session()
    prep = prepare_compaction(s.path_entries(), D.model_copy(update={"keepRecentTokens": 100}))
    assert prep.boundary_start == 2 and prep.previousSummary == "prev"
    assert [m.entry_index for m in prep.messagesToSummarize] == [2, 3, 5, 6]
    assert prep.fileOps.lists() == (["r.md"], ["k.py", "m.py", "w.py"])
    assert prep.tokensBefore == 500 + 100  # usage of entry 6 + the user after it


def test_prepare_058_starts_after_the_compaction() -> None:
    s = _compacted().session()
    prep = prepare_compaction(
        s.path_entries(), D.model_copy(update={"keepRecentTokens": 100}), pi_version="0.58"
    )
    assert prep.boundary_start == 5
    assert [m.entry_index for m in prep.messagesToSummarize] == [5, 6]


def test_from_hook_previous_details_are_not_carried() -> None:
    b = _compacted()
    b.lines[5]["fromHook"] = True
    prep = prepare_compaction(b.session().path_entries(), D.model_copy(update={"keepRecentTokens": 100}))
    assert "r.md" not in prep.fileOps.read_files and "m.py" not in prep.fileOps.modified_files


def test_nothing_to_compact_still_prepares_and_ending_in_compaction_gives_none() -> None:
    b = SessionBuilder()
    b.user("hi")
    b.assistant("yo")
    prep = prepare_compaction(b.session().path_entries(), D)
    assert prep is not None and prep.messagesToSummarize == ()
    b.add("compaction", summary="s", firstKeptEntryId="e0000001", tokensBefore=1)
    assert prepare_compaction(b.session().path_entries(), D) is None


def test_context_after_compaction_is_summary_then_kept_then_rest() -> None:
    s = _compacted().session()
    ctx = build_session_context(s)
    assert [m.role for m in ctx.messages][:3] == ["compactionSummary", "user", "assistant"]
    assert [m.entry_index for m in ctx.messages] == [4, 2, 3, 5, 6, 7]


def test_cut_moves_back_over_custom_messages_and_branch_summaries_too() -> None:
    b = SessionBuilder()
    b.user("u" * 400)
    b.assistant("a" * 400)
    b.add("branch_summary", fromId="x", summary="s")
    b.add("custom_message", customType="x", content="c", display=True)
    b.user("u" * 400)
    p = list(b.session().entries)
    c = find_cut_point(p, 0, len(p), 100)  # reached at the last user (4), moved back to 2
    assert (c.snapped_to, c.firstKeptEntryIndex, c.moved_back) == (4, 2, 2)
    assert c.isSplitTurn and c.turnStartIndex == 2  # a branch summary starts a turn: empty prefix


def test_non_user_cut_without_any_turn_start_is_not_a_split_turn() -> None:
    b = SessionBuilder()
    b.add("session_info", name="n")
    b.assistant("a" * 400)
    b.assistant("a" * 400)
    p = list(b.session().entries)
    c = find_cut_point(p, 0, len(p), 10**6)  # budget never reached: first cut point, then back to 0
    assert (c.firstKeptEntryIndex, c.turnStartIndex, c.isSplitTurn) == (0, -1, False)


def test_custom_role_message_is_a_cut_point_but_not_a_turn_start() -> None:
    b = SessionBuilder()
    b.user("u" * 400)
    b.msg("custom", customType="hook", content="h" * 400, display=True)
    b.assistant("a" * 40)
    p = list(b.session().entries)
    c = find_cut_point(p, 0, len(p), 100)  # 10 + 100 >= 100 at the custom message (1)
    assert c.firstKeptEntryIndex == 1 and c.isSplitTurn and c.turnStartIndex == 0


def test_context_keeps_nothing_before_compaction_when_first_kept_is_off_path() -> None:
    b = SessionBuilder()
    b.user("a")
    b.assistant("b")
    b.add("compaction", summary="s", firstKeptEntryId="not-on-path", tokensBefore=3)
    b.user("c")
    s = b.session()
    assert [(m.role, m.entry_index) for m in build_session_context(s).messages] == [
        ("compactionSummary", 2),
        ("user", 3),
    ]


def test_empty_branch_summary_gives_no_message_and_null_leaf_gives_empty_context() -> None:
    b = SessionBuilder()
    b.user("a")
    b.add("branch_summary", fromId="x", summary="")
    b.add("branch_summary", fromId="x", summary="kept")
    s = b.session()
    assert [m.role for m in build_session_context(s).messages] == ["user", "branchSummary"]
    assert build_session_context(s, None).messages == ()


def test_file_lists_sort_by_utf16_units_and_modified_wins_over_read() -> None:
    from inspector.compaction import FileOps

    ops = FileOps()
    ops.read.update(dict.fromkeys(["\uff5e.md", "\U0001f600.md", "b.md", "a.md"]))
    ops.edited["b.md"] = None
    assert ops.lists() == (["a.md", "\U0001f600.md", "\uff5e.md"], ["b.md"])
