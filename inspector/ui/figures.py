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
# distinct colours for overlaid configurations (colour-blind friendly: Okabe–Ito)
SERIES_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9"]


def app_icon() -> Any:
    """The favicon: three stacked context bars, as a PIL image (made here, so nothing is
    fetched from a CDN)."""
    import numpy as np
    from PIL import Image

    img = np.zeros((32, 32, 4), dtype=np.uint8)
    rows = [(4, 11, [(2, 14, "#4C78A8"), (14, 22, "#F58518"), (22, 30, "#72B7B2")]),
            (13, 20, [(2, 10, "#54A24B"), (10, 18, "#F58518"), (18, 24, "#72B7B2")]),
            (22, 29, [(2, 8, "#54A24B"), (8, 13, "#72B7B2")])]
    for y0, y1, segs in rows:
        for x0, x1, color in segs:
            rgb = [int(color[i:i + 2], 16) for i in (1, 3, 5)]
            img[y0:y1, x0:x1 - 1] = [*rgb, 255]
    return Image.fromarray(img, "RGBA")


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
    t = (t if isinstance(t, str) else str(t)).strip()  # an opaque message may hold any JSON
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
    zoom: bool = False,
) -> go.Figure:
    """Horizontal stacked bars: one segment per message, width by tokens, coloured by kind.

    The window (red line), the reserve zone before it (shaded) and where keepRecentTokens
    starts counting back from the end (dotted) are drawn on the token axis. ``zoom`` fits the
    axis to the messages instead of the whole window (lines beyond it are then off-chart)."""
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
    total_after = sum(after_tokens) if after_tokens is not None else 0
    xaxis: dict[str, Any] = {"title": {"text": "tokens"}, "tickformat": ",~s"}
    if zoom:
        right = max(total_before, total_after, 1) * 1.04
        xaxis["range"] = [0, right]
        if window and window > right:
            notes.append(_note(1, 1.0, f"window {window:,} is off the chart →", "bottom", "right", "paper"))
    elif window:
        xaxis["range"] = [0, max(window, total_before, total_after) * 1.02]
    layout = {"barmode": "overlay", "height": 270, "margin": {"l": 10, "r": 10, "t": 40 if title else 20, "b": 30},
              "title": {"text": html.escape(title)} if title else None, "xaxis": xaxis,
              "legend": {"orientation": "h", "y": -0.3, "x": 0, "title": {"text": "message kind: "}},
              "bargap": 0.35, "shapes": shapes, "annotations": notes,
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
            "yanchor": yanchor, "font": {"size": 11, "color": "#555"}, "bgcolor": "rgba(255,255,255,0.85)"}


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


def trigger_line(settings: Any, agent: str = "pi") -> tuple[int, str] | None:
    """Where the replay's compaction policy fires, in tokens, with a label (None: it never does).
    Replaying as recorded, the line is the rule of the agent that wrote the session (``agent``:
    the session's format), drawn for reference."""
    from ..policies import POLICIES, trigger_threshold

    pol = settings.compaction
    if pol == "recorded":
        pol = agent if agent in POLICIES and agent not in ("recorded", "never") else "pi"
    p = settings.policy
    t = trigger_threshold(pol, settings.context_window, p, settings.reserve_tokens)
    if t is None:
        return None
    label = {"pi": "window − reserveTokens (pi compacts above)",
             "early": f"red zone ({p.early_red_fraction:.0%})",
             "opencode": "window − max output (OpenCode)",
             "codex": f"{p.codex_fraction:.0%} of window (Codex)",
             "claude-code": "window − output reserve − buffer (Claude Code, reported)"}.get(pol, pol)
    return t, label


EVENT_COLORS = {"compaction": "#2ca02c", "pruned": "#7f7f7f", "overflow": "#d62728", "branch_summary": "#E45756",
                "reread": "#9467bd"}


def timeline(replay: Any, *, current_step: int | None = None, name: str = "replayed") -> go.Figure:
    """Context tokens at every model call: replayed vs recorded usage, events, thresholds.
    Long runs are downsampled to the peak of each bucket (zoom shows the same peaks).
    Points carry their step as ``x``, so a click or box selection names the step."""
    all_steps = replay.steps
    steps = downsample(all_steps)
    xs = [s.step for s in steps]
    data: list[dict[str, Any]] = [
        {"type": "scatter", "mode": "lines+markers", "x": xs, "y": [s.tokens for s in steps],
         "name": f"{name} (sent)", "line": {"color": "#4C78A8", "width": 2},
         "marker": {"size": 4 if len(steps) < 300 else 2},
         "hovertemplate": "step %{x}<br>%{y:,} tokens sent<extra></extra>"}]
    if any(s.tokens_before_pruning != s.tokens for s in steps):
        data.append({"type": "scatter", "mode": "lines", "x": xs, "y": [s.tokens_before_pruning for s in steps],
                     "name": "before pruning", "line": {"color": "#9ecae9", "dash": "dot"},
                     "hovertemplate": "step %{x}<br>%{y:,} before pruning<extra></extra>"})
    rec = [(s.step, s.recorded_input) for s in steps if s.recorded_input is not None]
    if rec:
        data.append({"type": "scatter", "mode": "lines", "x": [a for a, _ in rec], "y": [b for _, b in rec],
                     "name": "recorded usage (prompt)", "line": {"color": "#F58518", "width": 1.5},
                     "hovertemplate": "step %{x}<br>recorded %{y:,}<extra></extra>"})
    for etype, symbol in EVENT_SYMBOLS.items():
        pts = [(s.step, s.tokens) for s in all_steps if any(e["type"] == etype for e in s.events)]
        if pts:
            data.append({"type": "scatter", "mode": "markers", "x": [a for a, _ in pts], "y": [b for _, b in pts],
                         "name": etype.replace("_", " "),
                         "marker": {"symbol": symbol, "size": 11, "color": EVENT_COLORS[etype],
                                    "line": {"width": 1.5, "color": EVENT_COLORS[etype]}},
                         "hovertemplate": f"step %{{x}}: {etype.replace('_', ' ')}<extra></extra>"})
    st = replay.settings
    shapes = [_hline(st.context_window, "#d62728")]
    notes = [_note(0.01, st.context_window, f"window {st.context_window:,}", "bottom", "left", "paper", "y")]
    trig = trigger_line(st, getattr(getattr(replay, "session", None), "format", "pi"))
    if trig is not None:
        shapes.append(_hline(trig[0], "#d62728", "dash"))
        notes.append(_note(0.01, trig[0], f"{trig[1]}: {trig[0]:,}", "top", "left", "paper", "y"))
    if current_step is not None and 0 <= current_step < len(all_steps):
        shapes.append(_vline(current_step, "#333", 1))
        cur = all_steps[current_step]
        data.append({"type": "scatter", "mode": "markers", "x": [cur.step], "y": [cur.tokens], "name": "this step",
                     "marker": {"size": 13, "color": "rgba(0,0,0,0)", "line": {"width": 2, "color": "#111"}},
                     "hovertemplate": "step %{x} (shown)<br>%{y:,} tokens<extra></extra>"})
    layout = {"height": 340, "margin": {"l": 10, "r": 10, "t": 20, "b": 30},
              "xaxis": {"title": {"text": "model call (step)"}},
              "yaxis": {"title": {"text": "context tokens"}, "tickformat": ",~s", "rangemode": "tozero"},
              "legend": {"orientation": "h", "y": -0.25}, "hovermode": "closest", "clickmode": "event+select",
              "shapes": shapes, "annotations": notes}
    return go.Figure({"data": data, "layout": layout})


def compare_timelines(replays: Sequence[tuple[str, Any]]) -> go.Figure:
    """Several replays' context tokens per call, overlaid (one colour each, compactions marked)."""
    data: list[dict[str, Any]] = []
    for k, (name, r) in enumerate(replays):
        color = SERIES_COLORS[k % len(SERIES_COLORS)]
        steps = downsample(r.steps)
        data.append({"type": "scatter", "mode": "lines", "x": [s.step for s in steps], "y": [s.tokens for s in steps],
                     "name": html.escape(name), "legendgroup": str(k), "line": {"color": color, "width": 2},
                     "hovertemplate": f"{html.escape(name)}<br>step %{{x}}<br>%{{y:,}} tokens<extra></extra>"})
        pts = [(s.step, s.tokens) for s in r.steps if any(e["type"] == "compaction" for e in s.events)]
        if pts:
            data.append({"type": "scatter", "mode": "markers", "x": [a for a, _ in pts], "y": [b for _, b in pts],
                         "name": "compaction", "legendgroup": str(k), "showlegend": False,
                         "marker": {"symbol": "diamond", "size": 9, "color": color, "line": {"width": 1, "color": "#333"}},
                         "hovertemplate": f"{html.escape(name)}<br>compaction before step %{{x}}<extra></extra>"})
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    windows = sorted({r.settings.context_window for _, r in replays})
    for w in windows:
        shapes.append(_hline(w, "#d62728"))
        notes.append(_note(1, w, f"window {w:,}", "bottom", "right", "paper", "y"))
    layout = {"height": 360, "margin": {"l": 10, "r": 10, "t": 20, "b": 30}, "hovermode": "closest",
              "xaxis": {"title": {"text": "model call (step)"}},
              "yaxis": {"title": {"text": "context tokens"}, "tickformat": ",~s"},
              "legend": {"orientation": "h", "y": -0.22}, "shapes": shapes, "annotations": notes}
    return go.Figure({"data": data, "layout": layout})


def sweep_heatmap(cells: Sequence[Any], x: str, y: str, metric: str,
                  current: dict[str, Any] | None = None) -> go.Figure:
    """A metric over a two-setting grid, the value written in each cell; ``current`` (the
    sidebar's values of x and y) is outlined when it is on the grid."""
    xs = sorted({c.values[x] for c in cells})
    ys = sorted({c.values[y] for c in cells})
    z: list[list[Any]] = [[None for _ in xs] for _ in ys]
    for c in cells:
        z[ys.index(c.values[y])][xs.index(c.values[x])] = getattr(c.metrics, metric)
    fmt = "%{z:,.4f}" if metric.endswith("usd") else "%{z:,.0f}"
    data: list[dict[str, Any]] = [{
        "type": "heatmap", "z": z, "x": [f"{v:,}" for v in xs], "y": [f"{v:,}" for v in ys],
        "colorscale": "Viridis", "colorbar": {"title": {"text": metric.replace("_", " ")}},
        "texttemplate": fmt, "textfont": {"size": 11},
        "hovertemplate": f"{x} = %{{x}}<br>{y} = %{{y}}<br>{metric.replace('_', ' ')} = {fmt}<extra></extra>"}]
    # an invisible marker on every cell: heatmap cells cannot be selected, markers can (a click
    # then names the cell by its index in ``cells``)
    data.append({"type": "scatter", "mode": "markers", "x": [f"{c.values[x]:,}" for c in cells],
                 "y": [f"{c.values[y]:,}" for c in cells], "customdata": list(range(len(cells))),
                 "marker": {"symbol": "square", "size": 36, "color": "rgba(0,0,0,0)"}, "showlegend": False,
                 "hovertemplate": f"{x} = %{{x}}<br>{y} = %{{y}}<br>click to apply<extra></extra>"})
    shapes = []
    if current and current.get(x) in xs and current.get(y) in ys:
        i, j = xs.index(current[x]), ys.index(current[y])
        shapes.append({"type": "rect", "xref": "x", "yref": "y", "x0": i - 0.5, "x1": i + 0.5, "y0": j - 0.5,
                       "y1": j + 0.5, "line": {"color": "#d62728", "width": 3}})
    layout = {"height": 440, "margin": {"l": 10, "r": 10, "t": 20, "b": 30}, "shapes": shapes,
              "clickmode": "event+select", "hovermode": "closest",
              "xaxis": {"title": {"text": x}, "type": "category"}, "yaxis": {"title": {"text": y}, "type": "category"}}
    return go.Figure({"data": data, "layout": layout})


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def tree_lanes(session: Any, *, highlight: Sequence[int] = (), current_path: Sequence[int] = (),
               max_nodes: int = 3000) -> go.Figure:
    """The tree as lanes (git-graph style): a lane per leaf, only "interesting" entries drawn
    (roots, forks, first entries of branches, leaves, compactions, branch summaries, labels);
    chains between them collapsed into one line. ``current_path`` (the replayed branch) is drawn
    dark; ``highlight`` entries are enlarged. Points carry their entry index as ``customdata``."""
    leaves = list(session.leaves)
    lane: dict[int, int] = {}
    for k, leaf in enumerate(leaves):
        for i in session.path(leaf):
            lane.setdefault(i, k)
    forks = set(session.fork_points)
    on_path = set(current_path)
    interesting = set(session.roots) | forks | set(leaves) | set(session.labels) | set(highlight)
    for i, e in enumerate(session.entries):
        if e.type in ("compaction", "branch_summary") or (session.parents[i] in forks):
            interesting.add(i)
    nodes = sorted(interesting)[:max_nodes]
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
            data.append({"type": "scatter", "x": ex, "y": ey, "mode": "lines", "hoverinfo": "skip",
                         "line": {"color": "#333" if dark else "#c8c8c8", "width": 2.5 if dark else 2},
                         "name": "replayed branch" if dark else "other branches", "showlegend": True})

    def kind(i: int) -> str:
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

    styles = {"entry": ("#4C78A8", "circle"), "leaf": ("#4C78A8", "square"), "fork point": ("#333", "diamond"),
              "labelled": ("#B279A2", "circle"), "compaction": ("#54A24B", "circle"),
              "branch summary": ("#E45756", "star")}
    by_kind: dict[str, list[int]] = {}
    for i in nodes:
        by_kind.setdefault(kind(i), []).append(i)
    for k, (color, symbol) in styles.items():
        ids = by_kind.get(k)
        if not ids:
            continue
        texts = []
        for i in ids:
            e = session.entries[i]
            role = getattr(getattr(e, "message", None), "role", None)
            lbl = session.labels.get(i)
            texts.append(f"entry {i} · {html.escape(str(e.type))}{' · ' + html.escape(str(role)) if role else ''}"
                         f"{' · label: ' + html.escape(lbl) if lbl else ''}"
                         f"{' · fork' if i in forks else ''}{' · leaf' if i in leaves else ''}")
        labels = [html.escape(_short(session.labels[i], 24)) if i in session.labels else "" for i in ids]
        data.append({"type": "scatter", "x": ids, "y": [lane.get(i, 0) for i in ids],
                     "mode": "markers+text" if any(labels) else "markers", "text": labels,
                     "textposition": "top center", "textfont": {"size": 10, "color": "#555"},
                     "name": k, "customdata": ids, "hovertext": texts, "hovertemplate": "%{hovertext}<extra></extra>",
                     "marker": {"color": color, "symbol": symbol,
                                "size": [15 if i in highlight else 10 for i in ids],
                                "line": {"width": [2.5 if i in highlight else 1 for i in ids],
                                         "color": ["#d62728" if i in highlight else "white" for i in ids]}}})
    n = max(1, len(leaves))
    last = max(nodes, default=1) or 1
    layout = {"height": min(900, max(240, 70 * n + 110)), "margin": {"l": 10, "r": 10, "t": 30, "b": 30},
              "xaxis": {"title": {"text": "entry (file order)"}, "zeroline": False,
                        "range": [-0.04 * last, last * 1.08]},
              "yaxis": {"title": {"text": "branch (by leaf)"}, "tickmode": "array", "tickvals": list(range(n)),
                        "ticktext": [f"→ {x}" for x in leaves], "automargin": True, "range": [-0.6, n - 0.3],
                        "zeroline": False},
              "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
              "clickmode": "event+select", "hovermode": "closest"}
    return go.Figure({"data": data, "layout": layout})
