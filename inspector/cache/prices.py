"""What each token of a call costs: input, cache read and cache write rates (USD per token).

First the session's own recorded rates (pi records ``usage.cost`` per answer: ``cost.input /
usage.input``, ``cost.cacheRead / usage.cacheRead``, ``cost.cacheWrite / usage.cacheWrite``, summed
over the session's answers of the same model), then list prices: the input price from
:data:`inspector.pricing.PRICE_TABLE` and the cache multipliers below.

Long-context pricing (:data:`LONG_CONTEXT`): a call whose prompt is over a model's threshold is
billed at its long-context rates — the session's recorded ones for that tier, else 2× the normal.

Cached-input discounts (list prices read 2025-11 from the providers' pricing pages): Anthropic
read 0.1×, write 1.25× (5 min) or 2× (1 h); OpenAI gpt-5 family and gpt-5-codex 0.1×, gpt-4.1
and o3/o4-mini 0.25×, gpt-4o 0.5×, otherwise 0.5×.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import reduce
from itertools import compress, repeat
from math import inf
from operator import add, gt, itemgetter
from typing import Any

from ..numbers import MAX_TOKENS, clamp
from ..pricing import table_price
from ..session.models import AssistantMessage

PRICES_READ = "2025-11"

#: OpenAI cached-input multiplier by model name (substring, first match wins)
OPENAI_READ: tuple[tuple[str, float], ...] = (
    ("gpt-5", 0.1),
    ("codex", 0.1),
    ("gpt-4.1", 0.25),
    ("o3", 0.25),
    ("o4", 0.25),
    ("gpt-4o", 0.5),
)
OPENAI_DEFAULT_READ = 0.5


#: long-context pricing: (model name substring, prompt tokens above which a call is billed at the
#: long-context rates, multiplier of the input, cache-read and cache-write rates)
LONG_CONTEXT: tuple[tuple[str, int, float], ...] = (
    # OpenAI pricing page: GPT-5.4 prompts over 272K input tokens are billed at 2× input (cached
    # input too); the later gpt-5.x bill the same way in the recorded usage (the shared pi transcript
    # d04d…: gpt-5.6-sol, 120 calls over 272K at $10 / $1.00 per M against $5 / $0.50 below)
    ("gpt-5.4", 272_000, 2.0),
    ("gpt-5.5", 272_000, 2.0),
    ("gpt-5.6", 272_000, 2.0),
    # Anthropic pricing (1M-token context of Sonnet 4 / 4.5): over 200K input tokens, 2× input,
    # cache writes and cache reads
    ("claude-sonnet-4", 200_000, 2.0),
)
LONG = "long"
"""The tier of a call billed at a model's long-context rates (the normal tier is "")."""


def long_context(model: str | None) -> tuple[int, float] | None:
    """(threshold, multiplier) of a model with long-context pricing, else None."""
    name = (model or "").lower()
    return next(((n, x) for key, n, x in LONG_CONTEXT if key in name), None)


def tier_of(model: str | None, prompt: float) -> str:
    """:data:`LONG` when a prompt of ``prompt`` tokens is billed at the model's long-context rates."""
    lc = long_context(model)
    return LONG if lc is not None and prompt > lc[0] else ""


def openai_read_multiplier(model: str | None) -> float:
    name = (model or "").lower()
    return next((m for key, m in OPENAI_READ if key in name), OPENAI_DEFAULT_READ)


@dataclass(frozen=True)
class Rates:
    input: float
    read: float
    write: float
    source: str
    """"recorded" (the session's own usage.cost) or "table"."""

    def cost(self, read: int, write: int, uncached: int) -> float:
        return read * self.read + write * self.write + uncached * self.input


def as_float(v: Any) -> float:
    """``v`` as a finite float (:func:`inspector.numbers.clamp`; anything else 0.0); a plain int or
    float in range — nearly every value — takes the short path."""
    t = type(v)
    if (t is int or t is float) and -MAX_TOKENS <= v <= MAX_TOKENS:
        return float(v)
    return float(clamp(v)) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


class RateSums:
    """Recorded tokens and dollars per model (and price tier, :func:`tier_of`) and kind of token,
    summed answer by answer; keys are ``model`` or ``(model, tier)`` for the long-context tier."""

    def __init__(self) -> None:
        self.sums: dict[Any, list[float]] = {}
        self._long: dict[str, tuple[int, float] | None] = {}  # per model: :func:`long_context`

    def add(
        self, model: str, tokens: tuple[float, float, float], dollars: tuple[float, float, float]
    ) -> None:
        """One answer's (input, cache read, cache write) tokens and their recorded cost."""
        if model in self._long:
            lc = self._long[model]
        else:
            lc = self._long[model] = long_context(model)
        key: Any = (model, LONG) if lc is not None and tokens[0] + tokens[1] + tokens[2] > lc[0] else model
        s = self.sums.get(key)
        if s is None:
            s = self.sums[key] = [0.0] * 6
        t0, t1, t2 = tokens
        d0, d1, d2 = dollars
        if t0 > 0 and d0 > 0:
            s[0] += t0
            s[1] += d0
        if t1 > 0 and d1 > 0:
            s[2] += t1
            s[3] += d1
        if t2 > 0 and d2 > 0:
            s[4] += t2
            s[5] += d2

    def add_all(
        self,
        models: Sequence[str],
        tokens: tuple[Sequence[float], Sequence[float], Sequence[float]],
        dollars: tuple[Sequence[float], Sequence[float], Sequence[float]],
        rows: Sequence[int],
    ) -> None:
        """:meth:`add` for each answer at the positions ``rows`` (in order) of the columns: each
        key's sums add the same numbers in the same order, a column at a time."""
        if not rows:
            return
        pick = _picker(rows, len(models))
        names = pick(models)
        cols = [pick(c) for c in (*tokens, *dollars)]
        long = self._long
        for name in dict.fromkeys(names):
            if name not in long:
                long[name] = long_context(name)
        keys: Sequence[Any] = names
        limits = {n: lc[0] for n, lc in long.items() if lc is not None}
        if limits:
            totals = list(map(add, map(add, cols[0], cols[1]), cols[2]))  # input + cache read + cache write
            if any(map(gt, totals, map(limits.get, names, repeat(inf)))):  # some answer is over its tier
                lcs = list(map(long.__getitem__, names))
                keys = [
                    (n, LONG) if lc is not None and total > lc[0] else n
                    for n, lc, total in zip(names, lcs, totals, strict=True)
                ]
        groups: dict[Any, Any] = dict.fromkeys(keys)
        if len(groups) > 1:
            for k, key in enumerate(keys):
                if groups[key] is None:
                    groups[key] = [k]
                else:
                    groups[key].append(k)
        for key, at in groups.items():
            s = self.sums.get(key)
            if s is None:
                s = self.sums[key] = [0.0] * 6
            part = _picker(at, len(keys)) if at is not None else _same
            for j in range(3):
                t, d = part(cols[j]), part(cols[3 + j])
                if not t or (min(t) > 0 and min(d) > 0):
                    s[2 * j] = reduce(add, t, s[2 * j])
                    s[2 * j + 1] = reduce(add, d, s[2 * j + 1])
                    continue
                both = [x > 0 and y > 0 for x, y in zip(t, d, strict=True)]
                s[2 * j] = reduce(add, compress(t, both), s[2 * j])
                s[2 * j + 1] = reduce(add, compress(d, both), s[2 * j + 1])

    def rates(self) -> dict[Any, tuple[float | None, float | None, float | None]]:
        return {
            k: tuple(s[2 * i + 1] / s[2 * i] if s[2 * i] > 0 else None for i in range(3))  # type: ignore[misc]
            for k, s in self.sums.items()
        }


def _same(col: Sequence[Any]) -> Sequence[Any]:
    return col


def _picker(at: Sequence[int], n: int) -> Callable[[Sequence[Any]], Sequence[Any]]:
    """A function giving the values at the positions ``at`` of a column of ``n`` values (the column
    itself when ``at`` is every position: the callers only read it)."""
    if len(at) == n:
        return _same
    if len(at) == 1:
        k = at[0]
        return lambda col: [col[k]]
    get = itemgetter(*at)
    return lambda col: list(get(col))


def recorded_rates(messages: list[Any]) -> dict[Any, tuple[float | None, float | None, float | None]]:
    """Per model (``(model, "long")`` for its long-context tier): (input, read, write) USD per token
    from the recorded ``usage.cost``, None where the session never paid for that kind of token."""
    sums = RateSums()
    for m in messages:
        if not isinstance(m, AssistantMessage) or m.usage is None or not isinstance(m.usage.cost, dict):
            continue
        u, c = m.usage, m.usage.cost
        sums.add(
            m.model or "",
            (as_float(u.input), as_float(u.cacheRead), as_float(u.cacheWrite)),
            (as_float(c.get("input")), as_float(c.get("cacheRead")), as_float(c.get("cacheWrite"))),
        )
    return sums.rates()


def rates_for(
    model: str | None,
    family: str,
    read_mult: float,
    write_mult: float,
    recorded: tuple[float | None, float | None, float | None] | None,
    tier: str = "",
    normal: Rates | None = None,
) -> Rates:
    """The rates of one model: recorded ones where the session has them, the table's for the rest.
    The long-context tier: its recorded rates, else the normal tier's (``normal``) times the
    model's long-context multiplier (:data:`LONG_CONTEXT`)."""
    lc = long_context(model)
    if tier == LONG and lc is not None and normal is not None:
        x = lc[1]
        rin, rread, rwrite = recorded or (None, None, None)
        return Rates(
            rin if rin is not None else normal.input * x,
            rread if rread is not None else normal.read * x,
            rwrite if rwrite is not None else normal.write * x,
            "recorded" if rin is not None or rread is not None else f"{normal.source}, ×{x:g} over {lc[0]:,}",
        )
    base = table_price(model) or 0.0
    rin, rread, rwrite = recorded or (None, None, None)
    inp = rin if rin is not None else base
    if family == "none":
        return Rates(inp, inp, inp, "recorded" if rin is not None else "table")
    read = rread if rread is not None else inp * read_mult
    write = rwrite if rwrite is not None else inp * write_mult
    return Rates(inp, read, write, "recorded" if rin is not None or rread is not None else "table")
