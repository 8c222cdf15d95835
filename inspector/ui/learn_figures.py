"""The Learn screens' figures: plain functions of a :class:`~inspector.learn.Reveal` returning
plotly figures (no streamlit), shared by the app's Learn page and the teaching notebook."""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go

from ..learn import Reveal, WalkFrame
from . import figures
from .figures import KIND_COLORS, PART_COLORS, SERIES_COLORS


def _layout(height: int = 320, **more: Any) -> dict[str, Any]:
    return {"height": height, "margin": {"l": 10, "r": 10, "t": 30, "b": 30}, **more}


def context_kinds(rv: Reveal) -> go.Figure:
    """Screen 1: the call's context as one bar, a segment per message coloured by kind."""
    from ..tokens import estimate_tokens

    d = rv.extra["detail"]
    tokens = [estimate_tokens(cm.message) for cm in d.after]
    return figures.context_bars(
        d.after,
        tokens,
        window=rv.replay_settings.context_window,
        title=f"Context at model call {rv.value}",
        zoom=True,
    )


def tokens_compare(rv: Reveal) -> go.Figure:
    """Screen 2: pi's estimate and the recorded prompt at every call, the chosen call marked."""
    steps = rv.extra["replay"].steps
    xs = [s.step for s in steps]
    rec = [s.recorded_input if s.stop_reason not in ("aborted", "error") else None for s in steps]
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": xs,
            "y": [s.tokens for s in steps],
            "name": "pi estimate (chars ÷ 4)",
            "line": {"color": SERIES_COLORS[0], "width": 2},
        },
        {
            "type": "scatter",
            "mode": "lines+markers",
            "x": xs,
            "y": rec,
            "name": "recorded by the provider",
            "line": {"color": SERIES_COLORS[1], "width": 2},
            "marker": {"size": 4},
        },
    ]
    cur = steps[rv.value]
    data.append(
        {
            "type": "scatter",
            "mode": "markers",
            "x": [cur.step, cur.step],
            "name": f"call {cur.step}",
            "y": [cur.tokens, rv.values["recorded"]],
            "marker": {"size": 12, "color": "rgba(0,0,0,0)", "line": {"width": 2, "color": "#111"}},
        }
    )
    shapes = [
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": rv.value,
            "x1": rv.value,
            "y0": 0,
            "y1": 1,
            "line": {"color": "#333", "width": 1},
        }
    ]
    return go.Figure(
        {
            "data": data,
            "layout": _layout(
                340,
                shapes=shapes,
                xaxis={"title": {"text": "model call (step)"}},
                yaxis={"title": {"text": "context tokens"}, "tickformat": ",~s"},
                legend={"orientation": "h", "y": -0.2},
            ),
        }
    )


def trigger_timeline(rv: Reveal) -> go.Figure:
    """Screen 3: the replay under pi at the chosen window (red line: window; dashed: threshold)."""
    return figures.timeline(
        rv.extra["replay"], current_step=rv.replay_step if rv.values["compactions"] else None
    )


def _walk_traces(
    frames: tuple[WalkFrame, ...], order: list[WalkFrame], first_kept: int | None, k: int
) -> list[dict[str, Any]]:
    """The walk after ``k`` frames: every message's bar (grey until walked; the first kept one outlined
    once the walk is over) and the running total so far."""
    shown = frames[:k]
    ents = {f.entry for f in shown}
    colors = [
        (KIND_COLORS["tool output"] if f.role == "toolResult" else KIND_COLORS.get(f.role, "#B279A2"))
        if f.entry in ents
        else "#E6E6E6"
        for f in order
    ]
    return [
        {
            "type": "bar",
            "x": [str(f.entry) for f in order],
            "y": [f.tokens for f in order],
            "marker": {
                "color": colors,
                "line": {
                    "width": [3 if f.entry == first_kept and k == len(frames) else 0 for f in order],
                    "color": "#111",
                },
            },
            "name": "message tokens",
            "hovertemplate": "entry %{x}<br>%{y:,} tokens<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "lines+markers",
            "x": [str(f.entry) for f in reversed(shown)],
            "y": [f.total for f in reversed(shown)],
            "name": "walked so far",
            "yaxis": "y2",
            "line": {"color": "#111"},
        },
    ]


def _cut_marks(at: int | None, first_kept: int | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The line where the kept part starts (before bar ``at``) and its note; none while ``at`` is None."""
    if at is None:
        return [], []
    line = {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": at - 0.5,
        "x1": at - 0.5,
        "y0": 0,
        "y1": 1,
        "line": {"color": "#111", "width": 2},
    }
    note = {
        "xref": "x",
        "yref": "paper",
        "x": at - 0.5,
        "y": 1.02,
        "text": f"cut: kept from entry {first_kept} →",
        "showarrow": False,
        "xanchor": "left",
        "yanchor": "bottom",
    }
    return [line], [note]


#: The walk figure's "Play" button: plotly animates its frames in the browser.
_PLAY_WALK = {
    "type": "buttons",
    "showactive": False,
    "x": 1,
    "y": 1.15,
    "xanchor": "right",
    "buttons": [
        {
            "label": "▶ Play the walk",
            "method": "animate",
            "args": [None, {"frame": {"duration": 250, "redraw": True}, "fromcurrent": False}],
        }
    ],
}


def _walk_layout(keep: int, top: float, cut_shapes: list[Any], cut_notes: list[Any]) -> dict[str, Any]:
    keep_line = {
        "type": "line",
        "xref": "paper",
        "yref": "y2",
        "x0": 0,
        "x1": 1,
        "y0": keep,
        "y1": keep,
        "line": {"color": "#d62728", "dash": "dash"},
    }
    keep_note = {
        "xref": "paper",
        "yref": "y2",
        "x": 1,
        "y": keep,
        "text": f"keepRecentTokens {keep:,}",
        "showarrow": False,
        "yanchor": "top",
        "xanchor": "right",
    }
    return _layout(
        360,
        barmode="overlay",
        xaxis={"title": {"text": "entry (newest on the right)"}, "type": "category"},
        yaxis={"title": {"text": "message tokens"}},
        yaxis2={
            "overlaying": "y",
            "side": "right",
            "range": [0, top],
            "title": {"text": "walked"},
            "tickformat": ",.3~s",
        },
        shapes=[keep_line, *cut_shapes],
        annotations=[keep_note, *cut_notes],
        legend={"orientation": "h", "y": -0.25},
        updatemenus=[_PLAY_WALK],
    )


def cut_walk(
    frames: tuple[WalkFrame, ...], keep: int, first_kept: int | None = None, upto: int | None = None
) -> go.Figure:
    """Screen 4: pi's backward walk, one bar per message (newest on the right), the running total
    against keepRecentTokens. ``upto``: frames shown (the animation's position); the figure also
    carries plotly frames, so "Play" animates the whole walk in the browser."""
    n = len(frames)
    upto = n if upto is None else max(0, min(n, upto))
    order = list(reversed(frames))  # oldest first, so the walk goes right to left
    top = max([keep, *(f.total for f in frames)]) * 1.05 if frames else keep
    at = next((p for p, f in enumerate(order) if first_kept is not None and f.entry >= first_kept), None)
    cut_shapes, cut_notes = _cut_marks(at if upto == n else None, first_kept)  # drawn once the walk is over
    layout = _walk_layout(keep, top, cut_shapes, cut_notes)
    fig = go.Figure({"data": _walk_traces(frames, order, first_kept, upto), "layout": layout})
    fig.frames = [
        go.Frame(data=_walk_traces(frames, order, first_kept, k), name=str(k)) for k in range(1, n + 1)
    ]
    return fig


def summary_parts(rv: Reveal, revealed: bool = True) -> go.Figure:
    """Screen 6: the context at the compaction split into what is summarised (and whose files the
    summary lists), the split turn's prefix, and what is kept verbatim (the files counted in the
    title once ``revealed``: they are the answer)."""
    v = rv.values
    parts = (
        ("summarised: its files are listed", v["summarised_tokens"], PART_COLORS["summarised"]),
        ("turn prefix: its files too", v["turn_prefix_tokens"], PART_COLORS["turn prefix"]),
        ("kept verbatim", v["kept_tokens"], KIND_COLORS["assistant"]),
    )
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": ["context"],
            "x": [t],
            "name": html.escape(name),
            "marker": {"color": c},
            "hovertemplate": f"{html.escape(name)}: %{{x:,}} tokens<extra></extra>",
        }
        for name, t, c in parts
    ]
    title = (
        f"{len(v['read_files'])} read + {len(v['modified_files'])} modified file(s) listed"
        if revealed
        else "the summary lists the files of the summarised part and of the turn prefix"
    )
    return go.Figure(
        {
            "data": data,
            "layout": _layout(
                200,
                barmode="stack",
                title={"text": title},
                xaxis={"title": {"text": "tokens"}, "tickformat": ",~s"},
                legend={"orientation": "h", "y": -0.5},
                margin={"t": 40},
            ),
        }
    )


def pruning_compare(rv: Reveal, revealed: bool = True) -> go.Figure:
    """Screen 7: both rules' context per call over the whole session, and (once ``revealed``: they
    are the answer) the totals pruned."""
    runs = rv.extra["replays"]
    fig = figures.compare_timelines(
        [
            (f"{name}: {rv.values['pruned'][name]:,} pruned" if revealed else name, r)
            for name, r in runs.items()
        ]
    )
    fig.update_layout(
        title={
            "text": html.escape(
                f"PRUNE_PROTECT {rv.values['protect']:,}, PRUNE_MINIMUM {rv.values['minimum']:,}"
            )
        },
        margin={"t": 40},
    )
    return fig


def cost_compare(rv: Reveal, revealed: bool = True) -> go.Figure:
    """Screen 9: context per call compacting at the window, and never compacting (with what each
    bills once ``revealed``: that is the answer)."""
    runs = rv.extra["replays"]
    pi, never = f"pi at {rv.values['window']:,}", "never"
    if revealed:
        pi, never = f"{pi}: ${rv.values['cost_pi']:.2f}", f"{never}: ${rv.values['cost_never']:.2f}"
    return figures.compare_timelines([(pi, runs["pi"]), (never, runs["never"])])


def branch_tree(rv: Reveal) -> go.Figure:
    """Screen 8: the session's tree, the entries the branch summary collects highlighted, the path
    to the target drawn."""
    return figures.tree_lanes(
        rv.extra["prep_session"], highlight=list(rv.extra["collected"]), current_path=rv.extra["target_path"]
    )


def screen_figure(rv: Reveal, revealed: bool = True) -> go.Figure | None:
    """The figure a screen shows (None: the screen shows text and tables only). Before the answer
    is ``revealed``, no figure states it in its legend or title (the shapes are there to read)."""
    if rv.screen in ("cut", "split"):
        return cut_walk(rv.extra["frames"], rv.values["keep"], rv.values["first_kept"])
    telling = {"keeps": summary_parts, "pruning": pruning_compare, "cost": cost_compare}.get(rv.screen)
    if telling is not None:
        return telling(rv, revealed)
    make = {
        "context": context_kinds,
        "tokens": tokens_compare,
        "trigger": trigger_timeline,
        "branch": branch_tree,
    }.get(rv.screen)
    return make(rv) if make else None
