"""Claude Code's first call reads the system prompt and tools from the cache other sessions keep
warm (:data:`inspector.cache.causes.WARM_START`: claude-code #94417, #47098; both shared Claude Code
transcripts start so). The transcripts are written by hand in the shape Claude Code 2.1 writes, their
usage made from the replayed context so that the fitted hidden prefix is exactly :data:`SYSTEM`."""

from __future__ import annotations

import pytest

from inspector.cache import cache_replay
from inspector.cache.causes import WARM_START
from inspector.importers import load_any
from inspector.replay import ReplaySettings, replay
from tests.support.claude_code import CachedTranscript
from tests.support.paths import SAMPLES, SHARED

SYSTEM = 16_000  # Claude Code's system prompt and tools: no transcript stores them


def _session(first_read: int):  # type: ignore[no-untyped-def]
    """Four calls, each prompt the system prefix and the replayed context; the first reads
    ``first_read`` from the cache, each later one what the call before sent."""
    t = CachedTranscript()
    for k in range(4):
        t.user(f"step {k}: " + "look at the parser and the lexer again " * (40 * (k + 1)))
        t.cached(0, 0)
    tokens = [st.tokens for st in replay(t.session(), ReplaySettings()).steps]
    answers = [x for x in t.lines if x["type"] == "assistant"]
    previous = None
    for a, n in zip(answers, tokens, strict=True):
        prompt = SYSTEM + n  # the input (2 tokens) included
        read = first_read if previous is None else previous
        a["message"]["usage"].update(
            cache_read_input_tokens=read, cache_creation_input_tokens=prompt - 2 - read
        )
        previous = prompt - 2
    return t.session()


def test_a_claude_code_session_s_first_call_reads_what_other_sessions_cached() -> None:
    c = cache_replay(replay(_session(SYSTEM), ReplaySettings()))
    assert c.fit.hidden == SYSTEM and c.start == WARM_START
    first = c.steps[0]
    assert (
        (first.read, first.write)
        == (first.recorded_read, first.recorded_write)
        == (SYSTEM, first.prompt - SYSTEM - 2)
    )
    assert all(x.read == x.recorded_read and x.write == x.recorded_write for x in c.steps)
    assert not c.disagreements()
    assert c.billed_cost == pytest.approx(c.recorded_cost, rel=1e-9)


def test_a_cold_start_is_said_at_the_first_call() -> None:
    """No other session had run within the cache's lifetime: the first call wrote everything, and
    the check says why it disagrees there (and only there)."""
    c = cache_replay(replay(_session(0), ReplaySettings()))
    (row,) = c.disagreements()
    assert (row["step"], row["predictedRead"], row["recordedRead"]) == (0, SYSTEM, 0)
    assert "claude-code #94417" in row["cause"]


def test_other_agents_start_cold() -> None:
    """A pi session's first call reads nothing (pi's prefixes are its session's own): the rule is
    Claude Code's."""
    c = cache_replay(replay(load_any(SAMPLES / "small-tutorial.jsonl"), ReplaySettings()))
    assert c.fit.hidden > 1024 and c.steps[0].read == 0 and c.start is None


ENTIREIO = SHARED / "real-sessions" / "claude-code" / "entireio-cli-b0dc55b3a1-1.jsonl"


@pytest.mark.skipif(not ENTIREIO.is_file(), reason="../shared/real-sessions is not beside this clone")
def test_the_shared_transcript_is_priced_within_the_targets() -> None:
    """entireio (Claude Code): its first call read 16,141 tokens; predicting the session's hidden
    prefix there takes its billed cost from +2.0 % to within 1 % of the recorded one."""
    c = cache_replay(replay(load_any(ENTIREIO), ReplaySettings(strategy="recorded")))  # its microcompacts too
    assert (c.steps[0].read, c.steps[0].recorded_read) == (c.fit.hidden, 16_141)
    assert abs(c.read_total_error) < 0.05
    assert abs(c.cost_error) < 0.01


def test_the_replay_says_the_first_call_is_assumed_warm() -> None:
    """``inspector replay`` names the assumption for a Claude Code file, and only there."""
    from .test_cli import run

    code, out, _ = run("replay", str(SAMPLES / "claude-code-session.jsonl"), "--cache", "model")
    assert code == 0 and "first call           assumed warm at the start" in out and "#94417" in out
    assert "first call" not in run("replay", str(SAMPLES / "small-tutorial.jsonl"), "--cache", "model")[1]
