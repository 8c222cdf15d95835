"""A session's answers (assistant messages) and their recorded usage, read once per session as columns.

The replay prices each call at its answer's recorded rate (:func:`inspector.pricing.input_price_per_token`)
and the cache model reads every answer's tokens and dollars (:func:`inspector.cache.facts.session_facts`):
both read the same values, so :func:`answers` reads them once per session object (memoised) and both
take them from here. Values are read as the engine reads numbers (:func:`inspector.numbers.clamp`):
``float(clamp(v))`` for a token count or a dollar amount, ``int()`` of that for a count. The usual
session (every value a plain int, every dollar amount a float, in range) is read column by column at
C speed; any other value sends the whole session through the same conversion value by value.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NamedTuple

from ..numbers import MAX_TOKENS, clamp
from .models import AssistantMessage, CustomMessageEntry, MessageEntry, UserMessage
from .tree import Session


@dataclass(frozen=True, eq=False)
class Answers:
    """Per answer, in file order (every column as long as :attr:`index`): the values as the
    session holds them (the columns point at the session's own objects: a few pointers an answer)."""

    index: list[int]
    """Entry index of each answer."""
    messages: list[Any]
    asked: list[int]
    """Entry index of each user message and custom message entry (what was sent between answers)."""
    usage: tuple[list[Any], list[Any], list[Any], list[Any]]
    """Recorded (input, cache read, cache write, output) tokens; None without usage."""
    costed: list[bool]
    """The answer has usage and its ``usage.cost`` is a dict."""
    cost: tuple[list[Any], list[Any], list[Any]]
    """Recorded (input, cache read, cache write) dollars (``usage.cost``); None where not costed or missing."""
    plain: bool
    """Every answer has usage, every usage value is an int and every dollar value an int, a float
    or missing, all within ±MAX_TOKENS: ``clamp`` leaves each as it is (a reader may use the values
    directly)."""

    def numbers(self) -> Numbers:
        """The usage and dollars as the engine reads numbers (:func:`inspector.numbers.clamp`)."""
        ins, reads, writes, outs = self.usage
        if self.plain:
            return Numbers(
                (list(map(float, ins)), list(map(float, reads)), list(map(float, writes))),
                (ins, reads, writes),
                list(map(float, outs)),
                tuple([float(v) if v is not None else 0.0 for v in col] for col in self.cost),  # type: ignore[arg-type]
                [a is not None or b is not None or c is not None for a, b, c in zip(*self.cost, strict=True)],
            )
        present = [v is not None for v in ins]
        tokens = tuple(
            [_as_float(v) if p else 0.0 for v, p in zip(col, present, strict=True)]
            for col in (ins, reads, writes)
        )
        return Numbers(
            tokens,  # type: ignore[arg-type]
            tuple([int(t) if p else None for t, p in zip(col, present, strict=True)] for col in tokens),  # type: ignore[arg-type]
            [_as_float(v) if p else 0.0 for v, p in zip(outs, present, strict=True)],
            tuple(
                [_as_float(v) if k else 0.0 for v, k in zip(col, self.costed, strict=True)]
                for col in self.cost
            ),  # type: ignore[arg-type]
            [
                k and any(isinstance(v, (int, float)) for v in g)
                for g, k in zip(zip(*self.cost, strict=True), self.costed, strict=True)
            ],
        )


class Numbers(NamedTuple):
    """An :class:`Answers`' usage as numbers, per answer."""

    tokens: tuple[list[float], list[float], list[float]]
    """Recorded (input, cache read, cache write) tokens as floats; 0.0 without usage."""
    counts: tuple[list[Any], list[Any], list[Any]]
    """The same as ints; None without usage."""
    output: list[float]
    """Recorded output tokens as a float; 0.0 without usage."""
    dollars: tuple[list[float], list[float], list[float]]
    """Recorded (input, cache read, cache write) dollars as floats; 0.0 where not costed or missing."""
    paid: list[bool]
    """Costed, and at least one of the three dollar values is a number."""


_MEMO: weakref.WeakKeyDictionary[Session, Answers] = weakref.WeakKeyDictionary()


def answers(session: Session) -> Answers:
    """The session's answers and their recorded usage (memoised per session object)."""
    hit = _MEMO.get(session)
    if hit is None:
        hit = _MEMO[session] = _read(session.entries)
    return hit


def read_answers(entries: Sequence[Any]) -> Answers:
    """The answers among ``entries`` and their recorded usage, not memoised (a caller that reads a
    file a chunk of entries at a time: :class:`inspector.cache.facts.FactsReader`); ``index`` is
    their positions in ``entries``."""
    return _read(entries)


_USAGE = attrgetter("input", "cacheRead", "cacheWrite", "output", "cost")
_NONE5 = (None, None, None, None, None)


def _read(entries: Any) -> Answers:
    idx, ms, asked = _walk(entries)
    usages = list(map(_USAGE_OF, ms))
    ins, reads, writes, outs, costs = _columns([_USAGE(u) if u is not None else _NONE5 for u in usages], 5)
    costed = [c is not None and isinstance(c, dict) for c in costs]
    dollars = _columns(
        [
            (c.get("input"), c.get("cacheRead"), c.get("cacheWrite")) if k else (None, None, None)
            for c, k in zip(costs, costed, strict=True)
        ],
        3,
    )
    usage = (ins, reads, writes, outs)
    plain = all(map(_plain_ints, usage)) and all(map(_plain_dollars, dollars))
    return Answers(
        idx,
        ms,
        asked,
        usage,
        costed,
        dollars,  # type: ignore[arg-type]
        plain,
    )


def _columns(rows: list[tuple[Any, ...]], n: int) -> tuple[list[Any], ...]:
    """Rows of ``n`` values as ``n`` columns."""
    return tuple(map(list, zip(*rows, strict=True))) if rows else tuple([] for _ in range(n))


def _walk(entries: Sequence[Any]) -> tuple[list[int], list[Any], list[int]]:
    """(entry index of each answer, the answers, entry indexes of the user messages and custom
    message entries) in one pass over the entries' classes."""
    kinds = _classes(entries, (MessageEntry, CustomMessageEntry))
    at = [i for i, k in enumerate(kinds) if k is MessageEntry]
    msgs = list(map(_MESSAGE, map(entries.__getitem__, at)))
    roles = _classes(msgs, (AssistantMessage, UserMessage))
    answer = [k for k, r in enumerate(roles) if r is AssistantMessage]
    asked = [at[k] for k, r in enumerate(roles) if r is UserMessage]
    custom = [i for i, k in enumerate(kinds) if k is CustomMessageEntry]
    return [at[k] for k in answer], [msgs[k] for k in answer], sorted(asked + custom) if custom else asked


def _classes(objs: Sequence[Any], bases: tuple[type, ...]) -> list[type | None]:
    """Each object's class, where ``is`` one of ``bases`` tells whether it is an instance of that
    base: its own class (one pass at C speed), unless a subclass of a base is among them; then the
    base it is an instance of, or None."""
    kinds: list[type | None] = list(map(type, objs))
    if any(k not in bases and issubclass(k, bases) for k in set(kinds) if k is not None):
        return [next((b for b in bases if isinstance(o, b)), None) for o in objs]
    return kinds


_MESSAGE = attrgetter("message")
_USAGE_OF = attrgetter("usage")


def _as_float(v: Any) -> float:
    """``v`` as the engine counts it: a finite float (anything that is not a number: 0.0)."""
    return float(clamp(v))


def _plain_ints(col: list[Any]) -> bool:
    """Every value is an int (not a bool, not None) within ±MAX_TOKENS."""
    if not col:
        return True
    return set(map(type, col)) == {int} and -MAX_TOKENS <= min(col) and max(col) <= MAX_TOKENS


def _plain_dollars(col: list[Any]) -> bool:
    """Every value is an int or float (not a bool) within ±MAX_TOKENS, or None (missing)."""
    nums = [v for v in col if v is not None]
    if not nums:
        return True
    if (
        not set(map(type, nums)) <= {int, float}
        or not -MAX_TOKENS <= min(nums)
        or not max(nums) <= MAX_TOKENS
    ):
        return False
    return math.isfinite(sum(nums))  # NaN, which min and max may pass
