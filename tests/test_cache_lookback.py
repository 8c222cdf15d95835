"""Anthropic looks back at most 20 content blocks from a breakpoint for an earlier cache entry
(:data:`inspector.cache.anthropic.LOOKBACK_BLOCKS`): a call that sent more blocks than that since the
previous request (a wide turn of parallel tool calls) reads only the system prompt and tools. The
sessions are pi v3 files written by hand; their usage is made from the replayed context, so the
fitted hidden prefix is exactly :data:`SYSTEM`."""

from __future__ import annotations

import json

import pytest

from inspector.cache import cache_replay
from inspector.doctor import diagnose
from inspector.importers import parse_any
from inspector.replay import ReplaySettings, replay

SYSTEM = 6_000  # pi's system prompt and tools: no session file stores them
T0 = 1_767_225_600_000


def _session(width: int, floor: bool):  # type: ignore[no-untyped-def]
    """A request, one read (a long file: the cache it leaves is worth a doctor's finding), then an
    answer calling ``width`` tools at once (their results follow),
    then a last answer; ``floor``: that last call's recorded read is only the system prompt and
    tools (else the whole previous prompt)."""
    calls: list[tuple[str, int]] = [("read", 1), ("read", width), ("done", 0)]
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
    ]
    n, parent = 0, None

    def add(message: dict) -> None:  # type: ignore[type-arg]
        nonlocal n, parent
        eid = f"e{n}"
        stamp = f"2026-01-01T00:00:{n:02d}.000Z"
        lines.append(
            {"type": "message", "id": eid, "parentId": parent, "timestamp": stamp, "message": message}
        )
        parent, n = eid, n + 1

    add({"role": "user", "content": "read the modules " * 50, "timestamp": T0})
    for k, (tool, many) in enumerate(calls):
        content: list[dict] = [{"type": "thinking", "thinking": "next", "thinkingSignature": "c2ln"}]
        content += [
            {"type": "toolCall", "id": f"c{k}_{j}", "name": tool, "arguments": {"path": f"m{j}.py"}}
            for j in range(many)
        ] or [{"type": "text", "text": "done"}]
        add(
            {
                "role": "assistant",
                "content": content,
                "provider": "anthropic",
                "api": "anthropic-messages",
                "model": "claude-sonnet-4-5",
                "usage": {"input": 0, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 30},
                "stopReason": "toolUse" if many else "stop",
                "timestamp": T0 + 1_000 * n,
            }
        )
        for j in range(many):
            add(
                {
                    "role": "toolResult",
                    "toolCallId": f"c{k}_{j}",
                    "toolName": tool,
                    "content": [
                        {"type": "text", "text": f"def f{j}():\n    return {j}\n" * (2_500 if k == 0 else 80)}
                    ],
                    "isError": False,
                    "timestamp": T0 + 1_000 * n,
                }
            )
    text = "".join(json.dumps(x) + "\n" for x in lines)
    tokens = [st.tokens for st in replay(parse_any(text.encode(), "w.jsonl"), ReplaySettings()).steps]
    answers = [x for x in lines if x.get("message", {}).get("role") == "assistant"]
    previous = 0
    for k, (a, t) in enumerate(zip(answers, tokens, strict=True)):
        prompt = SYSTEM + t
        read = previous if previous else 0
        if k == len(answers) - 1 and floor:
            read = SYSTEM
        a["message"]["usage"].update(input=2, cacheRead=read, cacheWrite=prompt - 2 - read)
        previous = prompt - 2
    return parse_any("".join(json.dumps(x) + "\n" for x in lines).encode(), "w.jsonl")


def test_a_wide_turn_reads_only_the_system_prompt_and_tools() -> None:
    """Twelve parallel reads: the answer's thinking and 12 tool calls, then 12 results (25 blocks)."""
    s = _session(12, floor=True)
    c = cache_replay(replay(s, ReplaySettings()))
    assert c.fit.hidden == SYSTEM
    assert [x.read for x in c.steps] == [x.recorded_read for x in c.steps]
    assert not c.disagreements()
    (x,) = c.invalidations
    assert x.step == 2 and x.invalidation["cause"] == "lookback"
    wide = next(i for i, e in enumerate(s.entries) if len(getattr(e.message, "content", [])) == 13)
    assert x.invalidation["brokenAtEntryIndex"] == wide  # the answer that called the 12 tools


def test_a_turn_within_the_lookback_reads_on() -> None:
    """Eight parallel reads: 9 + 8 = 17 blocks, within the 20 the provider looks back."""
    c = cache_replay(replay(_session(8, floor=False), ReplaySettings()))
    assert [x.read for x in c.steps] == [x.recorded_read for x in c.steps]
    assert not c.invalidations and not c.disagreements()


@pytest.mark.parametrize("width", [12, 8])
def test_the_doctor_says_why_a_wide_turn_lost_the_cache(width: int) -> None:
    """The same recorded floor read: expected after 25 blocks, unexplained after 17."""
    s = _session(width, floor=True)
    (f,) = [f for f in diagnose(s).findings if f.kind == "cache-break"]
    if width == 12:
        assert f.severity == "info" and "25 content blocks were sent since the previous request" in f.message
    else:
        assert f.severity == "warning" and "content blocks" not in f.message
