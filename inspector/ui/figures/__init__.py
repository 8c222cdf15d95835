"""Plotly figures as plain functions (usable from Jupyter; no streamlit here).

* :func:`context_bars` — before/after stacked bars of one model call's context.
* :func:`timeline` — context tokens over all calls: replayed vs recorded, events, thresholds.
* :func:`compare_timelines` — several replays overlaid.
* :func:`tree_lanes` — the branch tree as lanes (git-graph style, chains collapsed).
* :func:`sweep_heatmap` — a metric over a two-setting grid.

Every text that comes from a session is HTML-escaped before it reaches plotly (hover labels are
rendered as HTML).

One module per figure: :mod:`.bars`, :mod:`.timelines`, :mod:`.tree`, :mod:`.sweep`; :mod:`.base`
holds what they share (colours, message kinds and texts, :func:`~.base.trusted_figure`, whose
validation the test suite turns on through ``base.VALIDATE``).
"""

from __future__ import annotations

from .bars import (
    PROVIDER_PART_NOTE,
    PRUNED_LEGEND,
    PUT_BACK,
    compaction_bars,
    context_bars,
)
from .base import (
    EVENT_SYMBOLS,
    KIND_COLORS,
    MAX_SEGMENTS,
    NOT_IN_FILE,
    PART_COLORS,
    SEGMENT_COLORS,
    SERIES_COLORS,
    app_icon,
    message_kind,
    message_text,
    trusted_figure,
)
from .sweep import (
    sweep_heatmap,
)
from .timelines import (
    CLIP,
    EVENT_COLORS,
    EVENT_LANES,
    MAX_LANE_MARKERS,
    MAX_TIMELINE_POINTS,
    MAX_WINDOW_RUNS,
    RECON_FILL,
    UNEXPLAINED,
    compare_timelines,
    downsample,
    largest_window,
    timeline,
    trigger_line,
    window_runs,
)
from .tree import (
    LABEL_CHARS_ACROSS,
    tree_lanes,
)

__all__ = [
    "CLIP",
    "EVENT_COLORS",
    "EVENT_LANES",
    "EVENT_SYMBOLS",
    "KIND_COLORS",
    "LABEL_CHARS_ACROSS",
    "MAX_LANE_MARKERS",
    "MAX_SEGMENTS",
    "MAX_TIMELINE_POINTS",
    "MAX_WINDOW_RUNS",
    "NOT_IN_FILE",
    "PART_COLORS",
    "PROVIDER_PART_NOTE",
    "PRUNED_LEGEND",
    "PUT_BACK",
    "RECON_FILL",
    "SEGMENT_COLORS",
    "SERIES_COLORS",
    "UNEXPLAINED",
    "app_icon",
    "compaction_bars",
    "compare_timelines",
    "context_bars",
    "downsample",
    "largest_window",
    "message_kind",
    "message_text",
    "sweep_heatmap",
    "timeline",
    "tree_lanes",
    "trigger_line",
    "trusted_figure",
    "window_runs",
]
