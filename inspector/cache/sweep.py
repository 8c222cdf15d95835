"""Billed cost over a sweep or the agents' table, and the frontier of cost against what a cheaper
setting risks (re-reads, overflows, compactions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..session.tree import Session
from .report import cache_replay

#: what a setting costs (lower is better on every axis)
FRONTIER_AXES = ("billedCostUsd", "rereads", "overflows", "compactions")
OBJECTIVES = {
    "billed": "billedCostUsd",
    "blended": "cost_usd",
    "tokens": "total_input_tokens",
    "forgotten": "forgotten",  # items compactions forgot (:func:`inspector.retention.retention_metrics`)
}


def billed_metrics(session: Session, settings: Any, retention: str = "auto") -> dict[str, Any]:
    """The cache model's metrics of one configuration (replayed again: a sweep keeps only metrics)."""
    from ..replay import replay

    return billed_of(replay(session, settings), retention)


def billed_of(replay: Any, retention: str = "auto") -> dict[str, Any]:
    """:func:`billed_metrics` of a configuration already replayed."""
    m = cache_replay(replay, retention=retention).metrics()
    keys = ("billedCostUsd", "cacheHitRate", "invalidations", "invalidationPremiumUsd", "tokensRewritten")
    return {k: m[k] for k in keys}


def frontier(rows: Sequence[dict[str, Any]], axes: Sequence[str] = FRONTIER_AXES) -> list[bool]:
    """For each row, whether no other row is at least as good on every axis and better on one."""

    def dominates(a: dict[str, Any], b: dict[str, Any]) -> bool:
        return all(a[x] <= b[x] for x in axes) and any(a[x] < b[x] for x in axes)

    return [not any(dominates(o, r) for o in rows if o is not r) for r in rows]


def rank(rows: list[dict[str, Any]], objective: str) -> list[dict[str, Any]]:
    """``rows`` with ``frontier`` set, best first by the objective (billed, blended, tokens or
    forgotten: each the lower the better; among equals, the fewer input tokens)."""
    key = OBJECTIVES[objective]
    if all(x in rows[0] for x in FRONTIER_AXES) if rows else False:
        for r, f in zip(rows, frontier(rows), strict=True):
            r["frontier"] = f
    return sorted(rows, key=lambda r: (r[key], r.get("total_input_tokens", 0)))  # ties: fewer tokens first
