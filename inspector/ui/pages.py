"""The app's pages. Each draws widgets and figures; all computing goes through the engine.

Session text is only ever shown through ``st.text``/``st.code``/dataframes or escaped markdown,
never as HTML.
"""

from __future__ import annotations

import difflib
from typing import Any

import pandas as pd
import streamlit as st

from ..branch_summary import prepare_branch_summary
from ..compaction import CompactionSettings, prepare_compaction
from ..doctor import diagnose
from ..info import session_info
from ..policies import POLICIES
from ..pruning import REGISTRY
from ..replay import ReplaySettings, sweep
from ..summarize import get_summarizer, summarize_compaction
from ..summarize.base import SummaryRequest
from ..summarize.prompts import STYLES, build_prompt
from . import figures, sources
from .narrate import step_story
from .state import counter_for, current_replay, current_session, load_bytes


def _esc(text: str) -> str:
    """Escape markdown so session text never becomes links, emphasis or HTML."""
    return "".join("\\" + c if c in "\\`*_{}[]()#+-.!|<>~$" else c for c in text)


def _need_session() -> Any:
    s = current_session()
    if s is None:
        st.info("Load a session first (Load page).")
        st.page_link(st.session_state["_pages"]["load"], label="Go to Load", icon=":material/folder_open:")
        st.stop()
    return s


# ---------------------------------------------------------------------------------------------
# Load
# ---------------------------------------------------------------------------------------------


def load_page() -> None:
    st.title("Load a session")
    st.caption("A pi session file (JSONL). Nothing is ever written to it.")
    c1, c2 = st.columns(2)
    with c1:
        st.subheader("Bundled samples")
        samples = sources.sample_files()
        names = [p.name for p in samples]
        choice = st.selectbox("Sample session", names, index=names.index("coding-session.jsonl")
                              if "coding-session.jsonl" in names else 0, key="sample_choice")
        if st.button("Load sample", type="primary", key="load_sample"):
            p = samples[names.index(choice)]
            load_bytes(p.read_bytes(), p.name)
        up = st.file_uploader("…or upload a .jsonl file", type=["jsonl", "json", "txt"], key="upload")
        if up is not None and st.button("Load upload", key="load_upload"):
            load_bytes(up.getvalue(), up.name)
    with c2:
        st.subheader("Local file")
        roots = sources.roots()
        st.caption("Allowed folders: " + ", ".join(f"`{r}`" for r in roots) + " (set `INSPECTOR_ROOTS` to change).")
        raw = st.text_input("Path", key="local_path", placeholder="sample_sessions/long-session.jsonl")
        if st.button("Load path", key="load_path"):
            try:
                p = sources.check_path(raw, roots)
                load_bytes(p.read_bytes(), str(p))
            except sources.PathRefused as e:
                st.error(str(e))
        pi = sources.list_pi_sessions()
        if pi:
            st.caption(f"{len(pi)} pi session(s) in `{sources.PI_SESSIONS}`")
            df = pd.DataFrame([{"project": x.project, "name": x.name or "", "modified": x.modified,
                                "MB": round(x.size / 1e6, 2), "file": x.path.name} for x in pi])
            st.dataframe(df, hide_index=True, height=200)
            pick = st.selectbox("Open a pi session", range(len(pi)), format_func=lambda i: f"{pi[i].project} · "
                                f"{pi[i].name or pi[i].path.name} · {pi[i].modified:%Y-%m-%d %H:%M}", key="pi_pick")
            if st.button("Load pi session", key="load_pi"):
                load_bytes(pi[pick].path.read_bytes(), str(pi[pick].path))
        else:
            st.caption(f"No pi sessions found in `{sources.PI_SESSIONS}`.")
    s = current_session()
    if s is None:
        return
    st.divider()
    info = session_info(s, counters=("pi",))
    st.subheader(f"{st.session_state.get('session_name')}" + (f" — {info.name}" if info.name else ""))
    m = st.columns(5)
    m[0].metric("Entries", f"{info.entries:,}")
    m[1].metric("Branches (leaves)", len(info.leaves))
    m[2].metric("Context messages", f"{info.contextMessages:,}")
    m[3].metric("Context tokens (pi)", f"{info.contextTokens['pi']:,}")
    m[4].metric("Compactions", len(info.compactions))
    st.caption(f"Format: pi v{info.originalVersion}" + (" (migrated in memory)" if info.migrated else "")
               + (f" · model {info.model.get('provider')}/{info.model.get('modelId')}" if info.model else ""))
    st.markdown("**Entries by type**")
    st.dataframe(pd.DataFrame(sorted(info.byType.items(), key=lambda kv: -kv[1]), columns=["type", "count"]),
                 hide_index=True)
    if info.issues:
        st.markdown(f"**Load issues ({len(info.issues)})** — every valid entry was kept")
        st.dataframe(pd.DataFrame([i.model_dump() for i in info.issues]), hide_index=True)
    else:
        st.success("No load issues.")


# ---------------------------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------------------------


def _goto(delta: int | None = None, event: bool = False) -> None:
    r = st.session_state.get("_replay_obj")
    if r is None:
        return
    k = int(st.session_state.get("step", 0))
    if event:
        k = next((x for x in r.event_steps() if x > k), k)
    elif delta:
        k = max(0, min(len(r.steps) - 1, k + delta))
    st.session_state["step"] = k


def replay_page(settings: ReplaySettings) -> None:
    s = _need_session()
    st.title("Replay")
    r = current_replay(settings)
    st.session_state["_replay_obj"] = r
    if not r.steps:
        st.warning("This branch has no model calls (assistant messages) to replay.")
        return
    mode = "as recorded" if settings.compaction == "recorded" else f"what-if: {POLICIES[settings.compaction].title}"
    st.caption(f"{len(r.steps):,} model calls · compaction {mode} · pruning {REGISTRY[settings.strategy].title} · "
               f"window {settings.context_window:,} · replayed in {r.seconds:.2f} s")
    n = len(r.steps)
    st.session_state.setdefault("step", n - 1)
    st.session_state["step"] = min(int(st.session_state["step"]), n - 1)
    b = st.columns([1, 1, 1.4, 6])
    b[0].button("◀ Prev", on_click=_goto, kwargs={"delta": -1}, key="prev")
    b[1].button("Next ▶", on_click=_goto, kwargs={"delta": 1}, key="next")
    b[2].button("Next event »", on_click=_goto, kwargs={"event": True}, key="next_event")
    if n > 1:
        st.slider("Model call (step)", 0, n - 1, key="step")
    k = int(st.session_state["step"])
    st_ = r.steps[k]
    d = r.step_detail(k)
    counter = counter_for(s, settings.counter)
    m = st.columns(5)
    m[0].metric("Tokens sent", f"{st_.tokens:,}", delta=f"{st_.tokens - r.steps[k - 1].tokens:+,}" if k else None,
                delta_color="inverse")
    m[1].metric("Recorded prompt", f"{st_.recorded_input:,.0f}" if st_.recorded_input is not None else "—")
    m[2].metric("Messages", f"{len(d.after):,}")
    m[3].metric("Pruned now", f"{st_.pruned_tokens:,}")
    m[4].metric("Entry", f"{st_.entry_index}" + (f" ({st_.stop_reason})" if st_.stop_reason in ("aborted", "error")
                                                  else ""))
    pruned_pos: set[int] = set()
    if d.prune is not None:
        pos_after = {id(cm): i for i, cm in enumerate(d.after)}
        for dec in d.prune.decisions:
            if dec.action == "pruned":
                new = next((cm for cm in d.after if cm.entry_index == dec.entry_index and cm.entry_index is not None),
                           None)
                if new is not None:
                    pruned_pos.add(pos_after[id(new)])
    fig = figures.context_bars(
        d.before, counter.count_many([c.message for c in d.before]),
        d.after, counter.count_many([c.message for c in d.after]), pruned_positions=pruned_pos,
        window=settings.context_window, reserve=settings.reserve_tokens, keep_recent=settings.keep_recent_tokens,
        title=f"Context at model call {k} (entry {st_.entry_index})")
    st.plotly_chart(fig, key="bars", config={"displaylogo": False})
    c1, c2 = st.columns([3, 2])
    with c1:
        ev = st.plotly_chart(figures.timeline(r, current_step=k), key="timeline", on_select="rerun",
                             selection_mode="points", config={"displaylogo": False})
        pts = (ev or {}).get("selection", {}).get("points", []) if isinstance(ev, dict) else getattr(
            getattr(ev, "selection", None), "points", [])
        if pts:
            x = int(pts[0].get("x", k))
            if x != k and 0 <= x < n and st.session_state.get("_last_pick") != x:
                st.session_state["_last_pick"] = x
                st.session_state["step"] = x
                st.rerun()
        st.caption("Click a point to jump to that call. Lines: red = window, dashed = pi's trigger (window − reserve).")
    with c2:
        st.subheader("What happened here")
        for line in step_story(r, k):
            st.markdown("- " + _esc(line))
    st.subheader("Messages the model receives")
    rows = []
    decisions = {dec.position: dec for dec in d.prune.decisions} if d.prune is not None else {}
    for i, cm in enumerate(d.before):
        dec = decisions.get(i)
        rows.append({"#": i, "entry": cm.entry_index, "role": cm.role,
                     "tool": getattr(cm.message, "toolName", "") or "",
                     "tokens": counter.count(cm.message), "after": dec.tokens_after if dec else counter.count(cm.message),
                     "status": dec.action if dec else "kept", "why": dec.reason if dec else "",
                     "text": figures.message_text(cm.message, 160)})
    for cm in d.after:
        if cm.entry_index is None:
            rows.append({"#": None, "entry": None, "role": cm.role, "tool": "", "tokens": 0,
                         "after": counter.count(cm.message), "status": "injected", "why": "added by the strategy",
                         "text": figures.message_text(cm.message, 160)})
    st.dataframe(pd.DataFrame(rows), hide_index=True, height=320)
    with st.expander("Run metrics"):
        st.dataframe(pd.DataFrame([r.metrics.model_dump()]).T.rename(columns={0: "value"}))


# ---------------------------------------------------------------------------------------------
# Tree
# ---------------------------------------------------------------------------------------------


def _entry_label(s: Any, i: int) -> str:
    e = s.entries[i]
    m = getattr(e, "message", None)
    what = m.role if m is not None else str(e.type)
    preview = figures.message_text(m, 60) if m is not None else (getattr(e, "summary", "") or "")[:60]
    lbl = s.labels.get(i)
    return f"{i} · {what}" + (f" [{lbl}]" if lbl else "") + (f" · {preview}" if preview else "")


def tree_lines(s: Any, limit: int = 2000) -> list[str]:
    """A fork-indented list like pi's /tree: indentation grows only below fork points."""
    out = []
    stack = [(r, 0) for r in reversed(s.roots)]
    leaf = st.session_state.get("leaf")
    current = set(s.path(leaf))
    while stack and len(out) < limit:
        i, depth = stack.pop()
        kids = s.children[i]
        mark = "●" if i in current else "○"
        out.append("  " * depth + f"{mark} {_entry_label(s, i)}".replace("\n", " "))
        nd = depth + 1 if len(kids) > 1 else depth
        stack.extend((c, nd) for c in reversed(kids))
    return out


def tree_page(settings: ReplaySettings) -> None:
    s = _need_session()
    st.title("Branch tree")
    st.caption(f"{len(s.roots)} root(s), {len(s.leaves)} leaf/leaves, {len(s.fork_points)} fork point(s). "
               "Green: compactions; red: branch summaries.")
    st.plotly_chart(figures.tree_lanes(s, highlight=[st.session_state.get("leaf") or s.default_leaf]),
                    key="lanes", config={"displaylogo": False})
    c1, c2 = st.columns(2)
    with c1:
        st.subheader("Replay this branch")
        leaves = list(s.leaves)
        cur = st.session_state.get("leaf") or s.default_leaf
        pick = st.selectbox("Leaf", leaves, index=leaves.index(cur) if cur in leaves else len(leaves) - 1,
                            format_func=lambda i: _entry_label(s, i), key="leaf_pick")
        if st.button("Use this branch", key="use_branch"):
            st.session_state["leaf"] = pick
            st.session_state.pop("step", None)
            st.rerun()
    with c2:
        st.subheader("Branch summary preview")
        st.caption("What pi's /tree would summarise when you leave FROM for TO.")
        idx = list(range(len(s.entries)))
        src = st.selectbox("From", idx, index=len(idx) - 1, format_func=lambda i: _entry_label(s, i), key="bs_from")
        dst = st.selectbox("To", idx, index=0, format_func=lambda i: _entry_label(s, i), key="bs_to")
        col, prep = prepare_branch_summary(s, src, dst)
        r_, m_ = prep.fileOps.lists()
        st.write(f"Common ancestor: entry {col.common_ancestor}; {len(col.entries)} entries on the abandoned side; "
                 f"{len(prep.messages)} message(s), {prep.totalTokens:,} tokens within pi's default budget "
                 f"({prep.budget:,}).")
        if r_ or m_:
            st.text("read: " + ", ".join(r_) + "\nmodified: " + ", ".join(m_))
    st.subheader("Entries (fork-indented, like pi's /tree)")
    st.code("\n".join(tree_lines(s)), language=None)


# ---------------------------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------------------------


def _rate(s: Any) -> float:
    from ..pricing import input_price_per_token

    return input_price_per_token(s)(None)


def summaries_page(settings: ReplaySettings) -> None:
    s = _need_session()
    st.title("Summaries")
    r = current_replay(settings)
    recs = list(r.summaries)
    with st.expander("The prompt an LLM summarizer would be sent for a compaction at the branch's end"):
        c1, c2 = st.columns([1, 2])
        style = c1.selectbox("Prompt style", list(STYLES), key="sum_style",
                             help="Each asks for the structure its system uses (written here in our own words).")
        extra = c2.text_input("Custom instructions", key="sum_instructions",
                              placeholder="e.g. focus on test output and the exact error messages")
        leaf = settings.leaf if settings.leaf is not None else s.default_leaf
        path = s.path(leaf) if leaf is not None else []
        prep = prepare_compaction(s.entries_at(path), CompactionSettings(
            keepRecentTokens=settings.keep_recent_tokens, reserveTokens=settings.reserve_tokens),
            path_indexes=path) if path else None
        if prep is not None:
            system, user = build_prompt(SummaryRequest(prep.messagesToSummarize, prep.previousSummary, extra or None,
                                                       int(0.8 * settings.reserve_tokens), "history", style))
            tokens = (len(system) + len(user) + 3) // 4
            st.caption(f"{len(prep.messagesToSummarize)} messages to summarise · prompt ≈ {tokens:,} tokens "
                       f"(pi estimate) · output budget {int(0.8 * settings.reserve_tokens):,} tokens (0.8 × reserve)"
                       + (f" · ≈ ${tokens * price:.4f} input at the session's rate" if (price := _rate(s)) else ""))
            st.code(f"[system]\n{system}\n\n[user]\n{user[:60000]}" + ("\n…" if len(user) > 60000 else ""),
                    language=None)
    if not recs:
        st.info("No compaction in this replay. Pick a what-if policy (e.g. pi) or a smaller window in the sidebar.")
    for n, rec in enumerate(recs):
        kind = "simulated" if rec.get("simulated") else "recorded"
        with st.expander(f"Compaction {n + 1} ({kind}) before call {rec['step']}", expanded=n == len(recs) - 1):
            if rec.get("story"):
                st.markdown("\n".join("- " + _esc(x) for x in rec["story"]))
            cols = st.columns(2)
            if rec.get("simulated"):
                cols[0].markdown(f"**Generated** · {rec.get('summarizer')} · {rec.get('summaryTokens', 0):,} tokens")
                cols[0].text(rec["text"])
            else:
                cols[0].markdown(f"**Recorded** (entry {rec.get('entryIndex')}) · {rec.get('summaryTokens', 0):,} tokens")
                cols[0].text(rec["text"])
                ei = rec.get("entryIndex")
                path = s.path(s.parents[ei]) if ei is not None and s.parents[ei] >= 0 else []
                prep = prepare_compaction(s.entries_at(path), CompactionSettings(
                    keepRecentTokens=settings.keep_recent_tokens, reserveTokens=settings.reserve_tokens),
                    path_indexes=path) if path else None
                if prep is not None:
                    gen = summarize_compaction(prep, get_summarizer("offline"))
                    cols[1].markdown(f"**Generated at the same point** · offline extractive · keepRecentTokens "
                                     f"{settings.keep_recent_tokens:,}")
                    cols[1].text(gen.text)
                    diff = "\n".join(difflib.unified_diff(rec["text"].splitlines(), gen.text.splitlines(),
                                                          "recorded", "generated", lineterm="", n=1))
                    st.markdown("**Diff (recorded → generated)**")
                    st.code(diff[:20000] or "(identical)", language="diff")
                    r_, m_ = prep.fileOps.lists()
                    st.caption(f"Files pi's preparation lists — read: {len(r_)}, modified: {len(m_)}")
                    st.caption("Prompt: the offline summarizer sends none; an LLM summarizer would send pi's "
                               "summarisation prompt with the serialized conversation.")


# ---------------------------------------------------------------------------------------------
# Compare & tune
# ---------------------------------------------------------------------------------------------


def compare_page(settings: ReplaySettings) -> None:
    s = _need_session()
    st.title("Compare & tune")
    st.caption("Up to four configurations on the same session. The first column starts from the sidebar settings.")
    count = st.number_input("Configurations", 2, 4, 2, key="cmp_n")
    configs: list[tuple[str, ReplaySettings]] = []
    cols = st.columns(int(count))
    for i, col in enumerate(cols):
        with col:
            strat = st.selectbox("Pruning", list(REGISTRY), key=f"cmp_strat_{i}",
                                 index=list(REGISTRY).index(settings.strategy) if i == 0 else (i % len(REGISTRY)),
                                 format_func=lambda n: REGISTRY[n].title)
            pol = st.selectbox("Compaction", list(POLICIES), key=f"cmp_pol_{i}",
                               index=list(POLICIES).index(settings.compaction) if i == 0 else 1,
                               format_func=lambda n: POLICIES[n].title)
            cfg = settings.model_copy(update={"strategy": strat, "compaction": pol,
                                              "strategy_settings": settings.strategy_settings if strat == settings.strategy else ()})
            configs.append((f"{i + 1}: {REGISTRY[strat].title} / {POLICIES[pol].title}", cfg))
    runs = [(name, current_replay(cfg)) for name, cfg in configs]
    table = pd.DataFrame([{"configuration": name, **r.metrics.model_dump()} for name, r in runs])
    st.dataframe(table, hide_index=True)
    st.plotly_chart(figures.compare_timelines(runs), key="cmp_tl", config={"displaylogo": False})

    st.subheader("Sweep")
    strat = REGISTRY[settings.strategy]
    numeric = [k for k, f in strat.Settings.model_fields.items() if isinstance(f.default, int)
               and not isinstance(f.default, bool)]
    axes = numeric + ["keep_recent_tokens", "reserve_tokens", "context_window"]
    c = st.columns(3)
    x = c[0].selectbox("X axis", axes, index=0, key="sw_x")
    y = c[1].selectbox("Y axis", axes, index=min(1, len(axes) - 1), key="sw_y")
    metric = c[2].selectbox("Metric", ["total_input_tokens", "rereads", "peak_context", "compactions",
                                       "tokens_pruned", "overflows", "cost_usd"], key="sw_metric")
    defaults = {**{k: f.default for k, f in strat.Settings.model_fields.items()},
                "keep_recent_tokens": settings.keep_recent_tokens, "reserve_tokens": settings.reserve_tokens,
                "context_window": settings.context_window}

    def rng(axis: str) -> list[int]:
        base = max(1, int(defaults.get(axis) or 1000))
        return sorted({max(0, int(base * f)) for f in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)})

    if st.button("Run sweep", key="sw_run", type="primary"):
        if x == y:
            st.error("Choose two different axes.")
        else:
            bar = st.progress(0.0, text="Sweeping…")
            cells = sweep(s, settings, {x: rng(x), y: rng(y)}, progress=lambda f: bar.progress(f, text="Sweeping…"))
            bar.empty()
            st.session_state["sweep"] = (x, y, cells)
    if "sweep" in st.session_state:
        sx, sy, cells = st.session_state["sweep"]
        st.plotly_chart(figures.sweep_heatmap(cells, sx, sy, metric), key="heat", config={"displaylogo": False})
        labels = [f"{sx}={c.values[sx]}, {sy}={c.values[sy]} → {getattr(c.metrics, metric):,}" for c in cells]
        pick = st.selectbox("Apply a cell's settings", range(len(cells)), format_func=lambda i: labels[i], key="sw_pick")
        if st.button("Apply to the sidebar", key="sw_apply"):
            vals = cells[pick].values
            for k, v in vals.items():
                if k == "keep_recent_tokens":
                    st.session_state["keep"] = v
                elif k == "reserve_tokens":
                    st.session_state["reserve"] = v
                elif k == "context_window":
                    st.session_state["window_preset"] = "Custom"
                    st.session_state["window_custom"] = v
                else:
                    st.session_state[f"set.{settings.strategy}.{k}"] = v
            st.rerun()


# ---------------------------------------------------------------------------------------------
# Doctor
# ---------------------------------------------------------------------------------------------


def doctor_page(settings: ReplaySettings) -> None:
    s = _need_session()
    st.title("Doctor")
    rep = diagnose(s, settings.leaf if settings.leaf is not None else "leaf")
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
    st.dataframe(df, hide_index=True, height=380)
    with_entries = [f for f in rep.findings if f.entries]
    if with_entries:
        pick = st.selectbox("Show a finding in the replay", range(len(with_entries)),
                            format_func=lambda i: f"{with_entries[i].kind} · entry {with_entries[i].entries[0]}",
                            key="doc_pick")
        if st.button("Open in Replay", key="doc_go"):
            target = with_entries[pick].entries[0]
            r = current_replay(settings)
            step = next((x.step for x in r.steps if x.entry_index >= target), len(r.steps) - 1)
            st.session_state["step"] = step
            st.switch_page(st.session_state["_pages"]["replay"])
