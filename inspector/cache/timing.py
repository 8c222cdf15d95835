"""When each call used the cache and how long it then sat idle: the answers' times as the file
stamps them, the session's own output speed, and the retention its recorded reads show."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from datetime import datetime
from itertools import repeat
from operator import mul, truediv
from typing import Any

from ..numbers import MAX_TOKENS, finite_ms
from ..session.tree import iso_to_ms
from .anthropic import rule as anthropic_rule
from .openai import IDLE_SECONDS as OPENAI_IDLE_SECONDS


def long_retention(calls: Sequence[tuple[Any, ...]]) -> frozenset[str]:
    """Families whose recorded calls, after more idle time than the short retention allows, mostly
    still read most of the previous prompt: the session ran with the long retention (Claude Code's
    1-hour cache, pi's ``PI_CACHE_RETENTION=long``). The evidence is the session's own usage. Each
    call is (family, prompt, read, input, start ms[, end ms]); the idle time runs from the previous
    answer's end (its start when no end is known) to the next request (see :func:`idle_between`)."""
    return long_retention_of(
        [c[0] for c in calls],
        [c[1] for c in calls],
        [c[2] for c in calls],
        [c[4] for c in calls],
        [c[5] if len(c) > 5 else None for c in calls],
    )


def long_retention_of(
    families: Sequence[str],
    prompts: Sequence[int],
    reads: Sequence[int | None],
    starts: Sequence[float | None],
    ends: Sequence[float | None],
) -> frozenset[str]:
    """:func:`long_retention` over the calls' columns."""
    shorts = {"anthropic": anthropic_rule(None).ttl_seconds, "openai": OPENAI_IDLE_SECONDS}
    used = [e if e is not None else t for t, e in zip(starts, ends, strict=True)]
    found = [
        (fam, read >= 0.5 * p0)
        for fam, read, t1, p0, t0 in zip(families[1:], reads[1:], starts[1:], prompts, used, strict=False)
        if (short := shorts.get(fam))
        and t0 is not None
        and t1 is not None
        and (t1 - t0) / 1000 > short
        and read is not None
        and p0
    ]
    votes: dict[str, list[bool]] = {}
    for fam, vote in found:
        votes.setdefault(fam, []).append(vote)
    return frozenset(f for f, v in votes.items() if sum(v) * 2 > len(v))


def milliseconds(col: Sequence[float | None]) -> list[float | None]:
    """Times in s as ms (None stays None)."""
    if None in col:
        return [None if t is None else t * 1000 for t in col]
    return list(map(mul, col, repeat(1000)))


def idle_between(prev_used: float, start: float) -> float:
    """How long a cached prefix sat unused before a request: from when the previous request used
    it (:func:`used_at`) to this request's start, never negative."""
    return max(0.0, start - prev_used)


def output_rate(timings: Iterable[tuple[float | None, float | None, float]]) -> float | None:
    """The session's own output speed (tokens per second): the median over its answers of output
    tokens ÷ (answer complete − request start), from (start ms, end ms, output tokens); None
    when no answer has both times apart (other agents stamp one time per message)."""
    rates = [o * 1000 / (e - t) for t, e, o in timings if t is not None and e is not None and e > t and o > 0]
    return statistics.median(rates) if rates else None


def used_at(start: float | None, end: float | None, output: float, rate: float | None) -> float | None:
    """When a request read and refreshed the cache (ms): when the provider processed its prompt,
    just before it began to answer — the answer's end less the time its output took at the
    session's own rate (:func:`output_rate`), kept between the request's start and end.

    Sources: Anthropic refreshes an entry "each time the cached content is used" and OpenAI keeps a
    prefix for 5–10 minutes of "inactivity" (prompt-caching docs): the clock restarts when the
    prompt is processed, not when the request was sent nor when its answer ends. pi stamps each
    answer when its request begins (``message.timestamp``) and its entry when the answer is
    complete, so a request that waited minutes before answering (a queue, a stall) used the cache
    late. In the shared pi transcript 48d3…, a request whose 789-token answer took 9.2 minutes is
    followed by a full read of its prompt under the 5-minute cache, while a 13-second answer
    followed by 5 minutes of a running tool (5.1 minutes from its use to the next request) is
    followed by a full write. Without two distinct times (or a rate), the start."""
    if start is None or end is None or end <= start or rate is None or rate <= 0:
        return start
    return max(start, end - output * 1000 / rate)


def used_times(
    starts: list[float | None], ends: list[float | None], outputs: list[float], rate: float | None
) -> list[float | None]:
    """:func:`used_at` of each answer (the same arithmetic, a column at a time)."""
    if rate is None or rate <= 0:
        return list(starts)
    return [
        s if s is None or e is None or e <= s else max(s, e - o * 1000 / rate)
        for s, e, o in zip(starts, ends, outputs, strict=True)
    ]


def seconds(col: list[float | None]) -> list[float | None]:
    """Times in ms as seconds (None stays None)."""
    if None in col:
        return [t / 1000 if t is not None else None for t in col]
    return list(map(truediv, col, repeat(1000)))


def start_times(col: list[Any]) -> list[float | None]:
    """Request start times (ms, :func:`~inspector.numbers.finite_ms`): plain ints in range convert
    as a column."""
    if col and set(map(type, col)) == {int} and -MAX_TOKENS <= min(col) and max(col) <= MAX_TOKENS:
        return list(map(float, col))
    return [finite_ms(v) for v in col]


def iso_times(col: list[Any]) -> list[float | None]:
    """Entry stamps in ms (:func:`iso_ms` each); a column of UTC stamps (``…Z``) parses in one
    C-level pass, anything else stamp by stamp."""
    if col and set(map(type, col)) == {str} and all(map(str.endswith, col, repeat("Z"))):
        try:
            return list(map(mul, map(datetime.timestamp, map(datetime.fromisoformat, col)), repeat(1000.0)))
        except ValueError:
            pass
    return list(map(iso_ms, col))


def iso_ms(ts: Any) -> float | None:
    """:func:`~inspector.session.tree.iso_to_ms` with a short path for the usual UTC stamp
    (``…Z``: ``datetime.fromisoformat`` reads the "Z" itself since Python 3.11, as UTC, the offset
    ``iso_to_ms`` puts in its place); anything else goes through ``iso_to_ms``."""
    if type(ts) is str and ts.endswith("Z"):
        try:
            return datetime.fromisoformat(ts).timestamp() * 1000.0
        except ValueError:
            pass
    return iso_to_ms(ts)
