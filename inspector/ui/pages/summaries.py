"""The Summaries page: every compaction of the replay in full (where it cut, what it summarised,
the recorded and a generated summary side by side, the exact prompt), and a compaction now.

A Streamlit page script, run by path (``st.Page`` in ``app.py``); session text is only ever shown
as plain text or escaped markdown, never as HTML.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

import pandas as pd
import streamlit as st

from inspector.compaction_view import compaction_view
from inspector.policies import POLICIES
from inspector.pricing import input_price_per_token
from inspector.replay import CompactionRecord, ReplaySettings, SimulatedCompaction
from inspector.ui import retention_view, views
from inspector.ui.common import message_list, need_replay, need_session, open_in_replay, relative
from inspector.ui.narrate import agent_compaction_story, recorded_cut_story
from inspector.ui.state import counter_for, memo
from inspector.ui.urlstate import COUNTERS, esc, inert_settings
from inspector.whatif import compaction_now, nothing_to_summarise, recorded_counterpart, summary_prompt_style

try:  # the summaries package lands separately: the Summaries page says so when it is missing
    from inspector.summarize import compaction_prompts, get_summarizer, summarize_compaction
    from inspector.summarize.prompts import STYLES
except ImportError:  # pragma: no cover - partial checkout
    get_summarizer = None  # type: ignore[assignment]


def _rate(s: Any) -> float:
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
            row[name] = "modified" if f in fl["modified-files"] else "read" if f in fl["read-files"] else "—"
        rows.append(row)
    return pd.DataFrame(rows)


def _prompt_block(prep: Any, style: str, extra: str | None, reserve: int, rate: float) -> None:
    """Every prompt an LLM summarizer sends for ``prep``, exactly (a split turn's prefix has its own)."""
    text = compaction_prompts(prep, style=style, custom_instructions=extra or None)
    tokens = (len(text) + 3) // 4
    st.caption(
        f"{len(prep.messagesToSummarize):,} messages to summarise"
        + (
            f" (+ a split turn's first {len(prep.turnPrefixMessages)} message(s), summarised by a second "
            "call)"
            if prep.turnPrefixMessages
            else ""
        )
        + f" · prompt ≈ {tokens:,} tokens (pi estimate) · answer budget {int(0.8 * reserve):,} tokens "
        "(0.8 × reserveTokens)" + (f" · ≈ ${tokens * rate:.4f} input at the session's price" if rate else "")
    )
    st.code(text[:120000] + ("\n…" if len(text) > 120000 else ""), language=None, height=320)


def _summary_story(s: Any, rec: CompactionRecord, view: Any, settings: ReplaySettings) -> list[str]:
    ei = rec.entry_index
    if ei is None:  # simulated
        return [f"Why now: {rec.reason}.", *rec.story] if rec.reason else list(rec.story)
    if s.format != "pi":  # another agent's compaction: its own split, not pi's cut rule
        prep = view.prep
        return agent_compaction_story(s, ei, len(prep.messagesToSummarize) if prep else 0)
    return memo(
        "cut",
        (ei, settings.keep_recent_tokens, settings.pi_version),
        lambda: recorded_cut_story(
            s, ei, settings.keep_recent_tokens, settings.reserve_tokens, settings.pi_version
        ),
    )


def _summary_texts(s: Any, r: Any, i: int, view: Any) -> dict[str, str]:
    """The recorded summary and one generated of the same messages, side by side; returns both texts."""
    rec = r.summaries[i]
    texts: dict[str, str] = {}
    cols = st.columns(2, gap="medium")
    if isinstance(ev := rec.event, SimulatedCompaction):
        texts["generated"] = rec.text
        with cols[0]:
            st.markdown(
                f"**Generated** · {esc(str(ev.summarizer))} · {ev.summary_tokens:,} "
                "tokens" + (" · fell back to offline" if ev.fell_back else "")
            )
            with st.container(height=420):
                st.text(rec.text)
        other = recorded_counterpart(r, i)
        with cols[1]:
            if other is not None:
                texts["recorded"] = s.entries[other].summary
                st.markdown(f"**Recorded** (entry {other}, set aside in this what-if replay)")
                with st.container(height=420):
                    st.text(texts["recorded"])
            else:
                st.info("The session has no recorded compaction to compare with.")
        return texts
    texts["recorded"] = rec.text
    with cols[0]:
        st.markdown(f"**Recorded** (entry {rec.entry_index}) · {rec.summary_tokens:,} tokens")
        if rec.text.strip():
            with st.container(height=420):
                st.text(rec.text)
        else:
            st.info(
                "The file records no summary text for this compaction"
                + (
                    ": the rollout's `compacted` line has an empty message. The model went on from "
                    "what Codex put back after it (see *Where the cut landed*); retention counts "
                    "those messages as kept."
                    if s.format == "codex"
                    else "."
                )
            )
    with cols[1]:
        prep = view.prep
        if prep is not None and get_summarizer is not None:
            gen = memo(
                "gen",
                (rec.entry_index, view.prep.settings, view.prep.pi_version),
                lambda: summarize_compaction(prep, get_summarizer("offline")),
            )
            texts["generated"] = gen.text
            st.markdown(
                f"**Generated here** (offline, of the same messages) · "
                f"{counter_for(s, 'pi').count_text(gen.text):,} tokens"
            )
            with st.container(height=420):
                st.text(gen.text)
        else:
            st.info("Nothing before this compaction to summarise.")
    return texts


def _summary_compare(texts: dict[str, str]) -> None:
    if not texts.get("recorded", "x").strip():  # nothing recorded to compare with (said above)
        texts = {k: v for k, v in texts.items() if k != "recorded"}
    if len(texts) == 2:
        t1, t2 = st.tabs(["Diff (recorded → generated)", "Files each summary lists"])
        with t1:
            diff = "\n".join(
                difflib.unified_diff(
                    texts["recorded"].splitlines(),
                    texts["generated"].splitlines(),
                    "recorded",
                    "generated",
                    lineterm="",
                    n=1,
                )
            )
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


def _summary_entry(s: Any, r: Any, i: int, settings: ReplaySettings, rate: float) -> None:
    """One compaction, recorded or simulated, in full: why and where it cut, what it summarised
    (the split turn's prefix apart), the summaries, their files, the exact prompt, and a link to
    its step on the Replay page."""
    rec = r.summaries[i]
    view = memo("cview", (settings, i), lambda: compaction_view(r, i))
    focus = rec.entry_index if rec.entry_index is not None else rec.first_kept_entry_index
    if st.button(
        f"Open model call {rec.step} in Replay",
        key=f"sum_go_{i}",
        icon=":material/play_circle:",
        on_click=open_in_replay,
        args=(min(rec.step, len(r.steps) - 1), focus),
    ):
        st.switch_page(st.session_state["_pages"]["replay"])
    if story := _summary_story(s, rec, view, settings):
        st.markdown("**Where the cut landed**\n" + "\n".join("- " + esc(relative(x)) for x in story))
    prefix = [p for p in view.before if p.part == "turn prefix"]
    m = st.columns(5)
    m[0].metric(
        "Context before",
        f"{view.tokens_before:,}",
        help=views.context_before_help(r, view, COUNTERS[settings.counter]),
    )
    m[1].metric("Summarised", f"{view.summarised_tokens:,}", help="Tokens that do not survive verbatim.")
    m[2].metric(
        "Summarised msgs",
        f"{len(view.summarised):,}",
        help=f"Of which {len(prefix)} are a split turn's prefix, summarised by a second call."
        if prefix
        else "No split turn.",
    )
    back = views.put_back_parts(r, view.entry_index, counter_for(s, settings.counter).count)
    (kept, kept_tokens, kept_help), (after, after_help) = views.kept_and_after(r, view, back)
    m[3].metric(kept, f"{kept_tokens:,}", help=kept_help)
    m[4].metric("Context after", f"{after:,}", help=after_help)
    if view.cut_note:
        st.info(esc(relative(view.cut_note)), icon=":material/call_split:")
    with st.expander(
        f"The {len(view.summarised):,} messages summarised"
        + (f", of which {len(prefix)} are the split turn's prefix" if prefix else "")
    ):
        message_list(views.summarised_rows(view), [p.message for p in view.summarised], f"sum_list_{i}")
    _summary_compare(_summary_texts(s, r, i, view))
    retention_view.summary_retention(r, i)
    if view.prep is not None and get_summarizer is not None:
        with st.expander("The exact prompt an LLM summarizer gets here"):
            _prompt_block(view.prep, summary_prompt_style(r, i), None, view.prep.settings.reserveTokens, rate)


def _compaction_title(recs: list[CompactionRecord], i: int) -> str:
    rec = recs[i]
    keeps = rec.first_kept_entry_index
    return (
        f"Compaction {i + 1} of {len(recs)} ({'simulated' if rec.simulated else 'recorded'}) before call "
        f"{rec.step}"
        + (f" · entry {rec.entry_index}" if rec.entry_index is not None else "")
        + (f" · keeps from entry {keeps}" if keeps is not None else " · keeps nothing verbatim")
    )


def _tokens_after(r: Any, rec: CompactionRecord) -> int:
    """A compaction's context right after it, with what its agent put back itself (Codex), as the
    metric "Context after" gives it (:func:`inspector.ui.views.kept_and_after`)."""
    after = rec.tokens_after
    if rec.entry_index is None:  # simulated
        return after
    back = views.put_back_parts(r, rec.entry_index, counter_for(r.session, r.settings.counter).count)
    return after + sum(t for _, t in back)


def _pick_compaction(r: Any, recs: list[CompactionRecord]) -> int:
    """Every compaction in a table; the one shown in full below is picked there (or by the Replay
    page's link), the last one at first."""
    rows = [
        {
            "#": i + 1,
            "call": rec.step,
            "kind": "simulated" if rec.simulated else "recorded",
            "entry": rec.entry_index,
            "keeps from": rec.first_kept_entry_index,
            "tokens after": _tokens_after(r, rec),
            "summary tokens": rec.summary_tokens,
            "why": rec.reason or "",
        }
        for i, rec in enumerate(recs)
    ]
    focus = st.session_state.get("sum_focus")  # set by the Replay page's link; kept until another one
    focus = focus if isinstance(focus, int) and 0 <= focus < len(recs) else None
    key = "sum_table" if focus is None else f"sum_table_f{focus}"
    pick = len(recs) - 1 if focus is None else focus
    ev = st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        key=key,
        on_select="rerun",
        selection_mode="single-row",
        selection_default={"selection": {"rows": [pick]}},
        height=min(300, 35 * len(rows) + 38),
        placeholder="—",
        column_config={
            "entry": st.column_config.NumberColumn(format="%d"),
            "keeps from": st.column_config.NumberColumn(format="%d"),
            "why": st.column_config.TextColumn(width="large"),
        },
    )
    picked = [x for x in (ev.selection.rows if ev is not None else []) if 0 <= x < len(recs)]
    return picked[0] if picked else pick


def summaries_page(settings: ReplaySettings) -> None:
    s = need_session()
    st.title("Summaries")
    if get_summarizer is None:
        st.info("The summarizers are not installed in this checkout; recorded summaries only.")
    r = need_replay(settings)
    recs = list(r.summaries)
    recorded = [x for x in recs if not x.simulated]
    rate = _rate(s)
    st.caption(
        f"{len(recs)} compaction(s) in this replay ({len(recorded)} recorded, {len(recs) - len(recorded)} "
        f"simulated by the '{POLICIES[settings.compaction].title}' policy with the {settings.summarizer} "
        "summarizer). Session text is shown as plain text."
    )
    if not recs:
        st.info(
            "No compaction in this replay. Pick a what-if policy (e.g. pi) or a smaller window in the sidebar."
        )
    if recs:
        i = _pick_compaction(r, recs)
        st.subheader(_compaction_title(recs, i))
        _summary_entry(s, r, i, settings, rate)
    if get_summarizer is not None:
        _compaction_now(s, settings, rate)


def _compaction_now(s: Any, settings: ReplaySettings, rate: float) -> None:
    """The prompt of a compaction pi would make now, at the end of the replayed branch."""
    st.subheader("A compaction now, at the branch's end")
    st.caption(
        "The prompt an LLM summarizer would receive if pi compacted at the end of the replayed branch "
        "with the sidebar's keepRecentTokens, in each system's style, with your own instructions."
    )
    c1, c2 = st.columns([1, 2])
    fmt = getattr(s, "format", "pi")
    style = c1.selectbox(
        "Prompt style",
        list(STYLES),
        index=list(STYLES).index(fmt) if fmt in STYLES else 0,  # first, the session's own agent's
        key="sum_style",
        help="Each asks for the structure its system uses (written here in our own words); first, the "
        "style of the agent that recorded the session.",
    )
    extra = c2.text_input(
        "Custom instructions",
        key="sum_instructions",
        placeholder="e.g. focus on test output and the exact error messages",
    )
    leaf = settings.leaf if settings.leaf is not None else s.default_leaf
    prep = memo(
        "prep_end",
        (leaf, settings.keep_recent_tokens, settings.reserve_tokens, settings.pi_version),
        lambda: compaction_now(s, settings),
    )
    if prep is None:
        st.info("pi would not compact here (the branch ends in a compaction or is empty).")
    elif (why := nothing_to_summarise(prep)) is not None:
        st.info(
            f"Nothing to summarise at the branch's end: {why}. Lower keepRecentTokens {_keep_where(settings)} to see a prompt."
        )
    else:
        _prompt_block(prep, style, extra, settings.reserve_tokens, rate)


def _keep_where(settings: ReplaySettings) -> str:
    """Where keepRecentTokens can be changed: the sidebar, under pi's policy when this one leaves it disabled."""
    if "keep" not in inert_settings(settings.compaction):
        return "in the sidebar"
    return (
        f"in the sidebar (under the policy '{POLICIES['pi'].title}': '{POLICIES[settings.compaction].title}' "
        "leaves it disabled)"
    )


summaries_page(st.session_state["_settings"])
