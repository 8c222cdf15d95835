"""The Replay page: one model call at a time — the context before and after pruning (or the
compaction moment), the token timeline, what happened, the messages sent, and the report.

A Streamlit page script, run by path (``st.Page`` in ``app.py``); session text is only ever shown
as plain text or escaped markdown, never as HTML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from inspector.compaction_view import compaction_steps, compaction_view, compactions_at
from inspector.policies import POLICIES
from inspector.recon import unexplained_words
from inspector.replay import Pruned, ReplaySettings
from inspector.replay_report import replay_report
from inspector.ui import cache_view, deferred, figures, retention_view, views
from inspector.ui import urlstate as us
from inspector.ui.common import (
    PLOT_CONFIG,
    message_list,
    need_replay,
    need_session,
    reconstruction,
    relative,
    session_cwd,
    strategy_title,
)
from inspector.ui.narrate import notable_steps, step_story, timeline_caption
from inspector.ui.state import counter_for, default, get_step, memo, set_step, set_widgets
from inspector.ui.urlstate import esc
from inspector.whatif import keep_recent_line
from inspector.window import model_windows_said


def _beyond_notes(settings: ReplaySettings) -> list[str]:
    notes = []
    strat = us.strategies().get(settings.strategy)
    if strat is not None and not strat.verified:
        notes.append(f"pruning '{strat.title}' goes beyond a verified source ({strat.unverified_notes})")
    if POLICIES[settings.compaction].unverified:
        notes.append(
            f"compaction policy '{POLICIES[settings.compaction].title}' is reported by third parties, "
            "not verified"
        )
    if POLICIES[settings.compaction].beyond_source:
        notes.append(
            f"compaction policy '{POLICIES[settings.compaction].title}' is our design, not a released agent's"
        )
    return notes


#: the stepping buttons: (key, label, icon, what to step to, direction, keyboard shortcut)
STEP_BUTTONS = (
    ("prev_compaction", "Compaction", ":material/keyboard_double_arrow_left:", "compaction", -1, "PageUp"),
    ("prev_event", "Event", ":material/skip_previous:", "event", -1, "Shift+Left"),
    ("prev", "Previous", ":material/chevron_left:", "call", -1, "Left"),
    ("next", "Next", ":material/chevron_right:", "call", 1, "Right"),
    ("next_event", "Event", ":material/skip_next:", "event", 1, "Shift+Right"),
    ("next_compaction", "Compaction", ":material/keyboard_double_arrow_right:", "compaction", 1, "PageDown"),
)
STEP_HELP = {
    "call": "the {} model call",
    "event": "the {} call where something happened: compaction, pruning, "
    "overflow, re-read… (a skipped prune only with the switch on)",
    "compaction": "the {} compaction",
}


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
            st.button(
                label,
                key=key,
                icon=icon,
                on_click=_goto,
                args=(target, d),
                disabled=disabled,
                shortcut=shortcut,
                icon_position="left" if d < 0 else "right",
                help=STEP_HELP[target].format("previous" if d < 0 else "next") + f" ({shortcut})",
            )
        st.toggle(
            "Skipped prunes count as events",
            key="nav_skipped",
            persist_state="session",
            help="A prune (or compaction) the strategy considered and did not make. Off: Event skips it.",
        )
    if n > 1:
        st.slider(
            "Model call (step)",
            0,
            n - 1,
            key="step",
            on_change=_slider_moved,
            help="Each step is one call to the model (one assistant message) on the replayed branch. "
            "Keys: ← → one call, Shift+← → one event, PageUp/PageDown one compaction.",
        )


def _step_metrics(r: Any, k: int, d: Any, settings: ReplaySettings, recon: Any = None) -> None:
    step = r.steps[k]
    m = st.columns(6)
    call = recon.call_at(step.step) if recon is not None else None
    if (
        call is not None and call.unexplained
    ):  # the file cannot explain what was sent: the recorded figure stands
        m[0].metric(
            "Sent (recorded)",
            f"{call.recorded:,}",
            help=unexplained_words(call.unexplained, f" ({step.tokens:,} tokens by the chosen counter)"),
        )
    else:
        m[0].metric(
            "Tokens sent",
            f"{step.tokens:,}",
            help="The messages the model receives at this call, after pruning (by the chosen counter). The "
            "system prompt and tool definitions are not in the session file, so not in this figure; as "
            "recorded, 'What happened here' splits the recorded prompt into the two.",
            delta=f"{step.tokens - r.steps[k - 1].tokens:+,}" if k else None,
            delta_color="inverse",
        )
    recorded = step.recorded_input is not None and step.stop_reason not in ("aborted", "error")
    m[1].metric(
        "Recorded prompt",
        f"{step.recorded_input:,.0f}" if recorded else "—",
        help="What the provider reported for this call (input + cache read + cache write); none for an "
        "aborted or failed call.",
    )
    of_window = (
        ""
        if step.window == settings.context_window
        else f"Of this call's model's window, {step.window:,} tokens. "
    )
    size = step.provider_tokens if step.provider_tokens is not None else step.tokens
    m[2].metric(
        "Window used",
        f"{size / step.window:.0%}",
        help=f"{of_window}The prompt as the provider counts it, {size:,} tokens, which the overflow check "
        "compares with the window: the recorded prompt where this replay sends what the agent sent, else "
        "the recorded one plus what this replay changed, sized by the session's fit; a call without "
        "usage: the last answer's usage and what was counted since. The messages alone by the chosen "
        f"counter, {step.tokens:,} tokens, are {step.tokens / step.window:.0%}.",
    )
    m[3].metric("Messages", f"{len(d.after):,}")
    m[4].metric(
        "Pruned away", f"{step.pruned_tokens:,}", help="Tokens the pruning strategy keeps out of this call."
    )
    failed = step.stop_reason in ("aborted", "error")
    m[5].metric(
        "Entry",
        f"{step.entry_index}",
        delta=step.stop_reason if failed else None,  # under the number: the value stays whole
        delta_color="off",
        delta_arrow="off",
        help="The assistant message answering this call (and, under it, whether the call was aborted "
        "or failed).",
    )


def _zoom(total: int, window: int) -> bool:
    return st.toggle(
        "Zoom to the messages",
        key="bars_zoom",
        persist_state="session",
        help="Fit the bars to the context instead of the whole window.",
        **default("bars_zoom", total < window / 8),
    )


def _next_cuts(
    r: Any, k: int, d: Any, before_tokens: list[int], settings: ReplaySettings
) -> list[tuple[str, float]]:
    """Where the compaction before the next call cuts, placed on this call's context."""
    out: list[tuple[str, float]] = []
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
    pruned = views.pruned_before(d)
    fig = figures.context_bars(
        d.before,
        before_tokens,
        d.after,
        after_tokens,
        pruned_positions=views.pruned_positions(d),
        pruned_before=pruned,
        window=r.steps[k].window,
        reserve=settings.reserve_tokens,
        keep_recent=keep_recent_line(settings),
        cuts=_next_cuts(r, k, d, before_tokens, settings),
        title=f"Context at model call {k} (entry {r.steps[k].entry_index})",
        zoom=_zoom(sum(before_tokens), r.steps[k].window),
        provider_tokens=r.steps[k].provider_tokens,
    )
    st.plotly_chart(fig, key="bars", config=PLOT_CONFIG)
    st.caption(
        "Top: the context as built from the session (hatched: what pruning replaces at this call); bottom: "
        "what is sent after pruning (ticks: the markers pruning leaves). One segment per message, width = "
        "tokens. Red line: the window; shaded: the reserve before it; dotted: where keepRecentTokens starts "
        "counting back from the newest message (pi's policies); across the top bar, before a compaction: "
        "where it will cut. " + figures.PROVIDER_PART_NOTE
    )


def _compaction_moment(
    r: Any, k: int, d: Any, idxs: list[int], settings: ReplaySettings, counter: Any
) -> None:
    """At a compaction step: the context before and after it, the cut(s), and what was summarised."""
    sent_tokens = counter.count_many([c.message for c in d.after])
    zoom: bool | None = None  # one toggle for every compaction of the step (a widget key is drawn once)
    for i in idxs:
        v = memo("cview", (settings, i), lambda i=i: compaction_view(r, i))
        what = (
            f"simulated by the {POLICIES[v.policy].title} policy"
            if v.simulated
            else f"recorded in the session (entry {v.entry_index})"
        )
        st.subheader(f"Compaction {i + 1} of {len(r.summaries)}, {what}")
        m = st.columns(6)
        m[0].metric(
            "Context before",
            f"{v.tokens_before:,}",
            help=views.context_before_help(r, v, us.COUNTERS[settings.counter]),
        )
        m[1].metric(
            "Summarised",
            f"{v.summarised_tokens:,}",
            help="Tokens that do not survive verbatim: the "
            "summarised messages, a split turn's prefix, the previous summary.",
        )
        m[2].metric("Summarised msgs", f"{len(v.summarised):,}")
        back = views.put_back_parts(r, v.entry_index, counter.count)
        (kept, kept_tokens, kept_help), (after, after_help) = views.kept_and_after(r, v, back)
        m[3].metric(kept, f"{kept_tokens:,}", help=kept_help)
        m[4].metric("Summary", f"{v.summary_tokens:,}", help="The new summary, by the replay's counter.")
        m[5].metric(
            "Context after",
            f"{after:,}",
            help=after_help,
            delta=f"{after - v.tokens_before:+,}",
            delta_color="inverse",
        )
        if zoom is None:
            zoom = _zoom(v.tokens_before, r.steps[k].window)
        fig = figures.compaction_bars(
            v,
            d.after,
            sent_tokens,
            pruned_positions=views.pruned_positions(d),
            window=r.steps[k].window,
            reserve=settings.reserve_tokens,
            title=f"Compaction before model call {k} (entry {r.steps[k].entry_index})",
            zoom=zoom,
            put_back=back,
            provider_tokens=r.steps[k].provider_tokens,
        )
        st.plotly_chart(fig, key=f"bars_c{i}" if i != idxs[0] else "bars", config=PLOT_CONFIG)
        st.caption(
            "Top: the context the policy saw — grey: summarised, gold: a split turn's first part (summarised "
            "separately), light green: the previous summary; coloured by kind: kept. Lines: where the kept "
            "part starts (the cut). Middle: right after — the summary, then what was kept (after a Codex "
            "compaction, which keeps nothing verbatim: the messages Codex put back). Bottom: what this "
            "call sends (the messages since the compaction added, then pruning). "
            + figures.PROVIDER_PART_NOTE
        )
        if v.cut_note:
            st.info(esc(relative(v.cut_note)), icon=":material/call_split:")
        with st.expander(
            f"The {len(v.summarised):,} messages that do not survive verbatim "
            f"({v.summarised_tokens:,} tokens)"
        ):
            message_list(views.summarised_rows(v), [p.message for p in v.summarised], f"summarised_{i}")
        if st.button("Open on the Summaries page", key=f"to_summaries_{i}", icon=":material/summarize:"):
            st.session_state["sum_focus"] = i
            st.switch_page(st.session_state["_pages"]["summaries"])


def _pruned_here(r: Any, k: int, d: Any, counter: Any) -> None:
    rows = views.pruned_rows(d, counter)
    if not rows:
        return
    new = any(isinstance(e, Pruned) for e in r.steps[k].events)
    with st.expander(
        f"Pruned at this call: {len(rows):,} message(s), {sum(x['tokens'] for x in rows):,} → "
        f"{sum(x['sent'] for x in rows):,} tokens",
        expanded=new,
    ):
        cwd = session_cwd()
        for row in rows:
            row["why"] = views.relative_paths(row["why"], cwd)
        message_list(rows, [d.before[row["#"]] for row in rows], "pruned_table")


def _context_table(d: Any, counter: Any) -> None:
    st.subheader("Messages the model receives")
    rows = views.message_rows(d, counter)
    items = [*d.before, *(cm for cm in d.after if cm.entry_index is None)]
    focus = st.session_state.get("focus_entry")
    at = next((i for i, row in enumerate(rows) if focus is not None and row["entry"] == focus), None)
    if focus is not None:
        why = (
            "is highlighted below."
            if at is not None
            else "is not a message of this call's context (it is its "
            "answer, a setting or label, or it was summarised away)."
        )
        st.info(f"Entry {focus} {why}", icon=":material/my_location:")
    cwd = session_cwd()
    for row in rows:
        row["why"] = views.relative_paths(row["why"], cwd)
    if not any(row["why"] for row in rows):
        for row in rows:
            del row["why"]
    message_list(rows, items, "msg_table", at)


def replay_page(settings: ReplaySettings) -> None:
    s = need_session()
    st.title("Replay")
    r = need_replay(settings)
    n = len(r.steps)
    if not n:
        st.warning("This branch has no model calls (assistant messages) to replay.")
        return
    nav = {
        "event": notable_steps(r, bool(st.session_state.get("nav_skipped"))),
        "compaction": compaction_steps(r),
    }
    st.session_state.update({"_n_steps": n, "_nav_event": nav["event"], "_nav_compaction": nav["compaction"]})
    if st.session_state.get("cur_step") is None:  # a new session or branch: open where something happens
        set_step(nav["event"][0] if nav["event"] else 0)
    mode = (
        "as recorded"
        if POLICIES[settings.compaction].as_recorded
        else f"what-if: {POLICIES[settings.compaction].title}"
    )
    st.caption(
        f"{n:,} model calls on this branch · compaction {mode} · pruning {strategy_title(settings.strategy)} · "
        f"window {settings.context_window:,} tokens{_other_windows(settings)} · counter {us.COUNTERS[settings.counter]} · replayed once in "
        f"{r.seconds:.2f} s, then cached"
    )
    for note in _beyond_notes(settings):
        st.warning(f"Beyond the source systems: {note}.", icon=":material/science:")
    damaged = s.load_errors_said()
    if damaged is not None:  # as the commands say it on stderr: a link may open this page first
        st.warning(
            f"This file had {damaged}: the replay uses every entry that was read. The Load page lists why.",
            icon=":material/warning:",
        )
    k = get_step(n)
    set_step(k)  # before the slider is drawn (set by buttons, timeline, other pages, the URL)
    if st.query_params.get("step") != str(k):  # kept in the URL: a reload or a shared link opens here
        st.query_params["step"] = str(k)
    _step_controls(k, n, nav)
    d = r.step_detail(k)
    counter = counter_for(s, settings.counter)
    recon = reconstruction(s, settings.leaf) if POLICIES[settings.compaction].as_recorded else None
    _step_metrics(r, k, d, settings, recon)
    comps = compactions_at(r, k)
    if comps:
        _compaction_moment(r, k, d, comps, settings, counter)
    else:
        _plain_bars(r, k, d, settings, counter)
    _pruned_here(r, k, d, counter)
    later = deferred.Later(r)  # a long run's cache model and retention marks follow the page
    _timeline(r, k, recon, later)
    if later.cache:
        cache_view.step_panel(r, k)
    if later.pending:
        later.note()
    st.subheader("What happened here")
    story = [
        *memo("story", (settings, k), lambda: step_story(r, k, d, recon)),
        *(cache_view.story_lines(r, k) if later.cache else []),
    ]
    st.markdown("\n".join("- " + esc(relative(line)) for line in story))
    _context_table(d, counter)
    with st.expander("Run metrics (whole replay)"):
        st.dataframe(pd.DataFrame(views.metrics_rows([("value", r)])), hide_index=True)
    if later.cache:
        cache_view.run_panel(r)
    _report_download(s, r)
    later.start()


LONG_RUN = 300  # calls beyond which the timeline gets a range selector


def _around(k: int, n: int) -> None:
    half = LONG_RUN // 2
    lo = max(0, min(k - half, n - 1 - 2 * half))
    st.session_state["tl_range"] = (lo, min(n - 1, lo + 2 * half))


def _timeline(r: Any, k: int, recon: Any = None, later: Any = None) -> None:
    """The token timeline, full width; a long run gets a range selector (the calls in range are
    drawn in more detail than the whole run can be)."""
    n = len(r.steps)
    x_range = None
    if n > LONG_RUN:
        lo, hi = st.session_state.get("tl_range", (0, n - 1))
        if not 0 <= lo <= hi <= n - 1:  # another branch or session: the whole run
            st.session_state["tl_range"] = (0, n - 1)
        with st.container(horizontal=True, vertical_alignment="bottom"):
            x_range = st.slider(
                "Calls on the timeline",
                0,
                n - 1,
                key="tl_range",
                width=700,
                **default("tl_range", (0, n - 1)),
                help="Pick a range of calls to see them in detail (long runs are drawn as the peak "
                "of each group of calls).",
            )
            st.button(
                "Around this call",
                key="tl_around",
                on_click=_around,
                args=(k, n),
                icon=":material/center_focus_strong:",
            )
            st.button("Whole run", key="tl_all", on_click=set_widgets, args=({"tl_range": (0, n - 1)},))
        x_range = (int(x_range[0]), int(x_range[1]))
    fig = figures.timeline(r, current_step=k, x_range=x_range, recon=recon)
    if later is None or later.retention:
        fig = retention_view.mark_timeline(fig, r)
    if later is None or later.cache:
        fig = cache_view.mark_timeline(fig, r)
    st.plotly_chart(
        fig,
        key="timeline",
        on_select=_timeline_picked,
        selection_mode="points",
        config=PLOT_CONFIG,
    )
    st.caption(
        timeline_caption(r)
        + (
            " Shaded: where the reconstruction check expects each recorded prompt "
            "(the context rebuilt as the provider is sent it, calibrated to this "
            "session, plus the constant no file stores); ✕: a call the file cannot "
            "explain."
            if recon is not None
            else ""
        )
    )


def _report_download(s: Any, r: Any) -> None:
    with st.container(horizontal=True, vertical_alignment="bottom"):
        fmt = (
            st.segmented_control(
                "Report", ["html", "json", "csv"], default="html", key="report_fmt", persist_state="session"
            )
            or "html"
        )
        stem = Path(str(st.session_state.get("session_name", "session"))).stem or "session"
        st.download_button(
            "Download report",
            data=lambda: replay_report(s, r, fmt),
            file_name=f"{stem}-replay.{fmt}",
            mime={"html": "text/html", "json": "application/json", "csv": "text/csv"}[fmt],
            icon=":material/download:",
            key="report_dl",
            help="The same report as `inspector export replay` (secrets redacted).",
        )


def _other_windows(settings: ReplaySettings) -> str:
    """The windows of the calls of the session's other models (their own: pi checks each call
    against the window of the model that answered it), as a parenthesis; "" when none."""
    if not settings.model_windows:
        return ""
    return f" ({model_windows_said(settings.model_windows, esc)})"


replay_page(st.session_state["_settings"])
