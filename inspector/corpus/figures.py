"""Plotly figures of a corpus (plain functions: the app draws them, a notebook shows them).

* :func:`histogram` — the distribution of one overview figure (peak context, tokens at compaction);
* :func:`aggregate_heatmap` — a corpus sweep's aggregate metric over a grid of one or two settings,
  each cell carrying its index in the aggregate (``customdata``) so a click can select it;
* :func:`frontier` — each setting's billed cost (prompt cache) against its re-reads (marker size: overflows),
  with the Pareto frontier (no other setting is cheaper *and* re-reads less) drawn through.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import plotly.graph_objects as go

#: aggregate metrics a heatmap can show: label and how to read the value from an aggregate record
AGGREGATE_METRICS: dict[str, tuple[str, Callable[[dict[str, Any]], float]]] = {
    "input_median": ("median input tokens per session", lambda a: a["inputTokens"]["median"]),
    "input_p90": ("p90 input tokens per session", lambda a: a["inputTokens"]["p90"]),
    "input_total": ("total input tokens", lambda a: a["inputTokens"]["total"]),
    "billed_total": ("total billed cost, prompt cache ($)", lambda a: a["billedCostUsd"]["total"]),
    "cost_total": ("total blended cost, no cache ($)", lambda a: a["costUsd"]["total"]),
    "compactions": ("compactions", lambda a: a["compactions"]),
    "overflows": ("overflows", lambda a: a["overflows"]),
    "rereads": ("re-reads", lambda a: a["rereads"]),
    "worse": ("sessions worse than recorded", lambda a: a["worseThanRecorded"]),
}


def _layout(fig: go.Figure, title: str, height: int = 320) -> go.Figure:
    fig.update_layout(
        title=title, height=height, margin={"l": 60, "r": 20, "t": 50, "b": 50}, template="plotly_white"
    )
    return fig


def histogram(
    values: Sequence[float], title: str, x_title: str, bins: int = 30, y_title: str = "sessions"
) -> go.Figure:
    """How many of ``values`` (sessions, or ``y_title``) fall in each bin; counts are whole numbers,
    so a few values get a tick per unit, not 0.2 steps."""
    fig = go.Figure(go.Histogram(x=list(values), nbinsx=bins, marker_color="#4C78A8"))
    fig.update_xaxes(title=x_title)
    fig.update_yaxes(title=y_title, tickformat=",d", **({"dtick": 1} if len(values) <= 10 else {}))
    return _layout(fig, title)


def aggregate_heatmap(agg: Sequence[dict[str, Any]], keys: Sequence[str], metric: str) -> go.Figure:
    """The grid's first setting across, its second (if any) down; colour = ``metric``."""
    label, get = AGGREGATE_METRICS[metric]
    x_key = keys[0]
    y_key = keys[1] if len(keys) > 1 else None
    xs = sorted({a["settings"][x_key] for a in agg})
    ys = sorted({a["settings"][y_key] for a in agg}) if y_key else [""]
    z: list[list[float | None]] = [[None] * len(xs) for _ in ys]
    idx: list[list[int | None]] = [[None] * len(xs) for _ in ys]
    for i, a in enumerate(agg):
        r = ys.index(a["settings"][y_key]) if y_key else 0
        c = xs.index(a["settings"][x_key])
        z[r][c], idx[r][c] = get(a), i
    text = [[_fmt(v) for v in row] for row in z]
    fig = go.Figure(
        go.Heatmap(
            x=[str(x) for x in xs],
            y=[str(y) for y in ys],
            z=z,
            customdata=idx,
            text=text,
            texttemplate="%{text}",
            colorscale="Viridis",
            hovertemplate=f"{x_key}=%{{x}}<br>{y_key or ''}=%{{y}}<br>{label}: %{{text}}<extra></extra>",
        )
    )
    fig.update_xaxes(title=x_key, type="category")
    fig.update_yaxes(title=y_key or "", type="category")
    return _layout(fig, f"{label} per setting", height=360 if y_key else 240)


def _fmt(v: float | None) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.2f}" if abs(v) < 1000 else f"{v:,.0f}"
    return f"{int(v):,}"


def pareto(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indexes of the points no other point beats on both coordinates (lower is better), by x."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], points[i][1]))
    out: list[int] = []
    best = float("inf")
    for i in order:
        if points[i][1] < best:
            out.append(i)
            best = points[i][1]
    return out


def _cost(a: dict[str, Any]) -> float:
    """A setting's total billed cost with the prompt cache; the blended one for an aggregate
    without it."""
    billed = a.get("billedCostUsd")
    return billed["total"] if billed and a.get("billedSessions", 1) else a["costUsd"]["total"]


def frontier(agg: Sequence[dict[str, Any]]) -> go.Figure:
    """Billed cost (prompt cache) against re-reads, one marker per setting (size and colour: overflows)."""
    pts = [(_cost(a), a["rereads"]) for a in agg]
    names = [
        ", ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in a["settings"].items())
        for a in agg
    ]
    over = [a["overflows"] for a in agg]
    fig = go.Figure(
        go.Scatter(
            x=[p[0] for p in pts],
            y=[p[1] for p in pts],
            mode="markers",
            text=names,
            customdata=list(range(len(agg))),
            marker={
                "size": [10 + min(20, o) for o in over],
                "color": over,
                "colorscale": "Reds",
                "showscale": True,
                "cmin": 0,
                "cmax": max([1, *over]),
                "colorbar": {"title": "overflows"},
                "line": {"width": 1, "color": "#333"},
            },
            hovertemplate="%{text}<br>cost $%{x:,.2f}<br>re-reads %{y:,}<extra></extra>",
            name="settings",
        )
    )
    front = pareto(pts)
    fig.add_trace(
        go.Scatter(
            x=[pts[i][0] for i in front],
            y=[pts[i][1] for i in front],
            mode="lines",
            line={"color": "#E45756", "dash": "dot"},
            name="frontier",
            hoverinfo="skip",
        )
    )
    fig.update_xaxes(title="total billed cost ($, replayed with the prompt cache)")
    fig.update_yaxes(
        title="re-reads", rangemode="tozero", **({"dtick": 1} if max([0, *(p[1] for p in pts)]) <= 10 else {})
    )
    fig.update_layout(showlegend=False)
    return _layout(fig, "Cost against re-reads (dotted: the frontier)", height=380)
