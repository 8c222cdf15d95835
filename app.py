"""Context Inspector — the Streamlit app.

    streamlit run app.py -- --session sample_sessions/coding-session.jsonl

``--session PATH`` preloads a session; the path must be under an allowed root (pi's sessions
folder and ``sample_sessions/``, or ``$INSPECTOR_ROOTS``). Relative paths are taken from the
current folder, then from the repository. Each page is a script in ``inspector/ui/pages/``.
"""

from __future__ import annotations

import argparse
import sys

import streamlit as st

from inspector.foreground import busy
from inspector.ui import errors, sidebar, sources
from inspector.ui import urlstate as us
from inspector.ui.figures import app_icon
from inspector.ui.state import NotASession, current_session, load_bytes, restore_from_url

# The favicon is an image made here: an emoji or material icon would be fetched from a CDN.
st.set_page_config(page_title="Context Inspector", page_icon=app_icon(), layout="wide")
# Fixed styling only (no session text ever goes through HTML): less empty space above titles.
st.html("<style>[data-testid='stMainBlockContainer']{padding-top:2.5rem}</style>")


def _preload() -> None:
    """Once per browser session: reopen the session the URL names (after a reload, or from a
    shared link), else the one ``--session`` names."""
    if st.session_state.get("_preloaded"):
        return
    st.session_state["_preloaded"] = True
    qp = st.query_params
    if qp.get("sid") or qp.get("session"):
        ref = us.parse_session_ref(qp.get("session"))
        if (why := restore_from_url(qp.get("sid"), ref)) is not None:
            st.session_state["_preload_error"] = why
        elif ref is not None and ref[0] == "sample":
            st.session_state["sample_choice"] = ref[1]
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--session")
    args, _ = ap.parse_known_args(sys.argv[1:])
    if args.session and current_session() is None:
        try:
            p = sources.check_path(args.session)
            sample = p in sources.sample_files()
            load_bytes(sources.read_file(p), p.name, ("sample", p.name) if sample else ("path", str(p)))
            if sample:  # the Load page's sample picker shows the sample that is open
                st.session_state["sample_choice"] = p.name
        except (sources.PathRefused, NotASession) as e:
            st.session_state["_preload_error"] = f"--session: {e}"
        except OSError as e:
            st.session_state["_preload_error"] = f"--session: cannot read {args.session!r}: {e}"


def _to_load() -> None:
    st.switch_page(st.session_state["_pages"]["load"])


# Background warming (inspector.foreground) waits while the page is drawn.
with busy():
    settings = None
    with errors.guard():  # a visitor never sees a traceback: a short message with a reference id
        _preload()
        settings = sidebar.render()
    PAGES = "inspector/ui/pages"
    nav = {
        "load": st.Page(
            f"{PAGES}/load.py", title="Load", icon=":material/folder_open:", url_path="start", default=True
        ),
        # Streamlit serves the default page at "/" only; "/load" (the name in the menu) leads there too.
        "load_alias": st.Page(_to_load, title="Load", url_path="load", visibility="hidden"),
        "replay": st.Page(
            f"{PAGES}/replay.py", title="Replay", icon=":material/play_circle:", url_path="replay"
        ),
        "tree": st.Page(f"{PAGES}/tree.py", title="Tree", icon=":material/account_tree:", url_path="tree"),
        "summaries": st.Page(
            f"{PAGES}/summaries.py", title="Summaries", icon=":material/summarize:", url_path="summaries"
        ),
        "compare": st.Page(
            f"{PAGES}/compare.py",
            title="Compare & tune",
            icon=":material/compare_arrows:",
            url_path="compare",
        ),
        "doctor": st.Page(
            f"{PAGES}/doctor.py", title="Doctor", icon=":material/stethoscope:", url_path="doctor"
        ),
        "corpus": st.Page(f"{PAGES}/corpus.py", title="Corpus", icon=":material/dataset:", url_path="corpus"),
        "learn": st.Page(f"{PAGES}/learn.py", title="Learn", icon=":material/school:", url_path="learn"),
    }
    st.session_state["_pages"] = nav
    st.session_state["_settings"] = settings
    if why := st.session_state.pop("_preload_error", None):
        # said on whichever page the link opens, once: an error when no session could be opened, a
        # warning when one was but it is not the file the link was made with
        say = st.warning if current_session() is not None else st.error
        say(us.esc(why), icon=":material/link_off:")
    with errors.guard():
        st.navigation(list(nav.values())).run()
