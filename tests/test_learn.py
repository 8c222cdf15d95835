"""Learn mode's engine: each screen's reveal against the engine functions it teaches."""

from __future__ import annotations

import pytest

from inspector import learn
from inspector.branch_summary import prepare_branch_summary
from inspector.compaction import CompactionSettings, find_cut_point, prepare_compaction, should_compact
from inspector.replay import ReplaySettings, replay
from inspector.tokens import estimate_tokens
from inspector.ui import learn_figures


@pytest.fixture(scope="module")
def s():  # type: ignore[no-untyped-def]
    return learn.load_learn_session()


def test_screens_are_numbered_and_name_a_real_rule_and_source() -> None:
    assert [x.number for x in learn.SCREENS] == list(range(1, len(learn.SCREENS) + 1))
    assert len({x.key for x in learn.SCREENS}) == len(learn.SCREENS) == 9
    for x in learn.SCREENS:
        assert x.system and x.rule and x.source and x.question.endswith("?")
    assert learn.parse_screen("4") == 4
    assert learn.parse_screen("0") == learn.parse_screen("x") == learn.parse_screen(None) == 1


def test_every_screen_reveals_one_of_its_choices(s) -> None:  # type: ignore[no-untyped-def]
    for rv in learn.all_reveals(s):
        assert rv.answer in rv.choices, rv.screen
        assert 0 <= rv.replay_step < len(replay(s, rv.replay_settings).steps)
        assert rv.explanation


def test_context_screen_counts_the_call_by_kind(s) -> None:  # type: ignore[no-untyped-def]
    rv = learn.reveal(s, "context", 10)
    d = replay(s, ReplaySettings()).step_detail(10)
    assert rv.values["messages"] == len(d.after)
    assert (
        rv.values["tokens"]
        == sum(estimate_tokens(c.message) for c in d.after)
        == sum(rv.values["by_kind"].values())
    )
    assert rv.answer == max(rv.values["by_kind"], key=rv.values["by_kind"].get)
    assert learn.reveal(s, "context", 10).values != learn.reveal(s, "context", 60).values


def test_tokens_screen_compares_the_estimate_with_the_recorded_prompt(s) -> None:  # type: ignore[no-untyped-def]
    r = replay(s, ReplaySettings())
    k = learn.default_value(s, learn.screen("tokens"))
    rv = learn.reveal(s, "tokens", k)
    assert rv.values["estimate"] == r.steps[k].tokens
    assert rv.values["recorded"] == r.steps[k].recorded_input
    assert rv.answer == ("below" if r.steps[k].tokens < r.steps[k].recorded_input else "above")


def test_trigger_screen_follows_should_compact(s) -> None:  # type: ignore[no-untyped-def]
    small, big = learn.reveal(s, "trigger", 48_000), learn.reveal(s, "trigger", 200_000)
    assert small.values["threshold"] == 48_000 - 16_384
    assert small.values["compactions"] >= 2 and small.answer in ("2–3", "4 or more")
    assert big.values["compactions"] == 0 and big.answer == "0"
    assert not should_compact(big.values["peak"], 200_000, CompactionSettings())
    first = small.values["compaction_steps"][0]
    assert small.replay_step == first and small.replay_settings.context_window == 48_000


def test_cut_walk_matches_find_cut_point(s) -> None:  # type: ignore[no-untyped-def]
    leaf = learn.leaf_before_compaction(s)
    path = s.path(leaf)
    entries = s.entries_at(path)
    for keep in (4_000, 20_000, 36_000):
        frames, prep = learn.cut_walk(s, leaf, keep)
        cut = find_cut_point(entries, prep.boundary_start, len(entries), keep)
        assert frames[-1].reached and frames[-1].total == cut.walked_tokens >= keep
        assert frames[-1].entry == path[cut.walked_to]
        assert all(not f.reached for f in frames[:-1])
        assert [f.total for f in frames] == sorted(f.total for f in frames)
        rv = learn.reveal(s, "cut", keep)
        assert rv.values["first_kept"] == path[cut.firstKeptEntryIndex]
        assert rv.values["walk_length"] == len(frames)
    assert (
        learn.reveal(s, "cut", 4_000).values["first_kept"]
        > learn.reveal(s, "cut", 36_000).values["first_kept"]
    )


def test_split_screen_shows_the_turn_prefix_and_two_summaries(s) -> None:  # type: ignore[no-untyped-def]
    leaf = learn.leaf_before_compaction(s)
    path = s.path(leaf)
    rv = learn.reveal(s, "split", 20_000)
    prep = prepare_compaction(
        s.entries_at(path), CompactionSettings(keepRecentTokens=20_000), path_indexes=path
    )
    assert rv.answer == ("yes" if prep.isSplitTurn else "no")
    assert rv.values["turn_prefix_messages"] == len(prep.turnPrefixMessages)
    if prep.isSplitTurn:
        assert rv.extra["history"] and rv.extra["prefix"]


def test_keeps_screen_lists_the_summarised_files(s) -> None:  # type: ignore[no-untyped-def]
    low, high = learn.reveal(s, "keeps", 4_000), learn.reveal(s, "keeps", 40_000)
    assert low.answer == str(len(low.values["read_files"]) + len(low.values["modified_files"]))
    assert int(low.answer) >= int(high.answer)  # summarising more lists at least as many files
    from inspector.retention import retention

    c = retention(replay(s, ReplaySettings())).compactions[
        0
    ]  # the retention view: the session's own compaction
    assert low.values["retention_recall"] == c.recall() and low.values["retention_needed"] == len(c.needed)
    assert [f["item"] for f in low.values["retention_forgotten"]] == [n.item for n in c.forgotten]


def test_pruning_screen_compares_both_rules_and_moves_with_the_sliders(s) -> None:  # type: ignore[no-untyped-def]
    lo = learn.reveal(s, "pruning", 5_000, minimum=5_000)
    hi = learn.reveal(s, "pruning", 60_000, minimum=20_000)
    for name in learn.PRUNE_STRATEGIES:
        r = replay(s, learn.prune_settings(name, 5_000, 5_000))
        assert lo.values["pruned"][name] == r.metrics.tokens_pruned
        assert lo.values["pruned"][name] >= hi.values["pruned"][name]
    assert lo.values["pruned"]["opencode"] > 0


def test_branch_screen_follows_pi_branch_summarization(s) -> None:  # type: ignore[no-untyped-def]
    targets = learn.branch_targets(s)
    assert targets[0] == s.common_ancestor(learn.abandoned_leaf(s), s.default_leaf)
    sizes = []
    for t in targets:
        rv = learn.reveal(s, "branch", t)
        col, prep = prepare_branch_summary(s, learn.abandoned_leaf(s), t)
        assert rv.values["messages"] == len(prep.messages) and rv.answer == str(len(prep.messages))
        sizes.append(rv.values["entries"])
    assert sizes == sorted(sizes)  # navigating further back leaves more of the old branch behind


def test_cost_screen_compares_with_never_compacting(s) -> None:  # type: ignore[no-untyped-def]
    from inspector.cache import cache_replay

    rv = learn.reveal(s, "cost", 48_000)
    never = replay(s, ReplaySettings(compaction="never", context_window=48_000))
    assert rv.values["list_never"] == never.metrics.cost_usd
    assert (
        rv.values["cost_never"] == cache_replay(never, s).billed_cost
    )  # billed with the prompt cache (issue 19)
    assert rv.answer == "cheaper" and rv.values["cost_pi"] < rv.values["cost_never"]
    assert learn.reveal(s, "cost", 200_000).answer == "the same"
    small = learn.reveal(s, "cost", 24_000)  # compacting often: each compaction throws the cache away
    assert small.values["invalidations_pi"] > rv.values["invalidations_pi"]
    assert small.values["cost_pi"] > rv.values["cost_pi"]  # dearer than compacting less often
    assert small.values["list_pi"] < small.values["list_never"]  # though the messages alone are cheaper
    # never compacting still pays the switch to Opus at call 66: its own cache starts empty
    lost = cache_replay(never, s).invalidations
    causes = {x.step: x.invalidation["cause"] for x in lost}
    assert causes.get(66) == "model"
    top = max(lost, key=lambda x: x.invalidation["tokensRewritten"])  # the explanation names the largest
    assert (
        f"{len(lost)} cache invalidation(s); the largest, " in rv.explanation[0]
        and f"at call {top.step}, rewrote {top.invalidation['tokensRewritten']:,} tokens" in rv.explanation[0]
    )


def test_extensions_add_values_to_a_reveal(s, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(learn.EXTENSIONS, "keeps", [lambda session, rv: {"retained": rv.values["files"] * 2}])
    rv = learn.reveal(s, "keeps", 20_000)
    assert rv.values["retained"] == rv.values["files"] * 2


def test_figures_change_with_the_control(s) -> None:  # type: ignore[no-untyped-def]
    for key, a, b in (
        ("trigger", 48_000, 200_000),
        ("cut", 4_000, 30_000),
        ("pruning", 5_000, 60_000),
        ("cost", 48_000, 96_000),
        ("context", 10, 60),
    ):
        fa = learn_figures.screen_figure(learn.reveal(s, key, a))
        fb = learn_figures.screen_figure(learn.reveal(s, key, b))
        assert fa.to_plotly_json()["data"] != fb.to_plotly_json()["data"], key
    walk = learn_figures.cut_walk(*learn.cut_walk(s, learn.leaf_before_compaction(s), 20_000)[:1], 20_000)
    assert len(walk.frames) == len(learn.cut_walk(s, learn.leaf_before_compaction(s), 20_000)[0])


def test_the_screens_state_pis_rules_as_its_source_has_them(s) -> None:  # type: ignore[no-untyped-def]
    """What an audit against ../shared/oracle/ALGORITHMS.md and research/pruning.md found worded
    wrongly: a user's image counts 0; pi's trigger compares each answer's recorded usage; a turn
    also starts at a bash execution, custom message or branch summary; PRUNE_PROTECT is 40,000 in
    both pruners; a compaction leaves the system prompt and tools cached."""
    rule = {sc.key: sc.rule for sc in learn.SCREENS}
    idea = {sc.key: sc.idea for sc in learn.SCREENS}
    assert "a user's image 0" in rule["tokens"] and "totalTokens" in rule["tokens"]
    assert "that answer's recorded usage (calculateContextTokens)" in rule["trigger"]
    assert "custom-message or branch-summary entry" in rule["cut"]
    assert "(or bash execution, custom message or branch summary)" in rule["split"]
    assert "40,000 in both" in idea["pruning"] and "Before compacting" not in idea["pruning"]
    assert "reads only the system prompt and tools from the cache" in rule["cost"]
    # pi on the recorded usage of the answer ending each agent run, and the replay with it (until its
    # context departs from the recorded one): calls 41–46 call tools, the run ends at call 47
    rv = learn.reveal(s, "trigger", 64_000)
    assert rv.values["recorded_first_over"] == 47 and rv.values["compaction_steps"][0] == 48
    assert any(
        "so pi would compact before call 48" in w and "checks the same usage" in w for w in rv.explanation
    )
    assert "not between the tool calls of a run" in rule["trigger"]
    steps = replay(s, ReplaySettings()).steps
    assert steps[41].recorded_total > 47_616 >= max(st.recorded_total or 0 for st in steps[:41])
    assert [st.stop_reason for st in steps[41:48]] == ["toolUse"] * 6 + ["stop"]
    cost = learn.reveal(s, "cost", 64_000)
    # by the provider's count (the recorded prompt, then plus what never compacting kept): from call 52,
    # whose recorded prompt, 64,525 tokens, is over the window (pi's estimate of it, 57,473, is not)
    assert any("overflows this window at 28 call(s)" in w for w in cost.explanation)


def test_the_trigger_screen_counts_an_aborted_answer_as_pi_does_before_the_next_prompt() -> None:
    # pi skips an aborted run at agent_end and checks it before the next prompt, on its own usage;
    # an answer that calls a tool is never checked (the run goes on).
    from .support.builder import SessionBuilder

    b = SessionBuilder()
    b.user("u" * 400)
    b.assistant("", tools=[("read", {"path": "a.py"})], usage=45_000)
    b.tool_result("x" * 40, tool="read")
    b.assistant("ok", usage=1_000)
    b.user("u" * 400)
    b.assistant("a" * 40, usage=40_000, stop="aborted")
    b.user("again")
    b.assistant("ok", usage=41_000)
    rv = learn.reveal(b.session(), "trigger", 50_000)  # threshold 50,000 − 16,384 = 33,616
    assert rv.values["recorded_first_over"] == 2
