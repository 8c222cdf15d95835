"""The Learn page: a guided path through a bundled session, one idea per screen.

Each screen (:data:`inspector.learn.SCREENS`) names the real system's rule and its source, has
one control to move, asks a question, and reveals the answer computed by the engine
(:func:`inspector.learn.reveal`); a button opens the Replay page on the same session, at the same
step, under the same settings. The screen is kept in the URL (``?screen=4``) so a teacher can
share it. Session text is shown with ``st.text``/``st.code`` only, never as markdown or HTML.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from inspector import learn
from inspector.ui import learn_figures, sources
from inspector.ui import urlstate as us
from inspector.ui.state import load_bytes, memo, set_step, set_widgets
from inspector.ui.urlstate import esc

PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["lasso2d"]}
N = len(learn.SCREENS)


def _session() -> Any:
    return memo("learn", "session", learn.load_learn_session)


def _current() -> int:
    """The screen: the URL's on arrival, then the one stepped to."""
    if "learn_screen" not in st.session_state:
        st.session_state["learn_screen"] = learn.parse_screen(st.query_params.get("screen"))
    return int(st.session_state["learn_screen"])


def _go(n: int) -> None:
    st.session_state["learn_screen"] = max(1, min(N, n))


def _picked() -> None:
    _go(int(st.session_state["learn_pick"]))


def _hide_reveal(key: str) -> None:
    st.session_state[f"learn_shown_{key}"] = False


def _to_replay(settings: Any, step: int) -> None:
    """Open the Learn session in the Replay page at ``step`` under ``settings`` (a callback: the
    sidebar's widgets are set before they are drawn)."""
    path = learn.learn_session_path()
    load_bytes(sources.read_file(path), path.name, ("sample", path.name))
    st.session_state["sample_choice"] = path.name
    updates, _ = us.from_query(us.to_query(settings))
    for k, v in settings.strategy_settings:
        updates[f"set.{settings.strategy}.{k}"] = us.widget_value(v)
    set_widgets(updates)
    set_step(step)
    st.session_state["_learn_to_replay"] = True


def _control(s: learn.Screen, session: Any) -> Any:
    c = s.control
    key = f"learn_{s.key}"
    rng = memo("learn", ("range", s.key), lambda: learn.control_range(session, s))
    start = memo("learn", ("default", s.key), lambda: learn.default_value(session, s))
    kw = {} if key in st.session_state else {"value": start}
    if c.kind == "select":
        names = {t: f"entry {t}" + (" (the fork point)" if i == 0 else "") for i, t in enumerate(rng)}
        if key not in st.session_state:
            st.session_state[key] = start
        return st.selectbox(
            c.label,
            rng,
            format_func=lambda t: names[t],
            key=key,
            help=c.help,
            on_change=_hide_reveal,
            args=(s.key,),
        )
    lo, hi, step = rng
    return st.slider(
        c.label, lo, hi, step=step, key=key, help=c.help, on_change=_hide_reveal, args=(s.key,), **kw
    )


def _reveal(session: Any, s: learn.Screen, value: Any, more: dict[str, Any]) -> learn.Reveal:
    return memo(
        "learn",
        (s.key, value, tuple(sorted(more.items()))),
        lambda: learn.reveal(session, s.key, value, **more),
    )


def _figure(s: learn.Screen, rv: learn.Reveal) -> None:
    if s.key in ("cut", "split"):
        frames = rv.extra["frames"]
        upto = len(frames)
        if s.key == "cut" and frames:
            upto = st.slider(
                "Walk step (one message each, newest first)",
                0,
                len(frames),
                len(frames),
                key="learn_walk",
                help="Step through pi's backward walk; ▶ on the chart plays it.",
            )
        fig = learn_figures.cut_walk(frames, rv.values["keep"], rv.values["first_kept"], upto)
        if upto < len(frames):
            f = frames[upto - 1] if upto else None
            st.caption(
                f"After {upto} message(s): {f.total:,} of {rv.values['keep']:,} tokens walked (entry {f.entry})."
                if f
                else "The walk starts at the newest message."
            )
    else:
        fig = learn_figures.screen_figure(rv, bool(st.session_state.get(f"learn_shown_{s.key}")))
    if fig is not None:
        st.plotly_chart(fig, key=f"learn_fig_{s.key}", config=PLOT_CONFIG)


def _answer(s: learn.Screen, rv: learn.Reveal) -> None:
    guess = st.radio(s.question, rv.choices, index=None, key=f"learn_guess_{s.key}", horizontal=True)
    shown = f"learn_shown_{s.key}"
    st.button(
        "Reveal",
        key=f"learn_reveal_{s.key}",
        icon=":material/visibility:",
        type="primary",
        on_click=lambda: st.session_state.update({shown: True}),
    )
    if not st.session_state.get(shown):
        return
    verdict = (
        ""
        if guess is None
        else (" — your answer is right." if guess == rv.answer else f" — you said {guess}.")
    )
    st.success(esc(f"Answer: {rv.answer}") + esc(verdict), icon=":material/lightbulb:")
    st.markdown("\n".join("- " + esc(line) for line in rv.explanation))
    _details(s, rv)


def _details(s: learn.Screen, rv: learn.Reveal) -> None:
    """What a screen shows beyond the figure, after the reveal (session text as plain text)."""
    v = rv.values
    if s.key == "context":
        st.dataframe([{"kind": k, "tokens": t} for k, t in v["by_kind"].items()], hide_index=True)
    elif s.key == "split" and v["split_turn"]:
        c = st.columns(2)
        c[0].caption("History summary (offline summarizer)")
        c[0].code(rv.extra["history"], language=None, wrap_lines=True, height=320)
        c[1].caption("Turn-prefix summary")
        c[1].code(rv.extra["prefix"], language=None, wrap_lines=True, height=320)
    elif s.key == "keeps":
        st.dataframe(
            [{"file": f, "listed as": "read"} for f in v["read_files"]]
            + [{"file": f, "listed as": "modified"} for f in v["modified_files"]],
            hide_index=True,
        )
        if "retention_recall" in v:
            st.subheader("Retention: what the session's own compaction carried over")
            recall = {k: "—" if x is None else f"{x:.0%}" for k, x in v["retention_recall"].items()}
            st.caption(
                f"Of the {v['retention_needed']} item(s) the branch used after the compaction at entry "
                f"{v['retention_entry']} that it had met before it, the share still in the summary or the "
                "kept part, by kind (our heuristics, issue 21: docs/retention.md). Forgotten items below."
            )
            st.dataframe([recall], hide_index=True)
            st.dataframe(v["retention_forgotten"], hide_index=True)
    elif s.key == "branch":
        st.caption("The branch summary pi would store (offline summarizer)")
        st.code(rv.extra["summary"], language=None, wrap_lines=True, height=320)


def _nav(n: int) -> None:
    with st.container(horizontal=True, vertical_alignment="bottom"):
        st.button(
            "Previous",
            key="learn_prev",
            icon=":material/chevron_left:",
            on_click=_go,
            args=(n - 1,),
            disabled=n <= 1,
        )
        st.selectbox(
            "Screen",
            list(range(1, N + 1)),
            key="learn_pick",
            on_change=_picked,
            format_func=lambda i: f"{i}. {learn.SCREENS[i - 1].title}",
            width=360,
        )
        st.button(
            "Next",
            key="learn_next",
            icon=":material/chevron_right:",
            icon_position="right",
            on_click=_go,
            args=(n + 1,),
            disabled=n >= N,
        )


def learn_page() -> None:
    if st.session_state.pop("_learn_to_replay", False):
        st.switch_page(st.session_state["_pages"]["replay"])
    n = _current()
    st.query_params["screen"] = str(n)
    st.session_state["learn_pick"] = n
    s = learn.SCREENS[n - 1]
    session = _session()
    st.title("Learn")
    st.caption(
        f"How compaction works, one idea per screen, on the bundled session {learn.LEARN_SAMPLE} "
        f"({len(session.entries):,} entries). Move the control, answer, then reveal. Share this screen: "
        f"add ?screen={n} to the address. The sidebar's settings do not apply here (each screen sets its "
        'own); "Open in Replay" carries them over.'
    )
    _nav(n)
    st.header(f"{n}. {s.title}")
    st.markdown(esc(s.idea))
    st.info(
        f"**The rule ({esc(s.system)}).** {esc(s.rule)}  \nSource: {us.code(s.source)}",
        icon=":material/gavel:",
    )
    value = _control(s, session)
    more: dict[str, Any] = {}
    if s.key == "pruning":
        minimum_start: dict[str, Any] = (
            {} if "learn_pruning_minimum" in st.session_state else {"value": learn.PRUNE_MINIMUM_DEFAULT}
        )
        more["minimum"] = st.slider(
            "PRUNE_MINIMUM",
            0,
            40_000,
            step=5_000,
            key="learn_pruning_minimum",
            on_change=_hide_reveal,
            args=(s.key,),
            help="Prune only when at least this many tokens would go.",
            **minimum_start,
        )
    rv = _reveal(session, s, value, more)
    _figure(s, rv)
    _answer(s, rv)
    if s.coming:
        st.warning(esc(f"Coming: {s.coming}"), icon=":material/construction:")
    st.button(
        f"Open in Replay at model call {rv.replay_step}",
        key="learn_to_replay",
        icon=":material/play_circle:",
        on_click=_to_replay,
        args=(rv.replay_settings, rv.replay_step),
        help="The same session, step and settings on the Replay page (sets the sidebar).",
    )


learn_page()
