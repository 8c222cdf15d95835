"""The Doctor page: what looks wrong on the replayed branch, each finding openable in the replay.

A Streamlit page script, run by path (``st.Page`` in ``app.py``); session text is only ever shown
as plain text or escaped markdown, never as HTML.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from inspector.doctor import DoctorOptions, diagnose
from inspector.replay import ReplaySettings
from inspector.ui import views
from inspector.ui.common import need_session, open_in_replay
from inspector.ui.state import current_replay, memo
from inspector.ui.urlstate import esc


def doctor_page(settings: ReplaySettings) -> None:
    s = need_session()
    st.title("Doctor")
    st.caption(
        "What looks wrong on the replayed branch: tool calls without results, overflows, loops, re-reads, "
        "summaries that forgot files…"
    )
    leaf = settings.leaf if settings.leaf is not None else "leaf"
    window = settings.context_window  # the sidebar's, for the overflow check
    rep = memo(
        "doctor",
        (settings.leaf, window, settings.model_windows),
        lambda: diagnose(s, leaf, DoctorOptions(context_window=window, model_windows=settings.model_windows)),
    )
    counts = rep.counts()
    m = st.columns(3)
    m[0].metric("Errors", counts.get("error", 0))
    m[1].metric("Warnings", counts.get("warning", 0))
    m[2].metric("Info", counts.get("info", 0))
    if not rep.findings:
        st.success("Nothing wrong found on this branch.")
        return
    cwd = getattr(s.header, "cwd", None)
    rows = [
        {
            "severity": f.severity,
            "kind": f.kind,
            "entries": ", ".join(map(str, f.entries[:8])),
            "lines": ", ".join(map(str, f.lines[:8])),
            "explanation": views.relative_paths(f.message, cwd),
        }
        for f in rep.findings
    ]
    if any(row["explanation"] != f.message for row, f in zip(rows, rep.findings, strict=True)):
        st.caption(esc(f"Paths are relative to the session's folder, {cwd}."))
    ev = st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        height=min(420, 36 * (len(rows) + 1)),
        key="doctor_table",
        on_select="rerun",
        selection_mode="single-row",
        column_config={
            "explanation": st.column_config.TextColumn(
                width="large", help="Select a row to read it in full and open it in the replay"
            )
        },
    )
    picked = ev.selection.rows if ev is not None else []
    with_entries = [i for i, f in enumerate(rep.findings) if f.entries]
    if picked:
        f = rep.findings[picked[0]]
        st.code(f"[{f.severity}] {f.kind}: {rows[picked[0]]['explanation']}", language=None, wrap_lines=True)
    with st.expander("Full explanations"):
        st.text("\n\n".join(f"[{r['severity']}] {r['kind']}: {r['explanation']}" for r in rows))
    if not with_entries:
        return
    default_pick = picked[0] if picked and picked[0] in with_entries else with_entries[0]
    with st.container(horizontal=True, vertical_alignment="bottom"):
        pick = st.selectbox(
            "Show a finding in the replay",
            with_entries,
            width=520,
            key=f"doc_pick_{default_pick}",
            index=with_entries.index(default_pick),
            format_func=lambda i: f"{rep.findings[i].kind} · entry {rep.findings[i].entries[0]}",
        )
        go = st.button("Open in Replay", key="doc_go", icon=":material/play_circle:")
    if go:
        entry = rep.findings[pick].entries[0]
        r = current_replay(settings)
        open_in_replay(views.step_showing_entry(r, entry), entry)
        st.switch_page(st.session_state["_pages"]["replay"])


doctor_page(st.session_state["_settings"])
