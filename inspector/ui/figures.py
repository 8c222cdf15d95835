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

import bisect
import html
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from ..context import ContextMessage
from ..policies import get_policy
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
from ..visible import clip

KIND_COLORS = {
    "user": "#4C78A8",
    "assistant": "#72B7B2",
    "tool output": "#F58518",
    "pruned marker": "#B6B6B6",
    "summary": "#54A24B",
    "custom / bash": "#B279A2",
    "injected": "#E45756",
}
EVENT_SYMBOLS = {
    "compaction": "diamond",
    "pruned": "triangle-down",
    "overflow": "x",
    "branch_summary": "star",
    "reread": "circle-open",
}
#: what became of a message at a compaction (see inspector.compaction_view); kept ones keep their kind's colour
PART_COLORS = {
    "summarised": "#A0A0A0",
    "turn prefix": "#D4A017",
    "previous summary": "#9BC995",
    "dropped": "#E2E2E2",
}
SEGMENT_COLORS = {**KIND_COLORS, **PART_COLORS}
MAX_SEGMENTS = 400
# distinct colours for overlaid configurations (colour-blind friendly: Okabe–Ito)
SERIES_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9"]


def app_icon() -> Any:
    """The favicon: three stacked context bars, as a PIL image (made here, so nothing is
    fetched from a CDN)."""
    import numpy as np
    from PIL import Image

    img = np.zeros((32, 32, 4), dtype=np.uint8)
    rows = [
        (4, 11, [(2, 14, "#4C78A8"), (14, 22, "#F58518"), (22, 30, "#72B7B2")]),
        (13, 20, [(2, 10, "#54A24B"), (10, 18, "#F58518"), (18, 24, "#72B7B2")]),
        (22, 29, [(2, 8, "#54A24B"), (8, 13, "#72B7B2")]),
    ]
    for y0, y1, segs in rows:
        for x0, x1, color in segs:
            rgb = [int(color[i : i + 2], 16) for i in (1, 3, 5)]
            img[y0:y1, x0 : x1 - 1] = [*rgb, 255]
    return Image.fromarray(img, "RGBA")


VALIDATE = False
"""Validate the specs :func:`trusted_figure` is given (the tests turn it on)."""


def trusted_figure(spec: dict[str, Any]) -> go.Figure:
    """A figure from a spec this module built. plotly's validation of every property (which
    yields the same figure) took longer than building a long run's timeline or bars, so it runs
    only when :data:`VALIDATE` is on: the test suite turns it on, where a wrong property fails."""
    return go.Figure(spec, _validate=VALIDATE)


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
                parts.append(
                    f"{b.name}({', '.join(f'{k}=' + clip(str(v), 60) for k, v in (b.arguments or {}).items())})"
                    if isinstance(b.arguments, dict)
                    else b.name
                )
        t = " · ".join(parts)
        if m.stopReason in ("aborted", "error"):
            t = f"[{m.stopReason}] {t}"
    elif isinstance(m, BashExecutionMessage):
        t = f"$ {m.command}\n{m.output}"
    else:
        t = getattr(m, "summary", "") or ""
    t = (t if isinstance(t, str) else str(t)).strip()  # an opaque message may hold any JSON
    return clip(t, limit)


def _hover_text(t: str) -> str:
    # plotly renders hover labels as HTML: escape, then keep line breaks visible
    lines = t.splitlines()[:4]
    return "<br>".join(html.escape(clip(x, 120)) for x in lines)


PUT_BACK = "put back"
"""The part of a message the agent put back itself after its compaction (coloured by its kind,
as a kept one is; named so in its label)."""


def _segments(
    msgs: Sequence[ContextMessage],
    tokens: Sequence[int],
    pruned: set[int] | None = None,
    parts: Sequence[str] | None = None,
    hatched: set[int] | None = None,
) -> list[dict[str, Any]]:
    """One segment per message: its colour key (``parts[k]`` when that is not "kept", else the
    message's kind), tokens, hover label and text; ``hatched`` positions are drawn hatched.
    Beyond :data:`MAX_SEGMENTS` messages, small neighbours are merged (:func:`_merge`): the
    widths still add up to the exact tokens, and the message list below the chart has each one."""
    segs: list[dict[str, Any]] = []
    for k, (cm, t) in enumerate(zip(msgs, tokens, strict=True)):
        part = parts[k] if parts is not None else "kept"
        kind = (
            "summary"
            if part == "summary"
            else message_kind(cm, pruned is not None and k in pruned)
            if part in ("kept", PUT_BACK)
            else part
        )
        segs.append(
            {"kind": kind, "hatch": hatched is not None and k in hatched, "tokens": t, "k": k, "count": 1}
        )
    if len(segs) > MAX_SEGMENTS:
        segs = _merge(segs, (sum(tokens) or 1) / MAX_SEGMENTS)
    for seg in segs:  # labels and texts only for the segments drawn
        k = seg.pop("k")
        cm = msgs[k]
        m, part = cm.message, parts[k] if parts is not None else "kept"
        label = (
            f"#{k} {cm.role}"
            + (f" · {m.toolName}" if isinstance(m, ToolResultMessage) else "")
            + (f" · entry {cm.entry_index}" if cm.entry_index is not None else " · injected")
            + (f" · {part}" if part not in ("kept", "summary") else "")
        )
        mix = seg.pop("mix", None)
        if mix is not None:
            kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(mix.items(), key=lambda kv: -kv[1]))
            seg["label"] = f"#{k}–#{k + seg['count'] - 1}: {seg['count']} small messages ({kinds})"
            seg["text"] = "each one is in the message list below the chart"
        else:
            seg["label"] = label + (f" (+{seg['count'] - 1} more)" if seg["count"] > 1 else "")
            seg["text"] = message_text(m)
    return segs


def _merge(segs: list[dict[str, Any]], floor: float) -> list[dict[str, Any]]:
    """Fewer segments for a long context: neighbours of the same kind merge when one is under
    ``floor`` tokens (as before); then runs of messages under ``floor`` of any kind merge into one
    segment of the kind holding most of its tokens (hatched when most of it is), until it reaches
    ``floor``. A merged segment keeps its first message's position ``k`` and counts the rest."""
    same: list[dict[str, Any]] = []
    for s in segs:
        last = same[-1] if same else None
        if (
            last
            and (last["kind"], last["hatch"]) == (s["kind"], s["hatch"])
            and min(last["tokens"], s["tokens"]) < floor
        ):
            last["tokens"] += s["tokens"]
            last["count"] += 1
        else:
            same.append(dict(s))
    if len(same) <= MAX_SEGMENTS:
        return same
    out: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []

    def close() -> None:
        if len(run) == 1:
            out.append(run[0])
        elif run:
            by_kind: dict[str, int] = {}
            mix: dict[str, int] = {}
            for r in run:
                by_kind[r["kind"]] = by_kind.get(r["kind"], 0) + r["tokens"]
                mix[r["kind"]] = mix.get(r["kind"], 0) + r["count"]
            total = sum(by_kind.values())
            hatched = sum(r["tokens"] for r in run if r["hatch"])
            out.append(
                {
                    "kind": max(by_kind, key=lambda kind: by_kind[kind]),
                    "hatch": 2 * hatched > total,
                    "tokens": total,
                    "k": run[0]["k"],
                    "count": sum(r["count"] for r in run),
                    "mix": mix,
                    "markers": mix.get("pruned marker", 0),
                }
            )
        run.clear()

    held = 0
    for s in same:
        if s["tokens"] >= floor:
            close()
            out.append(s)
            held = 0
            continue
        run.append(s)
        held += s["tokens"]
        if held >= floor:
            close()
            held = 0
    close()
    return out


PRUNED_LEGEND = "pruned at this call (hatched)"


def _bar_traces(rows: Sequence[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """One trace per (row, colour, hatched), each bar placed with its own ``base``: a few traces
    instead of one per message keeps the figure fast to build and small to send."""
    data: list[dict[str, Any]] = []
    legend: set[str] = set()
    for row_name, segs in rows:
        start = 0
        by_kind: dict[tuple[str, bool], dict[str, list[Any]]] = {}
        for seg in segs:
            d = by_kind.setdefault((seg["kind"], seg["hatch"]), {"x": [], "base": [], "hover": []})
            d["x"].append(seg["tokens"])
            d["base"].append(start)
            d["hover"].append(
                f"<b>{html.escape(seg['label'])}</b><br>{seg['tokens']:,} tokens<br>"
                f"{_hover_text(seg['text'])}"
            )
            start += seg["tokens"]
        for (kind, hatch), d in sorted(
            by_kind.items(), key=lambda kv: (list(SEGMENT_COLORS).index(kv[0][0]), kv[0][1])
        ):
            name = PRUNED_LEGEND if hatch else kind
            marker: dict[str, Any] = {"color": SEGMENT_COLORS[kind], "line": {"width": 0.3, "color": "white"}}
            if hatch:
                marker["pattern"] = {
                    "shape": "/",
                    "fgcolor": "rgba(0,0,0,0.6)",
                    "size": 6,
                    "solidity": 0.3,
                    "fillmode": "overlay",
                }  # over the kind's colour
            data.append(
                {
                    "type": "bar",
                    "orientation": "h",
                    "y": [row_name] * len(d["x"]),
                    "x": d["x"],
                    "base": d["base"],
                    "name": name,
                    "legendgroup": name,
                    "showlegend": name not in legend,
                    "marker": marker,
                    "hovertext": d["hover"],
                    "hovertemplate": "%{hovertext}<extra></extra>",
                }
            )
            legend.add(name)
    return data


def _threshold_marks(
    window: int | None, reserve: int | None, keep_at: float | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The window (red), the reserve zone before it (shaded) and where keepRecentTokens starts
    counting back (dotted): lines, and their labels stacked in three rows above the plot so they
    never overlap."""
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    if window:
        shapes.append(_vline(window, "#d62728", 2))
        notes.append({**_note(window, 1.0, f"window {window:,}", "bottom"), "yshift": 0})
        if reserve:
            shapes.append(
                {
                    "type": "rect",
                    "xref": "x",
                    "yref": "paper",
                    "x0": window - reserve,
                    "x1": window,
                    "y0": 0,
                    "y1": 1,
                    "fillcolor": "#d62728",
                    "opacity": 0.08,
                    "line": {"width": 0},
                }
            )
            notes.append({**_note(window - reserve, 1.0, f"reserve {reserve:,} →", "bottom"), "yshift": 15})
    if keep_at is not None:
        shapes.append({**_vline(keep_at, "#555", 1), "line": {"color": "#555", "dash": "dot"}})
        notes.append({**_note(keep_at, 1.0, "← keepRecentTokens", "bottom", "left"), "yshift": 30})
    return shapes, notes


def _cut_marks(
    cuts: Sequence[tuple[str, float]], row: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A cut: a line across bar ``row`` only, labelled below it; the leftmost label extends left,
    the others right, each on its own line."""
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    styles = [("#111", "solid"), ("#7b3294", "dash"), ("#1a9850", "dot")]
    order = sorted(range(len(cuts)), key=lambda i: cuts[i][1])
    for rank, i in enumerate(order):
        label, x = cuts[i]
        color, dash = styles[i % len(styles)]
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "y",
                "x0": x,
                "x1": x,
                "y0": row - 0.42,
                "y1": row + 0.42,
                "line": {"color": color, "width": 2.5, "dash": dash},
            }
        )
        notes.append(
            {
                "x": x,
                "y": row,
                "xref": "x",
                "yref": "y",
                "yanchor": "top",
                "yshift": -16 - 14 * rank,
                "xanchor": "right" if rank == 0 and len(cuts) > 1 else "left",
                "showarrow": False,
                "text": html.escape(label),
                "font": {"size": 11, "color": color},
                "bgcolor": "rgba(255,255,255,0.85)",
            }
        )
    return shapes, notes


def _marker_ticks(segs: list[dict[str, Any]], row: int) -> list[dict[str, Any]]:
    """A tick over every pruned marker of bar ``row`` (or merged group holding one): markers are a
    few tokens wide, too thin to see at a full window's scale."""
    out, start = [], 0
    for seg in segs:
        if seg["kind"] == "pruned marker" or seg.get("markers"):
            x = start + seg["tokens"] / 2
            out.append(
                {
                    "type": "line",
                    "xref": "x",
                    "yref": "y",
                    "x0": x,
                    "x1": x,
                    "y0": row - 0.3,
                    "y1": row + 0.3,
                    "line": {"color": "#555", "width": 1},
                }
            )
        start += seg["tokens"]
    return out


def context_bars(
    before: Sequence[ContextMessage],
    before_tokens: Sequence[int],
    after: Sequence[ContextMessage] | None = None,
    after_tokens: Sequence[int] | None = None,
    *,
    pruned_positions: set[int] | None = None,
    pruned_before: set[int] | None = None,
    window: int | None = None,
    reserve: int | None = None,
    keep_recent: int | None = None,
    cuts: Sequence[tuple[str, float]] = (),
    title: str = "",
    zoom: bool = False,
) -> go.Figure:
    """Horizontal stacked bars: one segment per message, width by tokens, coloured by kind.

    Top: the context as built; bottom: what is sent after pruning (``pruned_positions``: its
    markers, ticked). ``pruned_before``: positions of the top bar that pruning replaced, hatched.
    The window, the reserve zone and where keepRecentTokens starts counting back are drawn on
    the token axis; ``cuts`` — (label, tokens from the left) — across the top bar (e.g. where the
    next compaction will cut). ``zoom`` fits the axis to the messages instead of the whole window."""
    rows = [("as built", _segments(before, before_tokens, hatched=pruned_before))]
    if after is not None and after_tokens is not None:
        rows.append(("sent to the model", _segments(after, after_tokens, pruned_positions)))
    total_before = sum(before_tokens)
    keep_at = total_before - keep_recent if keep_recent and total_before > keep_recent else None
    shapes, notes = _threshold_marks(window, reserve, keep_at)
    cut_shapes, cut_notes = _cut_marks(cuts, 0)
    if len(rows) > 1:
        shapes += _marker_ticks(rows[1][1], 1)
    totals = [total_before, sum(after_tokens) if after_tokens is not None else 0]
    return _bars_figure(rows, shapes + cut_shapes, notes + cut_notes, totals, window, title, zoom)


def compaction_bars(
    view: Any,
    sent: Sequence[ContextMessage] | None = None,
    sent_tokens: Sequence[int] | None = None,
    *,
    pruned_positions: set[int] | None = None,
    window: int | None = None,
    reserve: int | None = None,
    title: str = "",
    zoom: bool = False,
    put_back: Sequence[tuple[ContextMessage, int]] = (),
) -> go.Figure:
    """The moment of compaction (a :class:`~inspector.compaction_view.CompactionView`): the
    context the policy saw, coloured by what became of each message (summarised, turn prefix,
    previous summary, or kept — by kind), with every cut drawn across it; the context right after
    (the summary, then what was kept, then ``put_back``: the messages and tokens the agent put back
    itself, :func:`~inspector.compaction_view.put_back_messages`); and, when given, what the call
    then sends."""
    back = list(put_back)
    rows = [
        (
            "before compaction",
            _segments(
                [p.message for p in view.before],
                [p.tokens for p in view.before],
                parts=[p.part for p in view.before],
            ),
        ),
        (
            "after compaction",
            _segments(
                [p.message for p in view.after] + [cm for cm, _ in back],
                [p.tokens for p in view.after] + [t for _, t in back],
                parts=[p.part for p in view.after] + [PUT_BACK] * len(back),
            ),
        ),
    ]
    if sent is not None and sent_tokens is not None:
        rows.append(("sent to the model", _segments(sent, sent_tokens, pruned_positions)))
    shapes, notes = _threshold_marks(window, reserve, None)
    cut_shapes, cut_notes = _cut_marks(
        [(c.label + f" (entry {c.entry_index})", c.offset) for c in view.cuts], 0
    )
    if len(rows) > 2:
        shapes += _marker_ticks(rows[2][1], 2)
    after = view.tokens_after + sum(t for _, t in back)
    totals = [view.tokens_before, after, sum(sent_tokens) if sent_tokens is not None else 0]
    fig = _bars_figure(rows, shapes + cut_shapes, notes + cut_notes, totals, window, title, zoom)
    fig.update_layout(height=150 + 75 * len(rows) + 14 * max(0, len(view.cuts) - 1))
    return fig


def _bars_figure(
    rows: Sequence[tuple[str, list[dict[str, Any]]]],
    shapes: list[dict[str, Any]],
    notes: list[dict[str, Any]],
    totals: Sequence[int],
    window: int | None,
    title: str,
    zoom: bool,
) -> go.Figure:
    xaxis: dict[str, Any] = {"title": {"text": "tokens"}, "tickformat": ",~s"}
    if zoom:
        right = max(*totals, 1) * 1.04
        xaxis["range"] = [0, right]
        if window and window > right:
            notes.append(
                {
                    **_note(1, 1, f"window {window:,} is off the chart →", "bottom", "right", "paper"),
                    "yshift": 0,
                }
            )
    elif window:
        xaxis["range"] = [0, max(window, *totals) * 1.02]
    layout = {
        "barmode": "overlay",
        "height": 290,
        "margin": {"l": 10, "r": 10, "t": 95 if title else 60, "b": 30},
        "title": {"text": html.escape(title), "y": 0.98, "yanchor": "top"} if title else None,
        "xaxis": xaxis,
        "legend": {"orientation": "h", "y": -0.3, "x": 0, "title": {"text": "message: "}},
        "bargap": 0.35,
        "shapes": shapes,
        "annotations": notes,
        "yaxis": {"range": [-0.5, len(rows) - 0.5], "autorange": "reversed"},
    }
    return trusted_figure(
        {"data": _bar_traces(rows), "layout": {k: v for k, v in layout.items() if v is not None}}
    )


def _vline(x: float, color: str, width: float) -> dict[str, Any]:
    return {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": {"color": color, "width": width},
    }


def _hline(y: float, color: str, dash: str = "solid") -> dict[str, Any]:
    return {
        "type": "line",
        "xref": "paper",
        "yref": "y",
        "x0": 0,
        "x1": 1,
        "y0": y,
        "y1": y,
        "line": {"color": color, "width": 1.5, "dash": dash},
    }


def _note(
    x: float, y: float, text: str, yanchor: str, xanchor: str = "right", xref: str = "x", yref: str = "paper"
) -> dict[str, Any]:
    return {
        "x": x,
        "y": y,
        "xref": xref,
        "yref": yref,
        "text": text,
        "showarrow": False,
        "xanchor": xanchor,
        "yanchor": yanchor,
        "font": {"size": 11, "color": "#555"},
        "bgcolor": "rgba(255,255,255,0.85)",
    }


MAX_TIMELINE_POINTS = 1500


def downsample(steps: Sequence[Any], limit: int = MAX_TIMELINE_POINTS) -> list[Any]:
    """At most ``limit`` steps: the largest context of each bucket (peaks survive), plus the first
    and last step. Events are drawn from all steps separately."""
    n = len(steps)
    if n <= limit:
        return list(steps)
    size = -(-n // limit)
    out = [max(steps[i : i + size], key=lambda st: st.tokens) for i in range(0, n, size)]
    if out[0] is not steps[0]:
        out.insert(0, steps[0])
    if out[-1] is not steps[-1]:
        out.append(steps[-1])
    return out


def trigger_line(settings: Any, agent: str = "pi", window: int | None = None) -> tuple[int, str] | None:
    """Where the replay's compaction policy fires, in tokens, with a label (None: it never does).
    Replaying as recorded, the line is the rule of the agent that wrote the session (``agent``:
    the session's format), drawn for reference. ``window``: the calls' window, when not the
    settings' (a model's own: :attr:`inspector.replay.ReplaySettings.model_windows`)."""
    from ..policies import rule_policy

    pol = rule_policy(settings.compaction, agent)
    own = pol.own_settings(settings.policy)
    t = pol.threshold(settings.context_window if window is None else window, own, settings.reserve_tokens)
    if t is None:
        return None
    label = pol.threshold_label(own)
    return t, label


EVENT_COLORS = {
    "compaction": "#2ca02c",
    "pruned": "#7f7f7f",
    "overflow": "#d62728",
    "branch_summary": "#E45756",
    "reread": "#9467bd",
}
EVENT_LANES = {
    "compaction": "compactions",
    "pruned": "pruning",
    "overflow": "overflows",
    "branch_summary": "branch summaries",
    "reread": "re-reads",
}
MAX_LANE_MARKERS = 50
CLIP = 1.12
"""The timeline's y axis ends at this multiple of the window; values above it are marked, not drawn."""


def _lane_points(
    steps: Sequence[Any], etype: str, limit: int = MAX_LANE_MARKERS
) -> list[tuple[int, int, int]]:
    """(first step, last step, events) per bucket of at most ``limit`` buckets that holds an event."""
    return _all_lane_points(steps, limit).get(etype, [])


def _all_lane_points(
    steps: Sequence[Any], limit: int = MAX_LANE_MARKERS, answered: list[int] | None = None
) -> dict[str, list[tuple[int, int, int]]]:
    """:func:`_lane_points` of every event type, in one pass over the steps; ``answered``, when
    given, gets the steps over the window that the provider answered all the same (an overflow
    found after the call, on a call with recorded usage that neither failed nor aborted:
    :mod:`inspector.window`), in order."""
    size = max(1, -(-len(steps) // limit))
    out: dict[str, dict[int, list[int]]] = {}
    first = steps[0].step if steps else 0
    for s in steps:
        for e in s.events:
            b = out.setdefault(e.type, {}).setdefault((s.step - first) // size, [s.step, s.step, 0])
            b[1], b[2] = s.step, b[2] + 1
            if (
                answered is not None
                and e.type == "overflow"
                and not getattr(e, "before", None)
                and s.recorded_input
                and s.stop_reason not in ("error", "aborted")
                and (not answered or answered[-1] != s.step)
            ):
                answered.append(s.step)
    return {t: [(a, b, c) for a, b, c in d.values()] for t, d in out.items()}


def _event_lanes(steps: Sequence[Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """One lane per event type below the chart: a marker per bucket of calls, sized by how many
    events it holds, the count written in it (so dense runs read as counts, not a band)."""
    data: list[dict[str, Any]] = []
    lanes: list[str] = []
    answered: list[int] = []  # the overflows the provider answered all the same
    points = _all_lane_points(steps, answered=answered)
    for etype, symbol in EVENT_SYMBOLS.items():
        pts = points.get(etype)
        if not pts:
            continue
        lane = EVENT_LANES[etype]
        lanes.append(lane)
        data.append(
            {
                "type": "scatter",
                "mode": "markers+text",
                "x": [a for a, _, _ in pts],
                "y": [lane] * len(pts),
                "yaxis": "y2",
                "name": lane,
                "showlegend": False,
                "text": [str(c) if c > 1 else "" for _, _, c in pts],
                "textposition": "middle center",
                "textfont": {"size": 8, "color": "white" if symbol != "circle-open" else "#333"},
                "customdata": [[b, c, _lane_note(answered, etype, a, b)] for a, b, c in pts],
                "marker": {
                    "symbol": symbol,
                    "size": [min(22, 9 + 3 * len(str(c))) for _, _, c in pts],
                    "color": EVENT_COLORS[etype],
                    "line": {"width": 1.5, "color": EVENT_COLORS[etype]},
                },
                "hovertemplate": f"steps %{{x}}–%{{customdata[0]}}: %{{customdata[1]}} × "
                f"{etype.replace('_', ' ')}%{{customdata[2]}}<extra></extra>",
            }
        )
    return data, lanes


def _lane_note(answered: Sequence[int], etype: str, a: int, b: int) -> str:
    """What a lane's bucket (steps ``a`` to ``b``) adds to its count: for overflows, how many of
    those calls the provider answered all the same (``answered``: :func:`_all_lane_points`)."""
    if etype != "overflow":
        return ""
    n = bisect.bisect_right(answered, b) - bisect.bisect_left(answered, a)
    return f", {n} of them answered by the provider all the same" if n else ""


def _clip_marks(
    xs: Sequence[int], ys: Sequence[float | None], top: float, name: str
) -> dict[str, Any] | None:
    """Markers at the top edge for the points of a series above the chart, with their real value."""
    over = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None and y > top]
    if not over:
        return None
    return {
        "type": "scatter",
        "mode": "markers",
        "x": [x for x, _ in over],
        "y": [top * 0.985] * len(over),
        "customdata": [y for _, y in over],
        "name": f"{name}: above the chart",
        "showlegend": False,
        "marker": {"symbol": "triangle-up", "size": 7, "color": "#d62728"},
        "hovertemplate": f"step %{{x}}<br>{html.escape(name)}: %{{customdata:,}} (clipped)<extra></extra>",
    }


def _timeline_series(replay: Any, steps: Sequence[Any], name: str) -> list[dict[str, Any]]:
    """The lines: tokens sent, before pruning, what triggers the policy, recorded usage. Aborted
    and errored calls have no recorded point (their usage is 0 or partial)."""
    xs = [s.step for s in steps]
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "x": xs,
            "y": [s.tokens for s in steps],
            "name": f"{name} (sent)",
            "line": {"color": "#4C78A8", "width": 2},
            "marker": {"size": 4 if len(steps) < 300 else 2},
            "hovertemplate": "step %{x}<br>%{y:,} tokens sent<extra></extra>",
        }
    ]
    if any(s.tokens_before_pruning != s.tokens for s in steps):
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": xs,
                "y": [s.tokens_before_pruning for s in steps],
                "name": "before pruning",
                "line": {"color": "#9ecae9", "dash": "dot"},
                "hovertemplate": "step %{x}<br>%{y:,} before pruning<extra></extra>",
            }
        )
    from ..compaction_view import trigger_series

    trig = trigger_series(replay)
    if trig is not None:
        label, vals = trig
        pts = [(s.step, vals[s.step]) for s in steps if vals[s.step] is not None]
        recorded = get_policy(replay.settings.compaction).as_recorded
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": [a for a, _ in pts],
                "y": [b for _, b in pts],
                "name": label,
                "line": {"color": "#F58518", "width": 1.5}
                if recorded
                else {"color": "#8c2d04", "width": 1, "dash": "dash"},
                "hovertemplate": f"step %{{x}}<br>{html.escape(label)}: %{{y:,}}<extra></extra>",
            }
        )
    if not get_policy(replay.settings.compaction).as_recorded:
        rec = [
            (s.step, s.recorded_input)
            for s in steps
            if s.recorded_input is not None and s.stop_reason not in ("aborted", "error")
        ]
        if rec:
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "x": [a for a, _ in rec],
                    "y": [b for _, b in rec],
                    "name": "recorded usage (prompt)",
                    "line": {"color": "#F58518", "width": 1.5},
                    "hovertemplate": "step %{x}<br>recorded %{y:,}<extra></extra>",
                }
            )
    return data


RECON_FILL = "rgba(245,133,24,0.16)"
UNEXPLAINED = (
    "context change not in the file"  # inspector.recon.UNEXPLAINED (figures stay engine-import free)
)


def _recon_traces(check: Any, lo: int, hi: int) -> list[dict[str, Any]]:
    """The reconstruction check on the timeline (:mod:`inspector.recon`): a band where each
    recorded prompt is expected (rebuilt as sent + the fitted constant, ± half the unflagged
    spread), and a mark at every call the file cannot explain, saying so."""
    calls = [c for c in check.calls if lo <= c.step <= hi]
    if not calls:
        return []
    band = calls[:: max(1, len(calls) // MAX_TIMELINE_POINTS)]
    half = check.spread_excluding_flagged / 2
    mid = [check.offset_median + c.expected for c in band]
    xs = [c.step for c in band]
    out: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": xs,
            "y": [m + half for m in mid],
            "line": {"width": 0},
            "hoverinfo": "skip",
            "showlegend": False,
            "name": "expected prompt (upper)",
        },
        {
            "type": "scatter",
            "mode": "lines",
            "x": xs,
            "y": [m - half for m in mid],
            "line": {"width": 0},
            "fill": "tonexty",
            "fillcolor": RECON_FILL,
            "customdata": mid,
            "name": "expected prompt (check: rebuilt as sent + fitted constant, ± spread)",
            "hovertemplate": f"step %{{x}}<br>expected prompt %{{customdata:,.0f}} ± {half:,.0f}<extra></extra>",
        },
    ]
    odd = [c for c in calls if c.flag is not None and c.flag.cause == UNEXPLAINED]
    if odd:
        out.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": [c.step for c in odd],
                "y": [c.recorded for c in odd],
                "customdata": [html.escape(c.flag.detail) for c in odd],
                "name": "the file cannot explain this call",
                "marker": {"symbol": "x-thin-open", "size": 11, "color": "#b30000", "line": {"width": 2}},
                "hovertemplate": "step %{x}: %{customdata}<extra></extra>",
            }
        )
    return out


def timeline(
    replay: Any,
    *,
    current_step: int | None = None,
    name: str = "replayed",
    x_range: tuple[int, int] | None = None,
    recon: Any = None,
) -> go.Figure:
    """Context tokens at every model call: replayed vs recorded usage, what triggers the policy,
    its threshold, and the events in lanes below. The y axis ends just above the window; what
    rises beyond it is marked at the top edge. ``x_range`` (first, last step) shows a part of a
    long run; the calls shown are downsampled to the peak of each bucket. Points carry their
    step as ``x``, so a click names the step. ``recon`` (an :func:`inspector.recon.check` of the
    session) adds the residual band and marks the calls the file cannot explain."""
    all_steps = replay.steps
    lo, hi = x_range if x_range else (0, len(all_steps) - 1)
    shown = all_steps[max(0, lo) : hi + 1]
    steps = downsample(shown)
    top = largest_window(replay) * CLIP
    data = _timeline_series(replay, steps, name)
    clips = [c for tr in data if (c := _clip_marks(tr["x"], tr["y"], top, tr["name"])) is not None]
    lanes_data, lanes = _event_lanes(shown)
    if recon is not None:
        data += _recon_traces(recon, shown[0].step if shown else 0, shown[-1].step if shown else -1)
    shapes, notes = _timeline_marks(replay, top, clips, shown)
    if current_step is not None and 0 <= current_step < len(all_steps):
        shapes.append({**_vline(current_step, "#333", 1)})
        data.append(_current_marker(all_steps[current_step], top))
    layout = _timeline_layout(shapes, notes, lanes, top, x_range)
    return trusted_figure({"data": data + clips + lanes_data, "layout": layout})


def largest_window(replay: Any) -> int:
    """The largest window a call of ``replay`` ran against (the settings' when it has no call)."""
    if not replay.settings.model_windows:  # every call's is the settings'
        return int(replay.settings.context_window)
    return max((s.window for s in replay.steps), default=replay.settings.context_window)


MAX_WINDOW_RUNS = 40
"""Runs of calls against one window drawn each over its calls; a session that switched models
more often has each window drawn across the chart."""


def window_runs(steps: Sequence[Any]) -> list[tuple[int, int, int]]:
    """(first step, last step, window) of each run of consecutive calls against the same window."""
    out: list[tuple[int, int, int]] = []
    for s in steps:
        if out and out[-1][2] == s.window:
            out[-1] = (out[-1][0], s.step, s.window)
        else:
            out.append((s.step, s.step, s.window))
    return out


def _timeline_marks(
    replay: Any, top: float, clips: list[dict[str, Any]], shown: Sequence[Any] = ()
) -> tuple[list[Any], list[Any]]:
    """The timeline's lines and their labels: the window, the policy's trigger (when it is on
    the chart), and a note on what rises above the chart. The calls ``shown`` that ran against
    other windows (their models': :attr:`inspector.replay.ReplaySettings.model_windows`) have
    their window and trigger drawn over their own run of calls."""
    st = replay.settings
    agent = getattr(getattr(replay, "session", None), "format", "pi")
    runs = window_runs(shown) if st.model_windows else []
    shapes: list[Any] = []
    notes: list[Any] = []
    if len(runs) > MAX_WINDOW_RUNS:  # each window across the chart
        for w in sorted({w for _, _, w in runs}):
            shapes.append(_hline(w, "#d62728"))
            notes.append(_note(0.01, w, f"window {w:,}", "bottom", "left", "paper", "y"))
        return shapes, notes + _clip_note(clips, max(w for _, _, w in runs))
    if len(runs) > 1:
        labelled: set[int] = set()  # each window's lines are labelled once, over its first run
        for a, b, w in runs:
            shapes.append(_hseg(a - 0.5, b + 0.5, w, "#d62728"))
            trig = trigger_line(st, agent, w)
            if trig is not None and trig[0] < top:
                shapes.append(_hseg(a - 0.5, b + 0.5, trig[0], "#d62728", "dash"))
            if w not in labelled:
                labelled.add(w)
                notes.append(_note(a - 0.5, w, f"window {w:,}", "bottom", "left", "x", "y"))
                if trig is not None and trig[0] < top:
                    notes.append(_note(a - 0.5, trig[0], f"{trig[1]}: {trig[0]:,}", "top", "left", "x", "y"))
        return shapes, notes + _clip_note(clips, max(w for _, _, w in runs))
    window = runs[0][2] if runs else st.context_window
    shapes.append(_hline(window, "#d62728"))
    notes.append(_note(0.01, window, f"window {window:,}", "bottom", "left", "paper", "y"))
    trig = trigger_line(st, agent, window)
    if trig is not None and trig[0] < top:
        shapes.append(_hline(trig[0], "#d62728", "dash"))
        notes.append(_note(0.01, trig[0], f"{trig[1]}: {trig[0]:,}", "top", "left", "paper", "y"))
    return shapes, notes + _clip_note(clips, window)


def _hseg(x0: float, x1: float, y: float, color: str, dash: str = "solid") -> dict[str, Any]:
    """A horizontal line over the calls from ``x0`` to ``x1`` only (:func:`_hline`: the whole width)."""
    return {**_hline(y, color, dash), "xref": "x", "x0": x0, "x1": x1}


def _clip_note(clips: list[dict[str, Any]], window: int) -> list[dict[str, Any]]:
    """The note on what rises above the chart (none when nothing does)."""
    notes = []
    if clips:
        peak = max(max(c["customdata"]) for c in clips)
        notes.append(
            _note(
                1,
                1,
                f"▲ above the chart: up to {peak:,.0f} ({peak / window:.1f}× the window)",
                "bottom",
                "right",
                "paper",
                "paper",
            )
        )
    return notes


def _current_marker(cur: Any, top: float) -> dict[str, Any]:
    """A ring on the timeline at the step shown."""
    return {
        "type": "scatter",
        "mode": "markers",
        "x": [cur.step],
        "y": [min(cur.tokens, top * 0.985)],
        "name": "this step",
        "marker": {"size": 13, "color": "rgba(0,0,0,0)", "line": {"width": 2, "color": "#111"}},
        "hovertemplate": "step %{x} (shown)<extra></extra>",
    }


def _timeline_layout(
    shapes: list[Any], notes: list[Any], lanes: list[str], top: float, x_range: tuple[int, int] | None
) -> dict[str, Any]:
    """The timeline's axes: tokens above (0 to just over the window), the event lanes below."""
    split = 0.08 * len(lanes) + (0.04 if lanes else 0)
    layout: dict[str, Any] = {
        "height": 360 + 26 * len(lanes),
        "margin": {"l": 10, "r": 10, "t": 28, "b": 30},
        "xaxis": {
            "title": {"text": "model call (step)"},
            "anchor": "y2" if lanes else "y",
            **({"range": [x_range[0] - 0.5, x_range[1] + 0.5]} if x_range else {}),
        },
        "yaxis": {
            "title": {"text": "context tokens"},
            "tickformat": ",~s",
            "range": [0, top],
            "domain": [split, 1],
            "fixedrange": True,
        },
        "legend": {"orientation": "h", "y": -0.2},
        "hovermode": "closest",
        "clickmode": "event+select",
        "shapes": shapes,
        "annotations": notes,
    }
    if lanes:
        layout["yaxis2"] = {
            "domain": [0, split - 0.04],
            "type": "category",
            "categoryarray": lanes[::-1],
            "fixedrange": True,
            "tickfont": {"size": 10},
            "showgrid": True,
        }
    return layout


def compare_timelines(replays: Sequence[tuple[str, Any]]) -> go.Figure:
    """Several replays' context tokens per call, overlaid (one colour each, compactions marked)."""
    data: list[dict[str, Any]] = []
    for k, (name, r) in enumerate(replays):
        color = SERIES_COLORS[k % len(SERIES_COLORS)]
        steps = downsample(r.steps)
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": [s.step for s in steps],
                "y": [s.tokens for s in steps],
                "name": html.escape(name),
                "legendgroup": str(k),
                "line": {"color": color, "width": 2},
                "hovertemplate": f"{html.escape(name)}<br>step %{{x}}<br>%{{y:,}} tokens<extra></extra>",
            }
        )
        pts = [(s.step, s.tokens) for s in r.steps if any(e.type == "compaction" for e in s.events)]
        if pts:
            data.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "x": [a for a, _ in pts],
                    "y": [b for _, b in pts],
                    "name": "compaction",
                    "legendgroup": str(k),
                    "showlegend": False,
                    "marker": {
                        "symbol": "diamond",
                        "size": 9,
                        "color": color,
                        "line": {"width": 1, "color": "#333"},
                    },
                    "hovertemplate": f"{html.escape(name)}<br>compaction before step %{{x}}<extra></extra>",
                }
            )
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    windows = sorted(
        {s.window for _, r in replays for s in r.steps} or {r.settings.context_window for _, r in replays}
    )
    for w in windows:
        shapes.append(_hline(w, "#d62728"))
        notes.append(_note(1, w, f"window {w:,}", "bottom", "right", "paper", "y"))
    layout = {
        "height": 360,
        "margin": {"l": 10, "r": 10, "t": 20, "b": 30},
        "hovermode": "closest",
        "xaxis": {"title": {"text": "model call (step)"}},
        "yaxis": {"title": {"text": "context tokens"}, "tickformat": ",~s"},
        "legend": {"orientation": "h", "y": -0.22},
        "shapes": shapes,
        "annotations": notes,
    }
    return go.Figure({"data": data, "layout": layout})


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
