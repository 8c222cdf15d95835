"""OpenAI automatic prefix caching (Responses and Chat Completions; Codex CLI, pi's openai and
openai-codex providers, OpenCode on OpenAI).

Source: OpenAI prompt-caching guide (read 2025-11): caching is automatic for prompts of 1,024 tokens
or more; the cached prefix grows in 128-token steps (``cached_tokens`` is 0 or 1,024 + 128·n);
cached prefixes usually stay 5–10 minutes after their last use (up to an hour off-peak; 24 hours
with ``prompt_cache_retention: "24h"``, which pi-ai sends for ``cacheRetention: "long"``,
``providers/openai-completions.ts``); there is no write premium. The discount depends on the model
(see :mod:`inspector.cache.prices`). Any prefix a previous request processed can be read, so a
change at a message keeps the cache up to that message.
"""

from __future__ import annotations

from .rule import CacheRule

SOURCE = (
    "OpenAI prompt-caching guide (≥ 1,024 tokens, 128-token steps, 5–10 min idle, no write premium); "
    "pi-ai 0.73.1 providers/openai-completions.ts (prompt_cache_retention 24h for long retention)"
)

IDLE_SECONDS = 600.0  # the guide's "5 to 10 minutes of inactivity": its upper bound


def rule(read_multiplier: float, retention: str = "short") -> CacheRule:
    return CacheRule(
        family="openai",
        source=SOURCE,
        min_tokens=1024,
        granularity=128,
        ttl_seconds=86400.0 if retention == "long" else IDLE_SECONDS,
        breakpoints_only=False,
        writes=False,
        read_multiplier=read_multiplier,
        write_multiplier=1.0,
        enabled=retention != "none",
    )


REASONING_SOURCE = (
    "OpenAI reasoning guide (reasoning items of earlier turns are dropped from the context; input "
    "and output carry over); GPT-5.6's reasoning.context (all_turns, current_turn) is the first "
    "model that can keep them; pine-of-glass #63 (the prompt shrinks by the earlier reasoning at "
    "each user turn, pre-5.6 models)"
)


def drops_earlier_reasoning(model: object, api: object) -> bool:
    """Whether a request to ``model`` through ``api`` drops the reasoning of the turns before its
    latest user message: an OpenAI reasoning model older than GPT-5.6 (the o-series, ``gpt-5`` to
    ``gpt-5.5`` and their codex variants), asked through the Responses API (the only one the
    reasoning is sent back through; Chat Completions never carries it).

    What it means for the cache: the request the model processes holds the conversation without
    that reasoning, so at a new user turn the prefix changes where the previous turn's first
    reasoning item sat, and the cache is read up to there: the prompt of that turn's first call
    that reasoned. In the shared Codex rollout (gpt-5.5) the first call of three turns read
    exactly that prompt, rounded down to 128 tokens (97,152; 84,864; and within one step, 94,592),
    where the whole previous prompt (up to 225,664) had been predicted. GPT-5.6 and later keep
    them (the shared pi transcript on gpt-5.6-sol reads on at every user turn)."""
    if not isinstance(model, str) or (isinstance(api, str) and "completions" in api.lower()):
        return False
    name = model.lower().rsplit("/", 1)[-1]
    if name.startswith(("o1", "o3", "o4", "codex-mini")):
        return True
    if not name.startswith("gpt-5"):
        return False
    rest = name[len("gpt-5") :]
    if not rest or not rest.startswith("."):
        return rest == "" or rest.startswith("-")  # gpt-5, gpt-5-codex, gpt-5-mini
    minor = rest[1:].split("-", 1)[0]
    return minor.isdigit() and int(minor) < 6
