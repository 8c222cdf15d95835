"""The figures' shared parts: colours, the message kinds and texts the hovers show, the trusted
figure constructor, and the shapes (lines, notes) several figures draw."""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go

from ...context import ContextMessage
from ...session.models import (
    AssistantMessage,
    BashExecutionMessage,
    CustomMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ...visible import clip

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


NOT_IN_FILE = "not in the file"
"""The part of a call's prompt the provider counted that the session's messages do not account
for: the system prompt and tool definitions (never recorded), and the provider's tokenizer against
the replay's counter (:func:`~.bars.provider_part`)."""

SEGMENT_COLORS = {NOT_IN_FILE: "#D3D3D3", **KIND_COLORS, **PART_COLORS}


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


def _hseg(x0: float, x1: float, y: float, color: str, dash: str = "solid") -> dict[str, Any]:
    """A horizontal line over the calls from ``x0`` to ``x1`` only (:func:`_hline`: the whole width)."""
    return {**_hline(y, color, dash), "xref": "x", "x0": x0, "x1": x1}
