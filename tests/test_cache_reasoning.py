"""OpenAI reasoning models before GPT-5.6 drop the reasoning of earlier turns, so at a new user turn
the cache is read only up to where the previous turn's reasoning began
(:data:`inspector.cache.causes.REASONING`). The sessions are pi v3 files written by hand, their
recorded usage that of such a provider: each call reads the previous prompt in 128-token steps, and
the first call of a turn reads up to the prompt of the previous turn's first call that reasoned."""

from __future__ import annotations

import json

import pytest

from inspector.cache import cache_replay
from inspector.cache.openai import drops_earlier_reasoning
from inspector.doctor import diagnose
from inspector.importers import load_any, parse_any
from inspector.replay import ReplaySettings, replay
from tests.support.paths import SHARED

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z, in ms


def _steps(prompt: int) -> int:
    """What an OpenAI cache read of a ``prompt``-token prefix comes to (1,024 + 128·n)."""
    return 1024 + (prompt - 1024) // 128 * 128


# (role, prompt, read, reasoned): the calls' recorded prompts and reads
CALLS = [
    ("user", 0, 0, False),
    ("call", 12_000, 0, True),  # turn 1 reasons from its first call on
    ("result", 0, 0, False),
    ("call", 30_000, _steps(12_000), True),
    ("result", 0, 0, False),
    ("answer", 36_000, _steps(30_000), False),
    ("user", 0, 0, False),
    ("answer", 36_500, _steps(12_000), True),  # turn 2: turn 1's reasoning dropped after its first prompt
    ("user", 0, 0, False),
    ("answer", 37_000, _steps(36_500), False),  # turn 3: turn 2's one call reasoned after its whole prompt
]
TURN_2 = 3  # the step of turn 2's first call
TURN_1_FIRST = 1  # the entry of turn 1's first answer (the user's request is entry 0)


def reasoning_file(model: str = "gpt-5.5", api: str = "openai-responses", reads: bool = True) -> str:
    """The session above as a pi v3 file (``reads``: with the recorded reads above, else with the
    previous prompt read at each call)."""
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
    ]
    parent, previous = None, 0
    for n, (role, prompt, read, reasoned) in enumerate(CALLS):
        t = T0 + 2_000 * n
        if role == "user":
            m: dict = {
                "role": "user",
                "content": f"request {n}: " + "tidy the parser module " * 40,
                "timestamp": t,
            }
        elif role == "result":
            m = {
                "role": "toolResult",
                "toolCallId": f"c{n - 1}",
                "toolName": "read",
                "content": [{"type": "text", "text": "def parse(x):\n    return x\n" * 300}],
                "isError": False,
                "timestamp": t,
            }
        else:
            read = read if reads else (_steps(previous) if previous else 0)
            content: list[dict] = [{"type": "thinking", "thinking": "plan the next step"}] if reasoned else []
            if role == "call":
                content.append(
                    {"type": "toolCall", "id": f"c{n}", "name": "read", "arguments": {"path": "p.py"}}
                )
            else:
                content.append({"type": "text", "text": "done"})
            m = {
                "role": "assistant",
                "content": content,
                "provider": "openai",
                "api": api,
                "model": model,
                "usage": {
                    "input": prompt - read,
                    "output": 40,
                    "cacheRead": read,
                    "cacheWrite": 0,
                    "totalTokens": prompt + 40,
                },
                "stopReason": "toolUse" if role == "call" else "stop",
                "timestamp": t,
            }
            previous = prompt
        eid = f"e{n}"
        stamp = f"2026-01-01T00:00:{(2 * n + 1) % 60:02d}.000Z"
        lines.append({"type": "message", "id": eid, "parentId": parent, "timestamp": stamp, "message": m})
        parent = eid
    return "".join(json.dumps(x) + "\n" for x in lines)


def _report(text: str):  # type: ignore[no-untyped-def]
    s = parse_any(text.encode(), "reasoning.jsonl")
    return s, cache_replay(replay(s, ReplaySettings()))


def test_the_first_call_of_a_turn_reads_up_to_where_the_previous_turn_reasoned() -> None:
    s, c = _report(reasoning_file())
    assert [x.read for x in c.steps] == [x.recorded_read for x in c.steps]
    assert not c.disagreements()
    (x,) = c.invalidations
    assert x.step == TURN_2 and x.invalidation["cause"] == "reasoning"
    assert x.invalidation["brokenAtEntryIndex"] == TURN_1_FIRST
    lost = _steps(36_000) - _steps(12_000)  # turn 1 after its first prompt
    assert x.invalidation["tokensRewritten"] == lost


@pytest.mark.parametrize(
    ("model", "api"),
    [("gpt-5.6-sol", "openai-responses"), ("gpt-5.5", "openai-completions")],
    ids=["gpt-5.6 keeps earlier reasoning", "chat completions sends none back"],
)
def test_models_and_apis_that_keep_the_prefix_read_on(model: str, api: str) -> None:
    _, c = _report(reasoning_file(model, api, reads=False))
    assert c.steps[TURN_2].read == _steps(36_000) == c.steps[TURN_2].recorded_read
    assert not c.invalidations and not c.disagreements()


def test_the_rule_gates_on_the_model_and_the_api() -> None:
    drops = [m for m in ("o3", "gpt-5", "gpt-5-codex", "gpt-5.1-codex-max", "gpt-5.5", "openai/gpt-5.2")]
    keeps = ["gpt-5.6-sol", "gpt-5.10", "gpt-50", "gpt-4.1", "claude-opus-4-8", ""]
    assert all(drops_earlier_reasoning(m, "openai-responses") for m in drops)
    assert not any(drops_earlier_reasoning(m, "openai-responses") for m in keeps)
    assert not drops_earlier_reasoning("gpt-5.5", "openai-completions")
    assert not drops_earlier_reasoning(None, "openai-responses")


def test_the_doctor_says_the_turn_dropped_the_reasoning() -> None:
    """The recorded drop at turn 2 is a cache break the file now explains (info); the same drop on
    GPT-5.6, which keeps earlier reasoning, is not (warning)."""
    s = parse_any(reasoning_file().encode(), "reasoning.jsonl")
    (f,) = [f for f in diagnose(s).findings if f.kind == "cache-break"]
    assert f.severity == "info" and "drops the reasoning of earlier turns" in f.message
    assert f"after the prompt of entry {TURN_1_FIRST}" in f.message
    assert f.entries[-1] == TURN_1_FIRST  # "Open in Replay" reaches the answer whose reasoning was dropped
    newer = parse_any(reasoning_file("gpt-5.6-sol").encode(), "reasoning.jsonl")
    (g,) = [f for f in diagnose(newer).findings if f.kind == "cache-break"]
    assert g.severity == "warning" and "reasoning" not in g.message.split(";")[1]


CODEX = SHARED / "real-sessions" / "codex" / "entityprocess-agentv-888ba8f699-1.jsonl"


@pytest.mark.skipif(not CODEX.is_file(), reason="../shared/real-sessions is not beside this clone")
def test_the_shared_codex_rollout_reads_where_the_model_says() -> None:
    """entityprocess (Codex, gpt-5.5): three turns' first calls read exactly the prompt of the
    previous turn's first call, in 128-token steps; the session's reads come within 5 % (they were
    +4.0 % when the whole previous prompt was predicted)."""
    c = cache_replay(replay(load_any(CODEX), ReplaySettings(strategy="recorded")))
    dropped = [x for x in c.steps if x.invalidation and x.invalidation["cause"] == "reasoning"]
    exact = [x.recorded_read for x in dropped if x.read == x.recorded_read]
    assert {97_152, 84_864} <= set(exact)
    assert abs(c.read_total_error) < 0.03


def test_the_replay_page_says_which_turn_s_reasoning_broke_the_cache() -> None:
    from inspector.ui.cache_view import invalidation_trace, story

    s = parse_any(reasoning_file().encode(), "reasoning.jsonl")
    r = replay(s, ReplaySettings())
    c = cache_replay(r)
    text = " ".join(story(r, c, TURN_2))
    assert (
        f"the previous turn's reasoning, which OpenAI models before GPT-5.6 drop at a new turn, beginning at entry {TURN_1_FIRST} made"
        in text
    )
    (hover,) = invalidation_trace(r, c)["text"]
    assert (
        hover.startswith("cache invalidated by the previous turn's reasoning")
        and f"at entry {TURN_1_FIRST}:" in hover
    )
