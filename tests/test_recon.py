"""The reconstruction check, the sending rules it counts with, and the calibrated counter.

Sessions are written by hand; their recorded prompts are made from the rebuilt context itself
(``R = constant + ratio × sent + overhead × messages``), so every figure the check gives is exact.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from inspector import load_session
from inspector.calibration import session_calibration
from inspector.cli import main
from inspector.context import ContextMessage
from inspector.importers import parse_any
from inspector.recon import CAUSES, check, recorded_split, step_note, unstored_words, verdict
from inspector.replay import ReplaySettings, replay
from inspector.sent import SendRules, SentCounter, claude_keeps_thinking, rules_for
from inspector.session.models import AssistantMessage, ToolResultMessage, UserMessage

from .support.builder import SessionBuilder
from .support.recon import SYSTEM, TIK, coding_session, recorded_builder, sent_counts


def _recorded(calls: int, ratio: float = 1.0, overhead: int = 0, drop_at: int | None = None, drop: int = 0):  # type: ignore[no-untyped-def]
    return recorded_builder(calls, ratio, overhead, drop_at, drop).session()


def test_a_session_the_rebuild_follows_is_tracked_at_its_constant() -> None:
    c = check(_recorded(12))
    assert c.as_json() == {
        "calls": 12,
        "maxRecorded": c.max_recorded,
        "offset": {"median": SYSTEM, "p10": SYSTEM, "p90": SYSTEM},
        "spreadExcludingFlagged": 0,
        "flagged": [],
    }
    assert verdict(c) == "tracks the recorded prompt within ±0 tokens"


def test_an_unexplained_drop_is_flagged_carried_and_said() -> None:
    c = check(_recorded(12, drop_at=7, drop=20_000))
    assert c.as_json()["flagged"] == [
        {"step": 7, "entryIndex": 15, "cause": "context change not in the file", "tokens": -20_000}
    ]
    assert c.spread_excluding_flagged == 0 and c.offset_median == SYSTEM  # the departure is carried after it
    assert [(x.departure, x.unexplained) for x in c.calls[6:9]] == [
        (0, 0),
        (-20_000, -20_000),
        (-20_000, -20_000),
    ]
    assert step_note(c, 7) == (
        "The agent sent about 20k fewer tokens than this file explains (an extension or the "
        "transport changed the context)."
    )
    assert step_note(c, 6) is None
    assert verdict(c) == "departs at 1 call: 1 context change not in the file (elsewhere within ±0 tokens)"


def test_a_calls_recorded_prompt_is_split_into_what_the_file_holds_and_what_no_file_stores() -> None:
    session = recorded_builder(12, ratio=1.1, overhead=3).session()
    c = check(session)
    sent, messages = sent_counts(session)[4]
    call = c.calls[4]
    assert call.recorded == round(SYSTEM + 1.1 * sent + 3 * messages) and call.sent == sent
    # the file's part and the rest add up to the recorded prompt; the rest is the system prompt, to rounding
    assert call.expected + call.offset == call.recorded and abs(call.offset - SYSTEM) <= 1
    assert recorded_split(c, 4) == (
        f"Of the {call.recorded:,} tokens the provider recorded for this prompt, the file accounts for "
        f"{call.expected:,}: the messages, {sent:,} tiktoken tokens, which this session's provider counts as "
        f"{call.expected:,} (tiktoken × 1.100 + 3 per message, fitted to its usage). The other "
        f"{call.offset:,} are what no file stores, the system prompt and tool definitions "
        f"({c.offset_median:,} at this session's median call; the reconstruction check)."
    )
    # a file whose recorded prompts are below the rebuilt context (damaged, or odd) has no such part
    odd = replace(c, calls=tuple(replace(x, offset=-362) for x in c.calls), offset_median=-362)
    assert recorded_split(odd, 4).endswith(
        "That is 362 more than was recorded, so no part of the prompt is left for a system prompt or tools "
        "(-362 at this session's median call; the reconstruction check)."
    )
    assert unstored_words(odd) == (
        "the recorded prompts are not larger than the context rebuilt here (the median offset is -362 "
        "tokens), so no part of them is left for a system prompt or tools"
    )
    assert unstored_words(c).startswith(
        "the system prompt and tool definitions, which no session file stores"
    )
    # where the check departs, its note says why instead; a step no call answers has neither
    dropped = check(_recorded(12, drop_at=7, drop=20_000))
    assert [recorded_split(dropped, k) is None for k in (6, 7, 8)] == [False, True, True]
    assert step_note(dropped, 7) is not None and recorded_split(dropped, 99) is None


def test_the_calibration_is_fitted_from_deltas_and_offered_as_a_counter() -> None:
    s = _recorded(12, ratio=2.0, overhead=10)
    cal = session_calibration(s)
    assert (
        cal.fitted
        and cal.ratio == pytest.approx(2.0, abs=1e-9)
        and cal.overhead == pytest.approx(10, abs=1e-6)
    )
    assert "fitted to this session's recorded usage" in cal.label
    r = replay(s, ReplaySettings(counter="calibrated"))
    ctx = r.step_detail(3).after
    assert r.steps[3].tokens == sum(round(2.0 * TIK.count(cm.message) + 10) for cm in ctx)
    assert check(s).offset_median == SYSTEM


@pytest.mark.parametrize(
    "name", ["coding-session.jsonl", "claude-code-session.jsonl", "opencode-session.json"]
)
def test_the_calibrated_counter_encodes_each_message_once(name: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A session's calibrated counter is fitted and counts with the session's tiktoken counter:
    every message goes through tiktoken once (not again for the fit, nor for the calibrated
    counts), and each count is tiktoken's × the ratio + the overhead, as a counter of its own gives."""
    import inspector.calibration as calibration
    from inspector.replay import session_counter
    from inspector.session.models import MessageEntry
    from inspector.tokens import CalibratedCounter, TiktokenCounter

    from .support.paths import REPO

    s = parse_any((REPO / "sample_sessions" / name).read_bytes(), source=name)
    monkeypatch.setattr(calibration, "_CACHE", {})
    seen: list[int] = []
    real = TiktokenCounter.count_many
    monkeypatch.setattr(
        TiktokenCounter, "count_many", lambda self, ms: seen.extend(map(id, ms)) or real(self, ms)
    )
    counter = session_counter(s, "calibrated")
    msgs = [e.message for e in s.entries if isinstance(e, MessageEntry)]
    assert len(seen) == len(set(seen)) and set(map(id, msgs)) <= set(
        seen
    )  # each once (and a summary the fit builds)
    cal = session_calibration(s)
    own = CalibratedCounter(cal.ratio, cal.overhead)
    assert [counter.count(m) for m in msgs] == [own.count(m) for m in msgs]
    assert counter.count_text("some text to count") == own.count_text("some text to count")


def test_a_file_that_continues_an_earlier_one_starts_from_its_first_recorded_prompt() -> None:
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": "gone-0001",
            "sessionId": "s",
            "timestamp": "2026-07-01T10:00:01.000Z",
            "message": {"role": "user", "content": "go on"},
        }
    ]
    parent = "u1"
    for k, prompt in enumerate((140_000, 140_600, 141_300)):
        lines.append(
            {
                "type": "assistant",
                "uuid": f"a{k}",
                "parentUuid": parent,
                "sessionId": "s",
                "timestamp": f"2026-07-01T10:00:1{k}.000Z",
                "message": {
                    "id": f"m{k}",
                    "role": "assistant",
                    "model": "claude-opus-4-8",
                    "stop_reason": "end_turn",
                    "content": [{"type": "text", "text": "ok " * 150}],
                    "usage": {"input_tokens": prompt, "output_tokens": 160},
                },
            }
        )
        parent = f"a{k}"
    s = parse_any("".join(json.dumps(x) + "\n" for x in lines).encode(), source="t.jsonl")
    c = check(s)
    first = c.calls[0]
    assert c.mid_session and first.flag is not None
    assert (first.flag.cause, first.flag.tokens) == ("mid-session start", 140_000 - first.calibrated)
    assert (
        first.offset == 0 and first.departure == 140_000 - first.calibrated
    )  # the first prompt is the baseline


def _answer(
    text: str,
    thinking: str,
    reasoning: int | None = None,
    api: str = "anthropic-messages",
    model: str = "claude-opus-4-6",
    output: int = 0,
    stop: str = "stop",
) -> AssistantMessage:
    usage = {"input": 1, "output": output, **({"reasoning": reasoning} if reasoning is not None else {})}
    return AssistantMessage.model_validate(
        {
            "role": "assistant",
            "api": api,
            "provider": "p",
            "model": model,
            "stopReason": stop,
            "usage": usage,
            "content": [{"type": "thinking", "thinking": thinking}, {"type": "text", "text": text}],
        }
    )


def _count(agent: str, msgs: list, call: AssistantMessage | None = None) -> dict[str, int]:  # type: ignore[type-arg]
    s = SessionBuilder().session()
    rules = SendRules(agent=agent, skip_failed=agent == "pi", dcp_tags=False)
    out = SentCounter(s, TIK, rules).count([ContextMessage(m, None) for m in msgs], call or msgs[-1])
    return {**out.parts, "total": out.tokens}


THINK = "weighing the two parsers before answering"
ANSWER = "use the second parser"


def test_reasoning_items_count_at_their_recorded_size_for_pi_over_openai_responses() -> None:
    a = _answer(ANSWER, THINK, reasoning=500, api="openai-codex-responses", model="gpt-5.6")
    u = UserMessage(content="and now?")
    parts = _count("pi", [a, u, _answer("", "", api="openai-codex-responses", model="gpt-5.6")])
    assert parts["thinking as stored"] == TIK.count_text(THINK)
    assert parts["reasoning beyond the stored text"] == 500 - TIK.count_text(
        THINK
    )  # every turn: pi keeps them


def test_codex_counts_reasoning_of_the_current_turn_only() -> None:
    old = _answer(ANSWER, THINK, reasoning=300, api="openai-responses", model="gpt-5.5")
    new = _answer(ANSWER, THINK, reasoning=200, api="openai-responses", model="gpt-5.5")
    parts = _count(
        "codex", [old, UserMessage(content="next"), new, ToolResultMessage(toolCallId="c", content="ok")]
    )
    assert parts["reasoning beyond the stored text"] == 200 - TIK.count_text(
        THINK
    )  # the earlier turn's is dropped
    assert parts["thinking as stored"] == TIK.count_text(THINK)


def test_older_claude_models_drop_earlier_turns_thinking_newer_keep_it() -> None:
    assert [
        claude_keeps_thinking(m)
        for m in (
            "claude-sonnet-4-5-20250929",
            "claude-opus-4-1",
            "claude-3-7-sonnet-20250219",
            "claude-opus-4-5-20251101",
            "claude-sonnet-4-6",
            "claude-opus-5",
            "gpt-5",
        )
    ] == [False, False, False, True, True, True, None]
    for model, kept in (("claude-sonnet-4-5", 0), ("claude-opus-4-6", TIK.count_text(THINK))):
        msgs = [
            _answer(ANSWER, THINK, model=model),
            UserMessage(content="next"),
            _answer(ANSWER, "", model=model),
        ]
        assert _count("claude-code", msgs).get("thinking as stored", 0) == kept


def test_thinking_stored_only_as_a_signature_counts_at_the_output_it_took() -> None:
    a = _answer(ANSWER, "", model="claude-opus-4-8", output=900)
    parts = _count("claude-code", [a, ToolResultMessage(toolCallId="c", content="ok"), _answer("", "")])
    assert parts["reasoning beyond the stored text"] == 900 - TIK.count_text(ANSWER)


def test_pi_sends_no_failed_answer_and_another_models_thinking_as_text() -> None:
    failed = _answer("partial", THINK, stop="error")
    other = _answer(ANSWER, THINK, reasoning=999, api="openai-responses", model="gpt-5")
    call = _answer("", "", model="claude-opus-4-6")
    parts = _count("pi", [failed, other, call], call)
    assert (
        parts["thinking as stored"] == TIK.count_text(THINK)
        and "reasoning beyond the stored text" not in parts
    )
    assert parts["messages"] == TIK.count(other) - TIK.count_text(THINK) + TIK.count(call)


def test_rules_for_a_pi_session_and_plain_counting() -> None:
    s = SessionBuilder().session()
    assert rules_for(s) == SendRules(agent="pi", skip_failed=True, dcp_tags=False)
    assert rules_for(s, providers=False).providers is False


def test_cli_json_is_the_interface_and_exits_0(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "s.jsonl"
    sent = sent_counts(coding_session(10).session())
    f.write_text(
        coding_session(10, [SYSTEM + s - (15_000 if k >= 6 else 0) for k, (s, _) in enumerate(sent)]).text()
    )
    assert main(["check", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["calls", "maxRecorded", "offset", "spreadExcludingFlagged", "flagged"]
    assert list(out["offset"]) == ["median", "p10", "p90"]
    assert out["flagged"] == [
        {"step": 6, "entryIndex": 13, "cause": "context change not in the file", "tokens": -15_000}
    ]
    assert all(f["cause"] in CAUSES for f in out["flagged"])
    assert main(["check", str(f)]) == 0
    assert "departs at 1 call" in capsys.readouterr().out


def test_a_hosted_web_search_explains_tokens_the_file_does_not_hold() -> None:
    """A hosted web search adds its results to the call that ran it (OpenAI's usage counts them in
    that response): a jump at that call, or at the next, is said to come from it."""
    from inspector.recon.flags import Observed, classify

    search = AssistantMessage(
        content=[{"type": "toolCall", "id": "ws", "name": "web_search", "arguments": {}}]
    )
    plain = AssistantMessage(content=[{"type": "text", "text": "hi"}])
    prev = Observed(1, 1, 10_000, 5_000, 5_000.0, (), None, 0.0)
    for answer, before, which in ((search, plain, "in this call"), (plain, search, "in the call before")):
        f = classify(Observed(2, 3, 30_000, 6_000, 6_000.0, (), before, 0.0, 0, answer), prev, 19_000)
        assert f.cause == "context change not in the file"
        assert f"web search, {which} added results the file does not store" in f.detail
    f = classify(Observed(2, 3, 30_000, 6_000, 6_000.0, (), plain, 0.0, 0, plain), prev, 19_000)
    assert "web search" not in f.detail


def test_a_fall_as_large_as_what_web_searches_added_is_said_to_be_their_results() -> None:
    """Web searches add results the file never holds (flagged at their calls); a later fall about as
    large (within a quarter) is said to be the provider no longer having them, as in the shared
    Codex rollout 888ba8 (78k tokens of searches, then 69k fewer after an interrupted turn). A fall
    of another size, or one after a compaction rebuilt the context, is not."""
    from inspector.recon.flags import Observed, flag_calls
    from inspector.replay.results import RecordedCompaction

    search = AssistantMessage(
        content=[{"type": "toolCall", "id": "ws", "name": "web_search", "arguments": {}}]
    )
    plain = AssistantMessage(content=[{"type": "text", "text": "hi"}])

    def calls(offsets: list[int], answers: list, events: dict | None = None) -> list[str]:  # type: ignore[type-arg]
        obs = [
            Observed(
                k,
                k,
                10_000 + 100 * k + off,
                10_000 + 100 * k,
                10_000.0 + 100 * k,
                (events or {}).get(k, ()),
                plain,
                0.0,
                0,
                a,
            )
            for k, (off, a) in enumerate(zip(offsets, answers, strict=True))
        ]
        flags, _, _ = flag_calls(obs, 2_000, False)
        return [f.detail if f is not None else "" for f in flags]

    answers = [plain, plain, plain, search, plain, search, plain, plain]
    said = calls([1_000, 1_000, 1_000, 21_000, 21_000, 31_000, 31_000, 3_000], answers)
    assert "web search, in this call added results" in said[3] and "web search" in said[5]
    assert said[7].endswith(
        "about as much as the web search results flagged at step(s) 3, 5 had added (30k tokens): likely the "
        "provider no longer had them (the file never held them)"
    )
    other = calls([1_000, 1_000, 1_000, 21_000, 21_000, 31_000, 31_000, 21_000], answers)  # 10k fewer
    assert other[7] and "web search results flagged" not in other[7]
    compaction = RecordedCompaction(
        entry_index=6, first_kept_entry_index=None, summary_tokens=0, tokens_after=0, tokens_before=0
    )
    after = calls([1_000, 1_000, 1_000, 21_000, 21_000, 31_000, 1_000, -27_000], answers, {6: (compaction,)})
    assert after[7] and "web search results flagged" not in after[7]  # the compaction took them away


def test_a_fall_read_whole_from_a_prefix_no_recorded_call_cached_was_sent_first_elsewhere() -> None:
    """Under breakpoint caching (the calls record cache writes) a call reads only up to where an
    earlier request's breakpoint wrote. A fall whose shorter prompt was read from the cache but for
    what was appended, at a length no recorded call had cached, was sent first by a request the
    file does not hold (Claude Code, entireio b0dc55 call 29). A read that ends where a recorded
    call cached, one that leaves more uncached than was appended, a session that records no
    writes, or an agent that caches at more than each request's end is described as before."""
    from inspector.recon.flags import Observed, flag_calls

    def answer(write: int, provider: str) -> AssistantMessage:
        return AssistantMessage(
            content=[{"type": "text", "text": "hi"}],
            usage={"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": write},
            provider=provider,
            model="claude-sonnet-4-5" if provider == "anthropic" else "gpt-5.6",
        )

    def detail(
        read: int,
        first_cached: int = 20_000,
        writes: bool = True,
        ends: bool = True,
        provider: str = "anthropic",
    ) -> str:
        # recorded prompts of 20k, 21k and 22k, the last two caching up to their ends and the first
        # up to ``first_cached``; then 13k, 10k fewer than the file's 23k (it appends 1k a call)
        reads = [(20_000, first_cached - 500), (21_000, 20_500), (22_000, 21_500), (13_000, read)]
        obs = [
            Observed(
                k,
                k,
                rec,
                10_000 + 1_000 * k,
                10_000.0 + 1_000 * k,
                (),
                None,
                float(r),
                0,
                answer(500 if writes else 0, provider),
            )
            for k, (rec, r) in enumerate(reads)
        ]
        flags, _, _ = flag_calls(obs, 2_000, False, ends)
        f = flags[3]
        assert f is not None and f.cause == "context change not in the file" and f.tokens == -10_000
        return f.detail

    said = detail(12_990)
    assert said == (
        "the agent sent about 10k fewer tokens than this file explains, and the provider read all but 10 "
        "tokens of this shorter prompt from its cache, a prefix no earlier call in the file had cached: a "
        "request the file does not record (the agent's own side request, or an extension's) had sent this "
        "shorter context first, so the change was made before this call"
    )
    plain = "the agent sent about 10k fewer tokens than this file explains (an extension or the transport"
    assert detail(12_990, first_cached=12_990).startswith(plain)  # call 0 had cached that prefix
    assert detail(9_000).startswith(plain)  # 4k uncached: more than the 1k appended and the 2k limit
    assert detail(12_990, writes=False).startswith(plain)  # no writes recorded: no breakpoints known
    # an agent that also marks the message before the last (OpenCode): a call may read up to there
    assert detail(12_990, ends=False).startswith(plain)
    # OpenAI (GPT-5.6 records writes too) reads any prefix it processed: no breakpoint to go by
    assert detail(12_990, provider="openai").startswith(plain)


def _contexts_as_checked(s):  # type: ignore[no-untyped-def]
    r = replay(s, ReplaySettings(compaction="recorded", strategy="recorded", counter="tiktoken"))
    answers = [s.entries[st.entry_index].message for st in r.steps]
    return [(ctx, answers[k]) for k, ctx in r.sent_contexts()]


@pytest.mark.parametrize(
    "name",
    ["coding-session.jsonl", "claude-code-session.jsonl", "codex-session.jsonl", "opencode-session.json"],
)
def test_a_context_that_extends_the_previous_one_is_counted_as_if_afresh(name: str) -> None:
    """:meth:`SentCounter.count` continues from the previous context when the new one holds it
    first (a new turn re-counts the last turn's thinking, another model or a changed context
    counts afresh): every call's count equals a fresh counter's, across turns, compactions and
    pruning, with each agent's rules (and DCP's ids on a DCP export)."""
    import random

    from .support.opencode_export import dcp_export
    from .support.paths import REPO

    sessions = [parse_any((REPO / "sample_sessions" / name).read_bytes(), source=name)]
    if name == "opencode-session.json":
        sessions.append(dcp_export(random.Random(3), 30, every=4).session())
    for s in sessions:
        rules = rules_for(s)
        kept = SentCounter(s, TIK, rules)
        pairs = _contexts_as_checked(s)
        reused = 0
        for ctx, call in pairs:
            reused += kept._last is not None and kept._last.messages == tuple(ctx[: len(kept._last.messages)])
            got = kept.count(ctx, call)
            want = SentCounter(s, TIK, rules).count(ctx, call)
            assert (got.tokens, got.items, got.parts) == (want.tokens, want.items, want.parts)
        assert reused > len(pairs) // 3  # most calls continue from the one before


@pytest.mark.parametrize(
    "name",
    ["coding-session.jsonl", "claude-code-session.jsonl", "codex-session.jsonl", "opencode-session.json"],
)
def test_a_context_changed_near_its_end_is_counted_as_if_afresh(name: str) -> None:
    """:meth:`SentCounter.count` takes out the previous context's messages past the ones both hold
    first and adds the new ones (a tool output pruned near the end, messages dropped, an earlier
    context again, the last prompt moved back or forth): every count equals a fresh counter's,
    with each agent's rules (and DCP's ids on a DCP export)."""
    import random
    from itertools import takewhile
    from operator import is_, truth

    from .support.opencode_export import dcp_export
    from .support.paths import REPO

    sessions = [parse_any((REPO / "sample_sessions" / name).read_bytes(), source=name)]
    if name == "opencode-session.json":
        sessions.append(dcp_export(random.Random(3), 30, every=4).session())
    rng = random.Random(name)
    for s in sessions:
        rules = rules_for(s)
        kept = SentCounter(s, TIK, rules)
        pairs = _contexts_as_checked(s)
        rolled = 0
        order = [p for k, p in enumerate(pairs) for p in (p, pairs[rng.randrange(k + 1)], p, p)]
        for k, (ctx, call) in enumerate(order):
            ctx = list(ctx)
            for _ in range(rng.randint(0, 3) if k % 4 == 3 else 0):  # a few changes near the end
                if not ctx:
                    break
                at = max(0, len(ctx) - 1 - int(rng.expovariate(0.5)))
                cm = ctx[at]
                how = rng.choice(("prune", "copy", "drop", "cut"))
                if how == "prune" and isinstance(cm.message, (ToolResultMessage, UserMessage)):
                    ctx[at] = ContextMessage(
                        cm.message.model_copy(update={"content": "[pruned]"}), cm.entry_index
                    )
                elif how == "copy":
                    ctx[at] = ContextMessage(cm.message.model_copy(), cm.entry_index)
                elif how == "drop":
                    del ctx[at]
                else:
                    del ctx[at:]
            last = kept._last
            if last is not None:
                shared = len(list(takewhile(truth, map(is_, last.messages, ctx))))
                rolled += 0 < shared < len(last.messages) and len(last.messages) - shared <= shared
            got = kept.count(ctx, call)
            want = SentCounter(s, TIK, rules).count(ctx, call)
            assert (got.tokens, got.items, got.parts) == (want.tokens, want.items, want.parts)
        assert rolled >= len(pairs) // 2  # counts that took messages out of the previous one


def test_the_check_fits_its_calibration_with_the_replays_counter(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """check() fits the session's calibration with the counter its replay already primed (each
    message encoded once, not again for the fit): the same deltas and the same fit as with a
    counter of its own, on each agent's sample and a DCP export."""
    import random

    import inspector.calibration as calibration
    from inspector.calibration import fit, session_deltas
    from inspector.replay import session_counter

    from .support.opencode_export import dcp_export
    from .support.paths import REPO

    names = [
        "coding-session.jsonl",
        "claude-code-session.jsonl",
        "codex-session.jsonl",
        "opencode-session.json",
    ]
    sessions = [parse_any((REPO / "sample_sessions" / n).read_bytes(), source=n) for n in names]
    sessions.append(dcp_export(random.Random(5), 40, every=5).session())
    for s in sessions:
        own = session_deltas(s, rules=rules_for(s))
        kept = session_deltas(s, session_counter(s, "tiktoken"), rules=rules_for(s))
        assert own == kept and fit(own) == fit(kept)
    monkeypatch.setattr(calibration, "_CACHE", {})
    monkeypatch.setattr(calibration, "TiktokenCounter", None)  # a counter of its own: a TypeError
    assert check(sessions[0]).calls


def test_a_call_by_another_model_counts_the_context_afresh() -> None:
    """pi sends another model's thinking as text: the same context counts otherwise for a call by
    another model, so the counter does not continue from the previous call's count then."""
    s = SessionBuilder().session()
    rules = SendRules(agent="pi", skip_failed=True, dcp_tags=False)
    a = _answer(ANSWER, THINK, reasoning=500, api="openai-codex-responses", model="gpt-5.6")
    other = _answer("", "", api="anthropic-messages", model="claude-sonnet-4-5")
    ctx = [ContextMessage(UserMessage(content="go"), None), ContextMessage(a, None)]
    more = [*ctx, ContextMessage(ToolResultMessage(toolCallId="c", content="ok"), None)]  # the same turn
    kept = SentCounter(s, TIK, rules)
    assert kept.count(ctx, a).tokens == SentCounter(s, TIK, rules).count(ctx, a).tokens
    got, want = kept.count(more, other), SentCounter(s, TIK, rules).count(more, other)
    assert got.parts == want.parts and "reasoning beyond the stored text" not in got.parts


def s_lines(path):  # type: ignore[no-untyped-def]
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def _halved_with_a_compaction(tmp_path):  # type: ignore[no-untyped-def]
    """30 turns whose provider reads half a token per counted one (plus 1,500 hidden), compacted
    by the agent after the 20th answer: the prompt after it is what the provider reported for
    the context the compaction left."""
    from inspector.replay import session_counter

    b = SessionBuilder()
    for t in range(1, 31):
        if t == 21:
            b.add(
                "compaction", summary="what came before " * 20, firstKeptEntryId=b.last, tokensBefore=20_000
            )
        b.user("u" * 4000)
        b.assistant("a" * 40, usage=0)
    plain = b.session()
    c = session_counter(plain, "pi")
    steps = replay(plain, ReplaySettings()).steps
    answers = [x["message"] for x in b.lines if x.get("message", {}).get("role") == "assistant"]
    for st, m in zip(steps, answers, strict=True):
        m["usage"] = {
            "input": 1500 + st.tokens // 2,
            "output": c.count(plain.entries[st.entry_index].message),
        }
    path = tmp_path / "halved.jsonl"
    path.write_text(b.text(), encoding="utf-8")
    return b.session(), path


def test_a_what_ifs_sizing_is_checked_on_the_compactions_the_session_made(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    # The session compacted itself once: from the prompt before it, the prompt after it is
    # predicted with the change × the fitted 0.50 (what a what-if's trigger does) to within a
    # token, and off by about half the change when counted as it is. `inspector check` says so.
    from inspector.recon.changes import COMPACTION, sized_changes, sizing_words

    s, path = _halved_with_a_compaction(tmp_path)
    (c,) = sized_changes(replay(s, ReplaySettings(strategy="recorded")))
    assert (c.kind, c.before, c.after) == (COMPACTION, 19, 20)
    assert abs(c.scale - 0.5) < 0.01 and c.change < -15_000
    assert abs(c.fitted - c.recorded) <= 2
    assert c.unscaled == max(0, c.prompt_before + c.change) and abs(c.error(c.unscaled)) > 0.5
    line = sizing_words((c,))
    assert line is not None and "(1 compaction)" in line and "× 0.50 provider tokens" in line
    assert "off by 0% (median; the change as counted:" in line
    assert sizing_words(()) is None
    assert sized_changes(replay(s, ReplaySettings(strategy="recorded", counter="usage"))) == ()
    assert sized_changes(replay(s, ReplaySettings(compaction="pi"))) == ()  # a what-if made none
    # the call right after the compaction failed (no usage): the next recorded prompt is compared
    lines = s_lines(path)
    answers = [
        x["message"] for x in lines if x.get("type") == "message" and x["message"]["role"] == "assistant"
    ]
    answers[20]["usage"] = None
    answers[20]["stopReason"] = "error"
    failed = tmp_path / "failed.jsonl"
    failed.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (d,) = sized_changes(replay(load_session(failed), ReplaySettings(strategy="recorded")))
    assert (d.before, d.after) == (19, 21) and abs(d.fitted - d.recorded) <= 2
    assert main(["check", str(path)]) == 0
    assert line in capsys.readouterr().out


def test_a_dcp_compress_is_told_apart_and_left_out_of_the_sizing_figures() -> None:
    # An OpenCode export does not hold what DCP sent in place of a range, so a compress is no
    # check of a what-if's sizing: it is named, and left out of the median.
    from types import SimpleNamespace

    from inspector.recon.changes import (
        CLEARED,
        COMPACTION,
        COMPRESS,
        SizedChange,
        _pruning_kind,
        sizing_words,
    )

    def result(details):  # type: ignore[no-untyped-def]
        m = ToolResultMessage(toolCallId="c", toolName="compress", content=[], details=details)
        return ContextMessage(m, 1)

    seg = [
        ContextMessage(UserMessage(content="u"), 0),
        result({"dcp": {"blocks": [{"block": 1, "first": 0, "last": 0}]}}),
    ]
    prev, now = SimpleNamespace(_segment=seg, _length=1), SimpleNamespace(_segment=seg, _length=2)
    assert _pruning_kind(prev, now) == COMPRESS
    seg[1] = result({"opencode": {"compacted": 5}})
    assert _pruning_kind(prev, now) == CLEARED

    def change(kind: str, fitted: int, unscaled: int) -> SizedChange:
        return SizedChange(kind, 0, 1, 1.5, 100_000, -50_000, 40_000, unscaled, fitted)

    only = sizing_words([change(COMPRESS, 20_000, 50_000)] * 2)
    assert only is not None and "are 2 DCP compresses, whose replacement the export does not record" in only
    line = sizing_words([change(COMPACTION, 44_000, 50_000), change(COMPRESS, 20_000, 60_000)])
    assert (
        line is not None
        and "(1 compaction)" in line
        and "off by 10% (median; the change as counted: 25%)" in line
    )
    assert line.endswith("; 1 DCP compress left out, whose replacement the export does not record")
