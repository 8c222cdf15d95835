"""The app's pages: widgets and figures only; computing goes through the engine or the pure
helpers in :mod:`inspector.ui.views`, :mod:`inspector.ui.narrate` and :mod:`inspector.ui.figures`.

Session text is only ever shown through ``st.text``/``st.code``/dataframes or escaped
markdown, never as HTML.
"""

from __future__ import annotations

import difflib
import re
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from ..branch_summary import prepare_branch_summary
from ..compaction import CompactionSettings, prepare_compaction
from ..info import session_info
from ..policies import POLICIES
from ..replay import AGENT_CONFIGS as AGENTS
from ..replay import ReplaySettings, sweep
from . import cache_view, figures, sources, views
from . import urlstate as us
from .narrate import agent_compaction_story, notable_steps, recorded_cut_story, step_story
from .state import (
    NotASession,
    counter_for,
    current_replay,
    current_session,
    default,
    get_step,
    load_bytes,
    memo,
    set_step,
    set_widgets,
)
from .urlstate import esc

try:  # the summaries package lands separately: the Summaries page says so when it is missing
    from ..summarize import compaction_prompts, get_summarizer, summarize_compaction
    from ..summarize.prompts import STYLES
except ImportError:  # pragma: no cover - partial checkout
    get_summarizer = None  # type: ignore[assignment]

PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["lasso2d"]}


def _need_session() -> Any:
    s = current_session()
    if s is None:
        st.info("Load a session first (Load page).")
        st.page_link(st.session_state["_pages"]["load"], label="Go to Load", icon=":material/folder_open:")
        st.stop()
    return s


def _strategy_title(name: str) -> str:
    strat = us.strategies().get(name)
    return strat.title if strat is not None else name


def _beyond_notes(settings: ReplaySettings) -> list[str]:
    notes = []
    strat = us.strategies().get(settings.strategy)
    if strat is not None and not strat.verified:
        notes.append(f"pruning '{strat.title}' goes beyond a verified source ({strat.unverified_notes})")
    if POLICIES[settings.compaction].unverified:
        notes.append(f"compaction policy '{POLICIES[settings.compaction].title}' is reported by third parties, "
                     "not verified")
    if POLICIES[settings.compaction].beyond_source:
        notes.append(f"compaction policy '{POLICIES[settings.compaction].title}' is our design, not a released agent's")
    return notes


# -- shared by the pages: paths, and reading messages in full -----------------------------------


def relative(text: str) -> str:
    """Paths in ``text`` relative to the current session's working folder."""
    s = current_session()
    return views.relative_paths(text, getattr(getattr(s, "header", None), "cwd", None))


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


def _message_list(rows: list[dict[str, Any]], items: list[Any], key: str, focus: int | None = None) -> None:
    """A table of messages; the selected row is shown in full below it, as plain text."""
    if not rows:
        st.caption("None.")
        return
    default_sel = {"selection": {"rows": [focus]}} if focus is not None else None
    ev = st.dataframe(pd.DataFrame(rows), hide_index=True, key=key if focus is None else f"{key}_f{focus}",
                      height=min(420, 35 * len(rows) + 38), on_select="rerun", selection_mode="single-row",
                      selection_default=default_sel, column_config=MESSAGE_COLUMNS)
    picked = [i for i in (ev.selection.rows if ev is not None else []) if 0 <= i < len(rows)]
    if not picked:
        st.caption("Select a row to read that message in full.")
        return
    cm, row = items[picked[0]], rows[picked[0]]
    st.markdown(f"**{esc(views.message_label(cm, row.get('#'), row.get('tokens') or 0))}**"
                + (f" — {esc(str(row.get('status', '')))}: {esc(row['why'])}" if row.get("why") else ""))
    text = views.full_text(cm.message)
    st.code(text, language=None, wrap_lines=True, height=min(600, 80 + 18 * min(30, text.count("\n"))))


# ---------------------------------------------------------------------------------------------
# Load
# ---------------------------------------------------------------------------------------------


def _load(data: bytes, name: str, origin: tuple[str, str] | None) -> bool:
    """Load a session; a file that is not one is refused (saying why) and the open session stays."""
    try:
        load_bytes(data, name, origin)
        return True
    except NotASession as e:
        st.session_state["_load_error"] = str(e) + (" The session that was open stays open."
                                                    if current_session() is not None else "")
        return False


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
    from ..importers.discover import AGENTS, agent_dirs

    found = sources.local_sessions()
    have = [a for a, xs in found.items() if xs]
    if not have:
        st.caption("No local sessions of " + ", ".join(AGENTS.values()) + " found in the allowed folders ("
                   + ", ".join(us.code(str(d)) for a in AGENTS for d in agent_dirs(a)) + ").")
        return
    st.markdown("**Sessions on this machine** (newest first)")
    for a, tab in zip(have, st.tabs([f"{AGENTS[a]} ({len(found[a])})" for a in have]), strict=True):
        with tab:
            _local_table(a, found[a])


def _local_table(agent: str, items: list[Any]) -> None:
    key = "pi" if agent == "pi" else agent.replace("-", "_")
    rows = [{"project": x.project, "name": (sources._name_of(x.path) if agent == "pi" else x.title) or "",
             "modified": x.modified, "size (MB)" if x.ref is None else "messages": round(x.size / 1e6, 2)
             if x.ref is None else x.size, "file": x.ref or x.path.name} for x in items]
    ev = st.dataframe(pd.DataFrame(rows), hide_index=True, height=min(300, 36 * (len(rows) + 1)),
                      key=f"{key}_table", on_select="rerun", selection_mode="single-row")
    picked = ev.selection.rows if ev is not None else []
    if not picked:
        st.caption("Select a row to load that session.")
        return
    x = items[picked[0]]
    if st.button("Load " + esc(str(rows[picked[0]]["name"] or rows[picked[0]]["file"])), key=f"load_{key}"):
        try:
            if x.ref is not None:
                from ..importers.discover import opencode_export

                _load(opencode_export(x), f"{x.ref}.json", None)
            else:
                _load(sources.read_file(x.path), str(x.path), ("path", str(x.path)))
        except (OSError, KeyError, sqlite3.Error) as e:
            st.error(esc(f"Cannot read {x.ref or x.path}: {e}"))


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
    from ..importers.discover import claude_code_subagents

    found = claude_code_subagents(main) if main.is_absolute() else []
    if not found:
        return
    with st.expander(f"{len(found)} sub-agent transcript(s) of this session"):
        pick = st.selectbox("Sub-agent", [str(p) for p in found], key="subagent_pick",
                            format_func=lambda p: Path(p).name)
        if st.button("Load this sub-agent", key="load_subagent") and _load_local(pick):
            st.rerun()  # this is drawn below the loaded session's summary


def _codex_related(related: dict[str, str]) -> None:
    """The rollouts a Codex session comes from (the one it was forked from, a sub-agent's parent),
    when they are in Codex's folders here: each can be loaded."""
    from ..importers.discover import codex_rollout

    what = {"forkedFrom": "forked from", "parentThread": "a sub-agent of"}
    for key, sid in related.items():
        p = memo("codex_rollout", sid, lambda sid=sid: codex_rollout(sid))  # a folder walk: once per session
        label = f"This session was {what.get(key, key)} session {sid}"
        if p is None:
            st.caption(esc(label + " (its rollout is not in Codex's folders here)."))
            continue
        c1, c2 = st.columns([3, 1])
        c1.caption(esc(label + f": {p}"))
        if c2.button("Load it", key=f"load_codex_{key}") and _load_local(str(p)):
            st.rerun()


RECON_MAX_CALLS = 3_000
"""Beyond this many calls the pages leave the reconstruction check to ``inspector check``."""


def _recon(s: Any, leaf: int | None = None) -> Any:
    """The reconstruction check of the session (:mod:`inspector.recon`), or None where no call
    records its prompt or the session is too long to check on a page."""
    from ..recon import check

    calls = memo("calls", None, lambda: sum(1 for e in s.entries if getattr(getattr(e, "message", None), "role", "")
                                               == "assistant"))
    if not calls or calls > RECON_MAX_CALLS:
        return None
    c = memo("recon", leaf, lambda: check(s, leaf=leaf))
    return c if c.calls else None


def _recorded_prunes(s: Any) -> int:
    from ..pruning.recorded import recorded_prune

    return sum(1 for e in s.entries if recorded_prune(getattr(e, "message", None)) is not None)


def load_page() -> None:
    st.title("Load a session")
    st.caption("A pi session (JSONL), a Claude Code transcript, a Codex CLI rollout or an OpenCode export; the "
               "format is recognised from the content. The file is only read, never written.")
    for key in ("_preload_error", "_load_error"):
        if err := st.session_state.pop(key, None):
            st.error(esc(err), icon=":material/error:")
    c1, c2 = st.columns(2, gap="large")
    with c1:
        st.subheader("Bundled samples")
        names = [p.name for p in sources.sample_files()]
        if names:
            st.selectbox("Sample session", names, index=names.index("coding-session.jsonl")
                         if "coding-session.jsonl" in names else 0, key="sample_choice")
            st.button("Load sample", type="primary", key="load_sample", on_click=_load_sample)
        else:
            st.caption("No samples in sample_sessions/.")
        st.file_uploader("…or upload a session file (loaded at once)", type=["jsonl", "json", "txt"], key="upload",
                         on_change=_load_upload)
    with c2:
        st.subheader("Local file")
        roots = sources.roots()
        st.caption("Only files inside these folders can be opened: " + ", ".join(us.code(str(r)) for r in roots)
                   + " (set `INSPECTOR_ROOTS` to change them).")
        raw = st.text_input("Path", key="local_path", placeholder="sample_sessions/long-session.jsonl")
        if st.button("Load path", key="load_path"):
            _load_local(raw, roots)
        _local_sessions()
    s = current_session()
    if s is None:
        return
    st.divider()
    info = memo("info", None, lambda: session_info(s, counters=("pi",)))
    st.subheader(esc(st.session_state.get("session_name", "session")) + (f" — {esc(info.name)}" if info.name else ""),
                 anchor=False)  # no anchor link made of session text
    m = st.columns(6)
    m[0].metric("Entries", f"{info.entries:,}")
    m[1].metric("Branches (leaves)", len(info.leaves))
    m[2].metric("Context messages", f"{info.contextMessages:,}", help="Messages pi would send at the default leaf.")
    m[3].metric("Context tokens (pi)", f"{info.contextTokens['pi']:,}", help="pi's chars ÷ 4 estimate.")
    m[4].metric("Compactions", len(info.compactions))
    m[5].metric("Load issues", len(info.issues))
    st.caption((f"Format: pi v{info.originalVersion}" + (" (migrated in memory)" if info.migrated else "")
                if info.format == "pi" else f"Format: {info.formatLabel}, imported into pi's session model")
               + (esc(f" · model {info.model.get('provider')}/{info.model.get('modelId')}") if info.model else "")
               + (esc(f" · cwd {info.cwd}") if info.cwd else ""))
    recon = _recon(s)
    if recon is not None:
        from ..recon import verdict

        st.caption(f"Reconstruction: the context rebuilt here {esc(verdict(recon))} (`inspector check` for the "
                   "detail; the calls it cannot explain are marked on the Replay timeline).")
    if s.format == "claude-code":
        _subagents(Path(st.session_state.get("session_name", "")))
    related = getattr(s.header, "codexRelated", None)
    if s.format == "codex" and isinstance(related, dict):
        _codex_related(related)
    marked = memo("recorded_prunes", None, lambda: _recorded_prunes(s))
    if marked:
        shown = st.session_state["_settings"].strategy == "recorded"
        st.info(f"The agent itself cleared {marked:,} tool output(s) in this session (recorded in the file). "
                + ("They are cleared in the replay (pruning: As recorded)." if shown else
                   "The pruning strategy in the sidebar is not 'As recorded', so the replay does not clear them: "
                   "choose it (or the agent preset 'As recorded') to see them cleared."), icon=":material/info:")
    c1, c2 = st.columns([1, 2], gap="large")
    with c1:
        st.markdown("**Entries by type**")
        st.dataframe(pd.DataFrame(sorted(info.byType.items(), key=lambda kv: -kv[1]), columns=["type", "count"]),
                     hide_index=True)
    with c2:
        if info.issues:
            st.markdown(f"**Load issues ({len(info.issues)})** — every valid entry was kept; line numbers are the "
                        "file's (1-based)")
            # an issue about the whole file has no line: an empty cell, not "None"
            st.dataframe(pd.DataFrame([{"line": "" if i.line is None else str(i.line), "severity": i.severity,
                                        "kind": i.kind, "message": i.message} for i in info.issues]),
                         hide_index=True, key="issues_table",
                         column_config={"line": st.column_config.TextColumn(width="small"),
                                        "message": st.column_config.TextColumn(width="large")})
        else:
            st.success("No load issues: every line was read.")
        if info.compactions:
            st.markdown("**Compactions in the file**")
            st.dataframe(pd.DataFrame([{"entry": c.index, "first kept entry": c.firstKeptEntryIndex,
                                        "tokens before": int(c.tokensBefore), "summary chars": c.summaryChars,
                                        "on the default branch": c.onCurrentPath} for c in info.compactions]),
                         hide_index=True)
    st.page_link(st.session_state["_pages"]["replay"], label="Replay this session", icon=":material/play_circle:")


# ---------------------------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------------------------

#: the stepping buttons: (key, label, icon, what to step to, direction, keyboard shortcut)
STEP_BUTTONS = (
    ("prev_compaction", "Compaction", ":material/keyboard_double_arrow_left:", "compaction", -1, "PageUp"),
    ("prev_event", "Event", ":material/skip_previous:", "event", -1, "Shift+Left"),
    ("prev", "Previous", ":material/chevron_left:", "call", -1, "Left"),
    ("next", "Next", ":material/chevron_right:", "call", 1, "Right"),
    ("next_event", "Event", ":material/skip_next:", "event", 1, "Shift+Right"),
    ("next_compaction", "Compaction", ":material/keyboard_double_arrow_right:", "compaction", 1, "PageDown"),
)
STEP_HELP = {"call": "the {} model call", "event": "the {} call where something happened: compaction, pruning, "
             "overflow, re-read… (a skipped prune only with the switch on)", "compaction": "the {} compaction"}


def _goto(target: str, direction: int) -> None:
    """Stepping buttons: to the previous/next call, event or compaction."""
    n = int(st.session_state.get("_n_steps", 0))
    if not n:
        return
    k = get_step(n)
    if target == "call":
        k = max(0, min(n - 1, k + direction))
    else:
        found = views.neighbour(st.session_state.get(f"_nav_{target}", []), k, direction)
        k = k if found is None else found
    set_step(k)
    st.session_state.pop("focus_entry", None)


def _slider_moved() -> None:
    st.session_state["cur_step"] = int(st.session_state["step"])
    st.session_state.pop("focus_entry", None)


def _timeline_picked() -> None:
    ev = st.session_state.get("timeline")
    pts = ev.selection.points if ev is not None else []
    n = int(st.session_state.get("_n_steps", 0))
    for p in pts:
        x = p.get("x")
        if isinstance(x, (int, float)) and 0 <= int(x) < n:
            set_step(int(x))
            return


def _step_controls(k: int, n: int, nav: dict[str, list[int]]) -> None:
    with st.container(horizontal=True, vertical_alignment="bottom"):
        for key, label, icon, target, d, shortcut in STEP_BUTTONS:
            if target == "call":
                disabled = k == 0 if d < 0 else k >= n - 1
            else:
                disabled = views.neighbour(nav[target], k, d) is None
            st.button(label, key=key, icon=icon, on_click=_goto, args=(target, d), disabled=disabled,
                      shortcut=shortcut, icon_position="left" if d < 0 else "right",
                      help=STEP_HELP[target].format("previous" if d < 0 else "next") + f" ({shortcut})")
        st.toggle("Skipped prunes count as events", key="nav_skipped", persist_state="session",
                  help="A prune (or compaction) the strategy considered and did not make. Off: Event skips it.")
    if n > 1:
        st.slider("Model call (step)", 0, n - 1, key="step", on_change=_slider_moved,
                  help="Each step is one call to the model (one assistant message) on the replayed branch. "
                       "Keys: ← → one call, Shift+← → one event, PageUp/PageDown one compaction.")


def _step_metrics(r: Any, k: int, d: Any, settings: ReplaySettings, recon: Any = None) -> None:
    step = r.steps[k]
    m = st.columns(6)
    call = recon.call_at(step.step) if recon is not None else None
    if call is not None and call.unexplained:  # the file cannot explain what was sent: the recorded figure stands
        m[0].metric("Tokens sent (recorded)", f"{call.recorded:,}", help="This file cannot explain what the agent "
                    f"sent here: about {abs(call.unexplained):,} tokens {'fewer' if call.unexplained < 0 else 'more'} "
                    f"than the context rebuilt from it ({step.tokens:,} by the chosen counter), since an earlier "
                    "change the reconstruction check found. The recorded prompt is the figure to trust.")
    else:
        m[0].metric("Tokens sent", f"{step.tokens:,}", help="Context the model receives at this call, after pruning "
                    "(by the chosen counter).",
                    delta=f"{step.tokens - r.steps[k - 1].tokens:+,}" if k else None, delta_color="inverse")
    recorded = step.recorded_input is not None and step.stop_reason not in ("aborted", "error")
    m[1].metric("Recorded prompt", f"{step.recorded_input:,.0f}" if recorded else "—",
                help="What the provider reported for this call (input + cache read + cache write); none for an "
                     "aborted or failed call.")
    m[2].metric("Window used", f"{step.tokens / settings.context_window:.0%}")
    m[3].metric("Messages", f"{len(d.after):,}")
    m[4].metric("Pruned away", f"{step.pruned_tokens:,}", help="Tokens the pruning strategy keeps out of this call.")
    m[5].metric("Entry", f"{step.entry_index}" + (f" ({step.stop_reason})" if step.stop_reason in ("aborted", "error")
                                                   else ""), help="The assistant message answering this call.")


def _zoom(total: int, window: int) -> bool:
    return st.toggle("Zoom to the messages", key="bars_zoom", persist_state="session",
                     help="Fit the bars to the context instead of the whole window.",
                     **default("bars_zoom", total < window / 8))


def _next_cuts(r: Any, k: int, d: Any, before_tokens: list[int], settings: ReplaySettings) -> list[tuple[str, float]]:
    """Where the compaction before the next call cuts, placed on this call's context."""
    from ..compaction_view import compaction_view, compactions_at

    out = []
    for i in compactions_at(r, k + 1):
        v = memo("cview", (settings, i), lambda i=i: compaction_view(r, i))
        for c in v.cuts:
            off = views.offset_of_entry(d.before, before_tokens, c.entry_index)
            if off is not None:
                out.append((f"next compaction: {c.label} (entry {c.entry_index})", off))
    return out


def _plain_bars(r: Any, k: int, d: Any, settings: ReplaySettings, counter: Any) -> None:
    before_tokens = counter.count_many([c.message for c in d.before])
    after_tokens = counter.count_many([c.message for c in d.after])
    pruned = {row["#"] for row in views.pruned_rows(d, counter)}
    fig = figures.context_bars(
        d.before, before_tokens, d.after, after_tokens, pruned_positions=views.pruned_positions(d),
        pruned_before=pruned, window=settings.context_window, reserve=settings.reserve_tokens,
        keep_recent=settings.keep_recent_tokens if settings.compaction in ("pi", "early") else None,
        cuts=_next_cuts(r, k, d, before_tokens, settings),
        title=f"Context at model call {k} (entry {r.steps[k].entry_index})",
        zoom=_zoom(sum(before_tokens), settings.context_window))
    st.plotly_chart(fig, key="bars", config=PLOT_CONFIG)
    st.caption("Top: the context as built from the session (hatched: what pruning replaces at this call); bottom: "
               "what is sent after pruning (ticks: the markers pruning leaves). One segment per message, width = "
               "tokens. Red line: the window; shaded: the reserve before it; dotted: where keepRecentTokens starts "
               "counting back from the newest message (pi's policies); across the top bar, before a compaction: "
               "where it will cut. The system prompt and tool definitions are not recorded in the session file, so "
               "they are not shown.")


def _compaction_moment(r: Any, k: int, d: Any, idxs: list[int], settings: ReplaySettings, counter: Any) -> None:
    """At a compaction step: the context before and after it, the cut(s), and what was summarised."""
    from ..compaction_view import compaction_view

    sent_tokens = counter.count_many([c.message for c in d.after])
    for i in idxs:
        v = memo("cview", (settings, i), lambda i=i: compaction_view(r, i))
        what = (f"simulated by the {POLICIES[v.policy].title} policy" if v.simulated
                else f"recorded in the session (entry {v.entry_index})")
        st.subheader(f"Compaction {i + 1} of {len(r.summaries)}, {what}")
        m = st.columns(6)
        m[0].metric("Context before", f"{v.tokens_before:,}", help="The context the policy saw, as built.")
        m[1].metric("Summarised", f"{v.summarised_tokens:,}", help="Tokens that do not survive verbatim: the "
                    "summarised messages, a split turn's prefix, the previous summary.")
        m[2].metric("Summarised msgs", f"{len(v.summarised):,}")
        m[3].metric("Kept", f"{v.kept_tokens:,}", help="Tokens kept verbatim after the summary.")
        m[4].metric("Summary", f"{v.summary_tokens:,}", help="The new summary, by the replay's counter.")
        m[5].metric("Context after", f"{v.tokens_after:,}", help="The summary plus what was kept.",
                    delta=f"{v.tokens_after - v.tokens_before:+,}", delta_color="inverse")
        fig = figures.compaction_bars(
            v, d.after, sent_tokens, pruned_positions=views.pruned_positions(d), window=settings.context_window,
            reserve=settings.reserve_tokens, title=f"Compaction before model call {k} (entry {r.steps[k].entry_index})",
            zoom=_zoom(v.tokens_before, settings.context_window))
        st.plotly_chart(fig, key=f"bars_c{i}" if i != idxs[0] else "bars", config=PLOT_CONFIG)
        st.caption("Top: the context the policy saw — grey: summarised, gold: a split turn's first part (summarised "
                   "separately), light green: the previous summary; coloured by kind: kept. Lines: where the kept "
                   "part starts (the cut). Middle: right after — the summary, then what was kept. Bottom: what this "
                   "call sends (the messages since the compaction added, then pruning).")
        if v.cut_note:
            st.info(esc(relative(v.cut_note)), icon=":material/call_split:")
        with st.expander(f"The {len(v.summarised):,} messages that do not survive verbatim "
                         f"({v.summarised_tokens:,} tokens)"):
            _message_list(views.summarised_rows(v), [p.message for p in v.summarised], f"summarised_{i}")
        if st.button("Open on the Summaries page", key=f"to_summaries_{i}", icon=":material/summarize:"):
            st.session_state["sum_focus"] = i
            st.switch_page(st.session_state["_pages"]["summaries"])


def _pruned_here(r: Any, k: int, d: Any, counter: Any) -> None:
    rows = views.pruned_rows(d, counter)
    if not rows:
        return
    new = any(e["type"] == "pruned" for e in r.steps[k].events)
    with st.expander(f"Pruned at this call: {len(rows):,} message(s), {sum(x['tokens'] for x in rows):,} → "
                     f"{sum(x['sent'] for x in rows):,} tokens", expanded=new):
        for row in rows:
            row["why"] = relative(row["why"])
        _message_list(rows, [d.before[row["#"]] for row in rows], "pruned_table")


def _context_table(d: Any, counter: Any) -> None:
    st.subheader("Messages the model receives")
    rows = views.message_rows(d, counter)
    items = [*d.before, *(cm for cm in d.after if cm.entry_index is None)]
    focus = st.session_state.get("focus_entry")
    at = next((i for i, row in enumerate(rows) if focus is not None and row["entry"] == focus), None)
    if focus is not None:
        why = ("is highlighted below." if at is not None else "is not a message of this call's context (it is its "
               "answer, a setting or label, or it was summarised away).")
        st.info(f"Entry {focus} {why}", icon=":material/my_location:")
    for row in rows:
        row["why"] = relative(row["why"])
    if not any(row["why"] for row in rows):
        for row in rows:
            del row["why"]
    _message_list(rows, items, "msg_table", at)


def replay_page(settings: ReplaySettings) -> None:
    from ..compaction_view import compaction_steps, compactions_at

    s = _need_session()
    st.title("Replay")
    r = current_replay(settings)
    n = len(r.steps)
    if not n:
        st.warning("This branch has no model calls (assistant messages) to replay.")
        return
    nav = {"event": notable_steps(r, bool(st.session_state.get("nav_skipped"))), "compaction": compaction_steps(r)}
    st.session_state.update({"_n_steps": n, "_nav_event": nav["event"], "_nav_compaction": nav["compaction"]})
    if st.session_state.get("cur_step") is None:  # a new session or branch: open where something happens
        set_step(nav["event"][0] if nav["event"] else 0)
    mode = "as recorded" if settings.compaction == "recorded" else f"what-if: {POLICIES[settings.compaction].title}"
    st.caption(f"{n:,} model calls on this branch · compaction {mode} · pruning {_strategy_title(settings.strategy)} · "
               f"window {settings.context_window:,} tokens · counter {us.COUNTERS[settings.counter]} · replayed once in "
               f"{r.seconds:.2f} s, then cached")
    for note in _beyond_notes(settings):
        st.warning(f"Beyond the source systems: {note}.", icon=":material/science:")
    k = get_step(n)
    st.session_state["step"] = k  # before the slider is drawn (set by buttons, timeline, other pages)
    _step_controls(k, n, nav)
    d = r.step_detail(k)
    counter = counter_for(s, settings.counter)
    recon = _recon(s, settings.leaf) if settings.compaction == "recorded" else None
    _step_metrics(r, k, d, settings, recon)
    comps = compactions_at(r, k)
    if comps:
        _compaction_moment(r, k, d, comps, settings, counter)
    else:
        _plain_bars(r, k, d, settings, counter)
    _pruned_here(r, k, d, counter)
    _timeline(r, k, recon)
    cache_view.step_panel(r, k)
    st.subheader("What happened here")
    story = memo("story", (settings, k), lambda: step_story(r, k, d, recon)) + cache_view.story_lines(r, k)
    st.markdown("\n".join("- " + esc(relative(line)) for line in story))
    _context_table(d, counter)
    with st.expander("Run metrics (whole replay)"):
        st.dataframe(pd.DataFrame(views.metrics_rows([("value", r)])), hide_index=True)
    cache_view.run_panel(r)
    _report_download(s, r)


LONG_RUN = 300
"""Calls beyond which the timeline gets a range selector."""


def _around(k: int, n: int) -> None:
    half = LONG_RUN // 2
    lo = max(0, min(k - half, n - 1 - 2 * half))
    st.session_state["tl_range"] = (lo, min(n - 1, lo + 2 * half))


def _timeline(r: Any, k: int, recon: Any = None) -> None:
    """The token timeline, full width; a long run gets a range selector (the calls in range are
    drawn in more detail than the whole run can be)."""
    n = len(r.steps)
    x_range = None
    if n > LONG_RUN:
        lo, hi = st.session_state.get("tl_range", (0, n - 1))
        if not 0 <= lo <= hi <= n - 1:  # another branch or session: the whole run
            st.session_state["tl_range"] = (0, n - 1)
        with st.container(horizontal=True, vertical_alignment="bottom"):
            x_range = st.slider("Calls on the timeline", 0, n - 1, key="tl_range", width=700,
                                **default("tl_range", (0, n - 1)),
                                help="Pick a range of calls to see them in detail (long runs are drawn as the peak "
                                     "of each group of calls).")
            st.button("Around this call", key="tl_around", on_click=_around, args=(k, n),
                      icon=":material/center_focus_strong:")
            st.button("Whole run", key="tl_all", on_click=set_widgets, args=({"tl_range": (0, n - 1)},))
        x_range = (int(x_range[0]), int(x_range[1]))
    st.plotly_chart(cache_view.mark_timeline(figures.timeline(r, current_step=k, x_range=x_range, recon=recon), r),
                    key="timeline",
                    on_select=_timeline_picked, selection_mode="points", config=PLOT_CONFIG)
    st.caption(_timeline_caption(r) + (" Shaded: where the reconstruction check expects each recorded prompt "
                                       "(the context rebuilt as the provider is sent it, calibrated to this "
                                       "session, plus the constant no file stores); ✕: a call the file cannot "
                                       "explain." if recon is not None else ""))


def _timeline_caption(r: Any) -> str:
    from ..compaction_view import trigger_series

    trig = trigger_series(r)
    what = ("" if trig is None else
            " The orange line is what pi's compaction compares with the dashed threshold: the recorded usage "
            "(input + output + cache of each answer), not the estimate." if r.settings.compaction == "recorded"
            else f" The dashed dark line is what the policy compares with the dashed threshold: {trig[0]}.")
    return ("Context tokens at every call (aborted and failed calls have no recorded point). Click a point to jump "
            "to that call. Solid red: the window; dashed: where the compaction policy triggers." + what
            + " The axis ends just above the window: ▲ marks calls above it. Lanes below: events, counted per "
              "group of calls.")


def _report_download(s: Any, r: Any) -> None:
    from ..replay_report import replay_report

    with st.container(horizontal=True, vertical_alignment="bottom"):
        fmt = st.segmented_control("Report", ["html", "json", "csv"], default="html", key="report_fmt",
                                   persist_state="session") or "html"
        stem = Path(str(st.session_state.get("session_name", "session"))).stem or "session"
        st.download_button("Download report", data=lambda: replay_report(s, r, fmt), file_name=f"{stem}-replay.{fmt}",
                           mime={"html": "text/html", "json": "application/json", "csv": "text/csv"}[fmt],
                           icon=":material/download:", key="report_dl",
                           help="The same report as `inspector export replay` (secrets redacted).")


# ---------------------------------------------------------------------------------------------
# Tree
# ---------------------------------------------------------------------------------------------


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


def tree_page(settings: ReplaySettings) -> None:
    s = _need_session()
    st.title("Branch tree")
    n = len(s.entries)
    if not n:
        st.warning("This session has no entries.")
        return
    leaf = settings.leaf if settings.leaf is not None else s.default_leaf
    path = s.path(leaf) if leaf is not None else []
    st.caption(f"{n:,} entries · {len(s.roots)} root(s) · {len(s.leaves)} branch end(s) · {len(s.fork_points)} "
               f"fork point(s). Replaying the branch that ends at entry {leaf}"
               + (" (pi's default: the last entry in the file)." if settings.leaf is None else " (chosen here)."))
    st.plotly_chart(figures.tree_lanes(s, highlight=[leaf] if leaf is not None else [], current_path=path),
                    key="lanes", config=PLOT_CONFIG, on_select=_lane_picked, selection_mode="points")
    st.caption("One lane per branch end; long chains are collapsed to a line between forks, compactions, branch "
               "summaries and labels. Click a point to pick that entry below.")
    c1, c2 = st.columns(2, gap="large")
    with c1:
        st.subheader("Replay a branch")
        st.caption("Any entry can end the replayed branch: the path from the root to it.")
        e = int(st.number_input("Entry (file order)", 0, n - 1, key="tree_entry", **default("tree_entry", leaf or 0)))
        st.text(views.entry_label(s, e, 160))
        with st.container(horizontal=True):
            st.button("Replay up to this entry", key="use_branch", type="primary", on_click=_set_branch, args=(e,))
            st.button("Back to pi's default leaf", key="default_branch", on_click=_set_branch, args=(None,),
                      disabled=settings.leaf is None)
    with c2:
        st.subheader("Branch summary preview")
        st.caption("Leaving the branch at FROM for TO with pi's /tree: what the summary of the abandoned part "
                   "would carry over. Select two rows in the list below, or type entries."
                   + ({"codex": " Codex itself drops rolled-back turns without a summary: this is what pi would do.",
                       "claude-code": " Claude Code itself keeps no summary of a rewound branch: this is what pi "
                                      "would do."}.get(s.format, "")))
        dflt = views.default_branch_pair(s, leaf)
        cc = st.columns(2)
        src = int(cc[0].number_input("From (old leaf)", 0, n - 1, key="bs_from", **default("bs_from", dflt[0])))
        dst = int(cc[1].number_input("To (target)", 0, n - 1, key="bs_to", **default("bs_to", dflt[1])))
        col, prep = memo("branch", (src, dst), lambda: prepare_branch_summary(s, src, dst))
        r_, m_ = prep.fileOps.lists()
        if not col.entries:
            st.info(f"Nothing to summarise: entry {src} is on the path to entry {dst} (common ancestor "
                    f"{col.common_ancestor}).")
        else:
            st.write(f"Common ancestor: entry {col.common_ancestor}. Abandoned: {len(col.entries):,} entries; the "
                     f"summary reads the newest {len(prep.messages):,} message(s), {prep.totalTokens:,} tokens, "
                     f"within pi's budget of {prep.budget:,} tokens.")
            if r_ or m_:
                st.dataframe(pd.DataFrame([{"file": f, "read": f in r_, "modified": f in m_}
                                           for f in sorted(set(r_) | set(m_))]), hide_index=True,
                             height=min(250, 35 * len(set(r_) | set(m_)) + 38))
            else:
                st.caption("No file was read or modified on the abandoned part.")
            if get_summarizer is not None and prep.messages:
                with st.expander("Preview the summary (offline summarizer)"):
                    from ..summarize import summarize_branch

                    res = memo("branch_text", (src, dst), lambda: summarize_branch(prep, get_summarizer("offline")))
                    st.caption("What pi would store in the branch_summary entry: its preamble, the summary, "
                               "then the file lists.")
                    st.text(res.text)
    st.subheader("Entries, like pi's /tree")
    st.caption("Depth-first, children by time; indented only below a fork (├─ └─). ● = on the replayed branch. "
               "Select one row to pick an entry, two to preview a branch summary between them.")
    rows = memo("tree_rows", tuple(path), lambda: views.tree_rows(s, path))
    st.session_state["_tree_order"] = [r["entry"] for r in rows]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="tree_table", on_select=_tree_rows_picked,
                 selection_mode="multi-row", height=520, column_order=["tree", "type", "label"],
                 column_config={"tree": st.column_config.TextColumn("entry", width=620),
                                "type": st.column_config.TextColumn(width="medium"),
                                "label": st.column_config.TextColumn(width="small")})
    if len(rows) < n:
        st.caption(f"The first {len(rows):,} of {n:,} entries are listed.")


# ---------------------------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------------------------


def _rate(s: Any) -> float:
    from ..pricing import input_price_per_token

    return input_price_per_token(s)(None)


FILE_BLOCK = re.compile(r"<(read-files|modified-files)>\s*(.*?)\s*</\1>", re.S)


def summary_files(text: str) -> dict[str, set[str]]:
    """The ``<read-files>`` / ``<modified-files>`` lists pi appends to a summary."""
    out: dict[str, set[str]] = {"read-files": set(), "modified-files": set()}
    for kind, body in FILE_BLOCK.findall(text or ""):
        out[kind] |= {x.strip() for x in body.splitlines() if x.strip()}
    return out


def _files_table(texts: dict[str, str]) -> pd.DataFrame:
    lists = {name: summary_files(t) for name, t in texts.items()}
    files = sorted({f for fl in lists.values() for v in fl.values() for f in v})
    rows = []
    for f in files:
        row: dict[str, Any] = {"file": f}
        for name, fl in lists.items():
            row[name] = ("modified" if f in fl["modified-files"] else "read" if f in fl["read-files"] else "—")
        rows.append(row)
    return pd.DataFrame(rows)


def _prompt_block(prep: Any, style: str, extra: str | None, reserve: int, rate: float) -> None:
    """Every prompt an LLM summarizer sends for ``prep``, exactly (a split turn's prefix has its own)."""
    text = compaction_prompts(prep, style=style, custom_instructions=extra or None)
    tokens = (len(text) + 3) // 4
    st.caption(f"{len(prep.messagesToSummarize):,} messages to summarise"
               + (f" (+ a split turn's first {len(prep.turnPrefixMessages)} message(s), summarised by a second "
                  "call)" if prep.turnPrefixMessages else "")
               + f" · prompt ≈ {tokens:,} tokens (pi estimate) · answer budget {int(0.8 * reserve):,} tokens "
                 "(0.8 × reserveTokens)"
               + (f" · ≈ ${tokens * rate:.4f} input at the session's price" if rate else ""))
    st.code(text[:120000] + ("\n…" if len(text) > 120000 else ""), language=None, height=320)


def _open_in_replay(step: int, entry: int | None) -> None:
    set_step(step)
    if entry is None:
        st.session_state.pop("focus_entry", None)
    else:
        st.session_state["focus_entry"] = entry


def _summary_story(s: Any, rec: dict[str, Any], view: Any, settings: ReplaySettings) -> list[str]:
    if rec.get("simulated"):
        story = list(rec.get("story") or [])
        return [f"Why now: {rec['reason']}.", *story] if rec.get("reason") else story
    ei = rec["entryIndex"]
    if s.format != "pi":  # another agent's compaction: its own split, not pi's cut rule
        prep = view.prep
        return agent_compaction_story(s, ei, len(prep.messagesToSummarize) if prep else 0)
    return memo("cut", (ei, settings.keep_recent_tokens, settings.pi_version),
                lambda: recorded_cut_story(s, ei, settings.keep_recent_tokens, settings.reserve_tokens,
                                           settings.pi_version))


def _summary_texts(s: Any, rec: dict[str, Any], view: Any, set_aside: list[int]) -> dict[str, str]:
    """The recorded summary and one generated of the same messages, side by side; returns both texts."""
    texts: dict[str, str] = {}
    cols = st.columns(2, gap="medium")
    if rec.get("simulated"):
        texts["generated"] = rec["text"]
        with cols[0]:
            st.markdown(f"**Generated** · {esc(str(rec.get('summarizer')))} · {rec.get('summaryTokens', 0):,} "
                        "tokens" + (" · fell back to offline" if rec.get("fellBack") else ""))
            with st.container(height=420):
                st.text(rec["text"])
        other = min(set_aside, key=lambda e: abs(e - (rec.get("firstKeptEntryIndex") or 0)), default=None)
        with cols[1]:
            if other is not None:
                texts["recorded"] = s.entries[other].summary
                st.markdown(f"**Recorded** (entry {other}, set aside in this what-if replay)")
                with st.container(height=420):
                    st.text(texts["recorded"])
            else:
                st.info("The session has no recorded compaction to compare with.")
        return texts
    texts["recorded"] = rec["text"]
    with cols[0]:
        st.markdown(f"**Recorded** (entry {rec.get('entryIndex')}) · {rec.get('summaryTokens', 0):,} tokens")
        with st.container(height=420):
            st.text(rec["text"])
    with cols[1]:
        prep = view.prep
        if prep is not None and get_summarizer is not None:
            gen = memo("gen", (rec.get("entryIndex"), view.prep.settings, view.prep.pi_version),
                       lambda: summarize_compaction(prep, get_summarizer("offline")))
            texts["generated"] = gen.text
            st.markdown(f"**Generated here** (offline, of the same messages) · "
                        f"{counter_for(s, 'pi').count_text(gen.text):,} tokens")
            with st.container(height=420):
                st.text(gen.text)
        else:
            st.info("Nothing before this compaction to summarise.")
    return texts


def _summary_compare(texts: dict[str, str]) -> None:
    if len(texts) == 2:
        t1, t2 = st.tabs(["Diff (recorded → generated)", "Files each summary lists"])
        with t1:
            diff = "\n".join(difflib.unified_diff(texts["recorded"].splitlines(), texts["generated"].splitlines(),
                                                  "recorded", "generated", lineterm="", n=1))
            st.code(diff[:20000] or "(identical)", language="diff", height=300)
        with t2:
            ft = _files_table(texts)
            if len(ft):
                st.dataframe(ft, hide_index=True)
            else:
                st.caption("Neither summary lists files.")
    elif texts:
        ft = _files_table(texts)
        if len(ft):
            st.dataframe(ft, hide_index=True)


def _summary_entry(s: Any, r: Any, i: int, settings: ReplaySettings, set_aside: list[int], rate: float) -> None:
    """One compaction, recorded or simulated, in full: why and where it cut, what it summarised
    (the split turn's prefix apart), the summaries, their files, the exact prompt, and a link to
    its step on the Replay page."""
    from ..compaction_view import compaction_view

    rec = r.summaries[i]
    view = memo("cview", (settings, i), lambda: compaction_view(r, i))
    focus = rec.get("entryIndex") if rec.get("entryIndex") is not None else rec.get("firstKeptEntryIndex")
    if st.button(f"Open model call {rec['step']} in Replay", key=f"sum_go_{i}", icon=":material/play_circle:",
                 on_click=_open_in_replay, args=(min(rec["step"], len(r.steps) - 1), focus)):
        st.switch_page(st.session_state["_pages"]["replay"])
    if story := _summary_story(s, rec, view, settings):
        st.markdown("**Where the cut landed**\n" + "\n".join("- " + esc(relative(x)) for x in story))
    prefix = [p for p in view.before if p.part == "turn prefix"]
    m = st.columns(5)
    m[0].metric("Context before", f"{view.tokens_before:,}")
    m[1].metric("Summarised", f"{view.summarised_tokens:,}", help="Tokens that do not survive verbatim.")
    m[2].metric("Summarised msgs", f"{len(view.summarised):,}",
                help=f"Of which {len(prefix)} are a split turn's prefix, summarised by a second call." if prefix
                else "No split turn.")
    m[3].metric("Kept", f"{view.kept_tokens:,}")
    m[4].metric("Context after", f"{view.tokens_after:,}", help="The summary plus what was kept.")
    if view.cut_note:
        st.info(esc(relative(view.cut_note)), icon=":material/call_split:")
    with st.expander(f"The {len(view.summarised):,} messages summarised" + (
            f", of which {len(prefix)} are the split turn's prefix" if prefix else "")):
        _message_list(views.summarised_rows(view), [p.message for p in view.summarised], f"sum_list_{i}")
    _summary_compare(_summary_texts(s, rec, view, set_aside))
    if view.prep is not None and get_summarizer is not None:
        with st.expander("The exact prompt an LLM summarizer gets here"):
            style = (settings.compaction if rec.get("simulated") else s.format)
            _prompt_block(view.prep, style if style in STYLES else "pi", None, view.prep.settings.reserveTokens, rate)


def _compaction_title(recs: list[dict[str, Any]], i: int) -> str:
    rec = recs[i]
    keeps = rec.get("firstKeptEntryIndex")
    return (f"Compaction {i + 1} of {len(recs)} ({'simulated' if rec.get('simulated') else 'recorded'}) before call "
            f"{rec['step']}" + (f" · entry {rec.get('entryIndex')}" if rec.get("entryIndex") is not None else "")
            + (f" · keeps from entry {keeps}" if keeps is not None else " · keeps nothing verbatim"))


def _pick_compaction(recs: list[dict[str, Any]]) -> int:
    """Every compaction in a table; the one shown in full below is picked there (or by the Replay
    page's link), the last one at first."""
    rows = [{"#": i + 1, "call": rec["step"], "kind": "simulated" if rec.get("simulated") else "recorded",
             "entry": rec.get("entryIndex"), "keeps from": rec.get("firstKeptEntryIndex"),
             "tokens after": rec.get("tokensAfter"), "summary tokens": rec.get("summaryTokens"),
             "why": rec.get("reason") or ""} for i, rec in enumerate(recs)]
    focus = st.session_state.get("sum_focus")  # set by the Replay page's link; kept until another one
    focus = focus if isinstance(focus, int) and 0 <= focus < len(recs) else None
    key = "sum_table" if focus is None else f"sum_table_f{focus}"
    pick = len(recs) - 1 if focus is None else focus
    ev = st.dataframe(pd.DataFrame(rows), hide_index=True, key=key, on_select="rerun", selection_mode="single-row",
                      selection_default={"selection": {"rows": [pick]}}, height=min(300, 35 * len(rows) + 38),
                      placeholder="—",
                      column_config={"entry": st.column_config.NumberColumn(format="%d"),
                                     "keeps from": st.column_config.NumberColumn(format="%d"),
                                     "why": st.column_config.TextColumn(width="large")})
    picked = [x for x in (ev.selection.rows if ev is not None else []) if 0 <= x < len(recs)]
    return picked[0] if picked else pick


def summaries_page(settings: ReplaySettings) -> None:
    s = _need_session()
    st.title("Summaries")
    if get_summarizer is None:
        st.info("The summarizers are not installed in this checkout; recorded summaries only.")
    r = current_replay(settings)
    recs = list(r.summaries)
    recorded = [x for x in recs if not x.get("simulated")]
    set_aside = [i for i, e in enumerate(s.entries) if e.type == "compaction" and i in set(r.path)]
    rate = _rate(s)
    st.caption(f"{len(recs)} compaction(s) in this replay ({len(recorded)} recorded, {len(recs) - len(recorded)} "
               f"simulated by the '{POLICIES[settings.compaction].title}' policy with the {settings.summarizer} "
               "summarizer). Session text is shown as plain text.")
    if not recs:
        st.info("No compaction in this replay. Pick a what-if policy (e.g. pi) or a smaller window in the sidebar.")
    if recs:
        i = _pick_compaction(recs)
        st.subheader(_compaction_title(recs, i))
        _summary_entry(s, r, i, settings, set_aside, rate)
    if get_summarizer is not None:
        _compaction_now(s, settings, rate)


def _compaction_now(s: Any, settings: ReplaySettings, rate: float) -> None:
    """The prompt of a compaction pi would make now, at the end of the replayed branch."""
    st.subheader("A compaction now, at the branch's end")
    st.caption("The prompt an LLM summarizer would receive if pi compacted at the end of the replayed branch "
               "with the sidebar's keepRecentTokens, in each system's style, with your own instructions.")
    c1, c2 = st.columns([1, 2])
    style = c1.selectbox("Prompt style", list(STYLES), key="sum_style",
                         help="Each asks for the structure its system uses (written here in our own words).")
    extra = c2.text_input("Custom instructions", key="sum_instructions",
                          placeholder="e.g. focus on test output and the exact error messages")
    leaf = settings.leaf if settings.leaf is not None else s.default_leaf
    path = s.path(leaf) if leaf is not None else []
    prep = memo("prep_end", (leaf, settings.keep_recent_tokens, settings.reserve_tokens, settings.pi_version),
                lambda: prepare_compaction(s.entries_at(path), CompactionSettings(
                    keepRecentTokens=settings.keep_recent_tokens, reserveTokens=settings.reserve_tokens),
                    path_indexes=path, pi_version=settings.pi_version)) if path else None
    if prep is None:
        st.info("pi would not compact here (the branch ends in a compaction or is empty).")
    elif not prep.messagesToSummarize and not prep.turnPrefixMessages:
        st.info(f"Nothing to summarise at the branch's end: the newest {settings.keep_recent_tokens:,} tokens "
                "(keepRecentTokens) reach back to the last compaction. Lower keepRecentTokens in the sidebar "
                "to see a prompt.")
    else:
        _prompt_block(prep, style, extra, settings.reserve_tokens, rate)


# ---------------------------------------------------------------------------------------------
# Compare & tune
# ---------------------------------------------------------------------------------------------


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
            updates["window_preset"] = us.window_preset_for(v)
            if updates["window_preset"] == "Custom":
                updates["window_custom"] = v
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


#: (pruning, compaction) of each agent, for the Compare page's agents button
# the Compare page's "agents" button: (pruning, compaction) of each agent, from the engine's table
AGENT_CONFIGS = tuple((AGENTS[a][2], AGENTS[a][1]) for a in ("pi", "codex", "opencode", "claude-code"))


def _compare_agents() -> None:
    updates: dict[str, Any] = {"cmp_n": 4}
    for i, (strat, pol) in enumerate(AGENT_CONFIGS):
        updates[f"cmp_strat_{i}"] = strat if strat in us.strategies() else "none"
        updates[f"cmp_pol_{i}"] = pol
    set_widgets(updates)


def compare_page(settings: ReplaySettings) -> None:
    s = _need_session()
    st.title("Compare & tune")
    st.caption("Several configurations replayed on the same session and branch. Configuration A starts from the "
               "sidebar; the others change pruning, compaction and keepRecentTokens.")
    st.button("Compare the agents: pi, Codex CLI, OpenCode, Claude Code", key="cmp_agents",
              on_click=_compare_agents, help="Sets the four configurations to each agent's own pruning and "
                                              "compaction (the sidebar's window and thresholds apply to all).")
    count = int(st.segmented_control("Configurations", [2, 3, 4], key="cmp_n", default=2,
                                     persist_state="session") or 2)
    strategies = us.strategies()
    names = list(strategies) or ["none"]
    configs: list[tuple[str, ReplaySettings]] = []
    presets = [(settings.strategy, settings.compaction)]
    for p in (("opencode", "pi"), ("pi-context-pruning", "pi"), ("none", "pi"), ("dcp", "pi"), ("none", "never")):
        if p not in presets and (p[0] in names or p[0] == "none"):
            presets.append(p)
    cols = st.columns(count, gap="medium")
    for i, col in enumerate(cols):
        with col:
            st.markdown(f"**{'ABCD'[i]}**")
            ds, dp = presets[i]
            strat = st.selectbox("Pruning", names, key=f"cmp_strat_{i}", persist_state="session",
                                 index=names.index(ds) if ds in names else 0, format_func=_strategy_title)
            pol = st.selectbox("Compaction", list(POLICIES), key=f"cmp_pol_{i}", persist_state="session",
                               index=list(POLICIES).index(dp), format_func=lambda n: POLICIES[n].title)
            keep = int(st.number_input("keepRecentTokens", 0, 2_000_000, step=1000, key=f"cmp_keep_{i}",
                                       persist_state="session",
                                       **default(f"cmp_keep_{i}", settings.keep_recent_tokens)))
            cfg = settings.model_copy(update={
                "strategy": strat, "compaction": pol, "keep_recent_tokens": keep,
                "strategy_settings": settings.strategy_settings if strat == settings.strategy else ()})
            configs.append((f"{'ABCD'[i]}: {_strategy_title(strat)} / {POLICIES[pol].title}", cfg))
    runs = [(name, current_replay(cfg, f"Replaying {name}")) for name, cfg in configs]
    rows = views.metrics_rows(runs)
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="cmp_table", height=35 * len(rows) + 38,
                 column_config={"metric": st.column_config.TextColumn(width="medium")})
    cache_view.compare_panel(runs, settings)
    st.plotly_chart(figures.compare_timelines(runs), key="cmp_tl", config=PLOT_CONFIG)

    st.subheader("Sweep two settings")
    strat = strategies.get(settings.strategy)
    st.caption("Replays the session on a grid of two settings (the rest as in the sidebar) and colours each cell "
               "by a metric. The axes are pi's thresholds and the sidebar strategy's own numeric settings"
               + (" (choose OpenCode prune in the sidebar for PRUNE_PROTECT × PRUNE_MINIMUM)"
                  if settings.strategy == "none" else "")
               + ". Click a cell to apply its settings to the sidebar; the outlined cell is the current setting.")
    if settings.compaction == "recorded":
        st.warning("The sidebar's compaction policy is 'As recorded': the session's own compactions stand, so "
                   "keepRecentTokens, reserveTokens and the window change nothing. Choose a what-if policy (pi) "
                   "to sweep them.", icon=":material/info:")
    axes = views.sweep_axes(strat)
    current = {**settings.strategy_dict(), "keep_recent_tokens": settings.keep_recent_tokens,
               "reserve_tokens": settings.reserve_tokens, "context_window": settings.context_window}
    if strat is not None:
        for k, f in strat.Settings.model_fields.items():
            current.setdefault(k, f.default)
    c = st.columns(3)
    x = c[0].selectbox("X axis", axes, index=0, key="sw_x")
    y = c[1].selectbox("Y axis", axes, index=min(1, len(axes) - 1), key="sw_y")
    metric = c[2].selectbox("Colour by", list(views.METRIC_LABELS), index=1, key="sw_metric",
                            format_func=views.METRIC_LABELS.get)

    def bounds(axis: str) -> tuple[Any, Any]:
        if strat is not None and axis in strat.Settings.model_fields:
            return us.field_bounds(strat.Settings.model_fields[axis])
        return (1000, None) if axis == "context_window" else (0, None)

    c = st.columns(2)
    xs_raw = c[0].text_input(f"{x} values", key=f"sw_vals_{x}", **default(
        f"sw_vals_{x}", ", ".join(str(v) for v in views.sweep_values(x, current.get(x), *bounds(x)))))
    ys_raw = c[1].text_input(f"{y} values", key=f"sw_vals_{y}_y", **default(
        f"sw_vals_{y}_y", ", ".join(str(v) for v in views.sweep_values(y, current.get(y), *bounds(y)))))

    def parse(raw: str) -> list[int]:
        return sorted({int(v.replace("_", "").replace(",", "")) for v in re.split(r"[,\s]+", raw) if v.strip()})

    if st.button("Run sweep", key="sw_run", type="primary"):
        try:
            grid = {x: parse(xs_raw), y: parse(ys_raw)}
        except ValueError:
            st.error("Values must be whole numbers separated by commas.")
            grid = {}
        if x == y:
            st.error("Choose two different axes.")
        elif grid and all(grid.values()):
            bar = st.progress(0.0, text="Sweeping…")
            cells = sweep(s, settings, grid, progress=lambda f: bar.progress(min(1.0, f), text=f"Sweeping… {f:.0%}"))
            bar.empty()
            st.session_state["sweep"] = {"x": x, "y": y, "cells": cells, "strategy": settings.strategy,
                                         "base": settings}
            st.session_state.pop("sw_pick", None)
    sw = st.session_state.get("sweep")
    if sw:
        sx, sy, cells = sw["x"], sw["y"], sw["cells"]
        if views.sweep_is_stale(sw["base"], settings, sx, sy):
            st.warning("The sidebar changed since this sweep ran (other than the swept settings): run it again "
                       "to update.", icon=":material/update:")
        st.plotly_chart(figures.sweep_heatmap(cells, sx, sy, metric, current), key="heat", config=PLOT_CONFIG,
                        on_select=_heat_picked, selection_mode="points")
        labels = [f"{sx} = {c.values[sx]:,}, {sy} = {c.values[sy]:,} → "
                  f"{views.fmt_metric(metric, getattr(c.metrics, metric))}" for c in cells]
        with st.container(horizontal=True, vertical_alignment="bottom"):
            st.selectbox("Cell", range(len(cells)), format_func=lambda i: labels[i], key="sw_pick", width=520)
            st.button("Apply to the sidebar", key="sw_apply", on_click=_apply_cell)
        if msg := st.session_state.pop("_applied", None):
            st.success(f"Applied {msg}.")


# ---------------------------------------------------------------------------------------------
# Doctor
# ---------------------------------------------------------------------------------------------


def doctor_page(settings: ReplaySettings) -> None:
    from ..doctor import diagnose

    s = _need_session()
    st.title("Doctor")
    st.caption("What looks wrong on the replayed branch: tool calls without results, overflows, loops, re-reads, "
               "summaries that forgot files…")
    rep = memo("doctor", settings.leaf, lambda: diagnose(s, settings.leaf if settings.leaf is not None else "leaf"))
    counts = rep.counts()
    m = st.columns(3)
    m[0].metric("Errors", counts.get("error", 0))
    m[1].metric("Warnings", counts.get("warning", 0))
    m[2].metric("Info", counts.get("info", 0))
    if not rep.findings:
        st.success("Nothing wrong found on this branch.")
        return
    cwd = getattr(s.header, "cwd", None)
    rows = [{"severity": f.severity, "kind": f.kind, "entries": ", ".join(map(str, f.entries[:8])),
             "lines": ", ".join(map(str, f.lines[:8])), "explanation": views.relative_paths(f.message, cwd)}
            for f in rep.findings]
    if any(row["explanation"] != f.message for row, f in zip(rows, rep.findings, strict=True)):
        st.caption(esc(f"Paths are relative to the session's folder, {cwd}."))
    ev = st.dataframe(pd.DataFrame(rows), hide_index=True, height=min(420, 36 * (len(rows) + 1)), key="doctor_table",
                      on_select="rerun", selection_mode="single-row",
                      column_config={"explanation": st.column_config.TextColumn(
                          width="large", help="Select a row to read it in full and open it in the replay")})
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
        pick = st.selectbox("Show a finding in the replay", with_entries, width=520, key=f"doc_pick_{default_pick}",
                            index=with_entries.index(default_pick),
                            format_func=lambda i: f"{rep.findings[i].kind} · entry {rep.findings[i].entries[0]}")
        go = st.button("Open in Replay", key="doc_go", icon=":material/play_circle:")
    if go:
        entry = rep.findings[pick].entries[0]
        r = current_replay(settings)
        _open_in_replay(views.step_showing_entry(r, entry), entry)
        st.switch_page(st.session_state["_pages"]["replay"])
