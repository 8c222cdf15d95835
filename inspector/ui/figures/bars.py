"""The context bars of one model call: before/after stacked segments, one per message (merged past
:data:`MAX_SEGMENTS`), with pruning's hatching, the threshold and cut marks (:func:`context_bars`,
:func:`compaction_bars`)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from ...context import ContextMessage
from ...session.models import (
    ToolResultMessage,
)
from .base import (
    MAX_SEGMENTS,
    NOT_IN_FILE,
    SEGMENT_COLORS,
    _hover_text,
    _note,
    _vline,
    message_kind,
    message_text,
    trusted_figure,
)

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


PROVIDER_PART_NOTE = (
    "Dotted light grey, first in the bottom bar: what the provider counts in this call's prompt beyond "
    "the messages as counted here — the system prompt and tool definitions, which the session file does "
    "not record, and the provider's tokenizer against this counter — so the bar ends at the prompt's whole "
    "size (“Window used” on the Replay page; estimated from the recorded prompt where the replay changed "
    "what was sent); a dotted red tick instead where the provider counts fewer tokens than the messages. "
    "A file without recorded usage shows the messages alone."
)
"""What :func:`provider_part` draws, said under a figure that has it."""


def provider_part(
    segs: list[dict[str, Any]], provider_tokens: int | None, row: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The sent bar (``segs``, bar ``row``) against the call's prompt as the provider counts it
    (:attr:`~inspector.replay.Step.provider_tokens`, what "Window used" and the overflow check
    read): where the provider counted more than the messages, the rest is drawn first, as the
    system prompt and tools come first in a request, so the bar ends at the provider's count; where
    it counted fewer (a counter that overstates this model's tokens), a tick marks its count.
    Returns the segments, and the tick's shapes and notes."""
    counted = sum(seg["tokens"] for seg in segs)
    if provider_tokens is None or provider_tokens == counted:
        return segs, [], []
    if provider_tokens > counted:
        rest = provider_tokens - counted
        part = {
            "kind": NOT_IN_FILE,
            "hatch": False,
            "tokens": rest,
            "count": 1,
            "label": f"not in the file: {rest:,} tokens",
            "text": (
                f"The prompt as the provider counts it ({provider_tokens:,}) less the messages as counted "
                f"here ({counted:,}): the system prompt and tool definitions, which the session file does "
                "not record, and the provider's tokenizer against this counter."
            ),
        }
        return [part, *segs], [], []
    tick = {
        "type": "line",
        "xref": "x",
        "yref": "y",
        "x0": provider_tokens,
        "x1": provider_tokens,
        "y0": row - 0.45,
        "y1": row + 0.45,
        "line": {"color": "#d62728", "width": 2, "dash": "dot"},
    }
    note = {
        "x": provider_tokens,
        "y": row,
        "xref": "x",
        "yref": "y",
        "yanchor": "bottom",
        "yshift": 14,
        "xanchor": "right",
        "showarrow": False,
        "text": f"the provider's count {provider_tokens:,}",
        "font": {"size": 11, "color": "#d62728"},
        "bgcolor": "rgba(255,255,255,0.85)",
    }
    return segs, [tick], [note]


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
            if kind == NOT_IN_FILE:  # dotted: not a message (and apart from a summarised grey)
                marker["pattern"] = {"shape": ".", "fgcolor": "#7f7f7f", "size": 5, "solidity": 0.25}
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
    provider_tokens: int | None = None,
) -> go.Figure:
    """Horizontal stacked bars: one segment per message, width by tokens, coloured by kind.

    Top: the context as built; bottom: what is sent after pruning (``pruned_positions``: its
    markers, ticked). ``pruned_before``: positions of the top bar that pruning replaced, hatched.
    The window, the reserve zone and where keepRecentTokens starts counting back are drawn on
    the token axis; ``cuts`` — (label, tokens from the left) — across the top bar (e.g. where the
    next compaction will cut). ``zoom`` fits the axis to the messages instead of the whole window.
    ``provider_tokens``: the call's prompt as the provider counts it, set against the sent bar
    (:func:`provider_part`)."""
    rows = [("as built", _segments(before, before_tokens, hatched=pruned_before))]
    total_before = sum(before_tokens)
    keep_at = total_before - keep_recent if keep_recent and total_before > keep_recent else None
    shapes, notes = _threshold_marks(window, reserve, keep_at)
    cut_shapes, cut_notes = _cut_marks(cuts, 0)
    totals = [total_before]
    if after is not None and after_tokens is not None:
        sent, ticks, marks = provider_part(
            _segments(after, after_tokens, pruned_positions), provider_tokens, 1
        )
        rows.append(("sent to the model", sent))
        shapes += _marker_ticks(sent, 1) + ticks
        notes += marks
        totals.append(sum(seg["tokens"] for seg in sent))
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
    provider_tokens: int | None = None,
) -> go.Figure:
    """The moment of compaction (a :class:`~inspector.compaction_view.CompactionView`): the
    context the policy saw, coloured by what became of each message (summarised, turn prefix,
    previous summary, or kept — by kind), with every cut drawn across it; the context right after
    (the summary, then what was kept, then ``put_back``: the messages and tokens the agent put back
    itself, :func:`~inspector.compaction_view.put_back_messages`); and, when given, what the call
    then sends, set against ``provider_tokens`` (:func:`provider_part`)."""
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
    shapes, notes = _threshold_marks(window, reserve, None)
    cut_shapes, cut_notes = _cut_marks(
        [(c.label + f" (entry {c.entry_index})", c.offset) for c in view.cuts], 0
    )
    totals = [view.tokens_before, view.tokens_after + sum(t for _, t in back)]
    if sent is not None and sent_tokens is not None:
        segs, ticks, marks = provider_part(_segments(sent, sent_tokens, pruned_positions), provider_tokens, 2)
        rows.append(("sent to the model", segs))
        shapes += _marker_ticks(segs, 2) + ticks
        notes += marks
        totals.append(sum(seg["tokens"] for seg in segs))
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
