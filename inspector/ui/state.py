"""App state: the loaded session and replays, cached so widget moves never re-parse or re-replay.

Sessions are cached by the SHA-256 of their bytes (``st.cache_resource``: the objects are
shared, never copied); replays by (session digest, ``ReplaySettings``) — settings are frozen
and hashable, so moving the step slider reuses the replay.
"""

from __future__ import annotations

import hashlib
from typing import Any

import streamlit as st

from ..importers import parse_any
from ..replay import ReplaySettings, replay, session_counter
from ..session.tree import Session


@st.cache_resource(max_entries=8, show_spinner="Reading the session…")
def _session(digest: str, _data: bytes, name: str) -> Session:
    return parse_any(_data, source=name)


def load_bytes(data: bytes, name: str) -> str:
    """Load (or reuse) a session from bytes; remember it as the current one; return its digest."""
    digest = hashlib.sha256(data).hexdigest()
    _session(digest, data, name)
    st.session_state["session_digest"] = digest
    st.session_state["session_name"] = name
    st.session_state["session_bytes"] = data
    st.session_state.pop("step", None)
    st.session_state.pop("leaf", None)
    return digest


def current_session() -> Session | None:
    digest = st.session_state.get("session_digest")
    data = st.session_state.get("session_bytes")
    if not digest or data is None:
        return None
    return _session(digest, data, st.session_state.get("session_name", "session"))


@st.cache_resource(max_entries=24, show_spinner=False)
def _replay(digest: str, settings: ReplaySettings, _session_obj: Session) -> Any:
    bar = st.progress(0.0, text="Replaying the session…")
    try:
        return replay(_session_obj, settings, progress=lambda f: bar.progress(min(1.0, f), text="Replaying…"))
    finally:
        bar.empty()


def current_replay(settings: ReplaySettings) -> Any:
    s = current_session()
    if s is None:
        return None
    return _replay(st.session_state["session_digest"], settings, s)


def counter_for(session: Session, name: str) -> Any:
    return session_counter(session, name)
