"""One provider's prompt-cache rule as data, and the split of one call's prompt it implies.

The split is pure arithmetic over sizes (tokens): the prompt ``P``, the prefix it shares with what
the cache holds (``common``), the previous prompt (``previous``: where the last breakpoint sat), the
fixed prefix no session file stores (``hidden``: system prompt and tools, its own breakpoint), and
whether the cache is still warm. Each family's module (:mod:`.anthropic`, :mod:`.openai`) says where
its numbers come from.
"""

from __future__ import annotations

from dataclasses import dataclass


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

    def reusable(self, common: int, previous: int, hidden: int) -> int:
        """How much of the new prompt can be read from the cache (before the minimum and steps)."""
        if not self.enabled:
            return 0
        if common >= previous:
            return previous
        if self.breakpoints_only:
            return hidden if 0 < hidden <= common else 0
        return common

    def quantize(self, tokens: int) -> int:
        if tokens < self.min_tokens:
            return 0
        if self.granularity <= 1:
            return tokens
        return self.min_tokens + (tokens - self.min_tokens) // self.granularity * self.granularity

    def split(self, prompt: int, reusable: int, warm: bool, tail: int = 0) -> tuple[int, int, int]:
        """(read, write, uncached) of one prompt; ``tail``: the end of it past the last breakpoint
        (Anthropic: sent uncached, not written)."""
        if not self.enabled or self.family == "none":
            return 0, 0, prompt
        read = self.quantize(min(reusable, prompt)) if warm else 0
        if self.writes:
            if prompt < self.min_tokens:
                return read, 0, prompt - read
            uncached = max(0, min(tail, prompt - read))
            return read, prompt - read - uncached, uncached
        return read, 0, prompt - read


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
