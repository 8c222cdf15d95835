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

import dataclasses
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st

from .. import replay as rp
from ..gcpause import settled, thaw
from ..importers import parse_any
from ..jsjson import replace_lone_surrogate_escapes
from ..replay import (
    Replay,
    ReplaySettings,
    SummaryCache,
    effective_settings,
    replay,
    session_counter,
    warm_session,
)
from ..session.tree import LoadIssue, Session
from ..window import (
    DEFAULT_WINDOW,
    answered_peak,
    known_window,
    model_windows_from,
    model_windows_of,
    unknown_window_why,
)
from .urlstate import esc

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
            self._trim()
        return value

    def put(self, key: Hashable, value: Any) -> None:
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            self._trim()

    def _trim(self) -> None:
        """Drop the least recently used items over the size; what was frozen for the collector
        is thawed then (:func:`~inspector.gcpause.thaw`), so nothing is kept out of its reach for
        good."""
        if len(self.items) > self.size:
            while len(self.items) > self.size:
                self.items.popitem(last=False)
            thaw()

    def find(self, pred: Callable[[Hashable], bool]) -> tuple[Hashable, Any] | None:
        with self.lock:
            return next(((k, v) for k, v in reversed(self.items.items()) if pred(k)), None)

    def __contains__(self, key: Hashable) -> bool:
        with self.lock:
            return key in self.items


@st.cache_resource
def caches() -> dict[str, _Lru]:
    """The process-wide caches: ``sessions`` (digest → Session), ``replays`` ((digest, settings) → Replay),
    ``meta`` (digest → (name, origin): what a reload needs to reopen a session)."""
    return {"sessions": _Lru(MAX_SESSIONS), "replays": _Lru(MAX_REPLAYS), "misc": _Lru(64), "meta": _Lru(64)}


@st.cache_resource
def summary_cache() -> SummaryCache:
    """The app's summaries of simulated compactions, shared by every replay in this process (so a
    summary made with an LLM is paid for once)."""
    return SummaryCache()


def clear_caches() -> None:
    caches.clear()


def parse_for_display(data: bytes, name: str) -> Session:
    """``parse_any``, with lone surrogate escapes (JS strings may hold them, no web page can show
    them) read as U+FFFD, each line that had one reported as a load issue."""
    clean, lines = replace_lone_surrogate_escapes(data)
    session = parse_any(clean, source=name)
    if not lines:
        return session
    where = ", ".join(map(str, lines[:20])) + (f" and {len(lines) - 20} more" if len(lines) > 20 else "")
    note = LoadIssue(
        "lone-surrogate",
        "warning",
        f"lone UTF-16 surrogate escape(s) (\\udXXX, not part of a pair) on "
        f"line(s) {where}: shown here as U+FFFD; the command line keeps and counts them as pi does",
        line=lines[0],
    )
    return dataclasses.replace(session, issues=(note, *session.issues))


class NotASession(ValueError):
    """The bytes are not a session of any format we read (the open session stays)."""


def _is_session(session: Session) -> str | None:
    """Why ``session`` is not a session (None when it is): nothing in it was read, and the loader
    said why (:meth:`~inspector.session.tree.Session.unread`, as the commands and the corpus judge)."""
    unread = session.unread()
    return unread.message if unread is not None else None


def load_bytes(data: bytes, name: str, origin: tuple[str, str] | None = None) -> str:
    """Load (or reuse) a session from bytes and make it the current one; return its digest.
    ``origin`` — ("sample", name) or ("path", resolved path) — lets a link or a reload open the
    same file again. Raises :class:`NotASession`, leaving the current session as it was, when the
    bytes hold no session."""
    digest = hashlib.sha256(data).hexdigest()
    with st.spinner(f"Reading {name}…"):
        session = caches()["sessions"].get(digest, lambda: parse_for_display(data, name))
    if (why := _is_session(session)) is not None:
        raise NotASession(f"{name} is not a session: {why}")
    _remember_window(session)
    if st.session_state.get("session_digest") != digest:
        for k in ("cur_step", "leaf", "sweep", "tree_pick", "_last_pick", "focus_entry", "sum_focus"):
            st.session_state.pop(k, None)
    st.session_state["session_digest"] = digest
    st.session_state["session_name"] = name
    st.session_state["session_bytes"] = data
    st.session_state["session_origin"] = origin
    caches()["meta"].put(digest, (name, origin))
    return digest


def _remember_window(session: Session | None) -> None:
    """What the session says of its model's window: the one it records (Codex) or its model's
    (:func:`inspector.window.known_window`), its model, and the bound its answered calls prove
    (:func:`inspector.window.answered_peak`); the sidebar offers them."""
    known = known_window(session) if session is not None else None
    st.session_state["session_window"] = known.tokens if known is not None else None
    st.session_state["session_window_known"] = known
    st.session_state["session_window_why"] = unknown_window_why(session, esc) if session is not None else None
    st.session_state["session_window_floor"] = answered_peak(session) if session is not None else None
    window = known.tokens if known is not None else DEFAULT_WINDOW
    st.session_state["session_model_windows"] = (
        model_windows_of(session, window) if session is not None else ()
    )
    st.session_state["session_model_windows_from"] = (
        model_windows_from(session) if session is not None else ""
    )


def current_session() -> Session | None:
    digest = st.session_state.get("session_digest")
    if not digest:
        return None
    data = st.session_state.get("session_bytes")
    name = st.session_state.get("session_name", "session")
    if data is None and digest not in caches()["sessions"]:
        data = _read_origin(st.session_state.get("session_origin"))
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            return None
    # data is None only when the session is cached (then it is not parsed again)
    return caches()["sessions"].get(
        digest, lambda: parse_for_display(data if data is not None else b"", name)
    )


def _read_origin(origin: tuple[str, str] | None) -> bytes | None:
    """The bytes of a sample or of a local file under the allowed roots (None when it cannot be read)."""
    from . import sources

    try:
        if origin is not None and origin[0] == "sample":
            p = next((x for x in sources.sample_files() if x.name == origin[1]), None)
            return sources.read_file(p) if p is not None else None
        if origin is not None and origin[0] == "path":
            return sources.read_file(sources.check_path(origin[1]))
    except (sources.PathRefused, OSError):
        return None
    return None


def restore_from_url(sid: str | None, ref: tuple[str, str] | None) -> str | None:
    """After a reload or from a shared link: reopen the session the URL names — from the
    server's cache by its hash, or the same sample or local file (under the allowed roots only).
    Returns a sentence for the page the link opens when it could not, or when the file differs."""
    if sid and not re.fullmatch(r"[0-9a-f]{16}", sid):
        sid = None  # only a whole key finds a session (a short prefix would match someone else's)
    if sid:
        hit = caches()["meta"].find(lambda d: str(d).startswith(sid) and d in caches()["sessions"])
        if hit is not None:
            digest, (name, origin) = hit
            st.session_state.update(
                {
                    "session_digest": digest,
                    "session_name": name,
                    "session_origin": origin,
                    "session_bytes": None,
                }
            )
            s = current_session()  # the cached session just made current
            _remember_window(s)
            return None
    data = _read_origin(ref)
    if data is None:
        return (
            (
                "The link names a session that is not on this machine (an upload, or a file outside the allowed "
                "folders): open it on the Load page."
            )
            if sid or ref
            else None
        )
    assert ref is not None
    try:
        digest = load_bytes(data, ref[1], ref)
    except NotASession as e:
        return str(e)
    if sid and not digest.startswith(sid):
        return f"{ref[1]} here differs from the file the link was made with: this machine's copy is shown."
    return None


def _replay_key(settings: ReplaySettings) -> tuple[Any, ReplaySettings]:
    """Replays are cached by the settings they depend on: a change that cannot alter the replay
    (keepRecentTokens without simulated compactions, say) reuses it (:func:`effective_settings`)."""
    return st.session_state.get("session_digest"), effective_settings(
        settings
    ) if rp.settings.REUSE else settings


def replay_is_cached(settings: ReplaySettings) -> bool:
    return _replay_key(settings) in caches()["replays"]


def current_replay(settings: ReplaySettings, label: str = "Replaying the session") -> Replay | None:
    """The replay of the current session under ``settings`` (computed once, with a progress bar)."""
    s = current_session()
    if s is None:
        return None

    def make() -> Replay:
        bar = st.progress(0.0, text=f"{label}…")

        def progress(f: float) -> None:
            bar.progress(min(1.0, max(0.0, f)), text=f"{label}… {f:.0%}")

        try:
            with settled():  # kept in the cache: later collections need not walk it (inspector.gcpause)
                return replay(s, settings, progress=progress, summaries=summary_cache())
        finally:
            bar.empty()
            warm_session(s)  # summarizer facts and tiktoken counts, in the background

    r = caches()["replays"].get(_replay_key(settings), make)
    return r if r.settings == settings else r.relabel(settings)


def memo(name: str, key: Hashable, make: Callable[..., Any]) -> Any:  # make(): a lambda may bind by default
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


def default_index(key: str, options: list[Any], value: Any) -> dict[str, Any]:
    """``index=...`` of ``value`` among ``options`` (the first when it is not one) for a select
    widget, unless session state already holds its value (see :func:`default`)."""
    if key in st.session_state:
        return {}
    return {"index": options.index(value) if value in options else 0}


def set_widgets(updates: dict[str, Any]) -> None:
    """Set widget values (call from a callback, which runs before any widget is drawn)."""
    for k, v in updates.items():
        st.session_state[k] = v
