"""The Corpus page: many sessions at once (issue 20).

* **Overview** — a folder, files or globs (inside the allowed roots), and optionally every session
  found on this machine, loaded on a process pool with a progress bar: one row per session
  (:mod:`inspector.corpus.overview`), sortable, filterable by agent and name; a selected row opens
  on Replay. Totals, and histograms of peak context and of tokens at compaction.
* **Corpus sweep** — a grid of one or two of pi's thresholds replayed over every session
  (:func:`inspector.corpus.run_sweep`), the rest of the settings from the sidebar: the aggregate as a
  heatmap (click a cell), the frontier of billed cost against re-reads and overflows, and the
  sessions the selected setting hurts most — each opens on Replay with that setting applied.

Session text never reaches HTML here: names go through dataframes and escaped markdown.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from inspector.corpus import CorpusError, CorpusItem, overview, resolve_corpus, run_sweep, totals
from inspector.corpus.figures import AGGREGATE_METRICS, aggregate_heatmap, frontier, histogram
from inspector.policies import POLICIES
from inspector.replay import ReplaySettings
from inspector.ui import sources
from inspector.ui import urlstate as us
from inspector.ui.state import NotASession, load_bytes, set_widgets

PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["lasso2d"]}
SWEEP_KEYS = ("keep_recent_tokens", "reserve_tokens", "context_window")
DEFAULT_VALUES = {
    "keep_recent_tokens": "10000, 20000, 40000, 80000",
    "reserve_tokens": "8192, 16384, 32768, 65536",
    "context_window": "128000, 200000, 272000, 400000",
}
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


# ---------------------------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------------------------


def _allowed(items: list[CorpusItem]) -> tuple[list[CorpusItem], int]:
    """The items inside the allowed roots (a glob or a link cannot reach outside them)."""
    ok = [i for i in items if sources.is_allowed(Path(i.path).resolve())]
    return ok, len(items) - len(ok)


def _load_corpus(raw: str, local: bool, workers: int) -> None:
    specs = [s.strip() for s in re.split(r"[\n;]+", raw) if s.strip()]
    specs = [s if Path(s).is_absolute() or s.startswith("@") else str(_repo_path(s)) for s in specs]
    if local:
        specs.append("@all")
    if not specs:
        st.error("Enter a folder, a file or a glob, or tick the sessions on this machine.")
        return
    try:
        items, refused = _allowed(resolve_corpus(specs))
    except CorpusError as e:
        st.error(us.esc(str(e)))
        return
    if refused:
        st.warning(
            f"{refused} file(s) outside the allowed folders were left out (set INSPECTOR_ROOTS to allow more)."
        )
    if not items:
        return
    bar = st.progress(0.0, text="Loading the corpus…")

    def loaded(d: int, n: int) -> None:
        bar.progress(d / max(1, n), text=f"Loading the corpus… {d:,}/{n:,} sessions")

    rows = overview(items, workers=workers, progress=loaded)
    bar.empty()
    st.session_state["corpus"] = {"items": items, "rows": rows}
    st.session_state.pop("corpus_sweep", None)


def _repo_path(spec: str) -> Path:
    here = Path.cwd() / spec
    try:
        exists = here.exists()
    except OSError:  # a name too long for the file system: resolving it says so
        exists = True
    return here if exists or any(c in spec for c in "*?[") else sources.REPO / spec


# ---------------------------------------------------------------------------------------------
# opening a session on Replay
# ---------------------------------------------------------------------------------------------


def _open(key: str, values: dict[str, Any] | None = None, policy: str | None = None) -> None:
    """(A button's callback) load the session ``key`` and, with ``values``, put that setting in the
    sidebar; the page then switches to Replay."""
    path, _, ref = key.partition("#")
    try:
        if ref:
            from inspector.importers.discover import LocalSession, opencode_export

            data = opencode_export(LocalSession("opencode", Path(path), "", None, datetime.now(), 0, ref))
            load_bytes(data, f"{ref}.json", None)
        else:
            p = sources.check_path(path)
            load_bytes(sources.read_file(p), str(p), ("path", str(p)))
    except (sources.PathRefused, NotASession, OSError, KeyError) as e:
        st.session_state["_corpus_error"] = str(e)
        return
    if values:
        updates: dict[str, Any] = {"compaction": policy} if policy else {}
        for k, v in values.items():
            if k == "keep_recent_tokens":
                updates["keep"] = v
            elif k == "reserve_tokens":
                updates["reserve"] = v
            elif k == "context_window":
                updates |= us.window_updates(v)
        set_widgets(updates)
    st.session_state["_corpus_goto"] = True


# ---------------------------------------------------------------------------------------------
# the overview
# ---------------------------------------------------------------------------------------------


def _overview(rows: list[dict[str, Any]]) -> None:
    t = totals(rows)
    c = st.columns(6)
    c[0].metric(
        "Sessions",
        f"{t['sessions'] - t['failed']:,}",
        help=", ".join(f"{a}: {n}" for a, n in sorted(t["agents"].items())),
    )
    c[1].metric("Model calls", f"{t['calls']:,}")
    c[2].metric("Compactions", f"{t['compactions']:,}")
    c[3].metric("Median peak context", f"{t['medianPeakContext'] or 0:,}")
    c[4].metric("Recorded cost", f"${t['recordedCost']:,.2f}")
    c[5].metric("Failed to load", f"{t['failed']:,}")
    f = st.columns([2, 3])
    agents = sorted({r["agent"] for r in rows if r["agent"]})
    pick = f[0].multiselect("Agents", agents, default=agents, key="corpus_agents")
    needle = f[1].text_input("Name contains", key="corpus_filter")
    shown = [r for r in rows if not r["error"] and r["agent"] in pick and needle.lower() in r["path"].lower()]
    table = pd.DataFrame([_table_row(r) for r in shown])
    ev = st.dataframe(
        table,
        hide_index=True,
        key="corpus_table",
        on_select="rerun",
        selection_mode="single-row",
        height=min(420, 36 * (len(shown) + 1)),
        column_config=_TABLE_COLUMNS,
    )
    picked = ev.selection.rows if ev is not None else []
    if picked:
        key = shown[picked[0]]["path"]
        st.button(
            f"Open {us.esc(Path(key).name)} on Replay",
            key="corpus_open",
            type="primary",
            on_click=_open,
            args=(key,),
        )
    else:
        st.caption("Click a column header to sort; select a row to open that session on Replay.")
    _failed([r for r in rows if r["error"] and needle.lower() in r["path"].lower()])
    _histograms(rows)


def _table_row(r: dict[str, Any]) -> dict[str, Any]:
    """One session's row of the overview table."""
    return {
        "session": Path(r["path"]).name,
        "agent": r["agent"],
        "model": r["model"],
        "window": r["window"],
        "window from": r["windowSource"],
        "window at least": r["windowAtLeast"],
        "calls": r["calls"],
        "peak context": r["peakContext"],
        "compactions": r["compactions"],
        "prunes": r["prunes"],
        "recorded cost $": r["recordedCost"],
        "cache hit %": None if r["cacheHitRate"] is None else round(100 * r["cacheHitRate"], 1),
        "errors": (r["findings"] or {}).get("error", 0),
        "warnings": (r["findings"] or {}).get("warning", 0),
        "load issues": r["loadIssues"],
        "size KB": round((r["size"] or 0) / 1024),
        "path": r["path"],
    }


_TABLE_COLUMNS = {
    "recorded cost $": st.column_config.NumberColumn(format="%.2f"),
    **{c: st.column_config.NumberColumn(format="localized") for c in ("window", "calls", "peak context")},
    "window at least": st.column_config.NumberColumn(
        format="localized",
        help="A call the provider answered held more than the window the findings were checked "
        "against: the model's window is at least this, and those overflows did not happen "
        "(set the window in the sidebar, or --window)",
    ),
}


def _histograms(rows: list[dict[str, Any]]) -> None:
    """Peak context per session, and the tokens at each recorded compaction."""
    peaks = [r["peakContext"] for r in rows if r["peakContext"]]
    at = [t for r in rows for t in r["tokensAtCompaction"] or []]
    h = st.columns(2)
    h[0].plotly_chart(
        histogram(peaks, "Peak context per session", "tokens"), key="corpus_peaks", config=PLOT_CONFIG
    )
    if at:
        h[1].plotly_chart(
            histogram(
                at, f"Tokens at compaction ({len(at)} compactions)", "tokens before", y_title="compactions"
            ),
            key="corpus_at",
            config=PLOT_CONFIG,
        )
    else:
        h[1].caption("No compaction recorded in these sessions.")


def _failed(rows: list[dict[str, Any]]) -> None:
    """The files that did not load, each with why (apart from the sessions: they have no figures)."""
    if not rows:
        return
    with st.expander(f"{len(rows):,} file(s) did not load", icon=":material/error:"):
        st.dataframe(
            pd.DataFrame(
                [{"file": Path(r["path"]).name, "why": r["error"], "path": r["path"]} for r in rows]
            ),
            hide_index=True,
            key="corpus_failed",
            column_config={"why": st.column_config.TextColumn(width="large")},
        )


# ---------------------------------------------------------------------------------------------
# the corpus sweep
# ---------------------------------------------------------------------------------------------


def _values(raw: str) -> list[int]:
    return sorted({int(v.replace("_", "")) for v in re.split(r"[,\s]+", raw) if v.strip()})


def _sweep_form(items: list[CorpusItem], settings: ReplaySettings, workers: int) -> None:
    c = st.columns(3)
    policies = [p for p in POLICIES if p != "recorded"]
    policy = c[0].selectbox(
        "Compaction",
        policies,
        index=policies.index("pi"),
        key="cs_policy",
        format_func=lambda n: POLICIES[n].title,
    )
    x = c[1].selectbox("X axis", SWEEP_KEYS, index=0, key="cs_x")
    y = c[2].selectbox("Y axis", ["(none)", *SWEEP_KEYS], index=3, key="cs_y")
    c2 = st.columns(2)
    xs = c2[0].text_input(f"{x} values", DEFAULT_VALUES[x], key=f"cs_vals_x_{x}")
    ys = c2[1].text_input(
        f"{y} values", DEFAULT_VALUES.get(y, ""), key=f"cs_vals_y_{y}", disabled=y == "(none)"
    )
    own_window = not st.session_state.get("window_chosen") and "context_window" not in (x, y)
    if own_window:
        st.caption(
            "Each session is replayed against its own window: the one it records, else its model's in "
            "pi's model list, else 200,000. Choose a window in the sidebar to use one for all."
        )
    elif "context_window" not in (x, y):
        st.caption(
            f"Every session is replayed against the sidebar's window, {settings.context_window:,} tokens."
        )
    if not st.button("Run the corpus sweep", key="cs_run", type="primary"):
        return
    try:
        grid = {x: _values(xs), **({y: _values(ys)} if y != "(none)" else {})}
    except ValueError:
        st.error("Values must be whole numbers separated by commas.")
        return
    if x == y or not all(grid.values()):
        st.error("Choose two different axes, each with at least one value.")
        return
    base = settings.model_copy(update={"compaction": policy, "leaf": None})
    n = len(items) * (len(grid[x]) * len(grid.get(y, [0])) + 1)
    bar = st.progress(0.0, text=f"Sweeping {n:,} session × setting pairs…")
    try:

        def swept(d: int, t: int) -> None:
            bar.progress(d / max(1, t), text=f"Sweeping… {d:,}/{t:,} session × setting pairs")

        res = run_sweep(items, base, grid, workers=workers, progress=swept, own_window=own_window)
    except (ValueError, TypeError) as e:
        st.error(us.esc(str(e)))
        return
    finally:
        bar.empty()
    st.session_state["corpus_sweep"] = {"result": res, "keys": list(grid), "policy": policy}
    st.session_state.pop("cs_cell", None)


def _heat_picked() -> None:
    ev = st.session_state.get("cs_heat")
    pts = ev.selection.points if ev is not None else []
    if pts:
        i = pts[0].get("customdata")
        if isinstance(i, list):
            i = i[0] if i else None
        if isinstance(i, int):
            st.session_state["cs_cell"] = i


def _sweep_results(sw: dict[str, Any]) -> None:
    res, keys = sw["result"], sw["keys"]
    agg = res.aggregate()
    st.caption(
        f"{len(res.plan.items)} sessions × {len(agg)} settings, {POLICIES[sw['policy']].title} compaction; "
        "“worse” = more input tokens or more overflows than the session as recorded (its own compactions "
        "and pruning). Billed cost prices each replayed call with the provider's prompt cache "
        "(cache reads, writes and uncached input; the session's recorded rates, else list prices); "
        "blended cost prices every input token at one average rate (the call's recorded cost per "
        "token, else the list input price), so it cannot see what a prune or compaction does to the cache."
    )
    metric = st.selectbox(
        "Colour by",
        list(AGGREGATE_METRICS),
        index=list(AGGREGATE_METRICS).index("billed_total"),
        key="cs_metric",
        format_func=lambda m: AGGREGATE_METRICS[m][0],
    )
    c = st.columns([3, 2])
    c[0].plotly_chart(
        aggregate_heatmap(agg, keys, metric),
        key="cs_heat",
        config=PLOT_CONFIG,
        on_select=_heat_picked,
        selection_mode="points",
    )
    c[1].plotly_chart(frontier(agg), key="cs_front", config=PLOT_CONFIG)
    table = pd.DataFrame(
        [
            {
                **a["settings"],
                "sessions": a["sessions"],
                "median input": a["inputTokens"]["median"],
                "p90 input": a["inputTokens"]["p90"],
                "billed $": a["billedCostUsd"]["total"],
                "blended $": a["costUsd"]["total"],
                "cache hit rate": a["cacheHitRate"],
                "compactions": a["compactions"],
                "overflows": a["overflows"],
                "re-reads": a["rereads"],
                "pruned tokens": a["prunedTokens"],
                "worse than recorded": a["worseThanRecorded"],
            }
            for a in agg
        ]
    )
    st.dataframe(table, hide_index=True, key="cs_table")
    labels = [", ".join(f"{k} = {v:,}" for k, v in a["settings"].items()) for a in agg]
    i = st.selectbox(
        "Setting",
        range(len(agg)),
        format_func=lambda k: labels[k],
        key="cs_cell",
        help="Or click a cell of the heatmap.",
    )
    _hurt(agg[i], sw["policy"])
    for path, err in res.failed:
        st.warning(us.esc(f"{Path(path).name} could not be swept: {err}"))


def _hurt(a: dict[str, Any], policy: str) -> None:
    if not a["worse"]:
        st.success("No session is worse than as recorded under this setting.")
        return
    st.markdown(f"**{a['worseThanRecorded']} session(s) worse than recorded** — the most hurt first:")
    rows = pd.DataFrame(
        [
            {
                "session": Path(w["session"]).name,
                "input tokens +": w["inputTokensDelta"],
                "× recorded": w["inputTokensRatio"],
                "overflows +": w["overflowsDelta"],
                "re-reads +": w["reReadsDelta"],
            }
            for w in a["worse"]
        ]
    )
    ev = st.dataframe(rows, hide_index=True, key="cs_hurt", on_select="rerun", selection_mode="single-row")
    picked = ev.selection.rows if ev is not None else []
    if picked:
        w = a["worse"][picked[0]]
        st.button(
            f"Open {us.esc(Path(w['session']).name)} on Replay with this setting",
            key="cs_open",
            type="primary",
            on_click=_open,
            args=(w["session"], a["settings"], policy),
        )


# ---------------------------------------------------------------------------------------------
# the page
# ---------------------------------------------------------------------------------------------


def corpus_page(settings: ReplaySettings) -> None:
    if st.session_state.pop("_corpus_goto", False) and "_pages" in st.session_state:
        st.switch_page(st.session_state["_pages"]["replay"])
    st.title("Corpus")
    st.caption(
        "Many sessions at once: an overview of each, and sweeps of pi's thresholds over all of them. "
        "Sessions load on a process pool; only files inside the allowed folders are read. The command line "
        "does the same on Dask and keeps results in DuckDB: `inspector corpus`, `inspector sweep CORPUS…`."
    )
    if err := st.session_state.pop("_corpus_error", None):
        st.error(us.esc(err))
    c = st.columns([4, 2, 1])
    raw = c[0].text_area(
        "Folders, files or globs (one per line)", "sample_sessions", key="corpus_specs", height=68
    )
    local = c[1].checkbox(
        "Add the sessions on this machine",
        key="corpus_local",
        help="Every session `inspector sessions` finds for pi, Claude Code, Codex and OpenCode.",
    )
    workers = int(
        c[2].number_input(
            "Workers",
            0,
            64,
            CORES,
            key="corpus_workers",
            help="Worker processes (0: in the app's own process).",
        )
    )
    if c[1].button("Load corpus", key="corpus_load", type="primary"):
        _load_corpus(raw, local, workers)
    corpus = st.session_state.get("corpus")
    if not corpus:
        st.info("Load a corpus: a folder of session files (searched recursively), files, or globs.")
        return
    # a control, not st.tabs: the view chosen survives the rerun a button starts
    view = (
        st.segmented_control(
            "View",
            ["Overview", "Corpus sweep"],
            default="Overview",
            key="corpus_view",
            label_visibility="collapsed",
        )
        or "Overview"
    )
    if view == "Overview":
        _overview(corpus["rows"])
        return
    ok = [i for i, r in zip(corpus["items"], corpus["rows"], strict=True) if not r["error"]]
    _sweep_form(ok, settings, workers)
    if sw := st.session_state.get("corpus_sweep"):
        _sweep_results(sw)


corpus_page(st.session_state["_settings"])
