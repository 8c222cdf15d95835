"""What a session's own usage proves about its model's context window (pure).

Only Codex records the window (``model_context_window``:
:func:`inspector.importers.codex.recorded_context_window`). Every agent records each answer's
usage, though, and a call the provider answered fitted the model's window: so the largest context
of an answered call (pi's usage count, :func:`inspector.tokens.calculate_context_tokens`: the
prompt with its answer) is a lower bound on the window. A call that failed or was aborted proves
nothing (:func:`inspector.tokens.assistant_usage`: the usage pi trusts).

The replay, the doctor and the app compare contexts with the window the user sets; unless told
otherwise, the one the session records, else 200,000 tokens (:func:`session_window`). When the
session's answered calls go above it, the window set is smaller than the model's, and every
"overflow" counted against it is one the provider did not see: the doctor says so, and the app
offers the bound as the window.
"""

from __future__ import annotations

import math
import weakref
from typing import NamedTuple

from .importers.codex import recorded_context_window
from .numbers import clamp
from .session.models import MessageEntry
from .session.tree import Session
from .tokens import assistant_usage, calculate_context_tokens


class AnsweredPeak(NamedTuple):
    """The largest context of a call the provider answered, and the entry of that answer."""

    tokens: int
    entry_index: int

    def window_floor(self) -> int:
        """The bound as a window to offer: the peak rounded up to a whole thousand tokens."""
        return int(math.ceil(self.tokens / 1000) * 1000)


DEFAULT_WINDOW = 200_000
"""The window assumed when neither the user nor the session gives one (Claude Sonnet / Opus)."""


def session_window(session: Session | None, given: int | None = None) -> int:
    """The window to replay ``session`` with: ``given`` (the user's), else the one the session
    records (Codex's ``model_context_window``), else :data:`DEFAULT_WINDOW`."""
    if given is not None:
        return given
    return (recorded_context_window(session) if session is not None else None) or DEFAULT_WINDOW


_MEMO: weakref.WeakKeyDictionary[Session, AnsweredPeak | None] = weakref.WeakKeyDictionary()


def answered_peak(session: Session) -> AnsweredPeak | None:
    """The largest context an answered call of ``session`` recorded, on any branch (the first
    entry of the largest); None when no answer records usage (memoised per session)."""
    if session in _MEMO:
        return _MEMO[session]
    best: AnsweredPeak | None = None
    for i, e in enumerate(session.entries):
        if not isinstance(e, MessageEntry):
            continue
        usage = assistant_usage(e.message)
        if usage is None:
            continue
        t = int(clamp(calculate_context_tokens(usage)))
        if t > 0 and (best is None or t > best.tokens):
            best = AnsweredPeak(t, i)
    _MEMO[session] = best
    return best
