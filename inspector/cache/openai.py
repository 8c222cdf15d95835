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

from functools import lru_cache

from .rule import CacheRule

SOURCE = (
    "OpenAI prompt-caching guide (≥ 1,024 tokens, 128-token steps, 5–10 min idle, no write premium); "
    "pi-ai 0.73.1 providers/openai-completions.ts (prompt_cache_retention 24h for long retention)"
)

IDLE_SECONDS = 600.0  # the guide's "5 to 10 minutes of inactivity": its upper bound

NEWER_SOURCE = (
    "GPT-5.6 and later: OpenAI prompt-caching guide (cache writes cost 1.25× the uncached input "
    "rate, reported in cache_write_tokens); prompt_cache_options.ttl (30 minutes, the default and "
    "only value; prompt_cache_retention applies to earlier models only)"
)
NEWER_TTL_SECONDS = 1800.0
NEWER_WRITE_MULTIPLIER = 1.25


def rule(read_multiplier: float, retention: str = "short", model: object = None) -> CacheRule:
    """The rule for ``model``: GPT-5.6 and later bill the cache writes and keep entries 30 minutes
    (:data:`NEWER_SOURCE`); earlier models write for free and keep them 5–10 idle minutes (24 hours
    with the long retention)."""
    if caches_as_newer(model):
        return CacheRule(
            family="openai",
            source=f"{SOURCE}; {NEWER_SOURCE}",
            min_tokens=1024,
            granularity=128,
            ttl_seconds=NEWER_TTL_SECONDS,
            breakpoints_only=False,
            writes=True,
            read_multiplier=read_multiplier,
            write_multiplier=NEWER_WRITE_MULTIPLIER,
            enabled=retention != "none",
        )
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


def gpt_version(model: object) -> tuple[int, int] | None:
    """``gpt-5.5`` → (5, 5), ``gpt-5-codex`` → (5, 0), ``gpt-6`` → (6, 0) (a provider prefix
    ``openai/`` aside); None for any other name."""
    if not isinstance(model, str):
        return None
    name = model.lower().rsplit("/", 1)[-1]
    if not name.startswith("gpt-"):
        return None
    major, dot, rest = name[4:].partition(".")
    major = major.split("-", 1)[0]
    minor = rest.split("-", 1)[0] if dot else "0"
    if not (major.isdigit() and minor.isdigit()):
        return None
    return int(major), int(minor)


def caches_as_newer(model: object) -> bool:
    """GPT-5.6 and later (:data:`NEWER_SOURCE`)."""
    v = gpt_version(model)
    return v is not None and v >= (5, 6)


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
    them (the shared pi transcript on gpt-5.6-sol reads on at every user turn). Memoised per model
    and API (the doctor asks it of every answer)."""
    if not isinstance(model, str):
        return False
    return _drops(model, api if isinstance(api, str) else None)


@lru_cache(maxsize=256)
def _drops(model: str, api: str | None) -> bool:
    if api is not None and "completions" in api.lower():
        return False
    if model.lower().rsplit("/", 1)[-1].startswith(("o1", "o3", "o4", "codex-mini")):
        return True
    v = gpt_version(model)
    return v is not None and (5, 0) <= v < (5, 6)
