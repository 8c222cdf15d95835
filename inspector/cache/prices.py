"""What each token of a call costs: input, cache read and cache write rates (USD per token).

First the session's own recorded rates (pi records ``usage.cost`` per answer: ``cost.input /
usage.input``, ``cost.cacheRead / usage.cacheRead``, ``cost.cacheWrite / usage.cacheWrite``, summed
over the session's answers of the same model), then list prices: the input price from
:data:`inspector.pricing.PRICE_TABLE` and the cache multipliers below.

Cached-input discounts (list prices read 2025-11 from the providers' pricing pages): Anthropic
read 0.1×, write 1.25× (5 min) or 2× (1 h); OpenAI gpt-5 family and gpt-5-codex 0.1×, gpt-4.1
and o3/o4-mini 0.25×, gpt-4o 0.5×, otherwise 0.5×.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    """Recorded tokens and dollars per model and kind of token, summed answer by answer."""

    def __init__(self) -> None:
        self.sums: dict[str, list[float]] = {}

    def add(
        self, model: str, tokens: tuple[float, float, float], dollars: tuple[float, float, float]
    ) -> None:
        """One answer's (input, cache read, cache write) tokens and their recorded cost."""
        s = self.sums.get(model)
        if s is None:
            s = self.sums[model] = [0.0] * 6
        for i in range(3):
            if tokens[i] > 0 and dollars[i] > 0:
                s[2 * i] += tokens[i]
                s[2 * i + 1] += dollars[i]

    def rates(self) -> dict[str, tuple[float | None, float | None, float | None]]:
        return {
            k: tuple(s[2 * i + 1] / s[2 * i] if s[2 * i] > 0 else None for i in range(3))  # type: ignore[misc]
            for k, s in self.sums.items()
        }


def recorded_rates(messages: list[Any]) -> dict[str, tuple[float | None, float | None, float | None]]:
    """Per model: (input, read, write) USD per token from the recorded ``usage.cost``, None where the
    session never paid for that kind of token."""
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
) -> Rates:
    """The rates of one model: recorded ones where the session has them, the table's for the rest."""
    base = table_price(model) or 0.0
    rin, rread, rwrite = recorded or (None, None, None)
    inp = rin if rin is not None else base
    if family == "none":
        return Rates(inp, inp, inp, "recorded" if rin is not None else "table")
    read = rread if rread is not None else inp * read_mult
    write = rwrite if rwrite is not None else inp * write_mult
    return Rates(inp, read, write, "recorded" if rin is not None or rread is not None else "table")
