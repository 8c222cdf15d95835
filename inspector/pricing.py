"""Input-token prices for replay costs.

A replayed call is priced per input token at the rate the session itself recorded for that
message where it can (``usage.cost`` of the assistant message: input + cache read + cache write
dollars over the same tokens — a blended rate that already reflects caching), else the
session's mean recorded rate, else a small table of list prices by model name (USD per
million input tokens, no caching). Output tokens are not replayed (they are the recorded
answers) and not priced here.
"""

from __future__ import annotations

import weakref
from array import array
from collections.abc import Callable, Iterable
from operator import add
from typing import Any

from .numbers import clamp
from .session.answers import Answers, answers
from .session.models import AssistantMessage
from .session.tree import Session

# USD per 1M input tokens (list prices, no cache discount). Matched by substring, first wins.
PRICE_TABLE: tuple[tuple[str, float], ...] = (
    ("opus-4-5", 5.0),
    ("opus-4-1", 15.0),
    ("opus", 15.0),
    ("sonnet", 3.0),
    ("haiku-4", 1.0),
    ("haiku", 0.8),
    ("gpt-5-mini", 0.25),
    ("gpt-5", 1.25),
    ("gpt-4.1", 2.0),
    ("gpt-4o-mini", 0.15),
    ("gpt-4o", 2.5),
    ("o3", 2.0),
    ("gemini-2.5-pro", 1.25),
    ("gemini", 0.3),
)


def table_price(model: str | None) -> float | None:
    """Per-token list price for a model name, or None if unknown."""
    if not model:
        return None
    name = model.lower()
    for key, per_million in PRICE_TABLE:
        if key in name:
            return per_million / 1_000_000
    return None


def recorded_rate(m: Any) -> float | None:
    if not isinstance(m, AssistantMessage) or m.usage is None or not isinstance(m.usage.cost, dict):
        return None
    u, c = m.usage, m.usage.cost
    tokens = clamp(u.input) + clamp(u.cacheRead) + clamp(u.cacheWrite)
    dollars = sum(float(clamp(c.get(k))) for k in ("input", "cacheRead", "cacheWrite"))  # not a number: 0
    if tokens <= 0 or dollars <= 0:
        return None
    return dollars / tokens


def _own_rates(got: Answers) -> list[tuple[int, tuple[Any, float]]]:
    """(id, (message, :func:`recorded_rate`)) of each answer that has one, in file order: from the
    session's answer columns (:mod:`inspector.session.answers`), read at once when every value is
    a plain number (``clamp`` leaves each as it is), else answer by answer."""
    ms = got.messages
    if not got.plain:
        rated = [(m, recorded_rate(m)) for m, c in zip(ms, got.costed, strict=True) if c]
        return [(id(m), (m, r)) for m, r in rated if r is not None]
    ins, reads, writes, _ = got.usage
    tokens = map(add, map(add, ins, reads), writes)  # clamp leaves plain values as they are
    dollars = map(sum, zip(*([0.0 if v is None else float(v) for v in col] for col in got.cost), strict=True))
    return [
        (id(m), (m, d / t))
        for m, c, t, d in zip(ms, got.costed, tokens, dollars, strict=True)
        if c and t > 0 and d > 0
    ]


_PRICES: weakref.WeakKeyDictionary[Session, Callable[[Any], float]] = weakref.WeakKeyDictionary()


def input_price_per_token(session: Session) -> Callable[[Any], float]:
    """Price of one input token of a call answered by message ``m``: its own recorded rate, else
    the session's mean recorded rate, else the model table. Built once per session."""
    hit = _PRICES.get(session)
    if hit is not None:
        return hit
    own: dict[int, tuple[Any, float]] = dict(_own_rates(answers(session)))  # id(message) -> (message, rate)
    price = _price(own, MeanRate(r for _, r in own.values()).mean())
    _PRICES[session] = price
    return price


class MeanRate:
    """The session's mean recorded rate, its messages' rates added in file order (a caller that
    reads the file one entry at a time adds them as they pass: :mod:`inspector.replay.streamed`)."""

    def __init__(self, rates: Iterable[float] = ()) -> None:
        self.rates = array("d", rates)

    def add(self, m: Any) -> None:
        r = recorded_rate(m)
        if r is not None:
            self.rates.append(r)

    def mean(self) -> float | None:
        return sum(self.rates) / len(self.rates) if self.rates else None


def _price(own: dict[int, tuple[Any, float]], mean: float | None) -> Callable[[Any], float]:
    def price(m: Any) -> float:
        hit = own.get(id(m))
        r = hit[1] if hit is not None and hit[0] is m else recorded_rate(m)
        if r is not None:
            return r
        if mean is not None:
            return mean
        return table_price(getattr(m, "model", None)) or 0.0

    return price


def streamed_price(mean: MeanRate) -> Callable[[Any], float]:
    """:func:`input_price_per_token` of a session whose messages pass one at a time: the same
    prices (a message's own rate is computed again where the session's table would hold it)."""
    return _price({}, mean.mean())
