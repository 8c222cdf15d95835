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
