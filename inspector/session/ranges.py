"""Load issues for the numbers of a session that no token count can be (see :mod:`inspector.numbers`):
each usage or ``tokensBefore`` value out of range, located by line and entry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..numbers import MAX_TOKENS, clamp, describe, out_of_range
from .tree import LoadIssue

_USAGE = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")


def _bad_fields(entry: Any) -> list[tuple[str, object]]:
    """(field, value) of every out-of-range usage or ``tokensBefore`` value of one entry."""
    out: list[tuple[str, object]] = []
    for owner, prefix in ((entry, ""), (getattr(entry, "message", None), "message.")):
        tb = getattr(owner, "tokensBefore", 0)
        if type(tb) is not int or not -MAX_TOKENS <= tb <= MAX_TOKENS:
            if out_of_range(tb):
                out.append((f"{prefix}tokensBefore", tb))
    usage = getattr(getattr(entry, "message", None), "usage", None)
    if usage is not None:  # a model, or a plain dict in a message of an unknown role
        get = usage.get if isinstance(usage, dict) else lambda k, d=None: getattr(usage, k, d)
        out += [(f"usage.{k}", get(k)) for k in _USAGE if out_of_range(get(k, 0))]
        cost = get("cost")
        if isinstance(cost, dict):
            out += [(f"usage.cost.{k}", v) for k, v in cost.items() if out_of_range(v)]
    return out


def number_issues(entries: Sequence[Any], lines: Sequence[int]) -> list[LoadIssue]:
    """A located warning for each usage or ``tokensBefore`` value beyond what a count can be."""
    out = []
    for i, e in enumerate(entries):
        for name, v in _bad_fields(e):
            out.append(
                LoadIssue(
                    "number-out-of-range",
                    "warning",
                    f"{name} is {describe(v)}, beyond any token count; counted as {clamp(v):,} here",
                    line=lines[i] if i < len(lines) else None,
                    entry_index=i,
                )
            )
    return out
