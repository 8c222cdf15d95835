"""The token timeline: context tokens over every call, replayed against recorded, with events in
lanes, the window, the compaction trigger and the reconstruction check (:func:`timeline`); several
replays overlaid (:func:`compare_timelines`)."""

from __future__ import annotations

import bisect
import html
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from ...policies import get_policy
from .base import EVENT_SYMBOLS, SERIES_COLORS, _hline, _hseg, _note, _vline, trusted_figure

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
    from ...policies import rule_policy

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
    from ...compaction_view import trigger_series

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
    data += _provider_line(replay, steps)
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


PROVIDER_LINE = "prompt as the provider would count it (the overflow check's)"


def draws_provider_line(replay: Any) -> bool:
    """Does the timeline draw the size ``replay``'s overflow check compares (:func:`_provider_line`)?
    For a what-if that compacts by no rule of its own (never compacting, or another pruning under
    the recorded compactions): it sends what the provider never counted. Not where the replay sends
    what was sent (the recorded usage is that size), where its policy's own line shows it, or where
    the session records no usage (the size is the count drawn)."""
    from ...replay import sends_what_was_sent

    if get_policy(replay.settings.compaction).simulated or sends_what_was_sent(
        replay.session, replay.settings
    ):
        return False
    return any(s.provider_tokens is not None and s.provider_tokens != s.tokens for s in replay.steps)


def _provider_line(replay: Any, steps: Sequence[Any]) -> list[dict[str, Any]]:
    """:func:`draws_provider_line`: the size as the provider would count each prompt, dashed."""
    if not draws_provider_line(replay):
        return []
    pts = [(s.step, s.provider_tokens) for s in steps if s.provider_tokens is not None]
    if not pts:
        return []
    return [
        {
            "type": "scatter",
            "mode": "lines",
            "x": [a for a, _ in pts],
            "y": [b for _, b in pts],
            "name": PROVIDER_LINE,
            "line": {"color": "#d62728", "width": 1, "dash": "dash"},
            "hovertemplate": "step %{x}<br>%{y:,} as the provider would count the prompt<extra></extra>",
        }
    ]


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
