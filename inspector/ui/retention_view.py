"""Retention in the app (issue 21): what a compaction's summary kept of what the session needed
later. The pages call one function each:

* Summaries page: :func:`summary_retention` — the scores, the forgotten list (each item opens the
  entry where it was introduced or needed in the replay), the summary text with the items it kept
  highlighted and the missing ones listed, and the summaries of the same span compared.
* Replay page: :func:`mark_timeline` — a marker on the timeline at the first call that used
  something a compaction had dropped.
* Compare & tune: :func:`compare_rows` — retention as one more objective of each configuration
  (keepRecentTokens trades tokens against what is forgotten).

Computing is :mod:`inspector.retention`; this module only draws. Session text is shown escaped.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ..retention import CATEGORIES, CompactionRetention, compare_summaries, retention, retention_metrics
from ..retention.extract import facts_for, facts_ready, path_suffixes
from ..visible import clip
from . import figures, views
from .common import PLOT_CONFIG
from .state import memo, set_step, summary_cache
from .urlstate import esc

MARK_COLOR = "#e6550d"
BIG = 5000
"""Sessions with more entries have their facts read in the background before the Replay page marks
the timeline (the first read of a 20k-entry session takes seconds)."""
_WARMING: set[int] = set()
LABELS = {"files": "Files", "identifiers": "Identifiers", "errors": "Errors", "instructions": "Instructions"}
HOW = (
    "Deterministic heuristics, offline (docs/retention.md): an item is *needed* when the branch after "
    "the compaction (up to the next one) touches, uses, repeats or quotes it, and *kept* when the summary's "
    "prose, its file lists or the messages kept verbatim name it."
)


def report(r: Any) -> Any:
    """The retention of every compaction of ``r`` (memoised with the replay's settings)."""
    return memo("retention", (r.settings, len(r.summaries), id(r)), lambda: retention(r))


def warm(session: Any) -> None:
    """Read every entry's facts in a background thread, once per session (the first score is then
    quick)."""
    if id(session) in _WARMING:
        return
    _WARMING.add(id(session))

    def work() -> None:
        try:
            facts_for(session, deep=True)
        except Exception:  # noqa: BLE001 - reported where the facts are used
            pass

    threading.Thread(target=work, name="inspector-warm-retention", daemon=True).start()


# ---------------------------------------------------------------------------------------------
# Replay page
# ---------------------------------------------------------------------------------------------


def mark_timeline(fig: go.Figure, r: Any) -> go.Figure:
    """``fig`` (the Replay page's timeline) with a marker at the first call that used a file,
    identifier or error each compaction had dropped."""
    if not r.summaries:
        return fig
    if len(r.session.entries) > BIG and not facts_ready(r.session):
        warm(r.session)  # drawn once the facts are read (the next time the page runs)
        return fig
    rep = report(r)
    xs, ys, texts = [], [], []
    for k, (c, step) in enumerate(zip(rep.compactions, rep.first_need_steps, strict=True)):
        if step is None or not 0 <= step < len(r.steps):
            continue
        used = [n for n in c.forgotten if n.kind in ("files", "identifiers", "errors")]
        xs.append(step)
        ys.append(r.steps[step].tokens)
        first = min(used, key=lambda n: n.needed_at)
        texts.append(
            f"compaction {k + 1} forgot {len(c.forgotten)} item(s); first used here: {first.kind[:-1]} "
            f"{clip(first.item, 60)}"
        )
    if xs:
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="markers",
                name="first use of a forgotten item",
                marker={
                    "symbol": "triangle-down",
                    "size": 13,
                    "color": MARK_COLOR,
                    "line": {"width": 1, "color": "#333"},
                },
                text=[t.replace("<", "‹") for t in texts],
                hovertemplate="step %{x}<br>%{text}<extra></extra>",
            )
        )
    return fig


# ---------------------------------------------------------------------------------------------
# Compare & tune
# ---------------------------------------------------------------------------------------------


def compare_rows(runs: list[tuple[str, Any]]) -> list[dict[str, str]]:
    """Two rows for the Compare table: items kept of those needed later, and items forgotten,
    over every compaction of each configuration's replay."""
    kept: dict[str, str] = {"metric": "retention (kept / needed later)"}
    lost: dict[str, str] = {"metric": "items forgotten by compactions"}
    for name, r in runs:
        t = report(r).totals() if r.summaries else None
        kept[name] = f"{t['retention']:.0%} of {t['needed']:,}" if t and t["needed"] else "—"
        lost[name] = f"{t['forgotten']:,}" if t else "—"
    return [kept, lost]


def sweep_panel(session: Any, cells: Any, x: str, y: str, current: dict[str, Any]) -> None:
    """Compare & tune, under a sweep: retention as one more objective, on demand (each cell is
    replayed again and its compactions scored): the grid coloured by the share kept of what the
    branch needed later, and the cells ranked by the items forgotten."""
    if not st.toggle("Score what each cell's compactions forgot (retention)", key="sw_retention"):
        return

    def score() -> list[dict[str, Any]]:
        bar = st.progress(0.0, text="Replaying and scoring each cell…")
        out = []
        for k, c in enumerate(cells):
            out.append(retention_metrics(session, c.settings))
            bar.progress(
                (k + 1) / len(cells), text=f"Replaying and scoring each cell… {k + 1} of {len(cells)}"
            )
        bar.empty()
        return out

    got = memo("sweep_retention", tuple(c.settings for c in cells), score)
    st.plotly_chart(
        figures.sweep_heatmap(cells, x, y, "retention", current, [g["retention"] for g in got]),
        key="heat_retention",
        config=PLOT_CONFIG,
    )
    rows = [
        {
            **c.values,
            "retention": _pct(g["retention"]),
            "needed later": g["needed"],
            "forgotten": g["forgotten"],
            "compactions": c.metrics.compactions,
            "total input tokens": c.metrics.total_input_tokens,
        }
        for c, g in sorted(
            zip(cells, got, strict=True), key=lambda p: (p[1]["forgotten"], p[0].metrics.total_input_tokens)
        )
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="sw_retention_table")
    st.caption(
        "Fewest items forgotten first (among equals, the fewest input tokens). A cell with no compaction forgets nothing (—: nothing needed). "
        "Keeping more verbatim (keepRecentTokens) forgets less and sends more tokens per call; the "
        "heuristics and what they miss: docs/retention.md."
    )


# ---------------------------------------------------------------------------------------------
# Summaries page
# ---------------------------------------------------------------------------------------------


def summary_retention(r: Any, i: int) -> None:
    """Compaction ``i`` of ``r``: the scores, the forgotten list, the highlighted summary, the
    comparison of summaries of the same span."""
    rep = report(r)
    if not 0 <= i < len(rep.compactions):
        return
    c = rep.compactions[i]
    st.markdown("**What the summary kept of what the session needed later**")
    st.caption(HOW)
    if c.span.unread:
        st.caption(
            f"This compaction: {c.span.unread}, so only what was kept verbatim or put back counts as "
            "kept; what the summary held is not judged."
        )
    _scores(c, rep.first_need_steps[i])
    tabs = st.tabs(
        [
            f"Forgotten ({len(c.forgotten)})",
            "Summary, highlighted",
            "Files of the span",
            "Other summaries of this span",
        ]
    )
    with tabs[0]:
        _forgotten(r, c, i)
    with tabs[1]:
        _highlighted(c, r.summaries[i].text)
    with tabs[2]:
        _files(c)
    with tabs[3]:
        _compare(r, i)


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.0%}"


def _scores(c: CompactionRetention, first: int | None) -> None:
    rec = c.recall()
    m = st.columns(len(CATEGORIES) + 2)
    for col, k in zip(m, CATEGORIES, strict=False):
        n = sum(1 for x in c.needed if x.kind == k)
        col.metric(f"{LABELS[k]} kept", _pct(rec[k]), help=f"{n} needed later ('—': none).")
    task = [x for x in c.needed if x.kind == "task"]
    m[-2].metric(
        "Open task",
        ("kept" if task[0].kept else "lost") if task else "—",
        help="The last user request before the cut, when the agent was still on it.",
    )
    m[-1].metric(
        "Overall", _pct(c.overall), help=f"{len(c.needed) - len(c.forgotten)} of {len(c.needed)} items."
    )
    rd = c.redo
    st.caption(
        f"Work redone after the cut: {rd.rereads} re-read(s) of files read before it, {rd.reruns} command(s) "
        f"run again, {rd.failing_reruns} of them failing again."
        + (
            f" First call that used a forgotten file, identifier or error: {first}."
            if first is not None
            else ""
        )
    )


def _open(r: Any, entry: int) -> None:
    set_step(views.step_showing_entry(r, entry) if entry >= 0 else 0)
    st.session_state["focus_entry"] = entry


def _forgotten(r: Any, c: CompactionRetention, i: int) -> None:
    if not c.forgotten:
        st.success(
            "Nothing the session needed later was lost."
            if c.needed
            else "The session needed nothing from the summarised span later (or nothing came after it)."
        )
        return
    rows = [
        {
            "kind": n.kind,
            "item": n.item,
            "introduced at": n.introduced_at,
            "needed at": n.needed_at,
            "evidence": n.evidence,
        }
        for n in c.forgotten
    ]
    ev = st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        key=f"ret_forgot_{i}",
        on_select="rerun",
        selection_mode="single-row",
        height=min(360, 35 * len(rows) + 38),
        column_config={
            "item": st.column_config.TextColumn(width="large"),
            "evidence": st.column_config.TextColumn(width="large"),
        },
    )
    picked = [x for x in (ev.selection.rows if ev is not None else []) if 0 <= x < len(rows)]
    n = c.forgotten[picked[0] if picked else 0]
    st.caption(
        "Select a row, then open either entry in the replay."
        if not picked
        else esc(f"{n.kind}: {clip(n.item, 80)}")  # the session's text: no markdown, no link
    )
    pages = st.session_state.get("_pages", {})
    with st.container(horizontal=True):
        for label, entry in (
            (f"Open entry {n.introduced_at} (introduced)", n.introduced_at),
            (f"Open entry {n.needed_at} (needed)", n.needed_at),
        ):
            if (
                st.button(
                    label,
                    key=f"ret_go_{i}_{label}",
                    icon=":material/play_circle:",
                    on_click=_open,
                    args=(r, entry),
                )
                and "replay" in pages
            ):
                st.switch_page(pages["replay"])


_LITERAL = ("files", "identifiers", "errors")


def highlight_spans(text: str, c: CompactionRetention) -> list[tuple[int, int, str]]:
    """Where the summary names a needed file, identifier or error: (start, end, kind)."""
    found: list[tuple[int, int, str]] = []
    low = text.lower()
    for n in c.needed:
        if n.kind not in _LITERAL or not {"summary", "details"} & set(n.where):
            continue
        if n.kind == "files":  # the path as written, or a shorter form of it (``src/a.py``)
            needles = [x for x in path_suffixes(n.item) if "/" in x] or [n.item]
        else:
            needles = [n.item if n.kind != "errors" else n.item.partition(": ")[2] or n.item]
        for needle in needles:
            for m in re.finditer(re.escape(needle.lower()), low):
                found.append((m.start(), m.end(), n.kind))
    found.sort(key=lambda x: (x[0], -x[1]))
    out: list[tuple[int, int, str]] = []
    for a, b, k in found:
        if not out or a >= out[-1][1]:
            out.append((a, b, k))
    return out


def _highlighted(c: CompactionRetention, text: str) -> None:
    if not text.strip():
        st.info("This compaction has no summary text.")
        return
    spans = highlight_spans(text, c)
    parts, pos = [], 0
    for a, b, _ in spans:
        parts.append(esc(text[pos:a]))
        parts.append(f":green-background[{esc(text[a:b])}]")
        pos = b
    parts.append(esc(text[pos:]))
    body = "".join(parts).replace("\n", "  \n")
    st.caption("Green: a needed file, identifier or error the summary names. Below it: what it misses.")
    with st.container(height=420):
        st.markdown(body[:60000])
    missing = [n for n in c.needed if not n.kept]
    if missing:
        st.markdown(
            "**Missing:** "
            + " · ".join(f":red-background[{esc(clip(n.item, 80))}]" for n in missing[:60])
            + (f" … and {len(missing) - 60} more" if len(missing) > 60 else "")
        )


def _files(c: CompactionRetention) -> None:
    if not c.files:
        st.caption("No file was read, written or edited in the summarised span.")
        return
    rows = [
        {
            "file": f["path"],
            "operations": ", ".join(f["ops"]),
            "needed later": f["needed"],
            "kept in": ", ".join(f["where"]) or "dropped",
        }
        for f in c.files
    ]
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        height=min(360, 35 * len(rows) + 38),
        column_config={"file": st.column_config.TextColumn(width="large")},
    )


def _compare(r: Any, i: int) -> None:
    llm = r.settings if r.settings.summarizer != "offline" else None
    st.caption(
        "The same needed items, scored against other summaries of the same messages: this compaction's own, "
        "the offline summarizer's"
        + (
            f", and {r.settings.summarizer}'s in each prompt style (cached; asked only when you click)"
            if llm
            else " (pick an LLM summarizer in the sidebar to add its prompt styles)"
        )
        + "."
    )
    key = f"ret_cmp_{i}_{llm is not None}"
    if llm is not None and not st.session_state.get(key):
        st.button(
            "Score the LLM's summaries",
            key=f"{key}_btn",
            on_click=lambda: st.session_state.update({key: True}),
        )
        llm = None
    cs = memo(
        "retention_cmp",
        (r.settings, i, id(r), llm is not None),
        lambda: compare_summaries(r, i, llm, summaries=summary_cache()),
    )
    rows = [
        {
            "summary": x.summary_label,
            **{LABELS[k]: _pct(v) for k, v in x.recall().items()},
            "overall": _pct(x.overall),
            "forgotten": len(x.forgotten),
        }
        for x in cs
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True)
