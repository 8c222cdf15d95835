"""What the Replay page can draw a moment later: the prompt-cache model and the retention marks of
a long replay, computed after the page is drawn, in the background.

A change of setting needs a new replay; on a long run its cache model (:func:`inspector.cache.cache_replay`)
and its retention scores (:func:`inspector.retention.retention`) cost about as much again as the
replay. So on runs over :data:`DEFER_CALLS` calls the page draws everything else first and leaves
their panels and timeline marks out, saying so; :meth:`Later.start` then computes them in a thread
(after the page is drawn, so it does not slow the rerun), and a small poller reruns the page once
they are ready. Shorter runs compute them at once, as before. The values land in the same memo
entries :mod:`inspector.ui.cache_view` and :mod:`inspector.ui.retention_view` read (the keys are
built here the way they build them; a test checks that the views then find them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st

from ..cache import cache_replay
from ..retention import retention
from ..retention.extract import facts_ready
from .retention_view import BIG
from .state import caches

DEFER_CALLS = 2_000
"""Runs with more model calls than this get their cache model and retention marks in the background."""
ENABLED = True
"""False: everything is computed before the page is drawn (benchmarks measure the path before this)."""
POLL_SECONDS = 0.5

_JOBS: dict[Hashable, threading.Thread] = {}
_FAILED: set[Hashable] = set()
"""Work that raised in the background: the page computes it in the foreground, where errors are shown."""
_LOCK = threading.Lock()


def _memo_key(name: str, key: Hashable) -> Hashable:
    """The key :func:`inspector.ui.state.memo` files ``(name, key)`` under for the open session."""
    return (name, st.session_state.get("session_digest"), key)


def _run(lru: Any, jobs: list[tuple[Hashable, Callable[[], Any]]]) -> None:
    for full, make in jobs:
        try:
            lru.get(full, make)
        except Exception:  # noqa: BLE001 - the page computes it again in the foreground and reports it
            with _LOCK:
                _FAILED.add(full)
        finally:
            with _LOCK:
                _JOBS.pop(full, None)


class Later:
    """Which of replay ``r``'s slow extras are ready now; the rest are computed by :meth:`start`."""

    def __init__(self, r: Any) -> None:
        self.lru = caches()["misc"]
        self.defer = ENABLED and len(r.steps) > DEFER_CALLS
        self.todo: list[tuple[Hashable, Callable[[], Any]]] = []
        self.cache = self._ready(_memo_key("cache_report", (r.settings,)), lambda: cache_replay(r))
        needs_marks = bool(r.summaries) and (len(r.session.entries) <= BIG or facts_ready(r.session))
        self.retention = not needs_marks or self._ready(
            _memo_key("retention", (r.settings, len(r.summaries), id(r))), lambda: retention(r)
        )

    def _ready(self, full: Hashable, make: Callable[[], Any]) -> bool:
        if not self.defer or full in self.lru or full in _FAILED:
            return True
        self.todo.append((full, make))
        return False

    @property
    def pending(self) -> bool:
        return bool(self.todo)

    def note(self) -> None:
        """A line where the deferred panels will appear."""
        what = " and ".join(
            w
            for w, ready in (("the prompt-cache model", self.cache), ("the retention marks", self.retention))
            if not ready
        )
        st.caption(f"Computing {what} of this replay in the background: shown in a moment.")

    def start(self) -> None:
        """Start the deferred work (call once the page is drawn) and poll until it is done."""
        if not self.todo:
            return
        with _LOCK:
            jobs = [(full, make) for full, make in self.todo if full not in _JOBS]
            if jobs:  # one thread for all of them: each start waits for the thread to run
                t = threading.Thread(
                    target=_run, args=(self.lru, jobs), name="inspector-deferred", daemon=True
                )
                _JOBS.update({full: t for full, _ in jobs})
                t.start()
        keys = [full for full, _ in self.todo]

        @st.fragment(run_every=POLL_SECONDS)
        def poll() -> None:
            with _LOCK:
                busy = any(k in _JOBS for k in keys)
            if not busy:
                st.rerun()

        poll()


def wait(timeout: float | None = None) -> None:
    """Wait for the deferred work under way (benchmarks and tests)."""
    with _LOCK:
        threads = list(_JOBS.values())
    for t in threads:
        t.join(timeout)
