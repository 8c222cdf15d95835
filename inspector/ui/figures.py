"""Plotly figures as plain functions (usable from Jupyter; no streamlit here).

* :func:`context_bars` — before/after stacked bars of one model call's context.
* :func:`timeline` — context tokens over all calls: replayed vs recorded, events, thresholds.
* :func:`compare_timelines` — several replays overlaid.
* :func:`tree_lanes` — the branch tree as lanes (git-graph style, chains collapsed).
* :func:`sweep_heatmap` — a metric over a two-setting grid.

Every text that comes from a session is HTML-escaped before it reaches plotly (hover labels are
rendered as HTML).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from ..context import ContextMessage
from ..session.models import (
    AssistantMessage,
    BashExecutionMessage,
    CustomMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

KIND_COLORS = {
    "user": "#4C78A8",
    "assistant": "#72B7B2",
    "tool output": "#F58518",
    "pruned marker": "#B6B6B6",
    "summary": "#54A24B",
    "custom / bash": "#B279A2",
    "injected": "#E45756",
}
EVENT_SYMBOLS = {"compaction": "diamond", "pruned": "triangle-down", "overflow": "x", "branch_summary": "star",
                 "reread": "circle-open"}
MAX_SEGMENTS = 400


def message_kind(cm: ContextMessage, pruned: bool = False) -> str:
    if pruned:
        return "pruned marker"
    role = cm.role
    if cm.entry_index is None and role in ("custom", "user"):
        return "injected"
    if role == "user":
        return "user"
    if role == "assistant":
        return "assistant"
    if role == "toolResult":
        return "tool output"
    if role in ("compactionSummary", "branchSummary"):
        return "summary"
    return "custom / bash"


def message_text(m: Any, limit: int = 300) -> str:
    """A short plain-text preview of any message."""
    if isinstance(m, (UserMessage, ToolResultMessage, CustomMessage)):
        c = m.content
        t = c if isinstance(c, str) else " ".join(b.text for b in c if isinstance(b, TextContent))
        if isinstance(c, list) and any(getattr(b, "type", "") == "image" for b in c):
            t += " [image]"
    elif isinstance(m, AssistantMessage):
        parts = []
        for b in m.content:
            if isinstance(b, TextContent):
                parts.append(b.text)
            elif isinstance(b, ThinkingContent):
                parts.append("(thinking) " + b.thinking)
            elif isinstance(b, ToolCall):
                parts.append(f"{b.name}({', '.join(f'{k}=' + str(v)[:60] for k, v in (b.arguments or {}).items())})"
                             if isinstance(b.arguments, dict) else b.name)
        t = " · ".join(parts)
        if m.stopReason in ("aborted", "error"):
            t = f"[{m.stopReason}] {t}"
    elif isinstance(m, BashExecutionMessage):
        t = f"$ {m.command}\n{m.output}"
    else:
        t = getattr(m, "summary", "") or ""
    t = t.strip()
    return t if len(t) <= limit else t[: limit - 1] + "…"


def _hover_text(t: str) -> str:
    # plotly renders hover labels as HTML: escape, then keep line breaks visible
    lines = t.splitlines()[:4]
    return "<br>".join(html.escape(x[:120]) for x in lines)


def _segments(msgs: Sequence[ContextMessage], tokens: Sequence[int], pruned: set[int] | None = None
              ) -> list[dict[str, Any]]:
    segs = []
    for k, (cm, t) in enumerate(zip(msgs, tokens, strict=True)):
        m = cm.message
        segs.append({
            "kind": message_kind(cm, pruned is not None and k in pruned),
            "tokens": t,
            "label": f"#{k} {cm.role}" + (f" · {m.toolName}" if isinstance(m, ToolResultMessage) else "")
                     + (f" · entry {cm.entry_index}" if cm.entry_index is not None else " · injected"),
            "text": message_text(m),
            "count": 1,
        })
    if len(segs) <= MAX_SEGMENTS:
        return segs
    # Downsample: merge neighbours of the same kind until few enough remain (detail on zoom is
    # the message list below the chart).
    total = sum(tokens) or 1
    merged: list[dict[str, Any]] = []
    floor = total / MAX_SEGMENTS
    for s in segs:
        if merged and merged[-1]["kind"] == s["kind"] and (merged[-1]["tokens"] < floor or s["tokens"] < floor):
            last = merged[-1]
            last["tokens"] += s["tokens"]
            last["count"] += 1
            last["label"] = last["label"].split(" (+")[0] + f" (+{last['count'] - 1} more)"
        else:
            merged.append(dict(s))
    return merged


def context_bars(
    before: Sequence[ContextMessage],
    before_tokens: Sequence[int],
    after: Sequence[ContextMessage] | None = None,
    after_tokens: Sequence[int] | None = None,
    *,
    pruned_positions: set[int] | None = None,
    window: int | None = None,
    reserve: int | None = None,
    keep_recent: int | None = None,
    title: str = "",
) -> go.Figure:
    """Horizontal stacked bars: one segment per message, width by tokens, coloured by kind."""
    rows = [("as built", _segments(before, before_tokens))]
    if after is not None and after_tokens is not None:
        rows.append(("sent to the model", _segments(after, after_tokens, pruned_positions)))
    # One trace per (row, kind), each bar placed with its own ``base``, and the figure built from
    # one dict: a few traces instead of one per message keeps it fast to build and small to send.
    data: list[dict[str, Any]] = []
    legend: set[str] = set()
    for row_name, segs in rows:
        start = 0
        by_kind: dict[str, dict[str, list[Any]]] = {}
        for seg in segs:
            d = by_kind.setdefault(seg["kind"], {"x": [], "base": [], "hover": []})
            d["x"].append(seg["tokens"])
            d["base"].append(start)
            d["hover"].append(f"<b>{html.escape(seg['label'])}</b><br>{seg['tokens']:,} tokens<br>"
                              f"{_hover_text(seg['text'])}")
            start += seg["tokens"]
        for kind in KIND_COLORS:
            d = by_kind.get(kind)
            if not d:
                continue
            data.append({"type": "bar", "orientation": "h", "y": [row_name] * len(d["x"]), "x": d["x"],
                         "base": d["base"], "name": kind, "legendgroup": kind, "showlegend": kind not in legend,
                         "marker": {"color": KIND_COLORS[kind], "line": {"width": 0.3, "color": "white"}},
                         "hovertext": d["hover"], "hovertemplate": "%{hovertext}<extra></extra>"})
            legend.add(kind)
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    if window:
        shapes.append(_vline(window, "#d62728", 2))
        notes.append(_note(window, 1.0, "window", "bottom"))
        if reserve:
            shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": window - reserve, "x1": window,
                           "y0": 0, "y1": 1, "fillcolor": "#d62728", "opacity": 0.08, "line": {"width": 0}})
            notes.append(_note(window - reserve, 0.98, "reserve", "top", "left"))
    total_before = sum(before_tokens)
    if keep_recent and total_before > keep_recent:
        shapes.append({**_vline(total_before - keep_recent, "#555", 1), "line": {"color": "#555", "dash": "dot"}})
        notes.append(_note(total_before - keep_recent, 1.0, "keepRecentTokens", "bottom", "left"))
    layout = {"barmode": "overlay", "height": 260, "margin": {"l": 10, "r": 10, "t": 40 if title else 20, "b": 30},
              "title": {"text": html.escape(title)} if title else None, "xaxis": {"title": {"text": "tokens"}},
              "legend": {"orientation": "h", "y": -0.35}, "bargap": 0.35, "shapes": shapes, "annotations": notes,
              "yaxis": {"range": [-0.5, len(rows) - 0.5], "autorange": "reversed"}}
    return go.Figure({"data": data, "layout": {k: v for k, v in layout.items() if v is not None}})


def _vline(x: float, color: str, width: float) -> dict[str, Any]:
    return {"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1,
            "line": {"color": color, "width": width}}


def _hline(y: float, color: str, dash: str = "solid") -> dict[str, Any]:
    return {"type": "line", "xref": "paper", "yref": "y", "x0": 0, "x1": 1, "y0": y, "y1": y,
            "line": {"color": color, "width": 1.5, "dash": dash}}


def _note(x: float, y: float, text: str, yanchor: str, xanchor: str = "right", xref: str = "x",
          yref: str = "paper") -> dict[str, Any]:
    return {"x": x, "y": y, "xref": xref, "yref": yref, "text": text, "showarrow": False, "xanchor": xanchor,
            "yanchor": yanchor, "font": {"size": 11, "color": "#555"}}


MAX_TIMELINE_POINTS = 1500


def downsample(steps: Sequence[Any], limit: int = MAX_TIMELINE_POINTS) -> list[Any]:
    """At most ``limit`` steps: the largest context of each bucket (peaks survive), plus the first
    and last step. Events are drawn from all steps separately."""
    n = len(steps)
    if n <= limit:
        return list(steps)
    size = -(-n // limit)
    out = [max(steps[i:i + size], key=lambda st: st.tokens) for i in range(0, n, size)]
    if out[0] is not steps[0]:
        out.insert(0, steps[0])
    if out[-1] is not steps[-1]:
        out.append(steps[-1])
    return out


def timeline(replay: Any, *, current_step: int | None = None, name: str = "replayed") -> go.Figure:
    """Context tokens at every model call: replayed vs recorded usage, events, thresholds.
    Long runs are downsampled to the peak of each bucket (zoom shows the same peaks)."""
    all_steps = replay.steps
    steps = downsample(all_steps)
    xs = [s.step for s in steps]
    data: list[dict[str, Any]] = [
        {"type": "scatter", "mode": "lines", "x": xs, "y": [s.tokens for s in steps], "name": f"{name} (sent)",
         "line": {"color": "#4C78A8"}, "hovertemplate": "step %{x}<br>%{y:,} tokens<extra></extra>"}]
    if any(s.tokens_before_pruning != s.tokens for s in steps):
        data.append({"type": "scatter", "mode": "lines", "x": xs, "y": [s.tokens_before_pruning for s in steps],
                     "name": "before pruning", "line": {"color": "#9ecae9", "dash": "dot"},
                     "hovertemplate": "step %{x}<br>%{y:,} before pruning<extra></extra>"})
    rec = [(s.step, s.recorded_input) for s in steps if s.recorded_input is not None]
    if rec:
        data.append({"type": "scatter", "mode": "lines", "x": [a for a, _ in rec], "y": [b for _, b in rec],
                     "name": "recorded usage", "line": {"color": "#F58518", "width": 1},
                     "hovertemplate": "step %{x}<br>recorded %{y:,}<extra></extra>"})
    for etype, symbol in EVENT_SYMBOLS.items():
        pts = [(s.step, s.tokens) for s in all_steps if any(e["type"] == etype for e in s.events)]
        if pts:
            data.append({"type": "scatter", "mode": "markers", "x": [a for a, _ in pts], "y": [b for _, b in pts],
                         "name": etype.replace("_", " "), "marker": {"symbol": symbol, "size": 10},
                         "hovertemplate": f"step %{{x}}: {etype}<extra></extra>"})
    st = replay.settings
    trigger = st.context_window - st.reserve_tokens
    shapes = [_hline(st.context_window, "#d62728"), _hline(trigger, "#d62728", "dash")]
    notes = [_note(1, st.context_window, "window", "bottom", "right", "paper", "y"),
             _note(1, trigger, "window − reserve (pi trigger)", "top", "right", "paper", "y")]
    if current_step is not None and all_steps:
        shapes.append(_vline(current_step, "#333", 1))
    layout = {"height": 320, "margin": {"l": 10, "r": 10, "t": 20, "b": 30},
              "xaxis": {"title": {"text": "model call (step)"}}, "yaxis": {"title": {"text": "context tokens"}},
              "legend": {"orientation": "h", "y": -0.25}, "hovermode": "closest", "shapes": shapes, "annotations": notes}
    return go.Figure({"data": data, "layout": layout})


def compare_timelines(replays: Sequence[tuple[str, Any]]) -> go.Figure:
    fig = go.Figure()
    for name, r in replays:
        fig.add_trace(go.Scatter(x=[s.step for s in r.steps], y=[s.tokens for s in r.steps], mode="lines",
                                 name=html.escape(name), hovertemplate="step %{x}<br>%{y:,}<extra></extra>"))
    if replays:
        st = replays[0][1].settings
        fig.add_hline(y=st.context_window, line_color="#d62728", annotation_text="window")
    fig.update_layout(height=340, margin={"l": 10, "r": 10, "t": 20, "b": 30}, xaxis_title="model call",
                      yaxis_title="context tokens", legend={"orientation": "h", "y": -0.25})
    return fig


def sweep_heatmap(cells: Sequence[Any], x: str, y: str, metric: str) -> go.Figure:
    xs = sorted({c.values[x] for c in cells})
    ys = sorted({c.values[y] for c in cells})
    z = [[None for _ in xs] for _ in ys]
    for c in cells:
        z[ys.index(c.values[y])][xs.index(c.values[x])] = getattr(c.metrics, metric)
    fig = go.Figure(go.Heatmap(z=z, x=[str(v) for v in xs], y=[str(v) for v in ys], colorscale="Viridis",
                               colorbar={"title": metric.replace("_", " ")},
                               hovertemplate=f"{x}=%{{x}}<br>{y}=%{{y}}<br>{metric}=%{{z:,}}<extra></extra>"))
    fig.update_layout(height=420, margin={"l": 10, "r": 10, "t": 20, "b": 30}, xaxis_title=x, yaxis_title=y)
    return fig


def tree_lanes(session: Any, *, highlight: Sequence[int] = (), max_nodes: int = 3000) -> go.Figure:
    """The tree as lanes: a lane per leaf, only "interesting" entries drawn (roots, forks, first
    entries of branches, leaves, compactions, branch summaries, labels); chains collapsed."""
    leaves = list(session.leaves)
    lane: dict[int, int] = {}
    for k, leaf in enumerate(leaves):
        for i in session.path(leaf):
            lane.setdefault(i, k)
    forks = set(session.fork_points)
    interesting = set(session.roots) | forks | set(leaves) | set(session.labels) | set(highlight)
    for i, e in enumerate(session.entries):
        if e.type in ("compaction", "branch_summary") or (session.parents[i] in forks):
            interesting.add(i)
    nodes = sorted(interesting)[:max_nodes]
    shown = set(nodes)
    fig = go.Figure()
    ex: list[float | None] = []
    ey: list[float | None] = []
    for i in nodes:
        p = session.parents[i]
        while p >= 0 and p not in shown:
            p = session.parents[p]
        if p >= 0:
            ex += [p, i, None]
            ey += [lane.get(p, 0), lane.get(i, 0), None]
    fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line={"color": "#bbb", "width": 2}, hoverinfo="skip",
                             showlegend=False))
    colors = {"compaction": "#54A24B", "branch_summary": "#E45756"}
    texts = []
    for i in nodes:
        e = session.entries[i]
        role = getattr(getattr(e, "message", None), "role", None)
        lbl = session.labels.get(i)
        texts.append(f"entry {i} · {html.escape(str(e.type))}{' · ' + html.escape(str(role)) if role else ''}"
                     f"{' · label: ' + html.escape(lbl) if lbl else ''}"
                     f"{' · fork' if i in forks else ''}{' · leaf' if i in leaves else ''}")
    fig.add_trace(go.Scatter(
        x=nodes, y=[lane.get(i, 0) for i in nodes], mode="markers",
        marker={"size": [14 if i in highlight else 9 for i in nodes],
                "color": [colors.get(str(session.entries[i].type), "#4C78A8" if i not in highlight else "#d62728")
                          for i in nodes], "line": {"width": 1, "color": "white"}},
        text=texts, hovertemplate="%{text}<extra></extra>", showlegend=False, customdata=nodes))
    fig.update_layout(height=max(200, 60 * (len(leaves) + 1)), margin={"l": 70, "r": 10, "t": 10, "b": 30},
                      xaxis_title="entry (file order)", yaxis={"title": "branch", "tickmode": "array",
                                                               "tickvals": list(range(len(leaves))),
                                                               "ticktext": [f"leaf {x}" for x in leaves]})
    return fig
