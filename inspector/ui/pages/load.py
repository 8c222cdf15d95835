"""The Load page: the bundled samples, an upload, a local path or a session found in an agent's
folders; then what the file holds (entries, branches, compactions, load issues).

A Streamlit page script, run by path (``st.Page`` in ``app.py``); session text is only ever shown
as plain text or escaped markdown, never as HTML.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from inspector.info import SessionInfo, session_info
from inspector.session.tree import Session
from inspector.ui import cache_view, sources
from inspector.ui import urlstate as us
from inspector.ui.common import reconstruction
from inspector.ui.state import NotASession, current_session, load_bytes, memo
from inspector.ui.urlstate import esc
from inspector.whatif import recorded_prune_count


def _load(data: bytes, name: str, origin: tuple[str, str] | None) -> bool:
    """Load a session; a file that is not one is refused (saying why) and the open session stays."""
    try:
        load_bytes(data, name, origin)
        return True
    except NotASession as e:
        st.session_state["_load_error"] = str(e) + (
            " The session that was open stays open." if current_session() is not None else ""
        )
        return False


def _after_button(done: bool) -> None:
    """After a load run from a button in the page's body: draw the page again, when a session was
    loaded (the sidebar was drawn for the one open before) or refused (its reason shows at the top,
    where a sample's or an upload's does, on this click rather than the next)."""
    if done or "_load_error" in st.session_state:
        st.rerun()


def _load_sample() -> None:
    name = st.session_state.get("sample_choice")
    p = next((x for x in sources.sample_files() if x.name == name), None)
    if p is not None:
        _load(sources.read_file(p), p.name, ("sample", p.name))


def _load_upload() -> None:
    up = st.session_state.get("upload")
    if up is not None:
        _load(up.getvalue(), up.name, None)


def _local_sessions() -> None:
    """Each agent's sessions found on this machine, one tab per agent that has any."""
    from inspector.agents import AGENTS
    from inspector.importers.discover import agent_dirs

    found = sources.local_sessions()
    have = [a for a, xs in found.items() if xs]
    if not have:
        dirs = [d for a in AGENTS for d in agent_dirs(a)]
        allowed = sources.roots()
        inside = [d for d in dirs if sources.is_allowed(d, allowed)]
        names = ", ".join(a.title for a in AGENTS.values())
        if inside:
            st.caption(
                f"No local sessions of {names} found in their folders ("
                + ", ".join(us.code(str(d)) for d in inside)
                + ")."
            )
        else:
            st.caption(
                f"No local sessions listed: the session folders of {names} ("
                + ", ".join(us.code(str(d)) for d in dirs)
                + ") are outside the allowed folders (set INSPECTOR_ROOTS to include them)."
            )
        return
    st.markdown("**Sessions on this machine** (newest first)")
    for a, tab in zip(have, st.tabs([f"{AGENTS[a].title} ({len(found[a])})" for a in have]), strict=True):
        with tab:
            _local_table(a, found[a])


def _local_table(agent: str, items: list[Any]) -> None:
    key = "pi" if agent == "pi" else agent.replace("-", "_")
    rows = [
        {
            "project": x.project,
            "name": (sources._name_of(x.path) if agent == "pi" else x.title) or "",
            "modified": x.modified,
            "size (MB)" if x.ref is None else "messages": round(x.size / 1e6, 2) if x.ref is None else x.size,
            "file": x.ref or x.path.name,
        }
        for x in items
    ]
    ev = st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        height=min(300, 36 * (len(rows) + 1)),
        key=f"{key}_table",
        on_select="rerun",
        selection_mode="single-row",
    )
    picked = ev.selection.rows if ev is not None else []
    if not picked:
        st.caption("Select a row to load that session.")
        return
    x = items[picked[0]]
    if st.button("Load " + esc(str(rows[picked[0]]["name"] or rows[picked[0]]["file"])), key=f"load_{key}"):
        try:
            if x.ref is not None:
                from inspector.importers.discover import opencode_export

                sources.check_path(str(x.path))  # a listed file may be a link out of the allowed folders
                done = _load(opencode_export(x), f"{x.ref}.json", None)
            else:
                done = _load_local(str(x.path))  # checked against the allowed folders, as a typed path is
        except sources.PathRefused as e:
            st.error(esc(str(e)))
            done = False
        except (OSError, KeyError, sqlite3.Error) as e:
            st.error(esc(f"Cannot read {x.ref or x.path}: {e}"))
            done = False
        _after_button(done)


def _load_local(raw: str, roots: Any = None) -> bool:
    """Load a local file if it is under the allowed roots; say why not otherwise."""
    try:
        p = sources.check_path(raw, roots)
        return _load(sources.read_file(p), str(p), ("path", str(p)))
    except sources.PathRefused as e:
        st.error(esc(str(e)))
    except OSError as e:
        st.error(esc(f"Cannot read {raw!r}: {e}"))
    return False


def _subagents(main: Path) -> None:
    """A Claude Code session's sub-agent transcripts, when it was opened from its folder: each
    loads on its own (their lines are kept apart from the main conversation)."""
    from inspector.importers.discover import claude_code_subagents

    found = claude_code_subagents(main) if main.is_absolute() else []
    if not found:
        return
    with st.expander(f"{len(found)} sub-agent transcript(s) of this session"):
        pick = st.selectbox(
            "Sub-agent", [str(p) for p in found], key="subagent_pick", format_func=lambda p: Path(p).name
        )
        if st.button("Load this sub-agent", key="load_subagent"):
            _after_button(_load_local(pick))


def _codex_related(related: dict[str, str]) -> None:
    """The rollouts a Codex session comes from (the one it was forked from, a sub-agent's parent),
    when they are in Codex's folders here: each can be loaded."""
    from inspector.importers.discover import codex_rollout

    what = {"forkedFrom": "forked from", "parentThread": "a sub-agent of"}
    for key, sid in related.items():
        p = memo("codex_rollout", sid, lambda sid=sid: codex_rollout(sid))  # a folder walk: once per session
        label = f"This session was {what.get(key, key)} session {sid}"
        if p is None:
            st.caption(esc(label + " (its rollout is not in Codex's folders here)."))
            continue
        c1, c2 = st.columns([3, 1])
        c1.caption(esc(label + f": {p}"))
        if c2.button("Load it", key=f"load_codex_{key}"):
            _after_button(_load_local(str(p)))


def _samples_and_upload() -> None:
    st.subheader("Bundled samples")
    names = [p.name for p in sources.sample_files()]
    if names:
        default = names.index("coding-session.jsonl") if "coding-session.jsonl" in names else 0
        st.selectbox(
            "Sample session",
            names,
            # a sample named by the URL, --session or Learn is already in the widget's state: no
            # default beside it (index 0 is Streamlit's "none given")
            index=0 if "sample_choice" in st.session_state else default,
            key="sample_choice",
        )
        st.button("Load sample", type="primary", key="load_sample", on_click=_load_sample)
    else:
        st.caption("No samples in sample_sessions/.")
    st.file_uploader(
        "…or upload a session file (loaded at once)",
        type=["jsonl", "json", "txt"],
        key="upload",
        on_change=_load_upload,
    )


def _local_file() -> None:
    """A path under the allowed folders, then the agents' sessions found there."""
    st.subheader("Local file")
    roots = sources.roots()
    st.caption(
        "Only files inside these folders can be opened: "
        + ", ".join(us.code(str(r)) for r in roots)
        + " (set `INSPECTOR_ROOTS` to change them)."
    )
    raw = st.text_input("Path", key="local_path", placeholder="sample_sessions/long-session.jsonl")
    if st.button("Load path", key="load_path"):
        _after_button(_load_local(raw, roots))
    _local_sessions()


def _overview(info: SessionInfo) -> None:
    """The loaded session's name, its numbers, and its format."""
    st.subheader(
        esc(st.session_state.get("session_name", "session")) + (f" — {esc(info.name)}" if info.name else ""),
        anchor=False,
    )  # no anchor link made of session text
    m = st.columns(6)
    m[0].metric("Entries", f"{info.entries:,}")
    m[1].metric("Branches (leaves)", len(info.leaves))
    m[2].metric(
        "Context messages", f"{info.contextMessages:,}", help="Messages pi would send at the default leaf."
    )
    m[3].metric("Context tokens (pi)", f"{info.contextTokens['pi']:,}", help="pi's chars ÷ 4 estimate.")
    m[4].metric("Compactions", len(info.compactions))
    m[5].metric("Load issues", len(info.issues))
    st.caption(
        (
            f"Format: pi v{info.originalVersion}" + (" (migrated in memory)" if info.migrated else "")
            if info.format == "pi"
            else f"Format: {info.formatLabel}, imported into pi's session model"
        )
        + (esc(f" · model {info.model.get('provider')}/{info.model.get('modelId')}") if info.model else "")
        + (esc(f" · cwd {info.cwd}") if info.cwd else "")
    )


def _notes(s: Session) -> None:
    """What else there is to know: the reconstruction check, the prompt cache, related sessions to
    load, and the tool outputs the agent itself cleared."""
    recon = reconstruction(s)
    if recon is not None:
        from inspector.recon import unstored_words, verdict

        st.caption(
            f"Reconstruction: the context rebuilt here {esc(verdict(recon))} (`inspector check` for the "
            f"detail; the calls it cannot explain are marked on the Replay timeline); {esc(unstored_words(recon))}."
        )
        from inspector.recon.changes import sized_changes, sizing_words

        sizing = memo(
            "what_if_sizing", None, lambda: sizing_words(sized_changes(cache_view.as_recorded_replay()))
        )
        if sizing is not None:
            st.caption(esc(sizing[0].upper() + sizing[1:]) + ".")
    cache_view.load_verdict()
    if s.format == "claude-code":
        _subagents(Path(st.session_state.get("session_name", "")))
    related = getattr(s.header, "codexRelated", None)
    if s.format == "codex" and isinstance(related, dict):
        _codex_related(related)
    marked = memo("recorded_prunes", None, lambda: recorded_prune_count(s))
    if marked:
        shown = st.session_state["_settings"].strategy == "recorded"
        st.info(
            f"The agent itself cleared {marked:,} tool output(s) in this session (recorded in the file). "
            + (
                "They are cleared in the replay (pruning: As recorded)."
                if shown
                else "The pruning strategy in the sidebar is not 'As recorded', so the replay does not clear them: "
                "choose it (or the agent preset 'As recorded') to see them cleared."
            ),
            icon=":material/info:",
        )


def _issues_table(info: SessionInfo) -> None:
    if not info.issues:
        st.success("No load issues: every line was read.")
        return
    st.markdown(
        f"**Load issues ({len(info.issues)})** — every valid entry was kept; line numbers are the "
        "file's (1-based)"
    )
    # an issue about the whole file has no line: an empty cell, not "None"
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "line": "" if i.line is None else str(i.line),
                    "severity": i.severity,
                    "kind": i.kind,
                    "message": i.message,
                }
                for i in info.issues
            ]
        ),
        hide_index=True,
        key="issues_table",
        column_config={
            "line": st.column_config.TextColumn(width="small"),
            "message": st.column_config.TextColumn(width="large"),
        },
    )


def _compactions_table(info: SessionInfo) -> None:
    if not info.compactions:
        return
    st.markdown("**Compactions in the file**")
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "entry": c.index,
                    "first kept entry": c.firstKeptEntryIndex,
                    "tokens before": int(c.tokensBefore),
                    "summary chars": c.summaryChars,
                    "on the default branch": c.onCurrentPath,
                }
                for c in info.compactions
            ]
        ),
        hide_index=True,
    )


def load_page() -> None:
    st.title("Load a session")
    st.caption(
        "A pi session (JSONL), a Claude Code transcript, a Codex CLI rollout or an OpenCode export; the "
        "format is recognised from the content. The file is only read, never written."
    )
    if err := st.session_state.pop("_load_error", None):
        st.error(esc(err), icon=":material/error:")
    c1, c2 = st.columns(2, gap="large")
    with c1:
        _samples_and_upload()
    with c2:
        _local_file()
    s = current_session()
    if s is None:
        return
    st.divider()
    info = memo("info", None, lambda: session_info(s, counters=("pi",)))
    _overview(info)
    _notes(s)
    c1, c2 = st.columns([1, 2], gap="large")
    with c1:
        st.markdown("**Entries by type**")
        st.dataframe(
            pd.DataFrame(sorted(info.byType.items(), key=lambda kv: -kv[1]), columns=["type", "count"]),
            hide_index=True,
        )
    with c2:
        _issues_table(info)
        _compactions_table(info)
    st.page_link(
        st.session_state["_pages"]["replay"], label="Replay this session", icon=":material/play_circle:"
    )


load_page()
