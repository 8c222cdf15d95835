"""The Tree page: the session's branches as lanes and as pi's /tree list, the branch to replay,
and a branch summary preview between two entries.

A Streamlit page script, run by path (``st.Page`` in ``app.py``); session text is only ever shown
as plain text or escaped markdown, never as HTML.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from inspector.branch_summary import DEFAULT_BRANCH_RESERVE_TOKENS, prepare_branch_summary
from inspector.replay import ReplaySettings
from inspector.session.tree import Session
from inspector.ui import figures, views
from inspector.ui.common import PLOT_CONFIG, need_session
from inspector.ui.state import default, memo, set_widgets

try:  # the summaries package lands separately: the preview is left out when it is missing
    from inspector.summarize import get_summarizer, summarize_branch
except ImportError:  # pragma: no cover - partial checkout
    get_summarizer = None  # type: ignore[assignment]


def _set_branch(entry: int | None) -> None:
    st.session_state["leaf"] = entry
    st.session_state.pop("cur_step", None)


def _tree_rows_picked() -> None:
    ev = st.session_state.get("tree_table")
    rows = ev.selection.rows if ev is not None else []
    order = st.session_state.get("_tree_order", [])
    picked = [order[i] for i in rows if 0 <= i < len(order)]
    if len(picked) == 1:
        set_widgets({"tree_entry": picked[0]})
    elif len(picked) >= 2:
        set_widgets({"tree_entry": picked[-1], "bs_from": picked[-2], "bs_to": picked[-1]})


def _lane_picked() -> None:
    ev = st.session_state.get("lanes")
    pts = ev.selection.points if ev is not None else []
    ids = [p.get("customdata") for p in pts if isinstance(p.get("customdata"), int)]
    if ids:
        set_widgets({"tree_entry": ids[-1]})


def _lanes(s: Session, settings: ReplaySettings, leaf: int | None, path: list[int]) -> None:
    """The caption saying which branch is replayed, and the tree as lanes (a click picks an entry)."""
    st.caption(
        f"{len(s.entries):,} entries · {len(s.roots)} root(s) · {len(s.leaves)} branch end(s) · "
        f"{len(s.fork_points)} fork point(s). Replaying the branch that ends at entry {leaf}"
        + (" (pi's default: the last entry in the file)." if settings.leaf is None else " (chosen here).")
    )
    st.plotly_chart(
        figures.tree_lanes(s, highlight=[leaf] if leaf is not None else [], current_path=path),
        key="lanes",
        config=PLOT_CONFIG,
        on_select=_lane_picked,
        selection_mode="points",
    )
    st.caption(
        "One lane per branch end; long chains are collapsed to a line between forks, compactions, branch "
        "summaries and labels (a label too close to another to be written is in its point's hover). Click a "
        "point to pick that entry below."
    )


def _replay_a_branch(s: Session, settings: ReplaySettings, leaf: int | None) -> None:
    st.subheader("Replay a branch")
    st.caption("Any entry can end the replayed branch: the path from the root to it.")
    e = int(
        st.number_input(
            "Entry (file order)", 0, len(s.entries) - 1, key="tree_entry", **default("tree_entry", leaf or 0)
        )
    )
    st.text(views.entry_label(s, e, 160))
    with st.container(horizontal=True):
        st.button(
            "Replay up to this entry", key="use_branch", type="primary", on_click=_set_branch, args=(e,)
        )
        st.button(
            "Back to pi's default leaf",
            key="default_branch",
            on_click=_set_branch,
            args=(None,),
            disabled=settings.leaf is None,
        )


#: What the preview adds for an agent whose own /tree differs from pi's (by the session's format).
_NOT_PI_TREE = {
    "codex": " Codex itself drops rolled-back turns without a summary: this is what pi would do.",
    "claude-code": " Claude Code itself keeps no summary of a rewound branch: this is what pi would do.",
}


def _branch_summary_preview(s: Session, leaf: int | None, window: int) -> None:
    """Two entries (FROM, TO; defaults from :func:`views.default_branch_pair`), and what pi's /tree
    would summarise of the branch left between them."""
    st.subheader("Branch summary preview")
    st.caption(
        "Leaving the branch at FROM for TO with pi's /tree: what the summary of the abandoned part "
        "would carry over. Select two rows in the list below, or type entries."
        + _NOT_PI_TREE.get(s.format, "")
    )
    n = len(s.entries)
    dflt = views.default_branch_pair(s, leaf)
    cc = st.columns(2)
    src = int(cc[0].number_input("From (old leaf)", 0, n - 1, key="bs_from", **default("bs_from", dflt[0])))
    dst = int(cc[1].number_input("To (target)", 0, n - 1, key="bs_to", **default("bs_to", dflt[1])))
    col, prep = memo(
        "branch", (src, dst, window), lambda: prepare_branch_summary(s, src, dst, context_window=window)
    )
    if not col.entries:
        st.info(
            f"Nothing to summarise: entry {src} is on the path to entry {dst} (common ancestor "
            f"{col.common_ancestor})."
        )
        return
    st.write(
        f"Common ancestor: entry {col.common_ancestor}. Abandoned: {len(col.entries):,} entries; the "
        f"summary reads the newest {len(prep.messages):,} message(s), {prep.totalTokens:,} tokens, "
        f"within pi's budget of {prep.budget:,} tokens (the model's {window:,}-token window less "
        f"branchSummary.reserveTokens, {DEFAULT_BRANCH_RESERVE_TOKENS:,})."
    )
    _file_lists(*prep.fileOps.lists())
    if get_summarizer is not None and prep.messages:
        with st.expander("Preview the summary (offline summarizer)"):
            res = memo(
                "branch_text", (src, dst, window), lambda: summarize_branch(prep, get_summarizer("offline"))
            )
            st.caption(
                "What pi would store in the branch_summary entry: its preamble, the summary, then the file lists."
            )
            st.text(res.text)


def _file_lists(read: list[str], modified: list[str]) -> None:
    """The files the abandoned part read or modified, one row each."""
    if not (read or modified):
        st.caption("No file was read or modified on the abandoned part.")
        return
    files = sorted(set(read) | set(modified))
    st.dataframe(
        pd.DataFrame([{"file": f, "read": f in read, "modified": f in modified} for f in files]),
        hide_index=True,
        height=min(250, 35 * len(files) + 38),
    )


def _entries_table(s: Session, path: list[int]) -> None:
    """pi's /tree list of the entries (selecting rows picks entries above)."""
    st.subheader("Entries, like pi's /tree")
    st.caption(
        "Depth-first, children by time; indented only below a fork (├─ └─). ● = on the replayed branch. "
        "Select one row to pick an entry, two to preview a branch summary between them."
    )
    rows = memo("tree_rows", tuple(path), lambda: views.tree_rows(s, path))
    st.session_state["_tree_order"] = [r["entry"] for r in rows]
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        key="tree_table",
        on_select=_tree_rows_picked,
        selection_mode="multi-row",
        height=520,
        column_order=["tree", "type", "label"],
        column_config={
            "tree": st.column_config.TextColumn("entry", width=620),
            "type": st.column_config.TextColumn(width="medium"),
            "label": st.column_config.TextColumn(width="small"),
        },
    )
    if len(rows) < len(s.entries):
        st.caption(f"The first {len(rows):,} of {len(s.entries):,} entries are listed.")


def tree_page(settings: ReplaySettings) -> None:
    s = need_session()
    st.title("Branch tree")
    if not s.entries:
        st.warning("This session has no entries.")
        return
    leaf = settings.leaf if settings.leaf is not None else s.default_leaf
    path = s.path(leaf) if leaf is not None else []
    _lanes(s, settings, leaf, path)
    c1, c2 = st.columns(2, gap="large")
    with c1:
        _replay_a_branch(s, settings, leaf)
    with c2:
        _branch_summary_preview(s, leaf, settings.context_window)
    _entries_table(s, path)


tree_page(st.session_state["_settings"])
