"""The prompt-cache model (inspector/cache): each provider family's rule, the size fit, the
retention evidence, and cache_replay on sessions whose answer is known."""

from __future__ import annotations

import dataclasses
import json

import pytest

from inspector import load_session
from inspector.cache import anthropic, cache_replay, family_of, fit_sizes, openai
from inspector.cache.timing import long_retention
from inspector.importers import load_any, parse_any
from inspector.replay import ReplaySettings, replay
from inspector.replay.sizes import fit_tails
from inspector.session.models import AssistantMessage
from tests.support.builder import SessionBuilder
from tests.support.paths import FIXTURES, SAMPLES

SONNET = "claude-sonnet-4-5"


# -- rules ------------------------------------------------------------------------------------


def test_anthropic_reads_the_previous_prompt_and_writes_the_rest():
    r = anthropic.rule(SONNET)
    assert r.split(10_000, 8_000, True) == (8_000, 2_000, 0)
    # the tail past the last breakpoint is sent uncached, not written
    assert r.split(10_000, 8_000, True, tail=7) == (8_000, 1_993, 7)
    # a cold cache reads nothing and writes everything
    assert r.split(10_000, 8_000, False) == (0, 10_000, 0)


def test_anthropic_minimum_length_by_model():
    assert anthropic.rule(SONNET).min_tokens == 1024
    assert anthropic.rule("claude-opus-4-5-20251101").min_tokens == 4096
    assert anthropic.rule("claude-3-5-haiku").min_tokens == 2048
    r = anthropic.rule(SONNET)
    assert r.split(900, 0, True) == (0, 0, 900)  # too short to cache: nothing written
    assert r.split(5_000, 1_000, True) == (0, 5_000, 0)  # a 1,000-token prefix is below the minimum


def test_anthropic_retention_sets_ttl_and_write_price():
    assert (anthropic.rule(SONNET).ttl_seconds, anthropic.rule(SONNET).write_multiplier) == (300.0, 1.25)
    assert (anthropic.rule(SONNET, "long").ttl_seconds, anthropic.rule(SONNET, "long").write_multiplier) == (
        3600.0,
        2.0,
    )
    assert anthropic.rule(SONNET, "none").split(10_000, 8_000, True) == (0, 0, 10_000)


def test_anthropic_breakpoints_only_after_a_change():
    r = anthropic.rule(SONNET)
    # the change sits inside the previous prompt: only the system prompt's breakpoint still matches
    assert r.reusable(common=50_000, previous=60_000, hidden=3_000) == 3_000
    assert r.reusable(common=60_000, previous=60_000, hidden=3_000) == 60_000
    assert r.reusable(common=2_000, previous=60_000, hidden=3_000) == 0


def test_openai_prefix_in_128_token_steps_from_1024_without_writes():
    r = openai.rule(0.1)
    assert r.split(5_000, 1_023, True) == (0, 0, 5_000)
    assert r.split(5_000, 1_024, True) == (1_024, 0, 3_976)
    assert r.split(5_000, 1_151, True) == (1_024, 0, 3_976)
    assert r.split(5_000, 1_152, True) == (1_152, 0, 3_848)
    # any processed prefix is reusable: a change keeps the cache up to it
    assert r.reusable(common=50_000, previous=60_000, hidden=3_000) == 50_000
    assert r.ttl_seconds == 600.0 and not r.writes


def test_gpt_5_6_and_later_bill_writes_and_keep_the_cache_30_minutes():
    """OpenAI's guide: from the GPT-5.6 family on, cache writes cost 1.25× the input rate; the
    cache's lifetime is prompt_cache_options.ttl, 30 minutes (the long retention does not apply)."""
    for name in ("gpt-5.6-sol", "openai/gpt-5.6", "gpt-6"):
        for retention in ("short", "long"):
            r = openai.rule(0.1, retention, name)
            assert (r.writes, r.write_multiplier, r.ttl_seconds) == (True, 1.25, 1800.0), (name, retention)
    # the uncached tail (what the last request did not cache) stays plain input; the rest is written
    assert openai.rule(0.1, "short", "gpt-5.6-sol").split(5_000, 1_200, True, 300) == (1_152, 3_548, 300)
    for name in ("gpt-5.5", "gpt-5-codex", "o3", "gpt-4.1", None):
        r = openai.rule(0.1, "short", name)
        assert (r.writes, r.write_multiplier, r.ttl_seconds) == (False, 1.0, 600.0), name


def test_a_gpt_5_6_call_after_20_idle_minutes_reads_and_its_writes_are_priced():
    from .test_cache_reasoning import reasoning_file

    lines = reasoning_file("gpt-5.6-sol", reads=False).splitlines()
    last = json.loads(lines[-1])  # the last answer: 20 minutes after the one before
    last["message"]["timestamp"] += 20 * 60_000
    last["timestamp"] = "2026-01-01T00:20:21.000Z"
    s = parse_any(("\n".join([*lines[:-1], json.dumps(last)]) + "\n").encode(), "s.jsonl")
    c = cache_replay(replay(s, ReplaySettings()))
    x = c.steps[-1]
    assert x.idle_seconds > 1_190 and x.read == x.recorded_read > 0 and x.invalidation is None
    rate = c.rates["gpt-5.6-sol"]
    assert rate.write == pytest.approx(1.25 * rate.input)
    assert x.write > 0 and x.cost == pytest.approx(
        x.read * rate.read + x.write * rate.write + x.uncached * rate.input
    )
    older = parse_any(reasoning_file("gpt-5.5", reads=False).encode(), "o.jsonl")
    assert all(y.write == 0 for y in cache_replay(replay(older, ReplaySettings())).steps)


def test_family_by_provider_and_model():
    def m(**kw):
        return AssistantMessage(**kw)

    assert family_of(m(provider="anthropic", model="x")) == "anthropic"
    assert family_of(m(provider="openrouter", model="anthropic/claude-sonnet-4")) == "anthropic"
    assert family_of(m(provider="openai-codex", model="gpt-5.5")) == "openai"
    assert family_of(m(provider="google", model="gemini-2.5-pro")) == "none"


# -- fits -------------------------------------------------------------------------------------


def test_fit_recovers_hidden_prefix_and_scale_despite_an_outlier():
    pairs = [(t, 12_000 + 1.1 * t) for t in range(1_000, 60_000, 3_000)]
    pairs[5] = (pairs[5][0], pairs[5][1] - 40_000)  # a drop the file does not explain
    fit = fit_sizes(pairs)
    assert abs(fit.hidden - 12_000) <= 2 and abs(fit.scale - 1.1) < 1e-6
    assert fit.calls == len(pairs) - 1
    assert fit_sizes([]).fitted is False


def test_tails_per_family():
    calls = [("anthropic", 10_000, 0, 8), ("anthropic", 12_000, 9_992, 8), ("anthropic", 13_000, 11_992, 10)]
    assert fit_tails(calls) == (("anthropic", 8),)
    calls = [
        ("openai", 10_000, 0, 10_000),
        ("openai", 12_000, 9_728, 2_272),
        ("openai", 13_000, 11_776, 1_224),
    ]
    assert fit_tails(calls) == (
        ("openai", 184),
    )  # 272 and 224 not read, less half a block: median of 208, 160


def test_long_retention_needs_most_long_gaps_to_read():
    hour = 3_600_000
    warm = [("anthropic", 50_000, None, None, 0), ("anthropic", 60_000, 50_000, 2, 1_000_000)]  # 16 min, read
    cold = [("anthropic", 50_000, None, None, 0), ("anthropic", 60_000, 0, 2, 1_000_000)]
    assert long_retention(warm) == {"anthropic"}
    assert long_retention(cold) == frozenset()
    assert (
        long_retention([*warm, ("anthropic", 70_000, 0, 2, hour), ("anthropic", 80_000, 0, 2, 2 * hour)])
        == frozenset()
    )


# -- cache_replay -----------------------------------------------------------------------------


def _sonnet(b: SessionBuilder) -> SessionBuilder:
    for x in b.lines:
        if x.get("message", {}).get("role") == "assistant":
            x["message"]["model"] = SONNET
    return b


def reading_session(turns: int = 12, gap_ms: int | None = None) -> SessionBuilder:
    """A user turn per module: read it (a ~9k-token output), answer."""
    b = SessionBuilder()
    for k in range(turns):
        b.user(f"turn {k}: look at module {k}")
        b.assistant("", tools=[("read", {"path": f"src/m{k}.py"})])
        b.tool_result(" ".join(f"def f{k}_{j}(x): return x * {j} + {k}" for j in range(900)))
        b.assistant(f"module {k} multiplies")
    if gap_ms:
        t = 1_767_225_600_000
        for x in b.lines:
            if "message" in x:
                x["message"]["timestamp"] = t
                t += gap_ms
    return _sonnet(b)


PRUNE_EVERY_TURN = ReplaySettings(
    strategy="pi-context-pruning",
    strategy_settings=(("prune_protect", 8000), ("prune_minimum", 0), ("protected_turns", 1)),
)


def test_pruning_every_turn_costs_more_once_caching_is_priced():
    """The issue's case: pruning each turn saves tokens (the blended price says it is cheaper) but
    invalidates the cached prefix at every prune, and the rewrites cost more than the saving."""
    s = reading_session().session()
    keep, prune = replay(s, ReplaySettings()), replay(s, PRUNE_EVERY_TURN)
    assert prune.metrics.tokens_pruned > 0
    assert prune.metrics.cost_usd < keep.metrics.cost_usd  # blended: pruning looks cheaper
    ck, cp = cache_replay(keep), cache_replay(prune)
    assert cp.billed_cost > ck.billed_cost  # billed: it is dearer
    assert ck.invalidations == [] and len(cp.invalidations) >= 5
    inv = cp.invalidations[0].invalidation
    assert inv["cause"] == "prune" and inv["tokensRewritten"] > 0 and inv["premiumUsd"] > 0
    broken = s.entries[inv["brokenAtEntryIndex"]]
    assert broken.message.role == "toolResult"  # the pruned output is where the prefix broke
    assert cp.hit_rate < ck.hit_rate


def test_unchanged_prefix_is_read_and_idle_gaps_expire_it():
    s = reading_session(4).session()
    c = cache_replay(replay(s, ReplaySettings()))
    assert c.steps[0].prompt < 1024 and (c.steps[0].read, c.steps[0].write) == (0, 0)  # under the minimum
    for a, b in zip(c.steps, c.steps[1:], strict=False):
        assert b.read == (a.prompt if a.prompt >= 1024 else 0) and b.write == b.prompt - b.read
    cold = cache_replay(replay(reading_session(4, gap_ms=400_000).session(), ReplaySettings()))
    assert all(x.read == 0 for x in cold.steps)  # each call comes > 5 minutes after the last
    causes = [
        b.invalidation and b.invalidation["cause"]
        for a, b in zip(cold.steps, cold.steps[1:], strict=False)
        if a.prompt >= 1024
    ]
    assert causes and set(causes) == {"ttl"}
    warm = cache_replay(
        replay(reading_session(4, gap_ms=400_000).session(), ReplaySettings()), retention="long"
    )
    assert all(
        b.read == a.prompt for a, b in zip(warm.steps, warm.steps[1:], strict=False) if a.prompt >= 1024
    )


def test_a_compaction_keeps_only_the_hidden_prefix():
    s = reading_session(10).session()
    r = replay(
        s,
        ReplaySettings(
            compaction="pi", context_window=40_000, reserve_tokens=4_000, keep_recent_tokens=8_000
        ),
    )
    assert r.metrics.compactions >= 1
    c = cache_replay(r)
    k = next(st.step for st in r.steps if any(ev.type == "compaction" for ev in st.events))
    assert c.steps[k].invalidation["cause"] == "compaction"
    assert c.steps[k].read == 0  # no recorded usage: no hidden prefix known, nothing left to read


def test_recorded_check_on_a_pi_sample():
    s = load_session(SAMPLES / "coding-session.jsonl")
    c = cache_replay(replay(s, ReplaySettings()))
    m = c.metrics()
    assert c.sizes == "recorded"
    assert m["cacheReadError"] is not None and m["cacheReadError"] < 0.05
    assert abs(m["billedCostError"]) < 0.03
    assert all(x.recorded_read is not None for x in c.steps if x.prompt)


def test_a_failed_call_with_no_usage_is_not_billed_and_the_next_reads_the_last_good_prompt():
    b = reading_session(2)
    b.user("one more")
    b.assistant("", stop="error", usage=0)
    b.assistant("done")
    s = _sonnet(b).session()
    c = cache_replay(replay(s, ReplaySettings()))
    failed, last = c.steps[-2], c.steps[-1]
    assert (failed.prompt, failed.read, failed.write, failed.cost) == (0, 0, 0, 0.0)
    assert last.read == c.steps[-3].prompt


def test_no_cache_model_prices_everything_as_input():
    s = reading_session(3).session()
    c = cache_replay(replay(s, ReplaySettings()), model="none")
    assert all((x.read, x.write) == (0, 0) and x.uncached == x.prompt for x in c.steps)
    with pytest.raises(ValueError):
        cache_replay(replay(s, ReplaySettings()), model="gemini")


def test_the_quick_prune_path_agrees_with_comparing_the_sent_contexts():
    from inspector.cache.shared import Shared

    for s, settings in (
        (reading_session().session(), PRUNE_EVERY_TURN),
        (
            load_session(SAMPLES / "coding-session.jsonl"),
            ReplaySettings(
                strategy="pi-context-pruning",
                strategy_settings=(("prune_minimum", 0), ("prune_protect", 4000)),
            ),
        ),
    ):
        r = replay(s, settings)
        quick, exact = Shared(r), Shared(r)
        prunes = [k for k in range(1, len(r.steps)) if any(ev.type == "pruned" for ev in r.steps[k].events)]
        assert prunes
        for k in prunes:
            assert quick.at(k) == exact.at(k, exact=True), k


def test_contexts_compared_where_a_prune_is_undone_come_from_one_run_of_the_runner(monkeypatch):
    """The bundled OpenCode export repeated (bench/importers.py), each copy with the sample's own
    times, and replayed under pi compaction with the agent's own pruning: the recorded compaction
    of each copy is set aside, so the context runs on across copies, and at the first call of the
    next copy the clock goes back before the marks of the outputs OpenCode had cleared: they are
    sent whole again (as after a clock skew). Those steps, and the step before each, are compared
    context by context: taken from one incremental run (``Replay.sent_contexts``), not
    ``step_detail`` at each step (``apply`` over the whole context), with the same shares and
    causes."""
    from bench.importers import scale_opencode
    from inspector.cache.shared import Shared

    r = replay(
        parse_any(scale_opencode(300, forward=False), "scaled.json"),
        ReplaySettings(strategy="recorded", compaction="pi"),
    )
    undone = [k for k in range(1, len(r.steps)) if any(ev.type == "unpruned" for ev in r.steps[k].events)]
    assert len(undone) >= 20
    reference = Shared(r)
    reference._stream, reference._streamed = iter(()), frozenset()  # every context from step_detail
    expected = [reference.at(k) for k in undone]
    compared = set(undone) | {k - 1 for k in undone}
    detail = type(r).step_detail

    def step_detail(self, k):  # type: ignore[no-untyped-def]
        assert k not in compared, f"step {k} went through apply"
        return detail(self, k)

    monkeypatch.setattr(type(r), "step_detail", step_detail)
    shared = Shared(r)
    assert [shared.at(k) for k in undone] == expected


# -- when the cache was used; long-context prices ------------------------------------------------


def test_the_cache_is_used_when_the_answer_begins_not_when_the_request_was_sent():
    from inspector.cache.timing import output_rate, used_at

    # the session's own speed: 50 tokens/s (the median of its answers)
    assert output_rate([(0, 2_000, 100), (0, 4_000, 200), (0, 1_000, 500), (5, None, 9)]) == 50.0
    assert output_rate([(0, 0, 100)]) is None  # one time per message (other agents): no rate
    # a request that waited 9 minutes before a 20-second answer used the cache 20 s before its end
    assert used_at(0, 560_000, 1_000, 50.0) == 540_000
    assert used_at(0, 10_000, 5_000, 50.0) == 0  # never before it was sent
    assert used_at(0, 10_000, 5_000, None) == 0 and used_at(7, 7, 10, 50.0) == 7


def _timed(b: SessionBuilder, times: list[tuple[int, int, int]]) -> SessionBuilder:
    """Each answer's (request start s, answer end s, output tokens), and its recorded usage."""
    answers = [x for x in b.lines if x.get("message", {}).get("role") == "assistant"]
    for x, (start, end, out) in zip(answers, times, strict=True):
        x["message"]["timestamp"] = 1_767_225_600_000 + start * 1000
        x["timestamp"] = f"2026-01-01T{end // 3600:02d}:{end % 3600 // 60:02d}:{end % 60:02d}.000Z"
        x["message"]["usage"] = {"input": 0, "output": out, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    return b


def test_a_long_answer_is_not_idle_time():
    """Three answers at 50 tokens/s; the second stalls 9 minutes before it answers. The third request
    starts 9.5 minutes after the second was sent but 10 s after it used the cache: still warm under
    the 5-minute lifetime (as the shared pi transcript 48d3… records)."""
    b = reading_session(2)
    s = _timed(b, [(0, 10, 500), (20, 20 + 560, 1_000), (590, 600, 500), (610, 620, 500)]).session()
    c = cache_replay(replay(s, ReplaySettings()))
    third = c.steps[2]
    assert third.idle_seconds == pytest.approx(30.0)  # from 560 s (580 − 1,000 / 50) to 590 s
    assert third.read == c.steps[1].prompt > 1024 and third.invalidation is None
    # measured from the request's start, the same call would have found the cache expired
    late = _timed(reading_session(2), [(0, 10, 500), (20, 30, 1_000), (590, 600, 500), (610, 620, 500)])
    c = cache_replay(replay(late.session(), ReplaySettings()))
    assert c.steps[2].read == 0 and c.steps[2].invalidation["cause"] == "ttl"


def test_prompts_over_the_long_context_threshold_bill_at_the_long_rates():
    from inspector.cache.prices import LONG, long_context, rates_for, recorded_rates, tier_of

    assert long_context("gpt-5.4") == (272_000, 2.0) and long_context("gpt-5") is None
    assert tier_of("gpt-5.6-sol", 272_001) == LONG and tier_of("gpt-5.6-sol", 272_000) == ""
    assert tier_of("claude-sonnet-4-5", 200_001) == LONG and tier_of("claude-opus-4-5", 900_000) == ""
    normal = rates_for("gpt-5.4", "openai", 0.1, 1.0, (5e-6, 5e-7, None))
    assert rates_for("gpt-5.4", "openai", 0.1, 1.0, None, LONG, normal).input == pytest.approx(1e-5)

    # the session's own rates per tier: a call over 272K recorded at $10 / $1 per M, one below at $5 / $0.50
    def answer(inp: int, read: int, rate: float) -> AssistantMessage:
        return AssistantMessage(
            model="gpt-5.4",
            usage={
                "input": inp,
                "cacheRead": read,
                "cost": {"input": inp * rate, "cacheRead": read * rate / 10, "cacheWrite": 0},
            },
        )

    rates = recorded_rates([answer(1_000, 300_000, 1e-5), answer(1_000, 100_000, 5e-6)])
    assert rates["gpt-5.4"] == pytest.approx((5e-6, 5e-7, None))
    assert rates[("gpt-5.4", LONG)] == pytest.approx((1e-5, 1e-6, None))


def test_a_read_longer_than_the_previous_prompt_after_an_interruption_is_explained():
    b = SessionBuilder()
    b.user("read the lexer")
    b.assistant("", tools=[("read", {"path": "lexer.ts"})])
    b.tool_result("x " * 4_000)
    b.user("[Request interrupted by user]")
    b.user("go on")
    b.assistant("done")
    answers = [x for x in b.lines if x.get("message", {}).get("role") == "assistant"]
    for x, (read, write) in zip(answers, [(0, 5_000), (7_000, 500)], strict=True):
        x["message"]["usage"] = {
            "input": 2,
            "output": 10,
            "cacheRead": read,
            "cacheWrite": write,
            "totalTokens": 0,
        }
    c = cache_replay(replay(_sonnet(b).session(), ReplaySettings()))
    assert c.steps[1].recorded_read == 7_000 and "interrupted" in c.steps[1].disagreement


def test_a_read_of_only_the_shared_prefix_is_named():
    from inspector.cache.causes import disagreement

    why = disagreement(5, 90_000, 9_600, 91_000, True, 12.0, hidden=9_600)
    assert why is not None and "only the system prompt and tools" in why and "9,600" in why
    assert "only the system prompt" not in (
        disagreement(5, 90_000, 40_000, 91_000, True, 12.0, hidden=9_600) or ""
    )


def test_an_empty_answer_without_usage_is_no_call():
    """OpenCode closes a run of steps with an empty assistant message and no tokens: no request, so
    the next call reads what the last real one cached (as the shared OpenCode export records)."""
    b = reading_session(3)
    answers = [x for x in b.lines if x.get("message", {}).get("role") == "assistant"]
    answers[3]["message"]["content"] = []  # "module 1 multiplies": empty, no usage
    s = b.session()
    c = cache_replay(replay(s, ReplaySettings()))
    empty, after = c.steps[3], c.steps[4]
    assert (empty.prompt, empty.read, empty.write, empty.cost) == (0, 0, 0, 0.0)
    assert after.read == c.steps[2].prompt > 1024


def test_a_read_that_stops_at_an_earlier_prompts_end_is_an_older_cache_copy():
    """OpenAI routes requests across cache servers; a server that last saw the prompt of a few calls
    back serves that prefix (the shared OpenCode export: 12 such reads, 204–1,020 tokens short)."""
    from inspector.cache.causes import disagreement, older_prefix

    earlier = [70_000, 61_109, 55_121]  # newest first: 2, 3, 4 calls back
    assert older_prefix(60_416, earlier) == 3
    assert older_prefix(54_272, earlier) == 4
    assert older_prefix(40_000, earlier) is None  # no earlier prompt ends there
    assert older_prefix(61_500, earlier) is None  # past that prompt's end: not its prefix
    # nothing read, or less than any provider caches, is no older prompt's prefix, however short
    # the earlier prompts were (a read of 0 had been "the prefix the prompt of 2 calls back left")
    assert older_prefix(0, [900, 1000]) is None
    assert older_prefix(1000, [1500, 1100]) is None
    assert older_prefix(1024, [3000, 1100]) == 3
    why = disagreement(5, 73_000, 60_416, 74_307, True, 30.0, earlier=earlier, hidden=20_992)
    assert why is not None and "3 calls back" in why and "cache copy" in why
    # a read of only the shared system prefix is named as such, DCP or not (DCP v3 changes nothing
    # there: message ids stay once given, nudges go at the end of the prompt)
    why = disagreement(5, 73_000, 20_992, 74_307, True, 30.0, dcp=True, earlier=earlier, hidden=20_992)
    assert why is not None and "only the system prompt and tools" in why
    # what neither explains stays DCP's in a DCP session
    why = disagreement(5, 73_000, 40_000, 74_307, True, 30.0, dcp=True, earlier=earlier, hidden=20_992)
    assert why is not None and "DCP" in why
    # a read past the prediction in a DCP session: DCP's summaries are larger than the export records
    more = disagreement(5, 26_624, 52_736, 61_932, True, 30.0, dcp=True, previous=60_000, hidden=20_992)
    assert more is not None and more.startswith("the provider kept more") and "notifications" in more
    assert "DCP" not in (disagreement(5, 26_624, 52_736, 61_932, True, 30.0, previous=60_000) or "")


def test_the_older_copy_search_looks_back_a_bounded_number_of_calls_still_cached():
    """At most OLDER_MAX_BACK calls back, newest first, and only prompts still within the TTL: the
    check stays linear in the session (a what-if disagrees with the recorded reads at most calls)."""
    from inspector.cache.causes import OLDER_MAX_BACK, alive

    earlier = [(1000 + i, float(i)) for i in range(500)]  # oldest first: (prompt, last used)
    kept = alive(earlier, 500.0, 10_000.0)
    assert kept == [1000 + i for i in range(499, 499 - OLDER_MAX_BACK, -1)]
    assert alive(earlier, 500.0, 5.0) == [1499, 1498, 1497, 1496, 1495]  # used at most 5 s ago
    assert alive([(7, None)], 500.0, 5.0) == [7]  # unknown use: kept


def test_a_system_prefix_read_right_after_toolsearch_is_named():
    from inspector.cache.causes import disagreement
    from inspector.cache.facts import session_facts

    b = SessionBuilder()
    b.user("search the web")
    b.assistant("", tools=[("ToolSearch", {"query": "select:WebSearch"})])
    b.tool_result("[{'type': 'tool_reference', 'tool_name': 'WebSearch'}]")
    b.assistant("", tools=[("WebSearch", {"query": "llms.txt"})])
    b.tool_result("results")
    b.assistant("done")
    pi = _sonnet(b).session()
    s = dataclasses.replace(pi, format="claude-code")  # ToolSearch is Claude Code's tool
    answers = [
        i for i, e in enumerate(s.entries) if getattr(getattr(e, "message", None), "role", "") == "assistant"
    ]
    assert session_facts(s).tool_search == frozenset({answers[1]})  # only the answer after the search
    assert session_facts(pi).tool_search == frozenset()  # a pi tool of that name is not Claude Code's
    why = disagreement(3, 103_399, 16_222, 103_961, True, 4.0, hidden=16_222, tool_search=True)
    assert why is not None and "ToolSearch" in why and "only the system prompt" in why
    assert "ToolSearch" not in (disagreement(3, 103_399, 16_222, 103_961, True, 4.0, hidden=16_222) or "")


def test_dcp_is_looked_for_in_opencode_sessions_only():
    """DCP is an OpenCode plugin: a pi session whose own tool is named ``compress`` did not run it, so
    no disagreement there is put down to DCP's re-rendered tags (and its answers are not scanned for
    the tool, which a long pi session paid for at its first disagreement)."""
    from inspector.cache.facts import session_facts

    b = SessionBuilder()
    b.user("shrink the notes")
    b.assistant("", tools=[("compress", {"path": "notes.md"})])
    b.tool_result("done")
    b.assistant("ok")
    pi = b.session()
    opencode = dataclasses.replace(pi, format="opencode")
    assert session_facts(opencode).uses_dcp() is True
    assert session_facts(pi).uses_dcp() is False
    assert session_facts(pi).tools == () and session_facts(opencode).tools == ("compress",)


def test_a_switch_of_opencode_agent_keeps_only_the_shared_prefix():
    """OpenCode offers each agent only the tools its permissions allow (``session/llm.ts``
    ``resolveTools``): after plan → build the prompt differs right after the shared prefix."""
    b = reading_session(4)
    answers = [x["message"] for x in b.lines if x.get("message", {}).get("role") == "assistant"]
    for k, m in enumerate(answers):
        m["model"], m["provider"] = "gpt-5.5", "openai"
        m["agent"] = "plan" if k < 5 else "build"

    def opencode():  # type: ignore[no-untyped-def]  # the builder writes pi's format; OpenCode's answers name their agent
        return dataclasses.replace(b.session(), format="opencode")

    c = cache_replay(replay(opencode(), ReplaySettings()))
    switch = [x for x in c.steps if x.invalidation and x.invalidation["cause"] == "agent"]
    assert [x.step for x in switch] == [5]  # the first build answer, and only it
    assert switch[0].read == c.fit.hidden < c.steps[4].prompt  # only the shared prefix is read
    assert switch[0].invalidation["brokenAtEntryIndex"] == switch[0].entry_index
    # the same session in one agent reads the whole previous prompt there
    pi = cache_replay(replay(b.session(), ReplaySettings()))  # a pi file's answers name no agent: not read
    assert not any(x.invalidation and x.invalidation["cause"] == "agent" for x in pi.steps)
    for m in answers:
        m["agent"] = "build"
    c = cache_replay(replay(opencode(), ReplaySettings()))
    assert not any(x.invalidation and x.invalidation["cause"] == "agent" for x in c.steps)
    assert c.steps[5].read > c.fit.hidden


def _opus_at_calls_4_and_5(b: SessionBuilder) -> SessionBuilder:
    answers = (x["message"] for x in b.lines if x.get("message", {}).get("role") == "assistant")
    for k, m in enumerate(answers):
        m["model"] = "claude-opus-4-5" if k in (4, 5) else SONNET
    return b


def test_each_model_has_its_own_cache_and_a_switch_back_reads_what_it_left():
    """The model is part of the cache key (Claude Code's prompt-caching page: a /model switch
    invalidates the whole request): the first call of another model reads nothing; going back to
    the first model while its entries live, with the context only grown since, reads the prefix its
    last call cached."""
    c = cache_replay(replay(_opus_at_calls_4_and_5(reading_session(4)).session(), ReplaySettings()))
    cause = [x.invalidation and x.invalidation["cause"] for x in c.steps]
    assert cause[4] == cause[6] == "model" and cause[5] is None
    assert c.steps[4].read == 0 and c.steps[4].invalidation["tokensRewritten"] == c.steps[3].prompt
    assert c.steps[5].read == c.steps[4].prompt  # the new model's own prefix, as usual
    assert c.steps[6].read == c.steps[3].prompt  # back to Sonnet: what its last call cached
    assert c.steps[7].read == c.steps[6].prompt
    # one model throughout: no switch, every call reads the previous prompt
    same = cache_replay(replay(reading_session(4).session(), ReplaySettings()))
    assert not any(x.invalidation for x in same.steps) and same.steps[4].read == same.steps[3].prompt
    # back after the first model's entries expired (each message 100 s after the previous one)
    late = _opus_at_calls_4_and_5(reading_session(4, gap_ms=100_000))
    c = cache_replay(replay(late.session(), ReplaySettings()))
    assert c.steps[6].read == 0 and c.steps[6].invalidation["cause"] == "model"


def test_a_model_switched_back_to_after_a_change_reads_only_its_system_prompt_and_tools():
    from inspector.cache.anthropic import rule as anthropic_rule
    from inspector.cache.report import _own_cache

    rule = anthropic_rule(SONNET, "short")
    last = (50_000, 10, 1_000.0, 3)  # its last call: a 50,000-token prompt, 3 changes in by then
    assert _own_cache(last, 3, 1_100.0, 300.0, 12_000, rule) == (49_990, True)  # only grown since
    assert _own_cache(last, 4, 1_100.0, 300.0, 12_000, rule) == (12_000, True)  # changed: the hidden prefix
    assert _own_cache(last, 3, 1_400.0, 300.0, 12_000, rule)[1] is False  # its entries expired
    assert _own_cache(None, 3, 1_100.0, 300.0, 12_000, rule) == (0, True)  # never answered before


def _reading_with_levels(
    levels: dict[int, str], model: str = SONNET, provider: str = "anthropic"
) -> SessionBuilder:
    """:func:`reading_session`'s four turns, with a thinking level change before turn ``k`` for each
    ``k: level`` of ``levels``."""
    b = SessionBuilder()
    for k in range(4):
        if k in levels:
            b.add("thinking_level_change", thinkingLevel=levels[k])
        b.user(f"turn {k}: look at module {k}")
        b.assistant("", tools=[("read", {"path": f"src/m{k}.py"})])
        b.tool_result(" ".join(f"def f{k}_{j}(x): return x * {j} + {k}" for j in range(900)))
        b.assistant(f"module {k} multiplies")
    for x in b.lines:
        if x.get("message", {}).get("role") == "assistant":
            x["message"].update(model=model, provider=provider)
    return b


def test_a_change_of_thinking_level_keeps_only_the_system_prompt_and_tools_cached_on_anthropic():
    """Anthropic: changing the thinking parameters invalidates the cached messages (the system prompt
    and tools stay cached). The call after a change of level reads nothing of the conversation; a
    level set again to what it was, or set before the first call, changes nothing; OpenAI is left
    as it was (no source says)."""
    from inspector.cache.facts import thinking_changes

    b = _reading_with_levels({0: "medium", 2: "high"})
    s = b.session()
    r = replay(s, ReplaySettings())
    c = cache_replay(r)
    (inv,) = c.invalidations
    change = next(i for i, e in enumerate(s.entries) if getattr(e, "thinkingLevel", None) == "high")
    assert (inv.step, inv.invalidation["cause"], inv.invalidation["brokenAtEntryIndex"]) == (
        4,
        "thinking",
        change,
    )
    assert inv.read == 0 and c.steps[5].read == inv.prompt  # then the new level's prefix, as usual
    assert thinking_changes(s, r.path, [st.entry_index for st in r.steps]) == {r.steps[4].entry_index: change}
    same = _reading_with_levels({0: "medium", 2: "medium"}).session()  # set again to what it was
    assert not cache_replay(replay(same, ReplaySettings())).invalidations
    # the level changed with a switch to Opus: back on Sonnet, its cache holds the old level's messages
    both = _opus_at_calls_4_and_5(_reading_with_levels({0: "medium", 2: "high"})).session()
    c = cache_replay(replay(both, ReplaySettings()))
    assert c.steps[4].invalidation["cause"] == "model" and c.steps[6].read == 0
    gpt = _reading_with_levels({0: "medium", 2: "high"}, "gpt-5.5", "openai").session()
    assert not any(x.invalidation for x in cache_replay(replay(gpt, ReplaySettings())).steps)


def test_the_opencode_importer_keeps_each_answers_agent():
    import json

    from inspector.importers import parse_any

    path = SAMPLES / "opencode-session.json"
    data = json.loads(path.read_text())
    agents = [m["info"].get("agent") for m in data["messages"] if m["info"]["role"] == "assistant"]
    s = parse_any(path.read_bytes(), path.name)
    got = {
        getattr(e.message, "agent", None)
        for e in s.entries
        if isinstance(getattr(e, "message", None), AssistantMessage)
    }
    assert got == set(agents) == {"build"}


# -- the cheaper paths give what the plain ones give --------------------------------------------


@pytest.mark.parametrize(
    "path",
    sorted(SAMPLES.glob("*.json*")) + sorted(FIXTURES.glob("*.jsonl")),
    ids=lambda p: p.name,
)
def test_the_recorded_context_walk_is_the_as_recorded_replays_sizes(path):
    """A what-if's size fit walks the as-recorded context instead of replaying it: the same calls and
    the same token counts as the as-recorded replay, on every branch and counter."""
    from inspector.importers import load_any
    from inspector.replay.as_sent import recorded_context_tokens

    s = load_any(path)
    for leaf in [None, *list(s.leaves)[:3]]:
        for counter in ("pi", "tiktoken"):
            r = replay(s, ReplaySettings(counter=counter, leaf=leaf))
            assert recorded_context_tokens(s, counter, leaf) == (
                [x.entry_index for x in r.steps],
                [x.tokens for x in r.steps],
            )
    assert recorded_context_tokens(s, "usage") is None  # pi's usage-based size: the replay's own


def _agent_cleared() -> SessionBuilder:
    """Outputs an agent cleared itself (OpenCode's ``time.compacted``) at the edges of the recorded
    strategy's clock: an answer with no timestamp (the call's time is then the newest message's), a
    call stamped earlier than the one before (an output cleared at the first is sent whole again),
    a mark after every call, and a compaction that keeps an output cleared before it."""
    b = SessionBuilder()
    t0 = 1767225600000
    b.user("start " + "u " * 300)
    for k in range(8):
        b.assistant(f"step {k}", tools=[("read", {"path": f"f{k}.py"})])
        b.tool_result(f"body {k} " + "x " * (400 + 50 * k))
    results = [x["message"] for x in b.lines if x.get("message", {}).get("role") == "toolResult"]
    answers = [x["message"] for x in b.lines if x.get("message", {}).get("role") == "assistant"]
    for k, at in ((0, t0 + 4_500), (1, t0 + 6_500), (2, t0 + 10**9), (4, t0 + 12_500), (5, t0 + 12_500)):
        results[k]["details"] = {"opencode": {"compacted": at}}
    del answers[3]["timestamp"]
    answers[5]["timestamp"] = answers[4]["timestamp"] - 9_000  # a clock that went back
    kept = next(x["id"] for x in b.lines if x.get("message") is results[4])
    b.add("compaction", summary="what came before", firstKeptEntryId=kept, tokensBefore=4_000)
    b.user("go on " + "u " * 100)
    b.assistant("more", tools=[("read", {"path": "g.py"})])
    b.tool_result("gee " * 300)
    b.assistant("done")
    return b


def test_the_recorded_context_walk_takes_out_what_the_agent_cleared_as_the_replay_does(monkeypatch):
    """A what-if on a file that records the agent's own pruning fits its sizes on the context after
    that pruning: walked, not replayed, with each cleared output taken out at the calls the
    "recorded" strategy's runner clears it at (the same integers as that replay, under both
    counters, DCP's compresses included: the walk gives that strategy's runner the context as it
    grows), and the fit the same."""
    from inspector.cache import fit as fit_memo
    from inspector.cache.fit import session_fit
    from inspector.importers import load_any
    from inspector.replay.as_sent import recorded_context_tokens

    s = dataclasses.replace(_agent_cleared().session(), format="opencode")
    sample = load_any(SAMPLES / "opencode-session.json")
    for session in (s, sample, load_any(SAMPLES / "claude-code-session.jsonl")):
        for counter in ("pi", "tiktoken"):
            r = replay(session, ReplaySettings(counter=counter, strategy="recorded"))
            assert r.metrics.tokens_pruned > 0
            walked = recorded_context_tokens(session, counter, None, pruned=True)
            assert walked == ([x.entry_index for x in r.steps], [x.tokens for x in r.steps])
            assert walked[1] != recorded_context_tokens(session, counter)[1]  # type: ignore[index]
    sent = replay(s, ReplaySettings(strategy="recorded")).steps
    assert len({st.tokens_before_pruning - st.tokens for st in sent}) > 3  # cleared, whole again, kept

    for session in (s, sample):
        fit = session_fit(replay(session, ReplaySettings(strategy="recorded")))  # made on the replay
        fit_memo._FITS.pop(session), fit_memo._BASES.pop(session)
        what_if = replay(session, ReplaySettings(strategy="recorded", compaction="pi"))
        with monkeypatch.context() as m:
            m.setattr("inspector.replay.replay", lambda *a, **k: pytest.fail("replayed for the fit"))
            assert session_fit(what_if) == fit

    b = _agent_cleared()  # a DCP compress too: its range left out, its summary put in
    next(x for x in b.lines if x.get("message", {}).get("role") == "toolResult")["message"]["details"] = {
        "dcp": {"blocks": [{"block": 1, "first": 1, "last": 2, "summary": "s"}]}
    }
    dcp = dataclasses.replace(b.session(), format="opencode")
    r = replay(dcp, ReplaySettings(strategy="recorded"))
    walked = recorded_context_tokens(dcp, "pi", None, True)
    assert walked == ([x.entry_index for x in r.steps], [x.tokens for x in r.steps])
    assert walked != recorded_context_tokens(s, "pi", None, True)


def _cleared_at_random(seed: int) -> SessionBuilder:
    """A session whose outputs the agent cleared, with every edge of the recorded strategy's clock
    at random: marks before, at and after the calls (ties included), answers without a timestamp
    and with clocks that go back, messages without a timestamp, outputs with details but no mark,
    a custom message, and compactions that keep cleared outputs or none."""
    import random

    rng = random.Random(seed)
    b = SessionBuilder()
    t0 = 1767225600000
    times = [t0 + 1_000 * k for k in range(0, 60, 3)]
    ids: list[str] = []
    for _ in range(rng.randint(10, 30)):
        pick = rng.random()
        if pick < 0.08 and ids:
            b.add(
                "compaction",
                summary="s " * rng.randint(1, 40),
                firstKeptEntryId=rng.choice(ids),
                tokensBefore=1,
            )
            continue
        if pick < 0.12:
            b.add("custom_message", customType="note", content="n " * rng.randint(1, 50), display=True)
            continue
        ids.append(b.user("u " * rng.randint(1, 80)))
        for _ in range(rng.randint(1, 3)):
            stamp = rng.choice([None, rng.choice(times), t0 + rng.randint(0, 60_000)])
            a = b.assistant(f"a{b.n}", tools=[("read", {"path": "f.py"})])
            if stamp is None:
                del b.lines[-1]["message"]["timestamp"]
            else:
                b.lines[-1]["message"]["timestamp"] = stamp
            ids.append(a)
            details = rng.choice([None, {}, {"opencode": {"compacted": rng.choice(times)}}, {"opencode": {}}])
            kw = {} if details is None else {"details": details}
            ids.append(b.tool_result("x " * rng.randint(1, 300), **kw))
            if rng.random() < 0.2:
                del b.lines[-1]["message"]["timestamp"]
    b.assistant("end")
    return b


@pytest.mark.parametrize("seed", range(40))
def test_the_cleared_outputs_walk_gives_the_runners_integers(seed):
    """Without a DCP compress, the as-recorded walk sums what the marks at or before each call's
    time save (:func:`_cleared_walk`) instead of running the "recorded" strategy's runner: the
    same integers as the runner's walk, under both counters, on sessions with every edge of the
    clock at random; and it leaves a DCP compress to the runner."""
    from inspector.replay.as_sent import _cleared_walk, _walk
    from inspector.replay.counters import session_counter

    s = dataclasses.replace(_cleared_at_random(seed).session(), format="opencode")
    path = s.path(None)
    on_path = [s.entries[i] for i in path]
    for counter in ("pi", "tiktoken"):
        counted = session_counter(s, counter)
        got = _cleared_walk(on_path, path, counted)
        assert got is not None and got == _walk(on_path, path, counted, True)
    if seed == 0:  # the generator does make sessions where clearing changes what is sent
        assert got[1] != _walk(on_path, path, counted, False)[1]
    b = _cleared_at_random(seed)
    b.assistant("compress", tools=[("compress", {})])
    b.tool_result("done", details={"dcp": {"blocks": [{"block": 1, "first": 1, "last": 2, "summary": "s"}]}})
    b.assistant("after")
    dcp = dataclasses.replace(b.session(), format="opencode")
    path = dcp.path(None)
    assert _cleared_walk([dcp.entries[i] for i in path], path, session_counter(dcp, "pi")) is None


def test_a_what_ifs_fit_is_the_one_the_as_recorded_replay_gives():
    from inspector.cache.fit import _FITS, session_fit

    s = load_session(SAMPLES / "coding-session.jsonl")
    what_if = replay(s, ReplaySettings(compaction="pi", context_window=60_000))
    walked = session_fit(what_if)
    _FITS.pop(s)
    assert session_fit(replay(s, ReplaySettings())) == walked


def test_column_readers_agree_with_the_plain_conversions():
    """Stamps and times read as a column (a short path for the usual values) give what the
    per-value conversions give, odd values included."""
    from inspector.cache.timing import iso_ms, iso_times, start_times
    from inspector.numbers import finite_ms
    from inspector.session.tree import iso_to_ms

    stamps = ["2026-03-02T09:15:18.730Z", "2026-03-02T09:15:18Z", "2026-03-02T09:15:18.123456Z"]
    odd = [*stamps, "2026-03-02T09:15:18+02:00", "Z", "2026-13-02T09:15:18Z", "", None, 17, "2026-03-02"]
    for col in (stamps, odd, ["nonsenseZ"]):
        assert iso_times(col) == [iso_to_ms(v) for v in col]
        assert [iso_ms(v) for v in col] == [iso_to_ms(v) for v in col]
    for col in ([1_772_442_917_501, 0, -5], [1, 2.5, True, 10**400, float("nan"), None, "x"]):
        assert start_times(col) == [finite_ms(v) for v in col]


PLAIN_USAGE = [
    {
        "input": 10,
        "cacheRead": 2_000,
        "cacheWrite": 0,
        "output": 5,
        "cost": {"input": 3e-5, "cacheRead": 6e-4},
    },
    {"input": 7, "cacheRead": 0, "cacheWrite": 900, "output": 0},
    {
        "input": 3,
        "cacheRead": 300_000,
        "cacheWrite": 1,
        "output": 2,
        "cost": {"input": 0, "cacheRead": 1e-3, "cacheWrite": 2},
    },
]
ODD_USAGE = [
    *PLAIN_USAGE,
    None,
    {
        "input": 1.5,
        "cacheRead": 10**30,
        "cacheWrite": -3,
        "output": 1e300,
        "cost": {"input": "x", "cacheRead": 1e300},
    },
    {"input": 2**53 + 7, "cacheRead": 0, "cacheWrite": 0, "output": 0, "cost": {"cacheWrite": 10**20}},
    {"input": 100, "cacheRead": 5, "cacheWrite": 5, "output": 1, "cost": {}},
]


def _usage_session(rows):  # type: ignore[no-untyped-def]
    b = SessionBuilder()
    for k, u in enumerate(rows):
        b.user(f"question {k}")
        b.msg(
            "assistant",
            content=[{"type": "text", "text": "ok"}],
            model=("gpt-5.4", "m")[k % 2],
            **({"usage": u} if u else {}),
        )
    return b.session()


@pytest.mark.parametrize("rows", [PLAIN_USAGE, ODD_USAGE], ids=["plain", "odd"])
def test_the_answers_columns_are_the_per_value_conversions(rows):
    """The session's answers read as columns (:mod:`inspector.session.answers`: a short path for a
    session of plain numbers) give, per answer, what converting each value on its own gives; the
    rate sums made a column at a time are the ones added answer by answer."""
    from inspector.cache.prices import RateSums, as_float
    from inspector.session.answers import answers

    s = _usage_session(rows)
    got = answers(s)
    num = got.numbers()
    assert got.plain == (rows is PLAIN_USAGE)
    assert [s.entries[i].message for i in got.index] == got.messages and len(got.messages) == len(rows)
    sums = RateSums()
    for k, m in enumerate(got.messages):
        u = m.usage
        tokens = (as_float(u.input), as_float(u.cacheRead), as_float(u.cacheWrite)) if u else (0.0, 0.0, 0.0)
        assert tuple(col[k] for col in num.tokens) == tokens
        assert tuple(col[k] for col in num.counts) == (tuple(map(int, tokens)) if u else (None, None, None))
        assert num.output[k] == (as_float(u.output) if u else 0.0)
        cost = u.cost if u else None
        assert got.costed[k] == isinstance(cost, dict)
        vals = [cost.get(x) for x in ("input", "cacheRead", "cacheWrite")] if isinstance(cost, dict) else []
        dollars = tuple(map(as_float, vals)) if vals else (0.0, 0.0, 0.0)
        assert tuple(col[k] for col in num.dollars) == dollars
        assert num.paid[k] == any(isinstance(v, (int, float)) for v in vals)
        if got.costed[k]:
            sums.add(m.model or "", tokens, dollars)
    together = RateSums()
    rows_costed = [k for k, c in enumerate(got.costed) if c]
    together.add_all([m.model or "" for m in got.messages], num.tokens, num.dollars, rows_costed)
    assert together.sums == sums.sums and list(together.sums) == list(sums.sums)


@pytest.mark.parametrize("rows", [PLAIN_USAGE, ODD_USAGE], ids=["plain", "odd"])
def test_each_answers_price_is_its_recorded_rate(rows):
    """The replay's per-answer input price, read from the answer columns, is the rate each answer's
    own usage and cost give (:func:`inspector.pricing.recorded_rate`), the mean where it has none."""
    from inspector.pricing import input_price_per_token, recorded_rate

    s = _usage_session(rows)
    price = input_price_per_token(s)
    ms = [e.message for e in s.entries if isinstance(e.message, AssistantMessage)]
    own = [r for r in map(recorded_rate, ms) if r is not None]
    assert own and len(own) < len(ms)  # some answers priced by their own rate, some by the mean
    for m in ms:
        r = recorded_rate(m)
        assert price(m) == (r if r is not None else sum(own) / len(own))


def test_the_times_each_answer_used_the_cache_are_used_at_of_each():
    """The column of cache-use times is :func:`used_at` answer by answer, odd values included."""
    from inspector.cache.timing import used_at, used_times

    starts = [1_000.0, None, 5_000.0, 9_000.0, 2_000.0, 3_000.0]
    ends = [4_000.0, 6_000.0, None, 8_000.0, 2_000.0, 90_000.0]
    outputs = [300.0, 10.0, 5.0, 1.0, 0.0, 7_777.0]
    for rate in (None, 0.0, -1.0, 37.3, 1e-3):
        assert used_times(starts, ends, outputs, rate) == list(
            map(used_at, starts, ends, outputs, [rate] * 6)
        )


def test_a_counters_counts_are_its_count_of_each_message():
    """``CachedCounter.counts`` (the primed session's messages looked up at once) gives ``count``
    of each message, a message the session does not hold included."""
    from inspector.replay import session_counter
    from inspector.session.models import UserMessage

    s = load_session(SAMPLES / "coding-session.jsonl")
    counter = session_counter(s, "pi")
    msgs = [e.message for e in s.entries if getattr(e, "message", None) is not None]
    stranger = UserMessage(content="a message from elsewhere " * 40)
    for col in (msgs, [*msgs[:3], stranger, *msgs[3:6]], []):
        assert counter.counts(col) == [counter.count(m) for m in col]
    assert counter.counts([stranger]) != [0]


def test_each_rules_split_follows_its_documented_arithmetic():
    """Every family's split, over a grid of prompts, reusable prefixes, warmth and tails, against
    the rule written out plainly: read the reusable prefix (at most the prompt) when warm, nothing
    below the minimum, rounded down to the minimum plus whole steps; Anthropic's tail uncached and
    the rest written; without a cache everything uncached."""
    from inspector.cache.rule import NO_CACHE

    def plain(r, prompt, reusable, warm, tail):  # type: ignore[no-untyped-def]
        if not r.enabled or r.family == "none":
            return 0, 0, prompt
        read = min(reusable, prompt) if warm else 0
        if read < r.min_tokens:
            read = 0
        elif r.granularity > 1:
            read = r.min_tokens + (read - r.min_tokens) // r.granularity * r.granularity
        if not r.writes:
            return read, 0, prompt - read
        if prompt < r.min_tokens:
            return read, 0, prompt - read
        uncached = max(0, min(tail, prompt - read))
        return read, prompt - read - uncached, uncached

    rules = [anthropic.rule(SONNET), anthropic.rule("claude-opus-4-5", "long"), openai.rule(0.1), NO_CACHE]
    sizes = [0, 1, 900, 1_023, 1_024, 1_025, 1_151, 1_152, 4_095, 4_096, 10_000, 130_777]
    for r in rules:
        for prompt in sizes:
            for reusable in sizes:
                for warm in (True, False):
                    for tail in (0, 7, 5_000):
                        assert r.split(prompt, reusable, warm, tail) == plain(r, prompt, reusable, warm, tail)


def test_answers_classes_see_subclasses_as_their_base():
    """The answers' walk reads classes at C speed; a subclass of an entry or message class (none in
    the engine today) still counts as its base."""
    from inspector.session.answers import _classes
    from inspector.session.models import UserMessage

    class Sub(UserMessage):
        pass

    m = Sub(role="user", content="hi", timestamp=1)
    a = AssistantMessage(role="assistant", content=[], timestamp=2)
    assert _classes([a, m, "x"], (AssistantMessage, UserMessage)) == [AssistantMessage, UserMessage, None]
    assert _classes([a, "x"], (AssistantMessage, UserMessage)) == [AssistantMessage, str]


def test_a_read_collapse_where_the_prompt_fell_short_of_the_file_is_named_so():
    """The shared pi transcripts: at a call that read only the system prefix, the recorded prompt
    shrank by 40k tokens while the file only appended a tool output; something the file does not
    record changed what was sent (as ``inspector check`` flags it), not an eviction."""
    from inspector.cache.causes import disagreement

    b = SessionBuilder()
    hidden, prompts = 10_000, []
    for k in range(12):
        b.user(f"q{k} " + "word " * 8_000)  # ~10k tokens a turn
        prompt = hidden + 10_000 * (k + 1) - (30_000 if k == 6 else 0)  # call 6 sent 30k fewer
        read = hidden if k == 6 else (prompts[-1] if prompts else 0)
        b.assistant("ok", usage=100)
        b.lines[-1]["message"]["usage"].update(input=10, cacheRead=read, cacheWrite=prompt - read - 10)
        prompts.append(prompt)
    c = cache_replay(replay(_sonnet(b).session(), ReplaySettings()))
    why = c.steps[6].disagreement
    assert why is not None and why.startswith("only the system prompt and tools were read")
    assert (
        "about 30k tokens smaller than the file explains (it shrank by 20,000 tokens where the file adds 10,"
        in why
    )
    assert [s.step for s in c.steps if s.disagreement] == [6]
    # within the tokenizer's drift, or under the check's threshold, it is not
    assert "smaller than" not in (
        disagreement(5, 90_000, 9_600, 91_000, True, 12.0, hidden=9_600, fewer=None) or ""
    )


def test_a_compactions_summarisation_request_is_billed_by_pis_request_and_the_family_rule():
    """pi sends the summarised span as new text in one request (two for a split turn), through
    pi-ai's default cache options: written whole on Anthropic, plain input on OpenAI. The billed
    cost adds it; the recorded check compares the calls alone."""
    from inspector.importers import load_any

    s = load_session(SAMPLES / "coding-session.jsonl")  # pi, Anthropic: one recorded compaction
    r = replay(s, ReplaySettings())
    c = cache_replay(r)
    (call,) = c.summaries
    assert (call.step, call.entry_index, call.simulated, call.requests) == (66, 147, False, 1)
    assert call.write == call.prompt > 50_000 and call.uncached == 0 and call.shape == "pi's request"
    assert r.session.entries[c.steps[66].entry_index].message.model == "claude-opus-4-5"
    rate = c.rates["claude-opus-4-5"]  # the model of the call it came before
    assert call.cost == pytest.approx(call.prompt * rate.write)
    m = c.metrics()
    assert m["billedCostUsd"] == pytest.approx(sum(x.cost for x in c.steps) + call.cost, abs=1e-5)
    assert m["summarisationCostUsd"] == pytest.approx(call.cost, abs=1e-6) and m["summarisationRequests"] == 1
    rec = [x for x in c.steps if x.recorded_cost is not None]
    assert m["billedCostError"] == pytest.approx(
        (sum(x.cost for x in rec) - m["recordedBilledCostUsd"]) / m["recordedBilledCostUsd"], abs=1e-4
    )
    assert c.annotate(r.as_dict())["cache"]["summarisation"]["calls"] == [call.as_dict()]
    # what-if: pi's own compactions at a smaller window, a split turn's two requests among them
    w = cache_replay(replay(s, ReplaySettings(compaction="pi", context_window=64_000)))
    assert [x.requests for x in w.summaries] == [2, 1] and all(x.simulated for x in w.summaries)
    assert cache_replay(replay(s, ReplaySettings(compaction="never"))).summaries == ()
    # OpenAI: nothing written, plain input
    codex = load_any(SAMPLES / "codex-session.jsonl")
    (oc,) = cache_replay(replay(codex, ReplaySettings(strategy="recorded"))).summaries
    assert oc.write == 0 and oc.uncached == oc.prompt > 1_024 and oc.shape.startswith("Codex's local")
    # another agent's compaction is priced as pi's, said so
    (cc,) = cache_replay(
        replay(s, ReplaySettings(compaction="claude-code", context_window=64_000))
    ).summaries[:1]
    assert "not modelled" in cc.shape


def test_codexs_remote_compaction_is_the_conversations_own_request():
    """A Codex ``compacted`` line with no summary text is the server's compaction: Codex sends its
    history with the turn's tools and instructions (codex-rs compact_remote_request.rs), so the
    prefix the last call cached is read and only what followed it is new input."""
    import json as _json

    from inspector.importers import parse_any

    lines = (SAMPLES / "codex-session.jsonl").read_text().splitlines()
    remote = []
    for line in lines:
        d = _json.loads(line)
        if d["type"] == "compacted":
            d["payload"]["message"] = ""
        remote.append(_json.dumps(d))
    s = parse_any("\n".join(remote).encode(), "remote.jsonl")
    c = cache_replay(replay(s, ReplaySettings(strategy="recorded")))
    (sc,) = c.summaries
    assert sc.shape.startswith("Codex's remote compaction") and sc.requests == 1
    before = c.steps[sc.step - 1]
    assert sc.read == before.prompt > 0 and sc.uncached == sc.prompt - sc.read > 0 and sc.write == 0
    rate = next(iter(c.rates.values()))
    assert sc.cost == pytest.approx(sc.read * rate.read + sc.uncached * rate.input)
    # with its summary text, Codex compacted locally: the whole history and the compact prompt,
    # sent without the turn's tools (codex-rs compact.rs): nothing read, all of it new input
    from inspector.cache.summaries import _instructions
    from inspector.tokens import get_counter

    r = replay(load_any_sample("codex-session.jsonl"), ReplaySettings(strategy="recorded"))
    local_c = cache_replay(r)
    (local,) = local_c.summaries
    assert local.shape.startswith("Codex's local compaction") and local.read == local.write == 0
    (rec,) = r.summaries
    counter = get_counter(r.settings.counter)
    assert (
        local.prompt
        == local.uncached
        == local_c.fit.size(rec.tokens_before + _instructions(counter, "history", "codex"))
    )


def load_any_sample(name: str):  # type: ignore[no-untyped-def]
    from inspector.importers import load_any

    return load_any(SAMPLES / name)


def test_opencodes_compaction_request_is_priced_as_its_file_records_it():
    """OpenCode records the answer that wrote the summary (``summary: true``) with its tokens: the
    importer keeps them on the compaction entry, and the request is priced from them."""
    from inspector.importers.opencode import summary_usage

    s = load_any_sample("opencode-session.json")
    (entry,) = [e for e in s.entries if e.type == "compaction"]
    u = summary_usage(entry.details)
    assert u is not None and (u["input"], u["cacheRead"], u["cacheWrite"], u["output"]) == (3, 0, 13_617, 160)
    c = cache_replay(replay(s, ReplaySettings(strategy="recorded")))
    (sc,) = c.summaries
    assert sc.shape == "the agent's own request, as its file records it"
    assert (sc.prompt, sc.read, sc.write, sc.uncached) == (13_620, 0, 13_617, 3)
    rate = c.rates["claude-sonnet-4-5"]
    assert sc.cost == pytest.approx(13_617 * rate.write + 3 * rate.input)


def recorded_reading_session(turns: int = 6, gap_ms: int | None = None) -> SessionBuilder:
    """:func:`reading_session` with the cache usage a provider recorded: prompts that grow unlike the
    replayed tokens (a hidden prefix, a tokenizer three times the estimate, and content the file
    does not hold at every third call), each call reading the previous prompt."""
    b = reading_session(turns, gap_ms)
    prev = 0
    answers = [x["message"] for x in b.lines if x.get("message", {}).get("role") == "assistant"]
    for k, m in enumerate(answers):
        prompt = 15_000 + 6_000 * k + (4_000 if k % 3 == 2 else 0)
        read = prev - 2 if k else 0
        m["usage"] = {
            "input": 2,
            "output": 10,
            "cacheRead": read,
            "cacheWrite": prompt - read - 2,
            "totalTokens": prompt + 10,
        }
        prev = prompt
    return b


def test_a_what_if_that_changes_nothing_prices_every_call_as_recorded():
    """A what-if's prompt is the recorded one plus the fitted size of what it changed: when it changes
    nothing (pruning that finds nothing to prune), every call is priced exactly as the as-recorded
    replay prices it, however badly the size fit follows the recorded prompts."""
    s = recorded_reading_session().session()
    base = cache_replay(replay(s, ReplaySettings()))
    idle = replay(
        s, ReplaySettings(strategy="pi-context-pruning", strategy_settings=(("prune_protect", 1_000_000),))
    )
    assert idle.metrics.tokens_pruned == 0
    c = cache_replay(idle)
    assert base.sizes == "recorded" and c.sizes == "recorded + fitted change"
    fitted = [base.fit.size(st.tokens) for st in idle.steps]
    assert max(abs(f - x.prompt) for f, x in zip(fitted, base.steps, strict=True)) > 3_000  # a poor fit
    assert [(x.prompt, x.read, x.write, x.uncached) for x in c.steps] == [
        (x.prompt, x.read, x.write, x.uncached) for x in base.steps
    ]
    assert c.billed_cost == base.billed_cost


@pytest.mark.parametrize("strategy", ["recorded", "none", "opencode"])
def test_each_call_is_priced_at_the_size_its_overflow_check_reads(strategy):
    """OpenCode cleared some outputs itself. Replayed without that pruning (strategy none), the
    outputs go whole: a what-if, priced from the recorded prompt plus what it sends beyond it, the
    size the replay's overflow check reads (``Step.provider_tokens``), not the recorded prompt."""
    s = load_any(SAMPLES / "opencode-session.json")
    r = replay(s, ReplaySettings(strategy=strategy))
    c = cache_replay(r)
    billed = [k for k, x in enumerate(c.steps) if x.prompt]
    assert billed and all(c.steps[k].prompt == r.steps[k].provider_tokens for k in billed)
    own = cache_replay(replay(s, ReplaySettings(strategy="recorded")))
    if strategy == "recorded":
        assert c.sizes == "recorded" and c.departs is None
    else:
        assert c.sizes == "recorded + fitted change" and c.departs is not None
    if strategy == "none":  # the cleared outputs are sent, and paid for, whole again
        assert sum(x.prompt for x in c.steps) > sum(x.prompt for x in own.steps)
        assert c.billed_cost > own.billed_cost


def test_a_pruning_what_if_sends_the_recorded_prompt_less_what_it_pruned():
    s = recorded_reading_session().session()
    r = replay(s, PRUNE_EVERY_TURN)
    c = cache_replay(r)
    assert r.metrics.tokens_pruned > 0
    scale = c.fit.scale
    for st, x in zip(r.steps, c.steps, strict=True):
        assert x.prompt == st.recorded_input + round(scale * (st.tokens - st.tokens_before_pruning))
    pruned = [x for x, st in zip(c.steps, r.steps, strict=True) if st.tokens < st.tokens_before_pruning]
    assert pruned and all(
        x.prompt < st.recorded_input for x, st in zip(c.steps, r.steps, strict=True) if x in pruned
    )
    assert c.invalidations and c.invalidations[0].invalidation["cause"] == "prune"


def test_the_sizes_of_a_file_whose_agent_pruned_are_fitted_on_what_it_sent():
    """OpenCode cleared the first two outputs itself (``time.compacted``): its recorded prompts
    were measured on the context after that, so the size fit and a what-if's base are made on it,
    not on the context before the agent's pruning."""
    from inspector.cache.fit import _BASES, _FITS, agent_pruned, base_tokens, session_fit
    from inspector.replay.sizes import fit_columns

    b = recorded_reading_session(6, gap_ms=1_000)
    results = [x["message"] for x in b.lines if x.get("message", {}).get("role") == "toolResult"]
    cleared_at = results[3]["timestamp"]
    for m in results[:2]:
        m["details"] = {"opencode": {"compacted": cleared_at}}
    s = dataclasses.replace(b.session(), format="opencode")  # the builder writes pi's format
    assert agent_pruned(s) and not agent_pruned(b.session())  # pi records no pruning: not looked for
    sent = replay(s, ReplaySettings(strategy="recorded"))
    assert sent.metrics.tokens_pruned > 0
    recorded = [st.recorded_input for st in sent.steps]
    own = fit_columns([st.tokens for st in sent.steps], recorded)
    before = fit_columns([st.tokens_before_pruning for st in sent.steps], recorded)
    assert own.scale != before.scale
    for settings in (ReplaySettings(strategy="recorded"), ReplaySettings(), ReplaySettings(compaction="pi")):
        _FITS.pop(s, None), _BASES.pop(s, None)
        r = replay(s, settings)
        assert session_fit(r)[0].scale == own.scale
        assert base_tokens(r) == {st.entry_index: st.tokens for st in sent.steps}


def _routed_session() -> SessionBuilder:
    """An OpenAI session (gpt-4.1) whose every call reads the previous prompt, but for two calls the
    provider's cache servers decided: call 6 reads only the 10k-token prefix every request shares,
    call 9 what call 6 had sent (an older copy); nothing in the file changes at either."""
    b = SessionBuilder()
    hidden, prompts = 10_000, []
    for k in range(12):
        b.user(f"q{k} " + "word " * 8_000)  # ~10k tokens a turn
        prompt = hidden + 10_000 * (k + 1)
        read = prompts[-1] - prompts[-1] % 128 if prompts else 0
        if k == 6:
            read = hidden
        elif k == 9:
            read = prompts[6] - prompts[6] % 128
        b.assistant("ok", usage=100, provider="openai", api="openai-responses", model="gpt-4.1")
        b.lines[-1]["message"]["usage"].update(input=prompt - read, cacheRead=read)
        prompts.append(prompt)
    return b


def test_reads_the_cache_servers_decided_are_named_and_their_share_of_the_error_is_told_apart():
    """A read of only the shared prefix, or of an older copy, with nothing changed in the file: the
    provider's cache servers decided it (OpenAI's routing), no model of the prompt can. The check
    names both, cites OpenAI's routing and the reported floor reads, and reports their share of the
    total read error apart, so that the rest of the calls can be judged on their own."""
    from inspector.cache.causes import server_side
    from inspector.ui.cache_view import verdict

    c = cache_replay(replay(_routed_session().session(), ReplaySettings()))
    dis = {s.step: s.disagreement for s in c.steps if s.disagreement}
    assert sorted(dis) == [6, 9]
    assert (
        "only the system prompt and tools" in dis[6] and "#20301" in dis[6] and "prompt_cache_key" in dis[6]
    )
    assert "3 calls back" in dis[9] and server_side(dis[6]) and server_side(dis[9])
    m = c.metrics()
    recorded = sum(s.recorded_read for s in c.steps if s.recorded_read is not None)
    gap = sum(c.steps[k].read - c.steps[k].recorded_read for k in (6, 9))
    assert m["serverSideCalls"] == 2 and gap > 0
    assert m["cacheReadServerSideError"] == round(gap / recorded, 4)
    assert abs(m["cacheReadTotalError"] - m["cacheReadServerSideError"]) < 0.0005  # the rest agree
    line = verdict(m, 2)
    assert line is not None and "2 of them, where the read stopped at the prefix every request shares" in line
    assert "without them the reads are off by 0.0%" in line
    # an Anthropic session's floor read is the same kind, without OpenAI's routing note
    b = _routed_session()
    for x in b.lines:
        if x.get("message", {}).get("role") == "assistant":
            x["message"].update(provider="anthropic", api="anthropic-messages", model=SONNET)
    why = cache_replay(replay(b.session(), ReplaySettings())).steps[6].disagreement or ""
    assert "only the system prompt and tools" in why and server_side(why) and "#20301" not in why


def test_a_session_that_never_recorded_a_cache_read_says_so_once_for_every_call_that_read_nothing():
    """An OpenCode export whose every call records a read of 0 (a provider that does not cache or
    does not report it): where the model predicts a read, the cause is the session's, not a cache
    copy of an earlier prompt, nor DCP's tags; one call that read something brings the per-call
    causes back."""
    from inspector.cache.causes import NO_READS, OLDER_COPY
    from tests.support.opencode_export import Export

    def export(read_at: int | None) -> Export:
        e = Export()
        for k in range(8):
            e.user(f"step {k}")
            e.answer(f"answer {k}", prompt=2000 + 600 * k)
        if read_at is not None:
            e.messages[2 * read_at + 1]["parts"][-1]["tokens"]["cache"]["read"] = 1024
        return e

    steps = cache_replay(replay(export(None).session(), ReplaySettings())).steps
    causes = [st.disagreement for st in steps]
    assert [st.recorded_read for st in steps] == [0] * 8
    assert [st.read > 0 for st in steps] == [False] + [True] * 7
    assert causes == [None] + [NO_READS] * 7
    steps = cache_replay(replay(export(1).session(), ReplaySettings())).steps
    causes = [st.disagreement for st in steps]
    assert NO_READS not in causes
    assert all(c is not None and OLDER_COPY not in c for c in causes[2:])


def test_a_what_if_is_checked_against_the_recorded_reads_only_while_it_sends_the_sessions_contexts():
    """From a what-if's first call whose context departs from the one the session sent, the recorded
    reads are of another context: no disagreement is looked for there (its causes spoke of the
    provider: "a request not in this file had written a longer prefix"), and the CLI and the
    Replay page say why; before it, the calls are priced as the as-recorded replay prices them."""
    import contextlib
    import io

    from inspector.cli import main
    from inspector.ui.cache_view import metrics_rows, story

    path = SAMPLES / "coding-session.jsonl"
    s = load_session(path)
    settings = ReplaySettings(strategy="opencode", compaction="pi", context_window=40_000)
    r, base = replay(s, settings), replay(s, ReplaySettings(strategy="recorded"))
    c, rec = cache_replay(r), cache_replay(base)
    d = next(k for k, (a, b) in enumerate(zip(r.steps, base.steps, strict=True)) if a.tokens != b.tokens)
    assert c.departs == d and 0 < d < len(r.steps) - 1 and rec.departs is None
    assert [(x.read, x.write) for x in c.steps[:d]] == [(x.read, x.write) for x in rec.steps[:d]]
    gaps = [x for x in c.steps[d:] if x.recorded_read is not None and abs(x.read - x.recorded_read) > 5_000]
    assert gaps and all(x.disagreement is None for x in c.steps[d:])  # the gaps are the what-if's own
    assert c.describe()["whatIfDepartsAtStep"] == d
    assert "another one since call" in " ".join(story(r, c, gaps[0].step))
    said = [row["metric"] for row in metrics_rows(c) if "error vs recorded" in row["metric"]]
    assert len(said) == 2 and all(f"a what-if from call {d}: differs by design" in x for x in said)
    assert not [row for row in metrics_rows(rec) if "what-if" in row["metric"]]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(
            [
                "replay",
                str(path),
                "--cache",
                "model",
                "--strategy",
                "opencode",
                "--compaction",
                "pi",
                "--window",
                "40000",
            ]
        )
    assert f"before step {d}: from it on this what-if sends other contexts" in out.getvalue()
    assert "a request not in this file" not in out.getvalue()
