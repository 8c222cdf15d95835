"""The branch tree as lanes, git-graph style, chains collapsed (:func:`tree_lanes`)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from ...visible import clip


def _tree_lane_of(session: Any, leaves: Sequence[int]) -> dict[int, int]:
    """Entry → its lane: the first leaf (in ``leaves`` order) whose path holds it."""
    lane: dict[int, int] = {}
    for k, leaf in enumerate(leaves):
        for i in session.path(leaf):
            lane.setdefault(i, k)
    return lane


def _tree_nodes(session: Any, leaves: Sequence[int], highlight: Sequence[int], max_nodes: int) -> list[int]:
    """The entries the tree draws, in file order: roots, forks, first entries of branches, leaves,
    compactions, branch summaries, labels and ``highlight`` (at most ``max_nodes``)."""
    forks = set(session.fork_points)
    interesting = set(session.roots) | forks | set(leaves) | set(session.labels) | set(highlight)
    for i, e in enumerate(session.entries):
        if e.type in ("compaction", "branch_summary") or (session.parents[i] in forks):
            interesting.add(i)
    return sorted(interesting)[:max_nodes]


def _tree_edges(
    session: Any, nodes: Sequence[int], lane: dict[int, int], on_path: set[int]
) -> list[dict[str, Any]]:
    """The lines between drawn entries (each to its nearest drawn ancestor): one trace for the other
    branches, one (dark) for the replayed branch; a trace with no line is left out."""
    shown = set(nodes)
    data: list[dict[str, Any]] = []
    for dark in (False, True):
        ex: list[float | None] = []
        ey: list[float | None] = []
        for i in nodes:
            p = session.parents[i]
            while p >= 0 and p not in shown:
                p = session.parents[p]
            if p >= 0 and ((i in on_path and p in on_path) == dark):
                ex += [p, i, None]
                ey += [lane.get(p, 0), lane.get(i, 0), None]
        if ex:
            data.append(
                {
                    "type": "scatter",
                    "x": ex,
                    "y": ey,
                    "mode": "lines",
                    "hoverinfo": "skip",
                    "line": {"color": "#333" if dark else "#c8c8c8", "width": 2.5 if dark else 2},
                    "name": "replayed branch" if dark else "other branches",
                    "showlegend": True,
                }
            )
    return data


#: The tree's node kinds, in legend order: (colour, marker symbol).
_TREE_NODE_STYLES = {
    "entry": ("#4C78A8", "circle"),
    "leaf": ("#4C78A8", "square"),
    "fork point": ("#333", "diamond"),
    "labelled": ("#B279A2", "circle"),
    "compaction": ("#54A24B", "circle"),
    "branch summary": ("#E45756", "star"),
}


def _node_kind(session: Any, i: int, forks: set[int], leaves: Sequence[int]) -> str:
    """One of :data:`_TREE_NODE_STYLES`: the first that applies, in the order written here."""
    t = str(session.entries[i].type)
    if t == "compaction":
        return "compaction"
    if t == "branch_summary":
        return "branch summary"
    if i in forks:
        return "fork point"
    if i in session.labels:
        return "labelled"
    return "leaf" if i in leaves else "entry"


def _node_hover(session: Any, i: int, forks: set[int], leaves: Sequence[int]) -> str:
    e = session.entries[i]
    role = getattr(getattr(e, "message", None), "role", None)
    lbl = session.labels.get(i)
    return (
        f"entry {i} · {html.escape(str(e.type))}{' · ' + html.escape(str(role)) if role else ''}"
        f"{' · label: ' + html.escape(lbl) if lbl else ''}"
        f"{' · fork' if i in forks else ''}{' · leaf' if i in leaves else ''}"
    )


def _tree_markers(
    session: Any, nodes: Sequence[int], lane: dict[int, int], leaves: Sequence[int], highlight: Sequence[int]
) -> list[dict[str, Any]]:
    """One marker trace per node kind that occurs (labels written above labelled entries, as many as
    fit side by side: :func:`_written_labels`)."""
    forks = set(session.fork_points)
    written = _written_labels(session, nodes, lane)
    by_kind: dict[str, list[int]] = {}
    for i in nodes:
        by_kind.setdefault(_node_kind(session, i, forks, leaves), []).append(i)
    data: list[dict[str, Any]] = []
    for kind_name, (color, symbol) in _TREE_NODE_STYLES.items():
        ids = by_kind.get(kind_name)
        if not ids:
            continue
        labels = [html.escape(clip(session.labels[i], 24)) if i in written else "" for i in ids]
        data.append(
            {
                "type": "scatter",
                "x": ids,
                "y": [lane.get(i, 0) for i in ids],
                "mode": "markers+text" if any(labels) else "markers",
                "text": labels,
                "textposition": "top center",
                "textfont": {"size": 10, "color": "#555"},
                "name": kind_name,
                "customdata": ids,
                "hovertext": [_node_hover(session, i, forks, leaves) for i in ids],
                "hovertemplate": "%{hovertext}<extra></extra>",
                "marker": {
                    "color": color,
                    "symbol": symbol,
                    "size": [15 if i in highlight else 10 for i in ids],
                    "line": {
                        "width": [2.5 if i in highlight else 1 for i in ids],
                        "color": ["#d62728" if i in highlight else "white" for i in ids],
                    },
                },
            }
        )
    return data


LABEL_CHARS_ACROSS = 150
"""About how many characters of a node's label (10-point text) the tree's plot holds across."""


def _written_labels(session: Any, nodes: Sequence[int], lane: dict[int, int]) -> set[int]:
    """The labelled nodes whose label is written above them: in each lane, from the left, one whose
    text would overlap the last written one is left to its hover (which names the label)."""
    last = max(nodes, default=1) or 1
    per_char = 1.12 * last / LABEL_CHARS_ACROSS  # the x axis spans 1.12 × the last entry
    written: set[int] = set()
    right: dict[int, float] = {}  # lane -> where its last written label ends
    for i in sorted(i for i in nodes if i in session.labels):
        half = (min(len(session.labels[i]), 24) + 1) * per_char / 2
        if i - half > right.get(lane.get(i, 0), float("-inf")):
            written.add(i)
            right[lane.get(i, 0)] = i + half
    return written


def _tree_layout(leaves: Sequence[int], nodes: Sequence[int]) -> dict[str, Any]:
    n = max(1, len(leaves))
    last = max(nodes, default=1) or 1
    return {
        "height": min(900, max(240, 70 * n + 110)),
        "margin": {"l": 10, "r": 10, "t": 30, "b": 30},
        "xaxis": {
            "title": {"text": "entry (file order)"},
            "zeroline": False,
            "range": [-0.04 * last, last * 1.08],
        },
        "yaxis": {
            "title": {"text": "branch (by leaf)"},
            "tickmode": "array",
            "tickvals": list(range(n)),
            "ticktext": [f"→ {x}" for x in leaves],
            "automargin": True,
            "range": [-0.6, n - 0.3],
            "zeroline": False,
        },
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        "clickmode": "event+select",
        "hovermode": "closest",
    }


def tree_lanes(
    session: Any, *, highlight: Sequence[int] = (), current_path: Sequence[int] = (), max_nodes: int = 3000
) -> go.Figure:
    """The tree as lanes (git-graph style): a lane per leaf, only "interesting" entries drawn
    (roots, forks, first entries of branches, leaves, compactions, branch summaries, labels);
    chains between them collapsed into one line. ``current_path`` (the replayed branch) is drawn
    dark; ``highlight`` entries are enlarged. Points carry their entry index as ``customdata``."""
    leaves = list(session.leaves)
    lane = _tree_lane_of(session, leaves)
    nodes = _tree_nodes(session, leaves, highlight, max_nodes)
    data = _tree_edges(session, nodes, lane, set(current_path))
    data += _tree_markers(session, nodes, lane, leaves, highlight)
    return go.Figure({"data": data, "layout": _tree_layout(leaves, nodes)})
