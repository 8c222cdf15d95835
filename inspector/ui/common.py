"""What several pages share: the session guard, titles, paths relative to the session's folder,
the message table, the reconstruction check a page can afford, and the link into the Replay page.

Each page of the app is a script in :mod:`inspector.ui.pages` (run by path by ``st.Page``); a
helper only one page uses lives in that page's file. Session text is only ever shown through
``st.text``/``st.code``/dataframes or escaped markdown, never as HTML.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from ..replay import Replay, ReplaySettings
from . import urlstate as us
from . import views
from .state import current_replay, current_session, memo, set_step
from .urlstate import esc

PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["lasso2d"]}


def need_session() -> Any:
    """The open session; without one, a pointer to the Load page and the page stops here."""
    s = current_session()
    if s is None:
        st.info("Load a session first (Load page).")
        st.page_link(st.session_state["_pages"]["load"], label="Go to Load", icon=":material/folder_open:")
        st.stop()
    return s


def need_replay(settings: ReplaySettings) -> Replay:
    """The replay of the open session under ``settings``; without a session, a pointer to the
    Load page and the page stops here."""
    r = current_replay(settings)
    if r is None:
        need_session()
        st.stop()
    return r


def strategy_title(name: str) -> str:
    strat = us.strategies().get(name)
    return strat.title if strat is not None else name


def session_cwd() -> str | None:
    """The current session's working folder (None when it records none)."""
    return getattr(getattr(current_session(), "header", None), "cwd", None)


def relative(text: str) -> str:
    """Paths in ``text`` relative to the current session's working folder (for many texts, look
    the folder up once: :func:`session_cwd` and :func:`views.relative_paths`)."""
    return views.relative_paths(text, session_cwd()) if text else text


MESSAGE_COLUMNS = {
    "#": st.column_config.NumberColumn(width=45, help="Position in the context"),
    "entry": st.column_config.NumberColumn(format="%d", width=60, help="Entry in the file"),
    "kind": st.column_config.TextColumn(width=95),
    "tool": st.column_config.TextColumn(width=70),
    "tokens": st.column_config.NumberColumn("tokens", format="localized", width=70),
    "sent": st.column_config.NumberColumn("sent", format="localized", width=70, help="Tokens after pruning"),
    "status": st.column_config.TextColumn(width=75),
    "became": st.column_config.TextColumn(width=110),
    "why": st.column_config.TextColumn(width=260, help="Select the row to read it in full"),
    "text": st.column_config.TextColumn(width="large", help="Select the row to read the whole message"),
}


def message_list(rows: list[dict[str, Any]], items: list[Any], key: str, focus: int | None = None) -> None:
    """A table of messages; the selected row is shown in full below it, as plain text."""
    if not rows:
        st.caption("None.")
        return
    default_sel: Any = (
        {"selection": {"rows": [focus]}} if focus is not None else None
    )  # streamlit's own TypedDict
    ev = st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        key=key if focus is None else f"{key}_f{focus}",
        height=min(420, 35 * len(rows) + 38),
        on_select="rerun",
        selection_mode="single-row",
        selection_default=default_sel,
        column_config=MESSAGE_COLUMNS,
    )
    picked = [i for i in (ev.selection.rows if ev is not None else []) if 0 <= i < len(rows)]
    if not picked:
        st.caption("Select a row to read that message in full.")
        return
    cm, row = items[picked[0]], rows[picked[0]]
    st.markdown(
        f"**{esc(views.message_label(cm, row.get('#'), row.get('tokens') or 0))}**"
        + (f" — {esc(str(row.get('status', '')))}: {esc(row['why'])}" if row.get("why") else "")
    )
    text = views.full_text(cm.message)
    st.code(text, language=None, wrap_lines=True, height=min(600, 80 + 18 * min(30, text.count("\n"))))


def reconstruction(s: Any, leaf: int | None = None) -> Any:
    """The reconstruction check of the session (:mod:`inspector.recon`), or None where no call
    records its prompt or the session is too long to check on a page."""
    from inspector.recon import view_check

    calls = memo(
        "calls",
        None,
        lambda: sum(1 for e in s.entries if getattr(getattr(e, "message", None), "role", "") == "assistant"),
    )
    return memo("recon", (leaf, calls), lambda: view_check(s, leaf, calls))


def open_in_replay(step: int, entry: int | None) -> None:
    """Make the Replay page open at ``step``, with ``entry`` highlighted (None: nothing)."""
    set_step(step)
    if entry is None:
        st.session_state.pop("focus_entry", None)
    else:
        st.session_state["focus_entry"] = entry
