"""Anthropic prompt caching with the breakpoints pi places (explicit ``cache_control``).

Source: pi-ai 0.73.1 ``providers/anthropic.ts`` (pi-mono ``packages/ai/src/providers/anthropic.ts``):
``getCacheControl`` gives ``{type: "ephemeral"}`` — with ``ttl: "1h"`` when the retention is
``"long"`` (``PI_CACHE_RETENTION=long``) — and ``buildParams`` puts it on the system prompt, on the
last tool definition and on the last block of the last user message (``convertMessages``: "Add
cache_control to the last user message to cache conversation history"). A tool result is a user
message on this API, so in an agent loop the breakpoint sits at the end of every prompt. Claude Code
places its breakpoints the same way (system prompt, newest message).

Anthropic's rules (prompt-caching documentation, read 2025-11): a breakpoint's prefix is cached only
from a model's minimum length (1,024 tokens for Opus 4/4.1 and Sonnet; 2,048 for Haiku 3/3.5;
4,096 for Opus 4.5 and Haiku 4.5); an entry lives 5 minutes, refreshed by each hit, or 1 hour with
``ttl: "1h"``; a write costs 1.25× the input price (2× for 1 hour), a read 0.1×. A request reads the
longest cached prefix ending at one of its breakpoints (looking back up to 20 blocks before each):
with the breakpoint at the end of every prompt that is the whole previous prompt when nothing before
it changed, else only the system prompt and tools. A change inside the last 20 blocks could still
hit an older entry; that case is not modelled (it reads as a full invalidation here). The other
side of the same rule is modelled (:data:`LOOKBACK_BLOCKS`): a request that appended more than 20
content blocks since the previous one (a wide turn of parallel tool calls: each call and each
result is a block) finds no entry within its breakpoint's lookback and reads only the system prompt
and tools, as the sofos-code project measured ("a single iteration adding more than ~20 blocks …
cold-missed the rolling lookup and re-billed the entire prefix").
"""

from __future__ import annotations

from .rule import CacheRule

SOURCE = (
    "pi-ai 0.73.1 providers/anthropic.ts (cache_control on system prompt, last tool, last user "
    "message); Anthropic prompt-caching docs (min length, 5 min / 1 h TTL, write 1.25× / 2×, read 0.1×, "
    "a 20-block lookback from each breakpoint)"
)

#: minimum cacheable prefix by model name (substring, first match wins)
MIN_TOKENS: tuple[tuple[str, int], ...] = (
    ("opus-4-5", 4096),
    ("haiku-4-5", 4096),
    ("haiku-3", 2048),
    ("3-haiku", 2048),
    ("3-5-haiku", 2048),
)
DEFAULT_MIN = 1024

LOOKBACK_BLOCKS = 20
"""Anthropic's prompt-caching documentation: the automatic prefix check looks back at most 20
content blocks from each breakpoint for an earlier cache entry."""


def min_tokens(model: str | None) -> int:
    name = (model or "").lower()
    return next((n for key, n in MIN_TOKENS if key in name), DEFAULT_MIN)


def rule(model: str | None, retention: str = "short") -> CacheRule:
    """The rule for one Anthropic model; ``retention`` is pi's ``cacheRetention`` ("short", "long",
    "none")."""
    long = retention == "long"
    return CacheRule(
        family="anthropic",
        source=SOURCE,
        min_tokens=min_tokens(model),
        granularity=1,
        ttl_seconds=3600.0 if long else 300.0,
        breakpoints_only=True,
        writes=True,
        read_multiplier=0.1,
        write_multiplier=2.0 if long else 1.25,
        enabled=retention != "none",
        lookback_blocks=LOOKBACK_BLOCKS,
    )
