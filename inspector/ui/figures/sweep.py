"""A metric over a two-setting grid (:func:`sweep_heatmap`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go


def sweep_heatmap(
    cells: Sequence[Any],
    x: str,
    y: str,
    metric: str,
    current: dict[str, Any] | None = None,
    values: Sequence[float | None] | None = None,
) -> go.Figure:
    """A metric over a two-setting grid, the value written in each cell; ``current`` (the
    sidebar's values of x and y) is outlined when it is on the grid. ``values``: each cell's value
    when it is not one of the cells' metrics (``metric`` names it; "retention" is a share)."""
    xs = sorted({c.values[x] for c in cells})
    ys = sorted({c.values[y] for c in cells})
    z: list[list[Any]] = [[None for _ in xs] for _ in ys]
    for i, c in enumerate(cells):
        z[ys.index(c.values[y])][xs.index(c.values[x])] = (
            values[i] if values is not None else getattr(c.metrics, metric)
        )
    fmt = "%{z:,.4f}" if metric.endswith("usd") else "%{z:.0%}" if metric == "retention" else "%{z:,.0f}"
    data: list[dict[str, Any]] = [
        {
            "type": "heatmap",
            "z": z,
            "x": [f"{v:,}" for v in xs],
            "y": [f"{v:,}" for v in ys],
            "colorscale": "Viridis",
            "colorbar": {"title": {"text": metric.replace("_", " ")}},
            "texttemplate": fmt,
            "textfont": {"size": 11},
            "hovertemplate": f"{x} = %{{x}}<br>{y} = %{{y}}<br>{metric.replace('_', ' ')} = {fmt}<extra></extra>",
        }
    ]
    # an invisible marker on every cell: heatmap cells cannot be selected, markers can (a click
    # then names the cell by its index in ``cells``)
    data.append(
        {
            "type": "scatter",
            "mode": "markers",
            "x": [f"{c.values[x]:,}" for c in cells],
            "y": [f"{c.values[y]:,}" for c in cells],
            "customdata": list(range(len(cells))),
            "marker": {"symbol": "square", "size": 36, "color": "rgba(0,0,0,0)"},
            "showlegend": False,
            "hovertemplate": f"{x} = %{{x}}<br>{y} = %{{y}}<br>click to apply<extra></extra>",
        }
    )
    shapes = []
    if current and current.get(x) in xs and current.get(y) in ys:
        i, j = xs.index(current[x]), ys.index(current[y])
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "y",
                "x0": i - 0.5,
                "x1": i + 0.5,
                "y0": j - 0.5,
                "y1": j + 0.5,
                "line": {"color": "#d62728", "width": 3},
            }
        )
    layout = {
        "height": 440,
        "margin": {"l": 10, "r": 10, "t": 20, "b": 30},
        "shapes": shapes,
        "clickmode": "event+select",
        "hovermode": "closest",
        "xaxis": {"title": {"text": x}, "type": "category"},
        "yaxis": {"title": {"text": y}, "type": "category"},
    }
    return go.Figure({"data": data, "layout": layout})
