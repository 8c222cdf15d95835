"""The Compare & tune page: up to four configurations replayed side by side, and a sweep of two
settings drawn as a heatmap whose cells apply to the sidebar.

A Streamlit page script, run by path (``st.Page`` in ``app.py``); session text is only ever shown
as plain text or escaped markdown, never as HTML.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from inspector.agents import AGENTS
from inspector.policies import POLICIES
from inspector.replay import COMPARED, ReplaySettings, sweep
from inspector.ui import cache_view, figures, retention_view, views
from inspector.ui import urlstate as us
from inspector.ui.common import PLOT_CONFIG, need_session, strategy_title
from inspector.ui.state import current_replay, default, default_index, set_widgets, summary_cache
from inspector.whatif import variant_settings
from inspector.window import answered_peak


def _apply_cell() -> None:
    sw = st.session_state.get("sweep")
    pick = st.session_state.get("sw_pick")
    if not sw or pick is None or pick >= len(sw["cells"]):
        return
    updates: dict[str, Any] = {}
    for k, v in sw["cells"][pick].values.items():
        if k == "keep_recent_tokens":
            updates["keep"] = v
        elif k == "reserve_tokens":
            updates["reserve"] = v
        elif k == "context_window":
            updates |= us.window_updates(v)
        else:
            updates[f"set.{sw['strategy']}.{k}"] = v
    set_widgets(updates)
    st.session_state["_applied"] = ", ".join(f"{k} = {v:,}" for k, v in sw["cells"][pick].values.items())


def _heat_picked() -> None:
    ev = st.session_state.get("heat")
    pts = ev.selection.points if ev is not None else []
    sw = st.session_state.get("sweep")
    if not pts or not sw:
        return
    i = pts[0].get("customdata")
    if isinstance(i, list):
        i = i[0] if i else None
    if isinstance(i, int) and 0 <= i < len(sw["cells"]):
        st.session_state["sw_pick"] = i
        _apply_cell()


#: the Compare page's "agents" button: (pruning, compaction) of each agent (:mod:`inspector.agents`),
#: in the order ``compare_agents`` replays them
AGENT_CONFIGS = tuple((AGENTS[a].strategy, AGENTS[a].policy) for a in COMPARED if a in AGENTS)


def _compare_agents() -> None:
    updates: dict[str, Any] = {"cmp_n": 4}
    for i, (strat, pol) in enumerate(AGENT_CONFIGS):
        updates[f"cmp_strat_{i}"] = strat if strat in us.strategies() else "none"
        updates[f"cmp_pol_{i}"] = pol
    set_widgets(updates)


def compare_page(settings: ReplaySettings) -> None:
    s = need_session()
    st.title("Compare & tune")
    st.caption(
        "Several configurations replayed on the same session and branch. Configuration A starts from the "
        "sidebar; the others change pruning, compaction and keepRecentTokens."
    )
    st.button(
        "Compare the agents: pi, Codex CLI, OpenCode, Claude Code",
        key="cmp_agents",
        on_click=_compare_agents,
        help="Sets the four configurations to each agent's own pruning and "
        "compaction (the sidebar's window and thresholds apply to all).",
    )
    count = int(
        st.segmented_control(
            "Configurations",
            [2, 3, 4],
            key="cmp_n",
            persist_state="session",
            default=None if "cmp_n" in st.session_state else 2,  # set by "Compare the agents"
        )
        or 2
    )
    configs = _configurations(settings, count)
    runs = [(name, current_replay(cfg, f"Replaying {name}")) for name, cfg in configs]
    rows = views.metrics_rows(runs) + retention_view.compare_rows(runs)
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        key="cmp_table",
        height=35 * len(rows) + 38,
        column_config={"metric": st.column_config.TextColumn(width="medium")},
    )
    _overflow_note(s, settings.context_window)
    cache_view.compare_panel(runs, settings)
    st.plotly_chart(figures.compare_timelines(runs), key="cmp_tl", config=PLOT_CONFIG)
    _sweep_section(s, settings)


def _overflow_note(session: Any, window: int) -> None:
    """Under the table: overflows are counted against the sidebar's window, which the session's
    own answered calls show to be too small (:mod:`inspector.window`), when they do."""
    peak = answered_peak(session)
    if peak is not None and peak.tokens > window:
        st.caption(
            f"Overflows are counted against the {window:,}-token window set in the sidebar. The provider "
            f"answered a {peak.tokens:,}-token context in this session (entry {peak.entry_index}), so its "
            "model's window is larger: set it in the sidebar to count only what a provider would reject."
        )


def _configurations(settings: ReplaySettings, count: int) -> list[tuple[str, ReplaySettings]]:
    """One column of pickers per configuration (A from the sidebar, the others from presets)."""
    names = list(us.strategies()) or ["none"]
    configs: list[tuple[str, ReplaySettings]] = []
    presets = [(settings.strategy, settings.compaction)]
    for p in (
        ("opencode", "pi"),
        ("pi-context-pruning", "pi"),
        ("none", "pi"),
        ("dcp", "pi"),
        ("none", "never"),
    ):
        if p not in presets and (p[0] in names or p[0] == "none"):
            presets.append(p)
    cols = st.columns(count, gap="medium")
    for i, col in enumerate(cols):
        with col:
            st.markdown(f"**{'ABCD'[i]}**")
            ds, dp = presets[i]
            strat = st.selectbox(
                "Pruning",
                names,
                key=f"cmp_strat_{i}",
                persist_state="session",
                **default_index(f"cmp_strat_{i}", names, ds),
                format_func=strategy_title,
            )
            pol = st.selectbox(
                "Compaction",
                list(POLICIES),
                key=f"cmp_pol_{i}",
                persist_state="session",
                **default_index(f"cmp_pol_{i}", list(POLICIES), dp),
                format_func=lambda n: POLICIES[n].title,
            )
            inert = us.inert_settings(pol).get("keep")  # as in the sidebar: disabled where it changes nothing
            keep = int(
                st.number_input(
                    "keepRecentTokens",
                    0,
                    2_000_000,
                    step=1000,
                    key=f"cmp_keep_{i}",
                    persist_state="session",
                    disabled=inert is not None,
                    help=inert,
                    **default(f"cmp_keep_{i}", settings.keep_recent_tokens),
                )
            )
            cfg = variant_settings(settings, strat, pol, keep)
            configs.append((f"{'ABCD'[i]}: {strategy_title(strat)} / {POLICIES[pol].title}", cfg))
    return configs


def _sweep_section(s: Any, settings: ReplaySettings) -> None:
    """Sweep two settings: the axes and values, the run, and its heatmap."""
    st.subheader("Sweep two settings")
    swept = us.strategies().get(settings.strategy)  # the sidebar's strategy: its own settings are axes too
    st.caption(
        "Replays the session on a grid of two settings (the rest as in the sidebar) and colours each cell "
        "by a metric. The axes are pi's thresholds and the sidebar strategy's own numeric settings"
        + (
            " (choose OpenCode prune in the sidebar for PRUNE_PROTECT × PRUNE_MINIMUM)"
            if settings.strategy == "none"
            else ""
        )
        + ". Click a cell to apply its settings to the sidebar; the outlined cell is the current setting."
    )
    if POLICIES[settings.compaction].as_recorded:
        st.warning(
            "The sidebar's compaction policy is 'As recorded': the session's own compactions stand, so "
            "keepRecentTokens, reserveTokens and the window change nothing. Choose a what-if policy (pi) "
            "to sweep them.",
            icon=":material/info:",
        )
    axes = views.sweep_axes(swept)
    current = {
        **settings.strategy_dict(),
        "keep_recent_tokens": settings.keep_recent_tokens,
        "reserve_tokens": settings.reserve_tokens,
        "context_window": settings.context_window,
    }
    if swept is not None:
        for k, f in swept.Settings.model_fields.items():
            current.setdefault(k, f.default)
    c = st.columns(3)
    x = c[0].selectbox("X axis", axes, index=0, key="sw_x")
    y = c[1].selectbox("Y axis", axes, index=min(1, len(axes) - 1), key="sw_y")
    metric = c[2].selectbox(
        "Colour by",
        list(views.METRIC_LABELS),
        index=1,
        key="sw_metric",
        format_func=lambda m: views.METRIC_LABELS[m],
    )

    def bounds(axis: str) -> tuple[Any, Any]:
        if swept is not None and axis in swept.Settings.model_fields:
            return us.field_bounds(swept.Settings.model_fields[axis])
        return (1000, None) if axis == "context_window" else (0, None)

    c2 = st.columns(2)
    xs_raw = c2[0].text_input(
        f"{x} values",
        key=f"sw_vals_{x}",
        **default(
            f"sw_vals_{x}", ", ".join(str(v) for v in views.sweep_values(x, current.get(x), *bounds(x)))
        ),
    )
    ys_raw = c2[1].text_input(
        f"{y} values",
        key=f"sw_vals_{y}_y",
        **default(
            f"sw_vals_{y}_y", ", ".join(str(v) for v in views.sweep_values(y, current.get(y), *bounds(y)))
        ),
    )
    if st.button("Run sweep", key="sw_run", type="primary"):
        _run_sweep(s, settings, x, y, xs_raw, ys_raw)
    sw = st.session_state.get("sweep")
    if sw:
        _sweep_result(s, settings, sw, metric, current)


def _parse_values(raw: str) -> list[int]:
    return sorted({int(v.replace("_", "").replace(",", "")) for v in re.split(r"[,\s]+", raw) if v.strip()})


def _run_sweep(s: Any, settings: ReplaySettings, x: str, y: str, xs_raw: str, ys_raw: str) -> None:
    try:
        grid: dict[str, Sequence[int]] = {x: _parse_values(xs_raw), y: _parse_values(ys_raw)}
    except ValueError:
        st.error("Values must be whole numbers separated by commas.")
        grid = {}
    if x == y:
        st.error("Choose two different axes.")
    elif grid and all(grid.values()):
        bar = st.progress(0.0, text="Sweeping…")

        def progress(f: float) -> None:
            bar.progress(min(1.0, f), text=f"Sweeping… {f:.0%}")

        try:
            cells = sweep(s, settings, grid, progress=progress, summaries=summary_cache())
        except ValueError as e:  # a value the settings refuse (a window under 1,000 tokens…): one line
            bar.empty()
            st.error(us.esc(str(e)))
            return
        bar.empty()
        st.session_state["sweep"] = {
            "x": x,
            "y": y,
            "cells": cells,
            "strategy": settings.strategy,
            "base": settings,
        }
        st.session_state.pop("sw_pick", None)


def _sweep_result(
    s: Any, settings: ReplaySettings, sw: dict[str, Any], metric: str, current: dict[str, Any]
) -> None:
    sx, sy, cells = sw["x"], sw["y"], sw["cells"]
    if views.sweep_is_stale(sw["base"], settings, sx, sy):
        st.warning(
            "The sidebar changed since this sweep ran (other than the swept settings): run it again "
            "to update.",
            icon=":material/update:",
        )
    st.plotly_chart(
        figures.sweep_heatmap(cells, sx, sy, metric, current),
        key="heat",
        config=PLOT_CONFIG,
        on_select=_heat_picked,
        selection_mode="points",
    )
    labels = [
        f"{sx} = {c.values[sx]:,}, {sy} = {c.values[sy]:,} → "
        f"{views.fmt_metric(metric, getattr(c.metrics, metric))}"
        for c in cells
    ]
    with st.container(horizontal=True, vertical_alignment="bottom"):
        st.selectbox("Cell", range(len(cells)), format_func=lambda i: labels[i], key="sw_pick", width=520)
        st.button("Apply to the sidebar", key="sw_apply", on_click=_apply_cell)
    if msg := st.session_state.pop("_applied", None):
        st.success(f"Applied {msg}.")
    cache_view.sweep_panel(s, cells)
    retention_view.sweep_panel(s, cells, sx, sy, current)


compare_page(st.session_state["_settings"])
