"""Numbers from a session at the edges: what pi reads, and what the rest of the engine counts.

JSON can write numbers a token count cannot be: ``1e400`` (JavaScript reads Infinity), an integer
with 400 digits (Infinity too), two ``1e308`` that sum to Infinity, ``-1e400``. pi's own
arithmetic is reproduced exactly where we compare with it (``oracle_json`` prints ``null`` as
``JSON.stringify`` does). Everywhere else — the replay, ``info``, ``doctor``, explanations, costs,
the app — a value goes through :func:`clamp` first: NaN becomes 0, anything beyond
±``MAX_TOKENS`` (2^53 − 1, JavaScript's largest exact integer) becomes ±``MAX_TOKENS``. The loader
reports each such value as a located load issue (:func:`inspector.session.ranges.number_issues`),
so nothing is clamped silently and nothing raises.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

MAX_TOKENS = 2**53 - 1


def out_of_range(v: object) -> bool:
    """True for a number that is NaN, infinite or beyond ±MAX_TOKENS (bools are not numbers)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    if isinstance(v, float) and not math.isfinite(v):
        return True
    return abs(v) > MAX_TOKENS


def clamp(v: object) -> int | float:
    """A number safe for arithmetic, ``int()`` and formatting: NaN → 0, ±inf and huge → ±MAX_TOKENS;
    anything that is not a number → 0."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return 0
    if isinstance(v, float) and math.isnan(v):
        return 0
    if v > MAX_TOKENS:
        return MAX_TOKENS
    if v < -MAX_TOKENS:
        return -MAX_TOKENS
    return v


def clamp_int(v: object) -> int:
    """:func:`clamp`, rounded down to an int (for counts of tokens)."""
    return int(clamp(v))


def describe(v: object) -> str:
    """A number as a short text (a 400-digit integer is not printed whole)."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 10**15:
        digits = len(str(abs(v)))
        return f"{'-' if v < 0 else ''}{str(abs(v))[:6]}… ({digits} digits)"
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("-Infinity" if v < 0 else "Infinity")
    return repr(v)


def finite_ms(v: object) -> float | None:
    """A time in milliseconds as a float, or None for anything that is not a finite number
    (a 400-digit integer, 1e400, text): such a time is unknown, never an overflow."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def utc_of_ms(v: object) -> datetime | None:
    """A time in milliseconds since the epoch as a UTC datetime, or None when it is not a finite
    number or lies outside the years a datetime holds (1–9999): a session may record ``1e300``."""
    f = finite_ms(v)
    if f is None:
        return None
    try:
        return datetime.fromtimestamp(f / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def js_float(v: int | float) -> float:
    """A number as JavaScript holds it: an integer too large for a double is ±Infinity."""
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf
