"""Every pruning strategy at its edges (thresholds ±1 token, protected tools, errors, boundaries,
persistence, turn counting, zones and the latch)."""

from __future__ import annotations

import pytest

from inspector.context import ContextMessage
from inspector.pruning import REGISTRY, get_strategy, parse_settings
from inspector.pruning.base import CallInfo
from inspector.pruning.turn_aware import TurnAwareState, ledger_items, merge_ledger
from inspector.replay import CachedCounter
from inspector.session.models import (
    AssistantMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ToolResultMessage,
    UserMessage,
)
from inspector.tokens import get_counter

COUNTER = CachedCounter(get_counter("pi"))
_n = 0


def cm(msg) -> ContextMessage:  # type: ignore[no-untyped-def]
    global _n
    _n += 1
    return ContextMessage(msg, _n)


def user(text: str = "go") -> ContextMessage:
    return cm(UserMessage(content=text))


def call(tool: str = "read", cid: str = "", **args) -> ContextMessage:  # type: ignore[no-untyped-def]
    return cm(AssistantMessage(content=[{"type": "toolCall", "id": cid or f"c{_n + 1}", "name": tool,
                                        "arguments": args or {"path": "a.py"}}], stopReason="toolUse"))


def result(tokens: int, tool: str = "read", error: bool = False, cid: str = "") -> ContextMessage:
    # 4 chars per token: pi's ceil(len/4) and OpenCode's round(len/4) both give `tokens`
    return cm(ToolResultMessage(toolCallId=cid or f"c{_n}", toolName=tool, isError=error,
                                content=[{"type": "text", "text": "x" * (4 * tokens)}]))


def answer(text: str = "ok") -> ContextMessage:
    return cm(AssistantMessage(content=[{"type": "text", "text": text}], stopReason="stop"))


def run(name: str, msgs, *, state=None, new_prompt=True, force=False, window=200000, tokens=None, **settings):  # type: ignore[no-untyped-def]
    strat = get_strategy(name)
    s = parse_settings(strat, settings)
    ci = CallInfo(step=0, new_prompt=new_prompt, context_window=window, context_tokens=tokens, force=force)
    return strat.apply(msgs, s, state, ci, COUNTER)


def actions(res, msgs) -> dict[int, str]:  # type: ignore[no-untyped-def]
    pos = {id(m): i for i, m in enumerate(msgs)}
    return {pos[id(msgs[d.position])]: d.action for d in res.decisions if d.action != "kept"}


def history(a: int, b: int, *, a_kw=None, b_kw=None, middle_user=user):  # type: ignore[no-untyped-def]
    """[u1, call, A, call, B, u2, call, C(5), u3, answer, u4(new)]: A and B are older than the
    two protected turns (u2's and u3's); the new prompt u4 is what triggers OpenCode."""
    msgs = [user(), call(), result(a, **(a_kw or {})), call(), result(b, **(b_kw or {})),
            middle_user(), call(), result(5), user(), answer(), user("new prompt")]
    return msgs


# -- opencode ---------------------------------------------------------------------------------


def test_opencode_prunes_older_output_once_protect_is_crossed_and_minimum_exceeded() -> None:
    msgs = history(20001, 40000)
    assert actions(run("opencode", msgs), msgs) == {2: "pruned"}


def test_opencode_minimum_is_strict() -> None:
    msgs = history(20000, 40000)
    res = run("opencode", msgs)
    assert actions(res, msgs) == {}
    assert res.events[0]["type"] == "prune_skipped"


def test_crossing_output_is_pruned_in_opencode() -> None:
    msgs = history(1, 40001)
    assert actions(run("opencode", msgs), msgs) == {2: "pruned", 4: "pruned"}
    msgs = history(20001, 40000)  # exactly at PRUNE_PROTECT: kept
    assert 4 not in actions(run("opencode", msgs), msgs)


def test_opencode_errors_neither_count_nor_get_pruned() -> None:
    msgs = history(20001, 40001, b_kw={"error": True})
    assert actions(run("opencode", msgs), msgs) == {}


def test_opencode_skill_is_protected_and_not_counted() -> None:
    msgs = history(20001, 40001, b_kw={"tool": "skill"})
    assert actions(run("opencode", msgs), msgs) == {}


def test_opencode_stops_at_a_compaction_summary() -> None:
    msgs = history(20001, 40000)
    msgs.insert(3, cm(CompactionSummaryMessage(summary="s")))
    assert actions(run("opencode", msgs), msgs) == {}


def test_opencode_stops_at_the_first_already_pruned_output_and_pruning_persists() -> None:
    msgs = history(30000, 40000)
    res = run("opencode", msgs)
    assert actions(res, msgs) == {2: "pruned"}
    later = msgs + [call(), result(50000), answer(), user(), answer(), user("next")]
    res2 = run("opencode", later, state=res.state, new_prompt=False)
    assert actions(res2, later) == {2: "pruned"}  # persisted, no new pass between prompts
    res3 = run("opencode", later, state=res.state, new_prompt=True)
    # the walk now reaches B (40000) + the 50000 output: but stops at A (already pruned)
    assert actions(res3, later)[2] == "pruned"
    assert res3.decisions[2].marker == "[Old tool result content cleared]"


def test_opencode_runs_only_after_a_prompt_ends() -> None:
    msgs = history(20001, 40000)
    assert actions(run("opencode", msgs, new_prompt=False), msgs) == {}


def test_opencode_counts_synthetic_user_messages_as_turns() -> None:
    # with a custom (synthetic) message as the middle "user" turn, u2's turn is protected as before
    msgs = history(20001, 40000, middle_user=lambda: cm(CustomMessage(customType="x", content="note")))
    assert actions(run("opencode", msgs), msgs) == {2: "pruned"}
    # pi-context-pruning counts only real user messages: without the new prompt, B and A sit in
    # the protected turn that began with u1 ... u2 (the custom message does not start a turn)
    assert actions(run("pi-context-pruning", msgs[:-1]), msgs[:-1]) == {}
    plain = history(20001, 40000)[:-1]
    assert actions(run("pi-context-pruning", plain), plain) == {2: "pruned"}


# -- pi-context-pruning -----------------------------------------------------------------------


def test_pi_port_keeps_the_crossing_output_and_uses_inclusive_minimum() -> None:
    msgs = history(20000, 40001)  # B crosses 40k: kept; A = 20000 >= 20000: pruned
    res = run("pi-context-pruning", msgs)
    assert actions(res, msgs) == {2: "pruned"}
    assert res.decisions[2].marker == '[output pruned \u2014 ~20,000 tokens | read | path="a.py"]'
    msgs = history(19999, 40001)
    assert actions(run("pi-context-pruning", msgs), msgs) == {}


def test_pi_port_protect_budget_boundary() -> None:
    # the pi port runs before every call, so its 2 protected turns are u4's (the new prompt) and
    # u3's; C (5) and B use the budget: 5 + 39994 = 39999 < 40000, so A is protected too
    msgs = history(20000, 39994)
    assert actions(run("pi-context-pruning", msgs), msgs) == {}
    msgs = history(20000, 39995)  # now 40000 is reached: A is a candidate (20000 >= minimum)
    assert actions(run("pi-context-pruning", msgs), msgs) == {2: "pruned"}


def test_pi_port_errors_count_toward_minimum_but_are_never_pruned() -> None:
    msgs = [user(), call(), result(19990, error=True), call(), result(10), call(), result(40000),
            user(), answer(), user(), answer()]
    res = run("pi-context-pruning", msgs)
    assert actions(res, msgs) == {4: "pruned"}  # 19990 + 10 >= 20000, the error one stays


def test_pi_port_non_prunable_tools_are_protected_without_budget() -> None:
    msgs = history(20000, 40001, b_kw={"tool": "my_ext_tool"})
    # B is invisible to the budget, so A is within the protected 40k
    assert actions(run("pi-context-pruning", msgs), msgs) == {}
    assert actions(run("pi-context-pruning", msgs, prunable_tools=""), msgs) == {2: "pruned"}


def test_pi_port_force_bypasses_the_minimum() -> None:
    msgs = history(10, 40001)
    assert actions(run("pi-context-pruning", msgs), msgs) == {}
    assert actions(run("pi-context-pruning", msgs, force=True), msgs) == {2: "pruned"}


def test_pi_port_stops_at_compaction_summary() -> None:
    msgs = history(20000, 40001)
    msgs.insert(3, cm(CompactionSummaryMessage(summary="s")))
    assert actions(run("pi-context-pruning", msgs), msgs) == {}


# -- context editing ----------------------------------------------------------------------------


def _uses(n: int, tokens: int = 100) -> list[ContextMessage]:
    out = [user()]
    for _ in range(n):
        out += [call(), result(tokens)]
    return out


def test_context_editing_trigger_edge_and_keep() -> None:
    msgs = _uses(5)
    assert actions(run("context-editing", msgs, tokens=100000), msgs) == {}
    acts = actions(run("context-editing", msgs, tokens=100001), msgs)
    assert acts == {2: "pruned", 4: "pruned"}  # the 3 most recent uses keep their results


def test_context_editing_exclude_tools_and_clear_at_least() -> None:
    msgs = _uses(5)
    assert actions(run("context-editing", msgs, tokens=200000, clear_at_least=201), msgs) == {}
    assert actions(run("context-editing", msgs, tokens=200000, clear_at_least=200), msgs) == {2: "pruned", 4: "pruned"}
    assert actions(run("context-editing", msgs, tokens=200000, exclude_tools="read"), msgs) == {}
    acts = actions(run("context-editing", msgs, tokens=200000, clear_tool_inputs=True), msgs)
    assert acts == {1: "pruned", 2: "pruned", 3: "pruned", 4: "pruned"}


# -- dcp ------------------------------------------------------------------------------------------


def test_dcp_deduplicates_identical_calls_keeping_the_newest() -> None:
    msgs = [user(), call(path="a.py", limit=None), result(50), call(path="a.py"), result(50),
            call(path="b.py"), result(50)]
    res = run("dcp", msgs)
    assert actions(res, msgs) == {2: "pruned"}
    assert res.decisions[2].marker.startswith("[Output removed to save context")


def test_dcp_purges_failed_call_inputs_after_n_steps() -> None:
    msgs = [user(), call("bash", command="make"), result(10, tool="bash", error=True)]
    msgs += [answer("a"), answer("b")]
    assert actions(run("dcp", msgs), msgs) == {}  # 3 steps since the failed call
    msgs.append(answer("c"))
    res = run("dcp", msgs)
    assert actions(res, msgs) == {1: "pruned"}
    new_call = res.messages[1].message.content[0]
    assert new_call.arguments == {"command": "[input removed due to failed tool call]"}


def test_dcp_supersede_writes_is_off_by_default() -> None:
    msgs = [user(), call("write", path="a.py", content="x" * 400), result(5, tool="write"),
            call("read", path="a.py"), result(5)]
    assert actions(run("dcp", msgs), msgs) == {}
    assert actions(run("dcp", msgs, supersede_writes=True), msgs) == {1: "pruned"}


# -- turn-aware -----------------------------------------------------------------------------------


def test_turn_aware_zone_boundaries_decide_how_many_turns_stay() -> None:
    msgs = []
    for _ in range(8):
        msgs += [user(), call(), result(10), answer()]
    kept = lambda res: sum(1 for d in res.decisions if d.action != "dropped" and d.role == "user")  # noqa: E731
    assert kept(run("turn-aware", msgs, window=1000, tokens=499)) == 6  # green
    assert kept(run("turn-aware", msgs, window=1000, tokens=500)) == 3  # yellow starts at 50%
    assert kept(run("turn-aware", msgs, window=1000, tokens=700)) == 1  # red starts at 70%


def test_turn_aware_filters_raw_summaries_into_one_packet_and_keeps_newest_turn_lossless() -> None:
    summary = "## Goal\nShip it\n\n## Key Decisions\n- **Use a generator**: lazy\n\n### Blocked\n- (none)"
    msgs = [cm(CompactionSummaryMessage(summary=summary, timestamp=1)), user("old"), call(), result(5000),
            answer(), user("new"), call(), result(9000)]
    res = run("turn-aware", msgs, window=100000, tokens=10000, recent_turns=2)
    assert res.decisions[0].action == "dropped"
    assert res.messages[0].message.role == "custom" and res.messages[0].entry_index is None
    packet = res.messages[0].message.content
    assert "Goal:\n- Ship it" in packet and "Use a generator" in packet and "Blockers" not in packet
    assert res.decisions[3].action == "pruned"  # bulky output in an older kept turn: distilled
    assert res.decisions[7].action == "kept"  # newest turn lossless


def test_turn_aware_latch_fires_once_per_episode_and_rearms() -> None:
    msgs = [user(), answer()]
    state = None
    fired = []
    for tokens in (600, 750, 800, 900, 650, 720):
        res = run("turn-aware", msgs, window=1000, tokens=tokens, state=state)
        state = res.state
        fired.append(any(e["type"] == "early_compaction_requested" for e in res.events))
    assert fired == [False, True, False, False, False, True]
    assert isinstance(state, TurnAwareState)


def test_ledger_ties_resolve_the_same_in_any_order() -> None:
    a = ledger_items("## Goal\nB goal\n", 5.0) + ledger_items("## Goal\nA goal\n", 5.0)
    b = list(reversed(a))
    assert merge_ledger(a, 1) == merge_ledger(b, 1) == {"goal": ["B goal"]}


# -- registry and settings --------------------------------------------------------------------


def test_registry_describes_every_strategy_with_defaults_and_help() -> None:
    assert set(REGISTRY) == {"none", "opencode", "pi-context-pruning", "turn-aware", "dcp", "context-editing"}
    for s in REGISTRY.values():
        assert s.source and s.description
        for name, f in s.Settings.model_fields.items():
            assert f.description, (s.name, name)


def test_bad_settings_are_clear_errors() -> None:
    with pytest.raises(KeyError, match="no setting 'nope'"):
        parse_settings(get_strategy("opencode"), {"nope": "1"})
    with pytest.raises(ValueError, match="prune_protect"):
        parse_settings(get_strategy("opencode"), {"prune_protect": "-5"})
    assert parse_settings(get_strategy("opencode"), {"prune-protect": "30000"}).prune_protect == 30000
