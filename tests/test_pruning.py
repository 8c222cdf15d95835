"""Every pruning strategy at its edges: thresholds exactly and ±1 token, protected tools, errors,
compaction boundaries, already-pruned outputs, turn counting, zones and the latch.

Contexts are built directly as ``ContextMessage`` lists. A tool result of ``n`` tokens holds
``4n`` ASCII characters, so pi's ``ceil(len/4)``, OpenCode's ``round(len/4)`` and the pi counter
all give exactly ``n``."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from inspector.context import ContextMessage
from inspector.pruning import REGISTRY, get_strategy, parse_settings
from inspector.pruning.base import CallInfo, PruneResult
from inspector.pruning.dcp import ERROR_INPUT_MARKER, OUTPUT_MARKER, QUESTION_MARKER, WRITE_MARKER
from inspector.pruning.pi_context_pruning import marker_for
from inspector.pruning.turn_aware import PACKET_TYPE, TurnAwareState, ledger_items, merge_ledger
from inspector.session.models import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ToolResultMessage,
    UserMessage,
)
from inspector.tokens import get_counter

PI = get_counter("pi")
OPENCODE_MARKER = "[Old tool result content cleared]"


class Ids:
    """Entry indexes for hand-built contexts (increasing, like a session file's)."""

    n = 0

    @classmethod
    def next(cls) -> int:
        cls.n += 1
        return cls.n


def cm(msg: Any, entry: int | None = -1) -> ContextMessage:
    return ContextMessage(msg, Ids.next() if entry == -1 else entry)


def user(text: str = "go") -> ContextMessage:
    return cm(UserMessage(content=text, timestamp=Ids.n * 1000))


def call(tool: str = "read", cid: str = "", **args: Any) -> ContextMessage:
    cid = cid or f"c{Ids.n + 1}"
    return cm(
        AssistantMessage(
            content=[{"type": "toolCall", "id": cid, "name": tool, "arguments": args or {"path": "a.py"}}],
            stopReason="toolUse",
        )
    )


def result(
    tokens: int, tool: str = "read", error: bool = False, cid: str = "", images: int = 0
) -> ContextMessage:
    content: list[dict[str, Any]] = [{"type": "text", "text": "x" * (4 * tokens)}]
    content += [{"type": "image", "data": "", "mimeType": "image/png"}] * images
    return cm(ToolResultMessage(toolCallId=cid or f"c{Ids.n}", toolName=tool, isError=error, content=content))


def answer(text: str = "ok") -> ContextMessage:
    return cm(AssistantMessage(content=[{"type": "text", "text": text}], stopReason="stop"))


def run(
    name: str,
    msgs: list[ContextMessage],
    *,
    state: Any = None,
    new_prompt: bool = True,
    force: bool = False,
    window: int = 200000,
    tokens: int | None = None,
    counter: Any = PI,
    **settings: Any,
) -> PruneResult:
    strat = get_strategy(name)
    s = parse_settings(strat, settings)
    ci = CallInfo(step=0, new_prompt=new_prompt, context_window=window, context_tokens=tokens, force=force)
    return strat.apply(msgs, s, state, ci, counter)


def acted(res: PruneResult) -> dict[int, str]:
    """Positions whose message was pruned or dropped."""
    return {d.position: d.action for d in res.decisions if d.action != "kept"}


def history(
    a: int,
    b: int,
    *,
    a_kw: dict[str, Any] | None = None,
    b_kw: dict[str, Any] | None = None,
    middle: Any = user,
) -> list[ContextMessage]:
    """[u1, call, A, call, B, u2, call, C(5), u3, answer, u4]. At the call after u4 (a new
    prompt), OpenCode's pass covers u1..answer: u3's and u2's turns are protected, so B is the
    newest counted output and A the next. pi's port protects u4's and u3's turns: C (5 tokens)
    then B then A."""
    return [
        user(),
        call(),
        result(a, **(a_kw or {})),
        call(),
        result(b, **(b_kw or {})),
        middle(),
        call(),
        result(5),
        user(),
        answer(),
        user("new prompt"),
    ]


# =============================================================================================
# opencode
# =============================================================================================


@pytest.mark.parametrize(("a", "pruned"), [(19999, False), (20000, False), (20001, True)])
def test_opencode_acts_only_when_more_than_prune_minimum_would_go(a: int, pruned: bool) -> None:
    # B = 40,000 exactly fills PRUNE_PROTECT (kept); A is all that would be pruned
    res = run("opencode", history(a, 40000))
    assert acted(res) == ({2: "pruned"} if pruned else {})
    if not pruned:
        assert res.events[0]["type"] == "prune_skipped"


@pytest.mark.parametrize(
    ("b", "expected"), [(39999, {2: "pruned"}), (40000, {2: "pruned"}), (40001, {2: "pruned", 4: "pruned"})]
)
def test_crossing_output_is_pruned_in_opencode(b: int, expected: dict[int, str]) -> None:
    # B alone below / at / one over PRUNE_PROTECT; A (20,002) always crosses when B does not
    assert acted(run("opencode", history(20002, b))) == expected


def test_opencode_errors_are_neither_counted_nor_pruned() -> None:
    res = run("opencode", history(20001, 40001, b_kw={"error": True}))
    assert acted(res) == {}  # B not counted: A (20,001) is within PRUNE_PROTECT
    msgs = history(40001, 30000, a_kw={"error": True})
    assert acted(run("opencode", msgs)) == {}  # A is an error: never pruned, never counted


def test_opencode_skill_is_protected_and_not_counted() -> None:
    assert acted(run("opencode", history(20001, 40001, b_kw={"tool": "skill"}))) == {}
    # and the protected list is a setting
    assert acted(run("opencode", history(20001, 40001), protected_tools="read")) == {}


def test_opencode_stops_at_a_compaction_summary() -> None:
    msgs = history(20001, 40000)
    msgs.insert(3, cm(CompactionSummaryMessage(summary="s")))  # between A and B
    assert acted(run("opencode", msgs)) == {}


def test_opencode_stops_at_the_first_already_pruned_output_and_pruning_persists() -> None:
    msgs = history(30000, 40000)
    first = run("opencode", msgs)
    assert acted(first) == {2: "pruned"}
    # 50,000 more tokens of output in u4's turn, then two more turns and a new prompt
    later = msgs + [call(), result(50000), answer(), user(), answer(), user(), answer(), user("next")]
    between = run("opencode", later, state=first.state, new_prompt=False)
    assert acted(between) == {2: "pruned"}  # persisted; no pass between prompts
    second = run("opencode", later, state=first.state, new_prompt=True)
    # the walk counts 50,000 (crosses: pruned), C and B (pruned) and stops at A, already pruned
    assert acted(second) == {2: "pruned", 4: "pruned", 7: "pruned", 12: "pruned"}
    assert second.decisions[2].reason.startswith("cleared by an earlier")
    # without the stop at A, A's 30,000 would be counted again: a pass over a fresh state
    # reports the larger estimate
    fresh = run("opencode", later, new_prompt=True)
    assert fresh.events[0]["estimate"] > second.events[0]["estimate"]


def test_opencode_walk_breaks_at_a_pruned_output_leaving_older_ones_alone() -> None:
    # B was pruned by an earlier pass, A was not (e.g. it was within the budget then): the walk
    # stops at B, so A is never looked at again (OpenCode issue #30807: `break`, not `continue`)
    msgs = history(30000, 40000) + [
        call(),
        result(50000),
        answer(),
        user(),
        answer(),
        user(),
        answer(),
        user(),
    ]
    res = run("opencode", msgs, state=frozenset({msgs[4].entry_index}))
    assert acted(res) == {4: "pruned", 7: "pruned", 12: "pruned"}


def test_opencode_runs_only_after_a_prompt_ends() -> None:
    res = run("opencode", history(20001, 40000), new_prompt=False)
    assert acted(res) == {} and res.state == frozenset()


def test_opencode_counts_synthetic_user_messages_as_turns() -> None:
    custom = lambda: cm(CustomMessage(customType="x", content="note"))  # noqa: E731
    bash = lambda: cm(BashExecutionMessage(command="ls", output="a"))  # noqa: E731
    branch = lambda: cm(BranchSummaryMessage(summary="s"))  # noqa: E731
    for middle in (custom, bash, branch):
        assert acted(run("opencode", history(20001, 40000, middle=middle))) == {2: "pruned"}
    # a `!!` bash run is left out of the context by pi: not a turn, so u1's turn reaches u3 and
    # the walk never gets past the two protected turns (u3's, u1's)
    hidden = lambda: cm(BashExecutionMessage(command="ls", output="a", excludeFromContext=True))  # noqa: E731
    assert acted(run("opencode", history(20001, 40000, middle=hidden))) == {}


def test_pi_port_counts_only_real_user_messages_as_turns() -> None:
    # without the new prompt u4, pi's port protects u3's and u2's turns; a custom message in
    # u2's place does not start a turn, so u1's turn (A and B) is protected too
    custom = lambda: cm(CustomMessage(customType="x", content="note"))  # noqa: E731
    assert acted(run("pi-context-pruning", history(20000, 40001, middle=custom)[:-1])) == {}
    assert acted(run("pi-context-pruning", history(20000, 40001)[:-1])) == {2: "pruned"}


def test_opencode_marker_replaces_only_the_output() -> None:
    msgs = history(20001, 40000)
    res = run("opencode", msgs)
    out = res.messages[2].message
    assert isinstance(out, ToolResultMessage) and [b.text for b in out.content] == [OPENCODE_MARKER]
    assert res.decisions[2].marker == OPENCODE_MARKER
    assert res.messages[1] is msgs[1]  # the call and its arguments stay, same object


def test_opencode_reports_tokens_in_the_callers_counter() -> None:
    class Double:
        def count(self, m: Any) -> int:
            return 2 * PI.count(m)

    res = run("opencode", history(20001, 40000), counter=Double())
    assert acted(res) == {2: "pruned"}  # thresholds use OpenCode's own estimate
    assert res.decisions[2].tokens_before == 40002
    assert res.stats.tokens_protected == 2 * 40000


def test_opencode_explains_kept_outputs() -> None:
    res = run("opencode", history(20001, 40000))
    assert "PRUNE_PROTECT" in res.decisions[4].reason
    assert "last 2 user turns" in res.decisions[7].reason


# =============================================================================================
# pi-context-pruning
# =============================================================================================


@pytest.mark.parametrize(("a", "pruned"), [(19999, False), (20000, True), (20001, True)])
def test_pi_port_minimum_is_inclusive(a: int, pruned: bool) -> None:
    # B (40,001) is the output that crosses PRUNE_PROTECT: kept; A is the only candidate
    res = run("pi-context-pruning", history(a, 40001))
    assert acted(res) == ({2: "pruned"} if pruned else {})


def test_pi_port_keeps_the_crossing_output() -> None:
    res = run("pi-context-pruning", history(20000, 80000))
    assert acted(res) == {2: "pruned"}
    assert res.decisions[4].action == "kept" and "PRUNE_PROTECT" in res.decisions[4].reason


@pytest.mark.parametrize(("b", "pruned"), [(39994, False), (39995, True), (39996, True)])
def test_pi_port_protect_budget_boundary(b: int, pruned: bool) -> None:
    # C (5) + B: below 40,000 the budget is still open and A is protected too; at 40,000 A is a candidate
    assert acted(run("pi-context-pruning", history(20000, b))) == ({2: "pruned"} if pruned else {})


def test_pi_port_errors_count_toward_minimum_but_are_never_pruned() -> None:
    msgs = [
        user(),
        call(),
        result(19990, error=True),
        call(),
        result(10),
        call(),
        result(40000),
        user(),
        answer(),
        user(),
        answer(),
    ]
    res = run("pi-context-pruning", msgs)
    assert acted(res) == {4: "pruned"}  # 19,990 + 10 >= 20,000; the error result stays
    assert "error" in res.decisions[2].reason


def test_pi_port_non_prunable_tools_are_protected_without_budget() -> None:
    msgs = history(20000, 40001, b_kw={"tool": "my_ext_tool"})
    assert acted(run("pi-context-pruning", msgs)) == {}  # B invisible: A fills the budget
    assert acted(run("pi-context-pruning", msgs, prunable_tools="")) == {2: "pruned"}  # empty = all
    assert acted(run("pi-context-pruning", history(20000, 40001), protected_tools="read")) == {}


def test_pi_port_force_bypasses_the_minimum_once() -> None:
    msgs = history(10, 40001)
    assert acted(run("pi-context-pruning", msgs)) == {}
    assert acted(run("pi-context-pruning", msgs, force=True)) == {2: "pruned"}
    # the turn guard and the protect window still apply
    assert acted(run("pi-context-pruning", history(10, 39000), force=True)) == {}


def test_pi_port_stops_at_compaction_summary() -> None:
    msgs = history(20000, 40001)
    msgs.insert(3, cm(CompactionSummaryMessage(summary="s")))
    assert acted(run("pi-context-pruning", msgs)) == {}


def test_pi_port_counts_images_as_1200_tokens() -> None:
    # C (5) + B (38,795 text + 1 image = 39,995): the budget is reached, A becomes a candidate
    assert acted(run("pi-context-pruning", history(20000, 38795, b_kw={"images": 1}))) == {2: "pruned"}
    assert acted(run("pi-context-pruning", history(20000, 38794, b_kw={"images": 1}))) == {}


def test_pi_port_marker_matches_the_code() -> None:
    res = run("pi-context-pruning", history(20000, 40001))
    assert res.decisions[2].marker == '[output pruned \u2014 ~20,000 tokens | read | path="a.py"]'
    assert [b.text for b in res.messages[2].message.content] == [res.decisions[2].marker]


@pytest.mark.parametrize(
    ("args", "detail"),
    [
        ({"command": "ls -la"}, ' | command="ls -la"'),
        ({"path": None, "pattern": "TODO"}, ' | pattern="TODO"'),  # ?? skips null
        ({"path": 5, "command": "ls"}, ""),  # ?? stops at 5, which is not a string
        ({"file": "a.py", "path": "a.py"}, ' | file="a.py"'),  # first key holding that value
        ({"path": "p" * 80}, ' | path="' + "p" * 80 + '"'),
        ({"path": "p" * 81}, ' | path="' + "p" * 77 + '..."'),
        ({"limit": 3}, ""),
    ],
)
def test_pi_port_marker_detail_follows_the_nullish_chain(args: dict[str, Any], detail: str) -> None:
    assert marker_for(1234, "bash", args) == f"[output pruned \u2014 ~1,234 tokens | bash{detail}]"


def test_pi_port_marker_looks_only_at_the_nearest_assistant_message() -> None:
    # two results after one assistant message: both find their call; a result whose call is in
    # an earlier assistant message gets no detail
    msgs = [
        user(),
        call(cid="k1", path="old.py"),
        answer("thinking"),
        result(20000, cid="k1"),
        call(),
        result(40001),
        user(),
        answer(),
        user(),
        answer(),
    ]
    res = run("pi-context-pruning", msgs)
    assert res.decisions[3].marker == "[output pruned \u2014 ~20,000 tokens | read]"


# =============================================================================================
# dcp
# =============================================================================================


def test_dcp_deduplicates_identical_calls_keeping_the_newest() -> None:
    msgs = [
        user(),
        call(path="a.py", limit=None),
        result(50),
        call(path="b.py"),
        result(50),
        call(path="a.py"),
        result(50),
    ]
    res = run("dcp", msgs)
    assert acted(res) == {2: "pruned"}  # null keys do not change the signature
    assert res.decisions[2].marker == OUTPUT_MARKER


def test_dcp_signature_ignores_key_order_but_not_values() -> None:
    msgs = [
        user(),
        call("grep", pattern="x", path="."),
        result(5, tool="grep"),
        call("grep", path=".", pattern="x"),
        result(5, tool="grep"),
        call("grep", path=".", pattern="y"),
        result(5, tool="grep"),
    ]
    assert acted(run("dcp", msgs)) == {2: "pruned"}


def test_dcp_leaves_completed_edit_and_write_calls_alone() -> None:
    msgs = [
        user(),
        call("write", path="a", content="x"),
        result(5, tool="write"),
        call("write", path="a", content="x"),
        result(5, tool="write"),
    ]
    res = run("dcp", msgs)
    assert acted(res) == {} and "leaves completed edit/write" in res.decisions[2].reason


def test_dcp_dedup_of_a_failed_call_purges_its_inputs_at_once() -> None:
    msgs = [
        user(),
        call("bash", command="make"),
        result(10, tool="bash", error=True),
        call("bash", command="make"),
        result(10, tool="bash"),
    ]
    res = run("dcp", msgs)
    assert acted(res) == {1: "pruned"}
    assert res.messages[1].message.content[0].arguments == {"command": ERROR_INPUT_MARKER}
    assert res.messages[2] is msgs[2]  # the error text stays


@pytest.mark.parametrize(("later_steps", "purged"), [(3, False), (4, True), (5, True)])
def test_dcp_purges_failed_call_inputs_after_n_steps(later_steps: int, purged: bool) -> None:
    # the failed call is step 1; at the next request currentTurn = number of steps so far
    msgs = [user(), call("bash", command="make", timeout=5), result(10, tool="bash", error=True)]
    msgs += [answer(str(k)) for k in range(later_steps)]
    res = run("dcp", msgs)
    assert acted(res) == ({1: "pruned"} if purged else {})
    if purged:
        assert res.messages[1].message.content[0].arguments == {"command": ERROR_INPUT_MARKER, "timeout": 5}


def test_dcp_supersede_writes_is_off_by_default() -> None:
    msgs = [
        user(),
        call("write", path="a.py", content="x" * 400),
        result(5, tool="write"),
        call("read", path="a.py"),
        result(5),
    ]
    assert acted(run("dcp", msgs)) == {}
    res = run("dcp", msgs, supersede_writes=True)
    assert acted(res) == {1: "pruned"}
    assert res.messages[1].message.content[0].arguments == {"path": "a.py", "content": WRITE_MARKER}
    # a read of another file, or before the write, supersedes nothing
    other = [
        user(),
        call("read", path="a.py"),
        result(5),
        call("write", path="a.py", content="x"),
        result(5, tool="write"),
        call("read", path="b.py"),
        result(5),
    ]
    assert acted(run("dcp", other, supersede_writes=True)) == {}


def test_dcp_question_tool_loses_its_questions_not_its_answers() -> None:
    msgs = [
        user(),
        call("question", questions=["a?"]),
        result(5, tool="question"),
        call("question", questions=["a?"]),
        result(5, tool="question"),
    ]
    res = run("dcp", msgs)
    assert acted(res) == {1: "pruned"}
    assert res.messages[1].message.content[0].arguments == {"questions": QUESTION_MARKER}


def test_dcp_ignores_calls_from_before_the_last_compaction() -> None:
    # entries 100..104 were kept by the compaction recorded at entry 105
    kept = [
        cm(UserMessage(content="u"), 100),
        cm(
            AssistantMessage(
                content=[{"type": "toolCall", "id": "k", "name": "read", "arguments": {"path": "a.py"}}]
            ),
            101,
        ),
        cm(ToolResultMessage(toolCallId="k", toolName="read", content=[{"type": "text", "text": "x"}]), 102),
    ]
    msgs = [
        cm(CompactionSummaryMessage(summary="s"), 105),
        *kept,
        cm(
            AssistantMessage(
                content=[{"type": "toolCall", "id": "n", "name": "read", "arguments": {"path": "a.py"}}]
            ),
            106,
        ),
        cm(ToolResultMessage(toolCallId="n", toolName="read", content=[{"type": "text", "text": "x"}]), 107),
    ]
    res = run("dcp", msgs)
    assert acted(res) == {}
    assert "before the last compaction" in res.decisions[3].reason


def test_dcp_protected_tools_are_never_marked() -> None:
    msgs = [user(), call(), result(5), call(), result(5)]
    assert acted(run("dcp", msgs, protected_tools="read")) == {}


# =============================================================================================
# context-editing
# =============================================================================================


def _uses(n: int, tokens: int = 100, tool: str = "read") -> list[ContextMessage]:
    out = [user()]
    for _ in range(n):
        out += [call(tool), result(tokens, tool=tool)]
    return out


@pytest.mark.parametrize(
    ("tokens", "cleared"), [(99999, {}), (100000, {}), (100001, {2: "pruned", 4: "pruned"})]
)
def test_context_editing_acts_only_over_the_trigger(tokens: int, cleared: dict[int, str]) -> None:
    assert acted(run("context-editing", _uses(5), tokens=tokens)) == cleared


def test_context_editing_keeps_the_most_recent_tool_uses() -> None:
    assert acted(run("context-editing", _uses(5), tokens=200000, keep=0)) == {
        p: "pruned" for p in (2, 4, 6, 8, 10)
    }
    assert acted(run("context-editing", _uses(5), tokens=200000, keep=5)) == {}


@pytest.mark.parametrize(("at_least", "cleared"), [(199, True), (200, True), (201, False)])
def test_context_editing_clear_at_least(at_least: int, cleared: bool) -> None:
    res = run("context-editing", _uses(5), tokens=200000, clear_at_least=at_least)
    assert acted(res) == ({2: "pruned", 4: "pruned"} if cleared else {})


def test_context_editing_exclude_tools_and_clear_tool_inputs() -> None:
    msgs = _uses(2, tool="memory") + _uses(3)[1:]
    assert acted(run("context-editing", msgs, tokens=200000, exclude_tools="memory")) == {}
    res = run("context-editing", _uses(5), tokens=200000, clear_tool_inputs=True)
    assert acted(res) == {1: "pruned", 2: "pruned", 3: "pruned", 4: "pruned"}
    assert res.messages[1].message.content[0].arguments == {}


# =============================================================================================
# turn-aware
# =============================================================================================


def _turns(n: int, tokens: int = 10) -> list[ContextMessage]:
    msgs: list[ContextMessage] = []
    for _ in range(n):
        msgs += [user(), call(), result(tokens), answer()]
    return msgs


def _kept_turns(res: PruneResult) -> int:
    return sum(1 for d in res.decisions if d.action != "dropped" and d.role == "user")


def _zone(res: PruneResult) -> str:
    return next(e["zone"] for e in res.events if e["type"] == "zone")


@pytest.mark.parametrize(
    ("tokens", "zone", "turns"),
    [
        (499, "green", 6),
        (500, "yellow", 3),
        (699, "yellow", 3),
        (700, "red", 1),
        (849, "red", 1),
        (850, "compact", 1),
    ],
)
def test_turn_aware_zone_boundaries_decide_how_many_turns_stay(tokens: int, zone: str, turns: int) -> None:
    res = run("turn-aware", _turns(8), window=1000, tokens=tokens)
    assert _zone(res) == zone and _kept_turns(res) == turns


def test_turn_aware_drops_whole_turns_never_a_lone_tool_result() -> None:
    msgs = _turns(8)
    res = run("turn-aware", msgs, window=1000, tokens=600)
    kept = [d.position for d in res.decisions if d.action != "dropped"]
    assert kept == list(range(len(msgs) - 12, len(msgs)))  # exactly the last 3 turns, whole
    assert res.stats.items_dropped == len(msgs) - 12


@pytest.mark.parametrize(("tokens", "distilled"), [(4000, False), (4001, True)])
def test_turn_aware_distills_bulky_results_only_in_older_kept_turns(tokens: int, distilled: bool) -> None:
    msgs = [user(), call(), result(tokens), answer(), user(), call(), result(50000)]
    res = run("turn-aware", msgs, window=1000000, tokens=10)
    assert acted(res) == ({2: "pruned"} if distilled else {})  # the newest turn's 50,000 stay
    if distilled:
        text = res.messages[2].message.content[0].text
        assert text.startswith(
            f"[distilled read output: ~{tokens:,} tokens, 1 lines; first 400 characters follow]\n"
        )
        assert len(text.split("\n", 1)[1]) == 400


def test_turn_aware_filters_raw_summaries_into_one_packet() -> None:
    summary = "## Goal\nShip it\n\n## Key Decisions\n- **Use a generator**: lazy\n\n### Blocked\n- (none)"
    msgs = [
        cm(CompactionSummaryMessage(summary=summary, timestamp=1)),
        user("old"),
        call(),
        result(5),
        answer(),
        cm(BranchSummaryMessage(summary="## Constraints\n- no network", timestamp=2)),
        user("new"),
        call(),
        result(9000),
    ]
    res = run("turn-aware", msgs, window=100000, tokens=10000, recent_turns=2)
    assert [d.action for d in res.decisions if d.role in ("compactionSummary", "branchSummary")] == [
        "dropped"
    ] * 2
    packets = [m for m in res.messages if m.message.role == "custom"]
    assert len(packets) == 1 and res.messages[0] is packets[0] and packets[0].entry_index is None
    assert packets[0].message.customType == PACKET_TYPE and packets[0].message.display is False
    text = packets[0].message.content
    assert "Goal:\n- Ship it" in text and "Use a generator" in text and "no network" in text
    assert "Blockers" not in text and "<summary>" not in text


def test_turn_aware_keeps_a_leading_partial_turn_only_within_the_budget() -> None:
    # after a compaction that cut inside a turn, the context starts with an assistant message
    msgs = [cm(CompactionSummaryMessage(summary="s")), call(), result(5), answer(), *_turns(2)]
    assert acted(run("turn-aware", msgs, window=1000, tokens=10)) == {0: "dropped"}  # 3 turns ≤ 6
    res = run("turn-aware", msgs, window=1000, tokens=600, recent_turns=4)  # yellow: 2 turns
    assert acted(res) == {p: "dropped" for p in range(4)}


def test_turn_aware_packet_lists_dropped_prompts() -> None:
    msgs = _turns(3)
    msgs[0] = cm(UserMessage(content="first task\nmore", timestamp=1))
    res = run("turn-aware", msgs, window=1000, tokens=900)
    assert "Earlier requests (dropped turns):\n- first task\n- go" in res.messages[0].message.content


def _fired(res: PruneResult) -> bool:
    return any(e["type"] == "early_compaction_requested" for e in res.events)


def test_turn_aware_latch_fires_once_per_episode_and_rearms() -> None:
    msgs = _turns(1)
    state = None
    fired = []
    for tokens in (600, 699, 700, 800, 900, 650, 720, 720):
        res = run("turn-aware", msgs, window=1000, tokens=tokens, state=state)
        state = res.state
        fired.append(_fired(res))
    assert fired == [False, False, True, False, False, False, True, False]
    assert isinstance(state, TurnAwareState) and state.latched


def test_turn_aware_latch_clears_after_a_compaction() -> None:
    msgs = _turns(1)
    first = run("turn-aware", msgs, window=1000, tokens=800)
    assert _fired(first)
    assert not _fired(run("turn-aware", msgs, window=1000, tokens=800, state=first.state))
    compacted = [cm(CompactionSummaryMessage(summary="s", timestamp=5)), *msgs]
    assert _fired(run("turn-aware", compacted, window=1000, tokens=800, state=first.state))


def test_turn_aware_never_requests_compaction_without_a_measurement() -> None:
    res = run("turn-aware", _turns(1, tokens=900), window=1000, tokens=None)
    assert _zone(res) == "compact" and not _fired(res) and not res.state.latched


def test_ledger_ties_resolve_the_same_in_any_order() -> None:
    items = (
        ledger_items("## Goal\nB goal\n", 5.0)
        + ledger_items("## Goal\nA goal\n", 5.0)
        + ledger_items("## Goal\nolder\n- a goal\n", 4.0)
        + ledger_items("## Goal\nA  GOAL\n", 5.0)
    )
    results = {repr(merge_ledger(list(p), 2)) for p in itertools.permutations(items)}
    assert results == {repr({"goal": ["A  GOAL", "B goal"]})}
    assert merge_ledger(items, 1) == {"goal": ["B goal"]}


def test_turn_aware_survives_zone_settings_out_of_order() -> None:
    res = run("turn-aware", _turns(4), window=1000, tokens=600, yellow=0.9, red=0.5)
    assert _zone(res) == "red"


# =============================================================================================
# all strategies: interface, purity, cost, registry, settings
# =============================================================================================


def _rich() -> list[ContextMessage]:
    msgs = [
        cm(CompactionSummaryMessage(summary="## Goal\ng", timestamp=1)),
        call("bash", command="x"),
        result(3000, tool="bash", error=True),
    ]
    for k in range(12):
        msgs += [
            user(f"prompt {k}"),
            call(path=f"f{k % 3}.py"),
            result(9000),
            call("bash", command="make"),
            result(2000, tool="bash", error=k % 2 == 0),
            answer(),
        ]
    msgs += [
        cm(CustomMessage(customType="x", content="c")),
        cm(BashExecutionMessage(command="ls", output="o")),
    ]
    return msgs


ALL = sorted(REGISTRY)


@pytest.mark.parametrize("name", ALL)
def test_strategies_do_not_mutate_their_inputs(name: str) -> None:
    msgs = _rich()
    before = [m.message.model_dump() for m in msgs]
    run(name, msgs, tokens=150000, force=True)
    assert [m.message.model_dump() for m in msgs] == before


@pytest.mark.parametrize("name", ALL)
def test_decisions_cover_every_input_in_order(name: str) -> None:
    msgs = _rich()
    res = run(name, msgs, tokens=150000)
    assert [d.position for d in res.decisions] == list(range(len(msgs)))
    assert [d.entry_index for d in res.decisions] == [m.entry_index for m in msgs]
    sent = [m for m in res.messages if m.entry_index is not None]
    assert [m.entry_index for m in sent] == [d.entry_index for d in res.decisions if d.action != "dropped"]
    for d, m in zip((d for d in res.decisions if d.action != "dropped"), sent, strict=True):
        assert (m is msgs[d.position]) == (d.action == "kept")
        assert d.tokens_after == PI.count(m.message)
        assert d.reason
        if d.action == "pruned" and d.role == "toolResult":  # the marker is exactly what the model sees
            assert [b.text for b in m.message.content] == [d.marker]
        assert (d.marker is None) == (d.action != "pruned")
    st = res.stats
    assert st.tokens_before == sum(PI.count(m.message) for m in msgs)
    assert st.tokens_after == sum(PI.count(m.message) for m in res.messages)
    assert st.items_pruned == sum(d.action == "pruned" for d in res.decisions)
    assert st.items_dropped == sum(d.action == "dropped" for d in res.decisions)


@pytest.mark.parametrize("name", ALL)
def test_each_message_is_counted_once_per_call(name: str) -> None:
    class Counting:
        def __init__(self) -> None:
            self.seen: dict[int, int] = {}

        def count(self, m: Any) -> int:
            self.seen[id(m)] = self.seen.get(id(m), 0) + 1
            return PI.count(m)

    c = Counting()
    msgs = _rich()
    res = run(name, msgs, tokens=150000, counter=c)
    assert max(c.seen.values()) == 1
    assert len(c.seen) <= len(msgs) + len(res.messages)


def test_registry_describes_every_strategy() -> None:
    assert set(REGISTRY) == {
        "none",
        "recorded",
        "opencode",
        "pi-context-pruning",
        "turn-aware",
        "dcp",
        "context-editing",
        "claude-code-microcompact",
    }
    for s in REGISTRY.values():
        info = s.info()
        assert info["name"] == s.name and s.source and s.description and s.title
        assert s.verified or s.unverified_notes
        assert (
            s.__class__.__module__
            and (__import__(s.__class__.__module__, fromlist=["x"]).__doc__ or "").strip()
        )
        assert s.Settings.model_config.get("frozen")
        for name, f in s.Settings.model_fields.items():
            assert f.description, (s.name, name)
            if isinstance(f.default, int) and not isinstance(f.default, bool):
                assert info["settings"][name]["min"] is not None and info["settings"][name]["max"] is not None
    assert not REGISTRY["turn-aware"].verified and not REGISTRY["context-editing"].verified


def test_defaults_are_the_sources() -> None:
    oc = REGISTRY["opencode"].Settings()
    assert (oc.prune_protect, oc.prune_minimum, oc.protected_turns, oc.protected_tools) == (
        40000,
        20000,
        2,
        ("skill",),
    )
    pi = REGISTRY["pi-context-pruning"].Settings()
    assert (pi.prune_protect, pi.prune_minimum, pi.protected_turns, pi.protected_tools) == (
        40000,
        20000,
        2,
        (),
    )
    assert pi.prunable_tools == ("read", "bash", "grep", "find", "ls", "edit", "write", "apply_patch")
    ce = REGISTRY["context-editing"].Settings()
    assert (ce.trigger, ce.keep, ce.clear_at_least, ce.exclude_tools, ce.clear_tool_inputs) == (
        100000,
        3,
        0,
        (),
        False,
    )
    dcp = REGISTRY["dcp"].Settings()
    assert (dcp.deduplication, dcp.purge_errors, dcp.purge_error_turns, dcp.supersede_writes) == (
        True,
        True,
        4,
        False,
    )


def test_settings_parse_from_strings_with_clear_errors() -> None:
    oc = get_strategy("opencode")
    with pytest.raises(KeyError, match="no setting 'nope'"):
        parse_settings(oc, {"nope": "1"})
    with pytest.raises(ValueError, match="prune_protect"):
        parse_settings(oc, {"prune_protect": "-5"})
    with pytest.raises(ValueError, match="prune_minimum"):
        parse_settings(oc, {"prune_minimum": "lots"})
    assert parse_settings(oc, {"prune-protect": "30000"}).prune_protect == 30000
    assert parse_settings(oc, {"protected_tools": "skill, task"}).protected_tools == ("skill", "task")
    assert parse_settings(oc, {"protected_tools": '["a,b"]'}).protected_tools == ("a,b",)
    assert parse_settings(get_strategy("pi-context-pruning"), {"prunable_tools": ""}).prunable_tools == ()
    dcp = get_strategy("dcp")
    assert parse_settings(dcp, {"supersede_writes": "yes"}).supersede_writes is True
    with pytest.raises(ValueError, match="true or false"):
        parse_settings(dcp, {"supersede_writes": "maybe"})
    with pytest.raises(KeyError, match="unknown pruning strategy"):
        get_strategy("nope")
