"""The replay engine: as-recorded contexts equal pi's, what-if triggers at their exact edges,
re-reads, metrics and the sweep."""

from __future__ import annotations

import itertools

import pytest

from inspector import build_session_context, load_session
from inspector.policies import PolicySettings, Trigger
from inspector.replay import ReplaySettings, parse_grid, replay, sweep

from .support.builder import SessionBuilder
from .support.paths import FIXTURES

FIXTURE_NAMES = [
    "before-compaction",
    "synth-tree",
    "synth-compacted",
    "synth-giant-turn",
    "synth-trailing-toolresult",
    "synth-v2-hookmessage",
]


def _key(msgs):
    return [
        (
            m.entry_index,
            m.message.role,
            id(m.message)
            if m.entry_index is not None
            and type(m.message).__name__
            not in ("CustomMessage", "BranchSummaryMessage", "CompactionSummaryMessage")
            else None,
        )
        for m in msgs
    ]


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_as_recorded_without_pruning_equals_pis_context_at_every_step(name: str) -> None:
    s = load_session(FIXTURES / f"{name}.jsonl")
    r = replay(s)
    assistants = [
        i for i in s.path() if getattr(getattr(s.entries[i], "message", None), "role", None) == "assistant"
    ]
    assert [st.entry_index for st in r.steps] == assistants
    for st in r.steps:
        want = build_session_context(s, s.parents[st.entry_index])
        got = r.step_detail(st.step).after
        assert _key(got) == _key(want.messages), f"step {st.step}"
        assert st.tokens == sum(r.session and __import__("inspector").estimate_tokens(m.message) for m in got)


def test_steps_mark_aborted_and_error_calls() -> None:
    r = replay(load_session(FIXTURES / "synth-giant-turn.jsonl"))
    reasons = [st.stop_reason for st in r.steps]
    assert "aborted" in reasons and "error" in reasons
    assert any(st.aborted for st in r.steps) and any(st.error for st in r.steps)


def test_recorded_compaction_is_an_event_on_the_next_step() -> None:
    s = load_session(FIXTURES / "before-compaction.jsonl")
    r = replay(s)
    comp_steps = [st for st in r.steps if any(e.type == "compaction" for e in st.events)]
    assert len(comp_steps) == 2 and r.metrics.compactions == 2
    # the first call after entry 358 (the first compaction) sees the summary first
    first = comp_steps[0]
    assert first.entry_index > 358 and r.step_detail(first.step).after[0].message.role == "compactionSummary"


def _two_turns(x_chars: int, tool: bool = False) -> SessionBuilder:
    b = SessionBuilder()
    b.user("u" * 800)  # 200 tokens
    b.assistant("a" * 40)  # 10 tokens
    b.user("x" * x_chars)
    if tool:
        b.assistant("", tools=[("bash", {"command": "ls"})])
        b.tool_result("ok", tool="bash")
    else:
        b.assistant("a" * 40)
    b.user("next")
    b.assistant("done")
    return b


def _trigger_events(b: SessionBuilder, **kw) -> list[str]:
    r = replay(
        b.session(), ReplaySettings(context_window=1000, reserve_tokens=100, keep_recent_tokens=10, **kw)
    )
    return [e.type for st in r.steps for e in st.events if e.type in ("compaction", "compaction_skipped")]


def test_pi_policy_triggers_strictly_above_window_minus_reserve() -> None:
    # after the 2nd answer: 200 + 10 + X + 10 tokens; limit = 1000 - 100 = 900
    assert _trigger_events(_two_turns(680 * 4), compaction="pi") == []
    assert _trigger_events(_two_turns(681 * 4), compaction="pi") == ["compaction"]


def test_early_policy_triggers_at_red_zone_inclusive() -> None:
    pol = PolicySettings(early_red_fraction=0.8)  # red = 800
    assert _trigger_events(_two_turns(579 * 4), compaction="early", policy=pol) == []
    assert _trigger_events(_two_turns(580 * 4), compaction="early", policy=pol) == ["compaction"]


def test_opencode_policy_triggers_at_usable_inclusive() -> None:
    pol = PolicySettings(opencode_max_output=100)  # usable = 900, overflow when >= 900
    assert _trigger_events(_two_turns(679 * 4), compaction="opencode", policy=pol) == []
    assert _trigger_events(_two_turns(680 * 4), compaction="opencode", policy=pol) == ["compaction"]


def test_opencode_policy_makes_no_check_after_a_failed_or_aborted_answer() -> None:
    """OpenCode checks for overflow when a step finishes (``processor.ts``, ``finish-step``); a step
    that failed or was interrupted never gets there: the next one that finishes is checked."""
    pol = PolicySettings(opencode_max_output=100)  # usable = 900

    def compacted_before(stop: str) -> list[int]:
        b = SessionBuilder()
        b.user("u" * 800)
        b.assistant("a" * 40)
        b.user("x" * 680 * 4)
        b.assistant("a" * 40, stop=stop)  # over the line
        b.user("next")
        b.assistant("done")
        b.user("more")
        b.assistant("ok")
        settings = ReplaySettings(
            context_window=1000, reserve_tokens=100, keep_recent_tokens=10, compaction="opencode", policy=pol
        )
        r = replay(b.session(), settings)
        return [st.step for st in r.steps for e in st.events if e.type == "compaction"]

    assert compacted_before("stop") == [2]  # checked when the answer's step finished
    assert compacted_before("error") == compacted_before("aborted") == [3]


def test_codex_policy_needs_ninety_percent_and_a_pending_tool_call() -> None:
    # 2nd answer is a bash tool call: len("bash") + len('{"command":"ls"}') = 20 chars = 5 tokens
    # after = 200 + 10 + X + 5; limit = 900 (>=)
    small = PolicySettings(codex_user_tokens=100)  # keep the compacted context well under this tiny window
    assert _trigger_events(_two_turns(684 * 4, tool=True), compaction="codex", policy=small) == []
    assert _trigger_events(_two_turns(685 * 4, tool=True), compaction="codex", policy=small) == ["compaction"]
    # over 90% after a plain answer (no follow-up needed) and under the window: no compaction
    assert _trigger_events(_two_turns(700 * 4, tool=False), compaction="codex", policy=small) == []


def test_claude_code_policy_triggers_at_the_reported_threshold_and_keeps_only_the_summary() -> None:
    # limit = 1000 - min(100, 20000) - 50 = 850 (>=); after the 2nd answer: 200 + 10 + X + 10
    pol = PolicySettings(claude_max_output=100, claude_buffer=50)
    assert _trigger_events(_two_turns(629 * 4), compaction="claude-code", policy=pol) == []
    assert _trigger_events(_two_turns(630 * 4), compaction="claude-code", policy=pol) == ["compaction"]
    r = replay(
        _two_turns(630 * 4).session(),
        ReplaySettings(context_window=1000, compaction="claude-code", policy=pol),
    )
    after = r.step_detail(2).before  # the call after the compaction: the summary, then the new prompt
    assert [c.role for c in after] == ["user", "user"] and after[0].entry_index is None
    assert after[0].message.content[0].text.startswith("This session is being continued from a previous")
    assert (
        PolicySettings().claude_max_output == 20000 and PolicySettings().claude_buffer == 13000
    )  # 167k of 200k


def test_never_policy_counts_overflows() -> None:
    r = replay(_two_turns(2000 * 4).session(), ReplaySettings(compaction="never", context_window=1000))
    # calls 2 and 3 both send more than the window
    assert r.metrics.compactions == 0 and r.metrics.overflows == 2
    assert [st.step for st in r.steps if any(e.type == "overflow" for e in st.events)] == [1, 2]


def test_early_latch_fires_once_per_episode_and_rearms_when_pressure_falls() -> None:
    t = Trigger()
    pol = PolicySettings(early_red_fraction=0.8)
    fire = lambda n: t.after_answer("early", n, 1000, 0, pol, aborted=False, needs_follow_up=False)[0]  # noqa: E731
    assert [fire(n) for n in (700, 800, 850, 900)] == [False, True, False, False]
    assert fire(799) is False  # pressure fell below red: re-armed
    assert fire(800) is True


def test_pi_policy_checks_an_aborted_answer_before_the_next_prompt() -> None:
    t = Trigger()
    do, why = t.after_answer("pi", 10**6, 1000, 0, PolicySettings(), aborted=True, needs_follow_up=False)
    assert do and why.endswith("(pi's shouldCompact before the next prompt, the run aborted)")
    assert not t.after_answer("pi", 10**6, 1000, 0, PolicySettings(), aborted=False, needs_follow_up=True)[0]


def test_what_if_pi_compacts_where_hand_computation_says() -> None:
    # Each turn: user 1000 tokens + answer 10 tokens. Window 5000, reserve 1000: compact once the
    # context after an answer exceeds 4000, i.e. after the 4th answer (4 * 1010 = 4040). The file
    # records no usage, so the context is counted (pi's estimate).
    b = SessionBuilder()
    for _ in range(6):
        b.user("u" * 4000)
        b.assistant("a" * 40)
    r = replay(
        b.session(),
        ReplaySettings(compaction="pi", context_window=5000, reserve_tokens=1000, keep_recent_tokens=1500),
    )
    comp_steps = [st.step for st in r.steps if any(e.type == "compaction" for e in st.events)]
    assert comp_steps == [4]  # summary inserted before the 5th call (step index 4)
    detail = r.step_detail(4).after
    assert detail[0].message.role == "compactionSummary"
    # keep 1500, walking back from the 4th answer (entry 7): 10 + 1000 + 10 + 1000 reaches 1500 at
    # user #3 (entry 4), a user message: kept = entries 4..7, then user #5 (entry 8) follows
    assert [m.entry_index for m in detail[1:]] == [4, 5, 6, 7, 8]


def _turns_with_hidden_prefix(n: int, hidden: int) -> SessionBuilder:
    """``n`` turns of a user message (1000 tokens) and an answer (10), each answer recording the
    usage a provider reports: the context so far, the answer, and ``hidden`` tokens of system
    prompt and tools that the file does not store."""
    b = SessionBuilder()
    for t in range(1, n + 1):
        b.user("u" * 4000)
        b.assistant("a" * 40, usage=hidden + t * 1010)
    return b


def test_a_what_if_triggers_on_the_usage_the_answer_recorded_as_pi_does() -> None:
    # pi compares calculateContextTokens(answer.usage) with window − reserve = 4000. With 1500
    # hidden tokens the 3rd answer records 4530 > 4000 (the counted context is only 3030): pi
    # compacts before the 4th call, not the 5th as the estimate alone would say.
    settings = ReplaySettings(
        compaction="pi", context_window=6000, reserve_tokens=2000, keep_recent_tokens=1500
    )
    r = replay(_turns_with_hidden_prefix(6, 1500).session(), settings)
    first = next(st for st in r.steps if any(e.type == "compaction" for e in st.events))
    assert first.step == 3
    (ev,) = [e for e in first.events if e.type == "compaction"]
    assert ev.reason == (
        "context 4,530 > window − reserve = 4,000 (pi's shouldCompact) (the answer's recorded usage)"
    )
    # the same turns without usage: the counted context crosses 4000 only after the 4th answer
    plain = SessionBuilder()
    for _ in range(6):
        plain.user("u" * 4000)
        plain.assistant("a" * 40)
    r0 = replay(plain.session(), settings)
    assert [st.step for st in r0.steps if any(e.type == "compaction" for e in st.events)][0] == 4


def test_pi_checks_its_trigger_when_the_agent_run_ends_not_between_tool_calls() -> None:
    # pi's _checkCompaction runs at agent_end (and before the next prompt): an answer that calls a
    # tool goes on with its result, so no check there. Usage 4,100 > 4,000 after the 1st and 2nd
    # answers (tool calls), the run ends with the 3rd: pi compacts before the 4th call.
    b = SessionBuilder()
    b.user("u" * 4000)
    b.assistant("", tools=[("read", {"path": "a.py"})], usage=4100)
    b.tool_result("x" * 400, tool="read")
    b.assistant("", tools=[("read", {"path": "b.py"})], usage=4300)
    b.tool_result("x" * 400, tool="read")
    b.assistant("done", usage=4400)
    b.user("u" * 400)
    b.assistant("ok", usage=4600)
    settings = ReplaySettings(
        compaction="pi", context_window=6000, reserve_tokens=2000, keep_recent_tokens=200
    )
    r = replay(b.session(), settings)
    assert [st.step for st in r.steps if any(e.type == "compaction" for e in st.events)] == [3]
    assert r.triggers[:3] == (
        4100,
        4300,
        4400,
    )  # compared with the usage at every answer, acted on at the end


def test_after_a_what_if_compaction_the_trigger_adds_what_changed_to_the_recorded_usage() -> None:
    # Once compacted, the answers' recorded usage is of the longer context the session really sent:
    # read as it is, it would compact after every answer. The replay takes the recorded usage plus
    # what it changed in the context, here exactly what a provider would report for the what-if's
    # context: the context sent, the answer's 10 tokens and the 1500 hidden ones.
    settings = ReplaySettings(
        compaction="pi", context_window=10000, reserve_tokens=2000, keep_recent_tokens=1500
    )
    r = replay(_turns_with_hidden_prefix(16, 1500).session(), settings)
    compacted = [st.step for st in r.steps if any(e.type == "compaction" for e in st.events)]
    assert compacted[0] == 7  # 1500 + 6 * 1010 = 7560 ≤ 8000 < 8570 after the 7th answer: before call 7
    assert len(compacted) >= 2 and all(b - a > 1 for a, b in itertools.pairwise(compacted))
    for k in compacted[1:]:
        (ev,) = [e for e in r.steps[k].events if e.type == "compaction"]
        size = r.steps[k - 1].tokens + 10 + 1500
        assert ev.reason.startswith(f"context {size:,} > window − reserve = 8,000")
        assert "for what the what-if changed" in ev.reason
        assert r.steps[k - 2].tokens + 10 + 1500 <= 8000 or k - 2 in compacted


def test_a_what_ifs_change_is_sized_in_the_providers_tokens_and_its_reason_says_how() -> None:
    # A provider that reads half a token per counted one (pi's chars ÷ 4 over-counting a GPT
    # tokenizer, say): the session's fit says 0.50, and after the what-if's first compaction its
    # trigger adds half of what it dropped, not all of it (which would take the compared usage to
    # 0 and put off every later compaction), and each such compaction's reason says so.
    b = SessionBuilder()
    for t in range(1, 61):
        b.user("u" * 4000)
        b.assistant("a" * 40, usage=1500 + (t * 1010) // 2)
    settings = ReplaySettings(
        compaction="pi", context_window=12000, reserve_tokens=2000, keep_recent_tokens=3000
    )
    r = replay(b.session(), settings)
    compacted = [st.step for st in r.steps if any(e.type == "compaction" for e in st.events)]
    assert len(compacted) >= 3
    for k in compacted[1:]:
        (ev,) = [e for e in r.steps[k].events if e.type == "compaction"]
        assert "for what the what-if changed: " in ev.reason
        assert "counted × 0.50 provider tokens per counted token, fitted on the session's calls)" in ev.reason
        # what the policy compared: about the what-if's own context in the provider's tokens
        own = 1500 + (r.steps[k - 1].tokens + 10) / 2
        assert abs(r.triggers[k - 1] - own) <= 3
    first = compacted[0]
    assert all(t is not None and t > 1500 for t in r.triggers[first:])  # never down to nothing


def test_a_what_if_overflows_on_the_prompt_the_provider_counted() -> None:
    # The counted context stays under the 5000-token window; with 2500 hidden tokens the recorded
    # prompt of the 3rd call is 4530 + ... > 5000: the request would fail there, so the what-if
    # compacts before it (pi's overflow path), and counts the overflow on the provider's size.
    b = SessionBuilder()
    for t in range(1, 5):
        b.user("u" * 4000)
        b.assistant("a" * 40, usage=2500 + t * 1010)
    r = replay(
        b.session(),
        ReplaySettings(compaction="pi", context_window=5000, reserve_tokens=100, keep_recent_tokens=900),
    )
    st = r.steps[2]
    kinds = [e.type for e in st.events]
    assert "overflow" in kinds and "compaction" in kinds
    assert max(s.tokens for s in r.steps) < 5000  # the counted context alone never overflows
    # the compaction before call 2 does not see call 2's answer: it joins the context once, after
    answer = st.entry_index
    assert answer not in {c.entry_index for c in r.step_detail(2).before}
    assert [c.entry_index for c in r.step_detail(3).before].count(answer) == 1


def test_rereads_count_reads_whose_earlier_output_was_summarised_away() -> None:
    b = SessionBuilder()
    b.user("look at a.py")
    b.assistant("", tools=[("read", {"path": "a.py"})])
    b.tool_result("x" * 8000, tool="read")
    b.assistant("ok")
    kept = b.user("again")
    b.add("compaction", summary="earlier: read a.py", firstKeptEntryId=kept, tokensBefore=2000)
    b.assistant("", tools=[("read", {"path": "a.py"})])
    b.tool_result("x" * 8000, tool="read")
    b.assistant("", tools=[("read", {"path": "a.py"})])  # the 2nd output is still visible: not a re-read
    r = replay(b.session())
    assert r.metrics.rereads == 1
    ev = [e for st in r.steps for e in st.events if e.type == "reread"]
    assert [e.to_json() for e in ev] == [{"type": "reread", "path": "a.py", "earlierEntryIndex": 2}]


def test_metrics_sum_the_steps_and_price_recorded_rates() -> None:
    b = SessionBuilder()
    b.user("u" * 400)
    b.msg(
        "assistant",
        content=[{"type": "text", "text": "hi"}],
        stopReason="stop",
        usage={
            "input": 100,
            "output": 1,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 101,
            "cost": {"input": 0.001, "output": 0.0001, "cacheRead": 0, "cacheWrite": 0, "total": 0.0011},
        },
    )
    r = replay(b.session())
    assert r.metrics.steps == 1 and r.metrics.total_input_tokens == 100
    assert r.metrics.cost_usd == pytest.approx(100 * 0.001 / 100)
    assert r.metrics.recorded_cost_usd == pytest.approx(0.0011)
    assert r.metrics.peak_context == 100 and r.steps[0].recorded_input == 100


def test_a_session_that_records_no_cost_has_no_recorded_cost() -> None:
    """Claude Code, Codex and OpenCode files record usage but no dollars: the recorded cost is
    None (shown "—"), not $0."""
    from inspector.importers import load_any

    from .support.paths import SAMPLES

    for name in ("claude-code-session.jsonl", "codex-session.jsonl"):
        r = replay(load_any(SAMPLES / name))
        assert r.steps and any(s.recorded_input for s in r.steps)
        assert r.metrics.recorded_cost_usd is None, name


def test_sweep_covers_the_grid() -> None:
    """(Its speed is measured by ``bench/replay.py``, not asserted here.)"""
    s = load_session(FIXTURES / "before-compaction.jsonl")
    cells = sweep(
        s,
        ReplaySettings(compaction="pi"),
        {"keep_recent_tokens": [10000, 20000], "reserve_tokens": [8000, 16384]},
    )
    assert len(cells) == 4
    assert {tuple(c.values.values()) for c in cells} == {
        (10000, 8000),
        (10000, 16384),
        (20000, 8000),
        (20000, 16384),
    }
    by = {tuple(c.values.values()): c.metrics for c in cells}
    assert by[(20000, 16384)].compactions == replay(s, ReplaySettings(compaction="pi")).metrics.compactions


def test_parse_grid_ranges_and_lists() -> None:
    assert parse_grid("prune_protect=10000:40000:10000") == ("prune_protect", [10000, 20000, 30000, 40000])
    assert parse_grid("x=1,2.5,true") == ("x", [1, 2.5, True])
    with pytest.raises(ValueError):
        parse_grid("nope")


def test_rereads_count_outputs_hidden_by_pruning() -> None:
    b = SessionBuilder()
    b.user("read it")
    b.assistant("", tools=[("read", {"path": "a.py"})])
    b.tool_result("x" * 4 * 30000, tool="read")
    b.assistant("ok")
    for k in range(3):
        b.user(f"more {k}")
        b.assistant("", tools=[("bash", {"command": f"ls {k}"})])
        b.tool_result("y" * 4 * 25000, tool="bash")
        b.assistant("ok")
    b.user("read it again")
    b.assistant("", tools=[("read", {"path": "a.py"})])
    s = b.session()
    none = replay(s)
    pruned = replay(s, ReplaySettings(strategy="pi-context-pruning"))
    assert none.metrics.rereads == 0
    assert pruned.metrics.rereads == 1 and pruned.metrics.tokens_pruned > 0
    last = pruned.step_detail(len(pruned.steps) - 1)
    assert any(d.action == "pruned" and d.entry_index == 2 for d in last.prune.decisions)


def test_step_detail_rebuilds_the_exact_pruned_context() -> None:
    s = load_session(FIXTURES / "before-compaction.jsonl")
    r = replay(s, ReplaySettings(strategy="opencode"))
    for st in (r.steps[100], r.steps[-1]):
        d = r.step_detail(st.step)
        assert sum(__import__("inspector").estimate_tokens(m.message) for m in d.after) == st.tokens


def test_usage_counter_reports_pis_usage_based_context_size() -> None:
    from inspector.tokens import estimate_context_tokens

    s = load_session(FIXTURES / "before-compaction.jsonl")
    r = replay(s, ReplaySettings(counter="usage"))
    for st in (r.steps[10], r.steps[-1]):
        ctx = build_session_context(s, s.parents[st.entry_index])
        assert st.tokens == estimate_context_tokens(ctx.agent_messages).tokens
    assert r.steps[-1].tokens != replay(s).steps[-1].tokens


def test_a_what_if_at_pis_settings_compacts_where_a_session_written_as_pi_runs_did(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The corpus generator writes pi sessions as pi runs them: compacting when an agent run ends
    # with the recorded usage above window − reserve. Replayed under pi's policy at pi's settings,
    # the what-if compacts at the same calls (with the estimate as trigger it was 22 calls late;
    # checked after every answer, one call early, in the middle of the run).
    import orjson

    from inspector.corpus.generate import pi_lines

    f = tmp_path / "pi.jsonl"
    f.write_bytes(b"\n".join(orjson.dumps(x) for x in pi_lines(266, 6940887)) + b"\n")
    s = load_session(f)

    def compacted(r):  # type: ignore[no-untyped-def]
        return [st.step for st in r.steps if any(e.type == "compaction" for e in st.events)]

    recorded = compacted(replay(s, ReplaySettings()))
    assert recorded == [243]
    assert compacted(replay(s, ReplaySettings(compaction="pi"))) == recorded
    f.write_bytes(b"\n".join(orjson.dumps(x) for x in pi_lines(1200, 1)) + b"\n")
    s = load_session(f)
    recorded = compacted(replay(s, ReplaySettings()))
    assert len(recorded) == 4 and recorded[0] == 286
    # the first where pi's was; the later ones after it, since the generator's cut is not
    # pi's findCutPoint (it keeps a few entries more, so its contexts are larger)
    assert compacted(replay(s, ReplaySettings(compaction="pi")))[0] == 286


@pytest.mark.parametrize("ratio", [1.0, 0.6, 1.4])
@pytest.mark.parametrize("strategy", ["none", "opencode"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_what_ifs_trigger_is_what_a_provider_would_report_for_its_own_context(
    seed: int, strategy: str, ratio: float
) -> None:
    # A session whose every answer records the usage a provider would: a prompt of its context
    # by pi's estimate and 3,000 hidden tokens of system prompt and tools, and the answer as
    # output. Then, compacted and pruned or not, the what-if's trigger at every answer is its own
    # context + the answer + 3,000: the recorded usage plus what the what-if changed, exactly
    # (the session's size fit is exact here: one provider token per counted token). A provider
    # that reads ``ratio`` tokens per counted one (a GPT tokenizer against pi's chars ÷ 4, say)
    # reports ``ratio ×`` the context: what the what-if changed is sized by the session's fit, so
    # the trigger is that too, to a token or two of rounding (unscaled, a compaction that drops
    # 20k counted tokens would be off by 8k).
    import random

    from inspector.replay import session_counter

    rnd = random.Random(seed)
    turns = []
    for _ in range(40):
        calls = [rnd.randint(50, 3000) for _ in range(rnd.randint(0, 3))]
        turns.append((rnd.randint(20, 800), calls, rnd.randint(5, 200)))

    def build(usage: list[int] | None) -> SessionBuilder:
        b, k = SessionBuilder(), 0
        for user, calls, answer in turns:
            b.user("u" * user * 4)
            for out in calls:
                b.assistant("", tools=[("read", {"path": f"f{k}.py"})], usage=usage[k] if usage else None)
                b.tool_result("x" * out * 4, tool="read")
                k += 1
            b.assistant("a" * answer * 4, usage=usage[k] if usage else None)
            k += 1
        return b

    plain = build(None).session()
    c = session_counter(plain, "pi")
    answers = [plain.entries[st.entry_index].message for st in replay(plain, ReplaySettings()).steps]
    prompts = [round(ratio * st.tokens) + 3000 for st in replay(plain, ReplaySettings()).steps]
    b = build(prompts)
    said = [x["message"]["usage"] for x in b.lines if x.get("message", {}).get("role") == "assistant"]
    for u, m in zip(said, answers, strict=True):  # the answer is the output, not the prompt
        u["output"] = c.count(m)
        u["totalTokens"] = u["input"] + u["output"]
    s = b.session()
    c = session_counter(s, "pi")
    r = replay(
        s,
        ReplaySettings(
            compaction="pi",
            strategy=strategy,
            strategy_settings=(("prune_minimum", 0), ("prune_protect", 2_000)) if strategy != "none" else (),
            context_window=24_000,
            reserve_tokens=4_000,
            keep_recent_tokens=4_000,
        ),
    )
    assert r.metrics.compactions >= (1 if ratio < 1 else 2)
    assert (strategy == "none") == (r.metrics.tokens_pruned == 0)
    for st, t in zip(r.steps, r.triggers, strict=True):
        own = round(ratio * st.tokens) + c.count(s.entries[st.entry_index].message) + 3000
        assert t == own if ratio == 1.0 else abs(t - own) <= 2


@pytest.mark.parametrize(("usage", "compacted"), [(4500, [2]), (0, [])])
def test_pi_checks_an_aborted_answer_before_the_next_prompt_on_its_own_usage(
    usage: int, compacted: list[int]
) -> None:
    # pi skips an aborted run at agent_end and checks the aborted answer before the next prompt
    # (_checkCompaction(lastAssistant, false)) with its own usage: 4,500 > 4,000 compacts before the
    # next call; 0 compares nothing, however large the counted context is.
    b = SessionBuilder()
    b.user("u" * 8000)
    b.assistant("a" * 40, usage=2100)
    b.user("u" * 8800)
    b.assistant("a" * 40, usage=usage, stop="aborted")
    b.user("again")
    b.assistant("ok", usage=4600)
    settings = ReplaySettings(
        compaction="pi", context_window=6000, reserve_tokens=2000, keep_recent_tokens=200
    )
    r = replay(b.session(), settings)
    assert r.steps[1].tokens + 10 > 4000  # counted, the aborted call's context is over the threshold
    assert [st.step for st in r.steps if any(e.type == "compaction" for e in st.events)] == compacted
    if compacted:
        (ev,) = [e for e in r.steps[2].events if e.type == "compaction"]
        assert "before the next prompt, the run aborted" in ev.reason


def test_every_replay_counts_an_overflow_on_the_prompt_the_provider_counted() -> None:
    """The counter overstates these prompts (chars ÷ 4 counts twice what the provider recorded).
    The session's own replay counts an overflow where the provider's count is over the window, not
    where the counter's is: only the failed last call, which records no usage and is sized as pi
    estimates a context (the last answer's usage, 2,015, and the 1,000 tokens counted since). The
    never policy sends what was sent until the recorded compaction it sets aside; past it, its
    prompt is the recorded one plus what it kept, in the provider's tokens (the session's fit,
    0.5 per counted token)."""
    b = SessionBuilder()
    for t in range(1, 4):
        b.user("u" * 4000)  # 1000 counted tokens, 500 by the provider's count
        b.assistant("a" * 40, usage=500 * t + 5)
    kept = b.user("u" * 4000)
    b.add("compaction", summary="s" * 40, firstKeptEntryId=kept, tokensBefore=2000)
    b.assistant("a" * 40, usage=515)
    for t in range(2, 5):
        b.user("u" * 4000)
        b.assistant("a" * 40, usage=500 * t + 15)
    b.user("u" * 4000)
    b.assistant("", stop="error")  # no usage

    def overflows(**kw) -> dict[int, int]:
        r = replay(b.session(), ReplaySettings(**kw))
        got = {st.step: e.tokens for st in r.steps for e in st.events if e.type == "overflow"}
        assert r.metrics.overflows == len(got)
        return got

    counted = replay(b.session(), ReplaySettings(context_window=2600))
    assert [st.step for st in counted.steps if st.tokens > 2600] == [2, 5, 6, 7]  # the counter's view
    assert overflows(context_window=2600) == {7: 2015 + 1000}
    assert overflows(context_window=1900) == {6: 2015, 7: 3015}
    assert overflows(compaction="never", context_window=2600) == {
        5: 1515 + (6050 - 3030) // 2,
        6: 2015 + (7070 - 4050) // 2,
        7: 2015 + (7070 - 4050) // 2 + 1000,
    }


def test_a_replay_sizes_from_its_own_context_only_where_it_sends_what_was_sent() -> None:
    """Where a replay sends what the agent sent, the recorded prompts measured its own contexts (no
    as-recorded walk); any other (another pruning, another policy, no pruning on a file that records
    the agent's) sizes against the walked as-recorded contexts."""
    from inspector.importers import load_any
    from inspector.replay.run import ReplayRun

    from .support.paths import SAMPLES

    pi = load_session(FIXTURES / "before-compaction.jsonl")
    cleared = load_any(SAMPLES / "opencode-session.json")  # OpenCode cleared some outputs itself
    assert (
        ReplayRun(pi, ReplaySettings()).as_sent and ReplayRun(pi, ReplaySettings(strategy="recorded")).as_sent
    )
    assert ReplayRun(cleared, ReplaySettings(strategy="recorded")).as_sent
    for s, settings in (
        (pi, ReplaySettings(strategy="opencode")),
        (pi, ReplaySettings(compaction="never")),
        (pi, ReplaySettings(compaction="pi")),
        (cleared, ReplaySettings(strategy="none")),
    ):
        assert not ReplayRun(s, settings).as_sent, settings


@pytest.mark.parametrize(
    "settings",
    [
        ReplaySettings(context_window=9000),
        ReplaySettings(context_window=9000, compaction="never"),
        ReplaySettings(context_window=9000, strategy="opencode"),
        ReplaySettings(context_window=12_000, compaction="pi", reserve_tokens=500),
        ReplaySettings(context_window=9000, counter="usage"),
        ReplaySettings(context_window=9000, counter="tiktoken", compaction="never"),
    ],
    ids=["recorded", "never", "opencode", "pi", "usage", "tiktoken-never"],
)
def test_a_steps_provider_size_is_over_the_window_exactly_at_its_overflows(settings) -> None:
    """What the Replay page shows as the window used is what the overflow check compared."""
    from .support.paths import SAMPLES

    r = replay(load_session(SAMPLES / "coding-session.jsonl"), settings)
    over = [st.step for st in r.steps if any(e.type == "overflow" and not e.before for e in st.events)]
    assert over and over == [st.step for st in r.steps if st.provider_tokens > st.window]
    assert [st.as_dict()["providerTokens"] for st in r.steps] == [st.provider_tokens for st in r.steps]
    assert r.metrics.overflows == len(over)
    if settings.counter != "usage":  # pi's usage-based size is its own view of the provider's count
        assert any(st.provider_tokens != st.tokens for st in r.steps)


def test_a_replay_of_a_file_the_agent_pruned_sizes_what_it_sends_against_what_was_sent() -> None:
    """OpenCode cleared some outputs itself. Replayed with that pruning, a call's size is its recorded
    prompt; replayed without it (strategy none), the outputs go whole, and the size is the recorded
    prompt plus what the replay sends beyond the as-recorded context, in the provider's tokens."""
    from inspector.importers import load_any
    from inspector.replay.as_sent import sent_as_recorded, sent_fit
    from inspector.replay.sizes import changed_size

    from .support.paths import SAMPLES

    s = load_any(SAMPLES / "opencode-session.json")
    own = replay(s, ReplaySettings(strategy="recorded"))
    whole = replay(s, ReplaySettings(strategy="none"))
    sent, fit = sent_as_recorded(s, "pi"), sent_fit(s, "pi")
    answered = [k for k, st in enumerate(own.steps) if st.recorded_input and st.stop_reason != "error"]
    assert answered and all(own.steps[k].provider_tokens == own.steps[k].recorded_input for k in answered)
    grew = [k for k in answered if whole.steps[k].tokens != sent[whole.steps[k].entry_index]]
    assert grew  # the cleared outputs are sent whole again
    for k in answered:
        st = whole.steps[k]
        want = changed_size(int(st.recorded_input), st.tokens - sent[st.entry_index], fit)
        assert st.provider_tokens == want
    assert all(whole.steps[k].provider_tokens > own.steps[k].provider_tokens for k in grew)
