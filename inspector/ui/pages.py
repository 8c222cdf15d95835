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
from ..compaction import CompactionSettings, prepare_compaction, prepare_recorded_split
from ..info import session_info
from ..policies import POLICIES
from ..replay import AGENT_CONFIGS as AGENTS
from ..replay import ReplaySettings, sweep
from . import figures, sources, views
from . import urlstate as us
from .narrate import agent_compaction_story, notable_steps, recorded_cut_story, step_story
from .state import (
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
    from ..summarize import get_summarizer, summarize_compaction
    from ..summarize.base import SummaryRequest
    from ..summarize.prompts import STYLES, build_prompt
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


# ---------------------------------------------------------------------------------------------
# Load
# ---------------------------------------------------------------------------------------------


def _load_sample() -> None:
    name = st.session_state.get("sample_choice")
    p = next((x for x in sources.sample_files() if x.name == name), None)
    if p is not None:
        load_bytes(sources.read_file(p), p.name)


def _load_upload() -> None:
    up = st.session_state.get("upload")
    if up is not None:
        load_bytes(up.getvalue(), up.name)


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

                load_bytes(opencode_export(x), f"{x.ref}.json")
            else:
                load_bytes(sources.read_file(x.path), str(x.path))
        except (OSError, KeyError, sqlite3.Error) as e:
            st.error(esc(f"Cannot read {x.ref or x.path}: {e}"))


def _load_local(raw: str, roots: Any = None) -> bool:
    """Load a local file if it is under the allowed roots; say why not otherwise."""
    try:
        p = sources.check_path(raw, roots)
        load_bytes(sources.read_file(p), str(p))
        return True
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


def _recorded_prunes(s: Any) -> int:
    from ..pruning.recorded import recorded_prune

    return sum(1 for e in s.entries if recorded_prune(getattr(e, "message", None)) is not None)


def load_page() -> None:
    st.title("Load a session")
    st.caption("A pi session (JSONL), a Claude Code transcript, a Codex CLI rollout or an OpenCode export; the "
               "format is recognised from the content. The file is only read, never written.")
    if err := st.session_state.pop("_preload_error", None):
        st.error(esc(err))
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
        st.file_uploader("…or upload a session file", type=["jsonl", "json", "txt"], key="upload")
        st.button("Load upload", key="load_upload", on_click=_load_upload)
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
    if s.format == "claude-code":
        _subagents(Path(st.session_state.get("session_name", "")))
    related = getattr(s.header, "codexRelated", None)
    if s.format == "codex" and isinstance(related, dict):
        _codex_related(related)
    marked = memo("recorded_prunes", None, lambda: _recorded_prunes(s))
    if marked:
        st.info(f"The agent itself cleared {marked:,} tool output(s) in this session (recorded in the file). Choose "
                "the pruning strategy 'As recorded', or the agent preset, to see them cleared in the replay.",
                icon=":material/info:")
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


def _goto(delta: int = 0, event: bool = False) -> None:
    n = int(st.session_state.get("_n_steps", 0))
    if not n:
        return
    k = get_step(n)
    if event:
        later = [x for x in st.session_state.get("_notable", []) if x > k]
        k = later[0] if later else k
    else:
        k = max(0, min(n - 1, k + delta))
    set_step(k)


def _slider_moved() -> None:
    st.session_state["cur_step"] = int(st.session_state["step"])


def _timeline_picked() -> None:
    ev = st.session_state.get("timeline")
    pts = ev.selection.points if ev is not None else []
    n = int(st.session_state.get("_n_steps", 0))
    for p in pts:
        x = p.get("x")
        if isinstance(x, (int, float)) and 0 <= int(x) < n:
            set_step(int(x))
            return


def replay_page(settings: ReplaySettings) -> None:
    s = _need_session()
    st.title("Replay")
    r = current_replay(settings)
    n = len(r.steps)
    if not n:
        st.warning("This branch has no model calls (assistant messages) to replay.")
        return
    st.session_state["_n_steps"] = n
    st.session_state["_notable"] = notable_steps(r)
    mode = "as recorded" if settings.compaction == "recorded" else f"what-if: {POLICIES[settings.compaction].title}"
    st.caption(f"{n:,} model calls on this branch · compaction {mode} · pruning {_strategy_title(settings.strategy)} · "
               f"window {settings.context_window:,} tokens · counter {us.COUNTERS[settings.counter]} · replayed once in "
               f"{r.seconds:.2f} s, then cached")
    for note in _beyond_notes(settings):
        st.warning(f"Beyond the source systems: {note}.", icon=":material/science:")
    k = get_step(n)
    st.session_state["step"] = k  # before the slider is drawn (set by buttons, timeline, other pages)
    with st.container(horizontal=True, vertical_alignment="bottom"):
        st.button("Previous", icon=":material/chevron_left:", on_click=_goto, kwargs={"delta": -1}, key="prev",
                  disabled=k == 0)
        st.button("Next", icon=":material/chevron_right:", on_click=_goto, kwargs={"delta": 1}, key="next",
                  disabled=k >= n - 1)
        st.button("Next event", icon=":material/skip_next:", on_click=_goto, kwargs={"event": True}, key="next_event",
                  help="Jump to the next call where something happened: compaction, pruning, overflow, re-read…",
                  disabled=not any(x > k for x in st.session_state["_notable"]))
    if n > 1:
        st.slider("Model call (step)", 0, n - 1, key="step", on_change=_slider_moved,
                  help="Each step is one call to the model (one assistant message) on the replayed branch.")
    step = r.steps[k]
    d = r.step_detail(k)
    counter = counter_for(s, settings.counter)
    m = st.columns(6)
    m[0].metric("Tokens sent", f"{step.tokens:,}", help="Context the model receives at this call, after pruning "
                "(by the chosen counter).",
                delta=f"{step.tokens - r.steps[k - 1].tokens:+,}" if k else None, delta_color="inverse")
    m[1].metric("Recorded prompt", f"{step.recorded_input:,.0f}" if step.recorded_input is not None else "—",
                help="What the provider reported for this call (input + cache read + cache write).")
    m[2].metric("Window used", f"{step.tokens / settings.context_window:.0%}")
    m[3].metric("Messages", f"{len(d.after):,}")
    m[4].metric("Pruned away", f"{step.pruned_tokens:,}", help="Tokens the pruning strategy keeps out of this call.")
    m[5].metric("Entry", f"{step.entry_index}" + (f" ({step.stop_reason})" if step.stop_reason in ("aborted", "error")
                                                   else ""), help="The assistant message answering this call.")

    before_tokens = counter.count_many([c.message for c in d.before])
    after_tokens = counter.count_many([c.message for c in d.after])
    zoom = st.toggle("Zoom to the messages", key="bars_zoom", persist_state="session",
                     help="Fit the bars to the context instead of the whole window.",
                     **default("bars_zoom", sum(before_tokens) < settings.context_window / 8))
    fig = figures.context_bars(
        d.before, before_tokens, d.after, after_tokens, pruned_positions=views.pruned_positions(d),
        window=settings.context_window, reserve=settings.reserve_tokens, keep_recent=settings.keep_recent_tokens,
        title=f"Context at model call {k} (entry {step.entry_index})", zoom=zoom)
    st.plotly_chart(fig, key="bars", config=PLOT_CONFIG)
    st.caption("Top: the context as built from the session; bottom: what is sent after pruning. One segment per "
               "message, width = tokens. Red line: the window; shaded: the reserve before it; dotted: where "
               "keepRecentTokens starts counting back from the newest message. The system prompt and tool "
               "definitions are not recorded in the session file, so they are not shown.")
    c1, c2 = st.columns([3, 2], gap="large")
    with c1:
        st.plotly_chart(figures.timeline(r, current_step=k), key="timeline", on_select=_timeline_picked,
                        selection_mode="points", config=PLOT_CONFIG)
        st.caption("Context tokens at every call. Click a point to jump to that call. Solid red: the window; "
                   "dashed: where the compaction policy triggers. Markers: compactions, pruning, overflows, "
                   "re-reads of forgotten files.")
    with c2:
        st.subheader("What happened here")
        story = memo("story", (settings, k), lambda: step_story(r, k, d))
        st.markdown("\n".join("- " + esc(line) for line in story))
    st.subheader("Messages the model receives")
    rows = views.message_rows(d, counter)
    cols_shown = [c for c in (rows[0] if rows else {}) if c != "why" or any(row["why"] for row in rows)]
    st.dataframe(pd.DataFrame(rows), hide_index=True, height=min(420, 35 * len(rows) + 38), key="msg_table",
                 column_order=cols_shown,
                 column_config={
                     "#": st.column_config.NumberColumn(width=45, help="Position in the context"),
                     "entry": st.column_config.NumberColumn(format="%d", width=60, help="Entry in the file"),
                     "kind": st.column_config.TextColumn(width=95),
                     "tool": st.column_config.TextColumn(width=70),
                     "tokens": st.column_config.NumberColumn("tokens", format="localized", width=70),
                     "sent": st.column_config.NumberColumn("sent", format="localized", width=70,
                                                           help="Tokens after pruning"),
                     "status": st.column_config.TextColumn(width=75),
                     "why": st.column_config.TextColumn(width=260),
                     "text": st.column_config.TextColumn(width="large")})
    with st.expander("Run metrics (whole replay)"):
        st.dataframe(pd.DataFrame(views.metrics_rows([("value", r)])), hide_index=True)


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
    system, user = build_prompt(SummaryRequest(
        messages=tuple(prep.messagesToSummarize), previous_summary=prep.previousSummary,
        custom_instructions=extra or None, max_tokens=int(0.8 * reserve), kind="history", style=style))
    tokens = (len(system) + len(user) + 3) // 4
    st.caption(f"{len(prep.messagesToSummarize):,} messages to summarise"
               + (f" (+ a split turn's first {len(prep.turnPrefixMessages)} message(s), summarised by a second "
                  "call)" if prep.turnPrefixMessages else "")
               + f" · prompt ≈ {tokens:,} tokens (pi estimate) · answer budget {int(0.8 * reserve):,} tokens "
                 "(0.8 × reserveTokens)"
               + (f" · ≈ ${tokens * rate:.4f} input at the session's price" if rate else ""))
    st.code(f"[system]\n{system}\n\n[user]\n{user[:60000]}" + ("\n…" if len(user) > 60000 else ""),
            language=None, height=320)


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
    for i, rec in enumerate(recs):
        kind = "simulated" if rec.get("simulated") else "recorded"
        keeps = rec.get("firstKeptEntryIndex")
        title = (f"Compaction {i + 1} ({kind}) before call {rec['step']}"
                 + (f" · entry {rec.get('entryIndex')}" if rec.get("entryIndex") is not None else "")
                 + (f" · keeps from entry {keeps}" if keeps is not None else " · keeps nothing verbatim"))
        with st.expander(title, expanded=i == len(recs) - 1):
            prep = None
            if rec.get("simulated"):
                story = rec.get("story") or []
                if rec.get("reason"):
                    story = [f"Why now: {rec['reason']}.", *story]
            elif s.format != "pi":  # another agent's compaction: its own split, not pi's cut rule
                ei = rec["entryIndex"]
                parent = s.parents[ei]
                path = s.path(parent) if parent is not None and parent >= 0 else []
                kept = s.index_of(getattr(s.entries[ei], "firstKeptEntryId", None))
                if path:
                    prep = memo("prep_rec", (ei, settings.reserve_tokens), lambda path=path, kept=kept: prepare_recorded_split(
                        s.entries_at(path), path.index(kept) if kept in path else None,
                        CompactionSettings(reserveTokens=settings.reserve_tokens), path_indexes=path))
                story = agent_compaction_story(s, ei, len(prep.messagesToSummarize) if prep else 0)
            else:
                ei = rec["entryIndex"]
                story = memo("cut", (ei, settings.keep_recent_tokens, settings.pi_version),
                             lambda ei=ei: recorded_cut_story(s, ei, settings.keep_recent_tokens,
                                                              settings.reserve_tokens, settings.pi_version))
                parent = s.parents[ei]
                path = s.path(parent) if parent is not None and parent >= 0 else []
                if path:
                    prep = memo("prep", (ei, settings.keep_recent_tokens, settings.reserve_tokens,
                                         settings.pi_version),
                                lambda path=path: prepare_compaction(s.entries_at(path), CompactionSettings(
                                    keepRecentTokens=settings.keep_recent_tokens,
                                    reserveTokens=settings.reserve_tokens),
                                    path_indexes=path, pi_version=settings.pi_version))
            if story:
                st.markdown("**Where the cut landed**\n" + "\n".join("- " + esc(x) for x in story))
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
            else:
                texts["recorded"] = rec["text"]
                with cols[0]:
                    st.markdown(f"**Recorded** (entry {rec.get('entryIndex')}) · {rec.get('summaryTokens', 0):,} tokens")
                    with st.container(height=420):
                        st.text(rec["text"])
                with cols[1]:
                    if prep is not None and get_summarizer is not None:
                        gen = memo("gen", (rec.get("entryIndex"), settings.keep_recent_tokens, settings.reserve_tokens,
                                           settings.pi_version),
                                   lambda prep=prep: summarize_compaction(prep, get_summarizer("offline")))
                        texts["generated"] = gen.text
                        st.markdown(f"**Generated here** (offline) · {counter_for(s, 'pi').count_text(gen.text):,} "
                                    "tokens")
                        with st.container(height=420):
                            st.text(gen.text)
                    elif s.format != "pi":
                        st.info("Nothing before this compaction to summarise.")
                    else:
                        st.info("pi would not compact at this point with these settings.")
            if len(texts) == 2:
                t1, t2 = st.tabs(["Diff (recorded → generated)", "Files each summary lists"])
                with t1:
                    diff = "\n".join(difflib.unified_diff(texts["recorded"].splitlines(),
                                                          texts["generated"].splitlines(),
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
            if prep is not None and get_summarizer is not None:
                with st.expander("The exact prompt an LLM summarizer gets here"):
                    _prompt_block(prep, s.format if s.format in STYLES else "pi", None, settings.reserve_tokens, rate)

    if get_summarizer is not None:
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
    df = pd.DataFrame([{"severity": f.severity, "kind": f.kind, "entries": ", ".join(map(str, f.entries[:8])),
                        "lines": ", ".join(map(str, f.lines[:8])), "explanation": f.message} for f in rep.findings])
    st.dataframe(df, hide_index=True, height=min(420, 36 * (len(df) + 1)), key="doctor_table",
                 column_config={"explanation": st.column_config.TextColumn(width="large")})
    with st.expander("Full explanations"):
        st.text("\n\n".join(f"[{f.severity}] {f.kind}: {f.message}" for f in rep.findings))
    with_entries = [f for f in rep.findings if f.entries]
    if with_entries:
        with st.container(horizontal=True, vertical_alignment="bottom"):
            pick = st.selectbox("Show a finding in the replay", range(len(with_entries)), width=520,
                                format_func=lambda i: f"{with_entries[i].kind} · entry {with_entries[i].entries[0]}",
                                key="doc_pick")
            go = st.button("Open in Replay", key="doc_go")
        if go:
            r = current_replay(settings)
            set_step(views.step_for_entry(r, with_entries[pick].entries[0]))
            st.switch_page(st.session_state["_pages"]["replay"])
