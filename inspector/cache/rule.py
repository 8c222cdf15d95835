"""One provider's prompt-cache rule as data, and the split of one call's prompt it implies.

The split is pure arithmetic over sizes (tokens): the prompt ``P``, the prefix it shares with what
the cache holds (``common``), the previous prompt (``previous``: where the last breakpoint sat), the
fixed prefix no session file stores (``hidden``: system prompt and tools, its own breakpoint), and
whether the cache is still warm. Each family's module (:mod:`.anthropic`, :mod:`.openai`) says where
its numbers come from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class CacheRule:
    family: str
    """"anthropic", "openai" or "none"."""
    source: str
    min_tokens: int
    """No prefix shorter than this is cached."""
    granularity: int
    """The cached prefix is a multiple of this (OpenAI: 128 tokens past the first 1,024)."""
    ttl_seconds: float
    """An entry not used for longer than this is gone."""
    breakpoints_only: bool
    """True: only prefixes ending at a breakpoint are read (the previous prompt's end, the hidden
    prefix); False: any prefix a previous request processed."""
    writes: bool
    """Whether writing the cache is billed apart (Anthropic); else the uncached part is plain input."""
    read_multiplier: float
    write_multiplier: float
    enabled: bool = True
    lookback_blocks: int = 0
    """How many content blocks back from a breakpoint the provider looks for an earlier entry (0:
    any distance): a request that appended more blocks than this since the previous one misses
    that entry (Anthropic: 20)."""

    def reusable(self, common: int, previous: int, hidden: int) -> int:
        """How much of the new prompt can be read from the cache (before the minimum and steps)."""
        if not self.enabled:
            return 0
        if common >= previous:
            return previous
        if self.breakpoints_only:
            return hidden if 0 < hidden <= common else 0
        return common

    def split(self, prompt: int, reusable: int, warm: bool, tail: int = 0) -> tuple[int, int, int]:
        """(read, write, uncached) of one prompt; ``tail``: the end of it past the last breakpoint
        (Anthropic: sent uncached, not written). The read is the reusable prefix (at most the
        prompt) when warm, nothing below ``min_tokens``, rounded down to ``min_tokens`` + a
        multiple of ``granularity`` (:func:`splitter`)."""
        return splitter(self)(prompt, reusable, warm, tail)


@lru_cache(maxsize=256)
def splitter(rule: CacheRule) -> Callable[..., tuple[int, int, int]]:
    """:meth:`CacheRule.split` of ``rule`` as a function with the rule's numbers bound, made once
    per rule (the cache model splits every call of a replay)."""
    if not rule.enabled or rule.family == "none":
        return lambda prompt, reusable, warm, tail=0: (0, 0, prompt)
    least, step, writes = rule.min_tokens, rule.granularity, rule.writes

    def split(prompt: int, reusable: int, warm: bool, tail: int = 0) -> tuple[int, int, int]:
        read = 0
        if warm:
            read = reusable if reusable < prompt else prompt
            if read < least:
                read = 0
            elif step > 1:
                read = least + (read - least) // step * step
        if writes:
            if prompt < least:
                return read, 0, prompt - read
            uncached = max(0, min(tail, prompt - read))
            return read, prompt - read - uncached, uncached
        return read, 0, prompt - read

    return split


NO_CACHE = CacheRule(
    family="none",
    source="no cache model for this provider",
    min_tokens=0,
    granularity=1,
    ttl_seconds=0.0,
    breakpoints_only=True,
    writes=False,
    read_multiplier=1.0,
    write_multiplier=1.0,
    enabled=False,
)
