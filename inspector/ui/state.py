"""App state: the loaded session and its replays, cached so moving a widget never re-parses or
re-replays.

* Sessions are cached by the SHA-256 of their bytes, replays by (that digest, the settings the
  replay depends on: ``effective_settings``) — the settings are frozen and hashable. Both caches live in one ``st.cache_resource`` object
  (shared across browser sessions, objects never copied: sessions and replays are immutable).
  A small LRU is kept by hand rather than decorating the functions, so that the progress bar is
  drawn only when a replay is really computed (a decorated function would replay its progress
  elements on every cache hit).
* The step shown on the Replay page is kept under ``cur_step``, which outlives the slider
  widget (Streamlit forgets a widget's state on pages where it is not drawn).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st

from .. import replay as rp
from ..importers import parse_any
from ..importers.codex import recorded_context_window
from ..replay import Replay, ReplaySettings, effective_settings, replay, session_counter, warm_session
from ..session.tree import Session

MAX_SESSIONS = 6
MAX_REPLAYS = 32


class _Lru:
    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[Hashable, Any] = OrderedDict()
        self.lock = threading.Lock()
        self.misses = 0

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        value = make()  # outside the lock: a long replay must not block other sessions' reads
        with self.lock:
            self.misses += 1
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return value

    def __contains__(self, key: Hashable) -> bool:
        with self.lock:
            return key in self.items


@st.cache_resource
def caches() -> dict[str, _Lru]:
    """The process-wide caches: ``sessions`` (digest → Session), ``replays`` ((digest, settings) → Replay)."""
    return {"sessions": _Lru(MAX_SESSIONS), "replays": _Lru(MAX_REPLAYS), "misc": _Lru(64)}


def clear_caches() -> None:
    caches.clear()


def load_bytes(data: bytes, name: str) -> str:
    """Load (or reuse) a session from bytes; make it the current one; return its digest."""
    digest = hashlib.sha256(data).hexdigest()
    with st.spinner(f"Reading {name}…"):
        session = caches()["sessions"].get(digest, lambda: parse_any(data, source=name))
    st.session_state["session_window"] = recorded_context_window(session)
    if st.session_state.get("session_digest") != digest:
        for k in ("cur_step", "leaf", "sweep", "tree_pick", "_last_pick"):
            st.session_state.pop(k, None)
    st.session_state["session_digest"] = digest
    st.session_state["session_name"] = name
    st.session_state["session_bytes"] = data
    return digest


def current_session() -> Session | None:
    digest = st.session_state.get("session_digest")
    data = st.session_state.get("session_bytes")
    if not digest or data is None:
        return None
    name = st.session_state.get("session_name", "session")
    return caches()["sessions"].get(digest, lambda: parse_any(data, source=name))


def _replay_key(settings: ReplaySettings) -> tuple[Any, ReplaySettings]:
    """Replays are cached by the settings they depend on: a change that cannot alter the replay
    (keepRecentTokens without simulated compactions, say) reuses it (:func:`effective_settings`)."""
    return st.session_state.get("session_digest"), effective_settings(settings) if rp.REUSE else settings


def replay_is_cached(settings: ReplaySettings) -> bool:
    return _replay_key(settings) in caches()["replays"]


def current_replay(settings: ReplaySettings, label: str = "Replaying the session") -> Replay | None:
    """The replay of the current session under ``settings`` (computed once, with a progress bar)."""
    s = current_session()
    if s is None:
        return None

    def make() -> Replay:
        bar = st.progress(0.0, text=f"{label}…")
        try:
            return replay(s, settings, progress=lambda f: bar.progress(min(1.0, max(0.0, f)),
                                                                       text=f"{label}… {f:.0%}"))
        finally:
            bar.empty()
            warm_session(s)  # summarizer facts and tiktoken counts, in the background

    r = caches()["replays"].get(_replay_key(settings), make)
    return r if r.settings == settings else r.relabel(settings)


def memo(name: str, key: Hashable, make: Callable[[], Any]) -> Any:
    """Cache a derived value of the current session (info, explanations, previews) by
    (name, session digest, key)."""
    return caches()["misc"].get((name, st.session_state.get("session_digest"), key), make)


def counter_for(session: Session, name: str) -> Any:
    return session_counter(session, name)


# -- the Replay page's step ------------------------------------------------------------------


def get_step(n: int) -> int:
    """The current step, clamped to ``0 … n-1`` (the last step when none was chosen yet)."""
    k = st.session_state.get("cur_step")
    k = n - 1 if k is None else int(k)
    return max(0, min(n - 1, k))


def set_step(k: int) -> None:
    """Jump to step ``k`` (call from callbacks or before the slider is drawn)."""
    st.session_state["cur_step"] = int(k)
    st.session_state["step"] = int(k)


def default(key: str, value: Any) -> dict[str, Any]:
    """``value=...`` for a widget unless session state already holds its value (set by a
    callback, the URL or an import): Streamlit warns when a widget gets both."""
    return {} if key in st.session_state else {"value": value}


def set_widgets(updates: dict[str, Any]) -> None:
    """Set widget values (call from a callback, which runs before any widget is drawn)."""
    for k, v in updates.items():
        st.session_state[k] = v
