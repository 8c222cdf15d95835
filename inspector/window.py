"""What a session's own usage proves about its model's context window (pure).

Only Codex records the window (``model_context_window``:
:func:`inspector.importers.codex.recorded_context_window`). Every agent records each answer's
usage, though, and a call the provider answered fitted the model's window: so the largest context
of an answered call (pi's usage count, :func:`inspector.tokens.calculate_context_tokens`: the
prompt with its answer) is a lower bound on the window. A call that failed or was aborted proves
nothing (:func:`inspector.tokens.assistant_usage`: the usage pi trusts).

Every agent records which model answered, too, and pi's model list gives that model's window
(:mod:`inspector.model_windows`): pi itself compacts against it.

The replay, the doctor and the app compare contexts with the window the user sets; unless told
otherwise, the one the session records, else its model's (:func:`known_window`), else 200,000
tokens (:func:`session_window`). When the session's answered calls go above it, the window set is
smaller than the model's, and every "overflow" counted against it is one the provider did not see:
the doctor says so, and the app offers the bound as the window.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import NamedTuple, TypedDict

from . import model_windows
from .agents import AGENTS
from .importers.codex import recorded_context_window, recorded_model_windows
from .numbers import clamp
from .session.models import AssistantMessage, MessageEntry
from .session.tree import Session
from .tokens import assistant_usage, calculate_context_tokens
from .visible import clip


class AnsweredPeak(NamedTuple):
    """The largest context of a call the provider answered, and the entry of that answer."""

    tokens: int
    entry_index: int

    def window_floor(self) -> int:
        """The bound as a window to offer: the peak rounded up to a whole thousand tokens."""
        return int(math.ceil(self.tokens / 1000) * 1000)


DEFAULT_WINDOW = 200_000
"""The window assumed when neither the user nor the session gives one (Claude Sonnet / Opus)."""
MIN_WINDOW = 1000
"""The smallest window a replay, the doctor or a command takes."""


class SessionModel(NamedTuple):
    """The model that answered most of a session's calls (pi's provider and model names)."""

    provider: str | None
    model: str
    models: int
    """How many distinct models answered."""

    def name(self) -> str:
        """The model's name to show (:func:`shown_name`)."""
        return shown_name(self.model)


NAME_SHOWN = 80
"""Characters of a model's name shown."""


def shown_name(model: str) -> str:
    """A model's name to show: cut at :data:`NAME_SHOWN` characters (a file may hold any)."""
    return clip(model, NAME_SHOWN)


def model_key(m: AssistantMessage) -> tuple[str, str]:
    """The (provider, model) an answer is looked up by in ``model_windows`` (:func:`model_windows_of`
    writes them so: a provider or model that is not a string is "")."""
    return (m.provider if isinstance(m.provider, str) else "", m.model if isinstance(m.model, str) else "")


class KnownWindow(NamedTuple):
    """A window the session itself makes known: the one it records (``source`` "recorded"), its
    model's in pi's model list ("model", with the model), or the larger of its agent's windows an
    answered call proved (``answered``: Claude Code's 1M, ``over`` its 200k)."""

    tokens: int
    source: str
    model: SessionModel | None = None
    agent: str = ""
    """The agent whose window an answered call proved (its short title)."""
    over: int = 0
    """The agent's window the answered call went over."""

    def _mode(self) -> str:
        return f"{self.agent}'s {_millions(self.tokens)} mode"

    def short(self, shown: Callable[[str], str] = str) -> str:
        """Where the window comes from, as a short phrase for a line of text."""
        if self.source == "answered":
            return f"an answered call went over {self.over:,}: {self._mode()}"
        if self.source == "recorded" or self.model is None:
            return "the session records it"
        return f"{shown(self.model.name())}'s in pi's model list"

    def said(self, shown: Callable[[str], str] = str) -> str:
        """Where the window comes from, as a phrase: "this session records", "of gpt-5.5, this
        session's model, in pi's model list" (the model's name as ``shown`` writes it: the app
        escapes it)."""
        if self.source == "answered":
            return f"{self._mode()} runs with (an answered call went over {self.over:,})"
        if self.source == "recorded" or self.model is None:
            return "this session records"
        whose = "this session's model" if self.model.models == 1 else "the model of most of its calls"
        return f"of {shown(self.model.name())}, {whose}, in pi's model list"


def _millions(tokens: int) -> str:
    """1,000,000 → "1M" (a window's size as the agents name it)."""
    return f"{tokens / 1_000_000:g}M" if tokens >= 1_000_000 else f"{tokens // 1000:,}k"


def session_window(session: Session | None, given: int | None = None) -> int:
    """The window to replay ``session`` with: ``given`` (the user's), else the one the session
    makes known (:func:`known_window`), else :data:`DEFAULT_WINDOW`."""
    if given is not None:
        return given
    known = known_window(session) if session is not None else None
    return known.tokens if known is not None else DEFAULT_WINDOW


def model_windows_said(own: tuple[tuple[str, str, int], ...], shown: Callable[[str], str] = str) -> str:
    """``own`` (:func:`model_windows_of`) as a clause: "gemini-2.5-pro's calls against 1,048,576"
    (each model's name cut (:func:`shown_name`), as ``shown`` writes it); "" for none."""
    return ", ".join(f"{shown(shown_name(m))}'s calls against {w:,}" for _, m, w in own)


class WindowSettings(TypedDict):
    """The window fields of :class:`inspector.replay.ReplaySettings` (and of the doctor's options)."""

    context_window: int
    model_windows: tuple[tuple[str, str, int], ...]


def model_windows_from(session: Session) -> str:
    """Where :func:`model_windows_of` takes the windows from, as a phrase."""
    return "as the session records them" if recorded_context_window(session) else "pi's model list"


def window_settings(session: Session | None, given: int | None = None) -> WindowSettings:
    """The replay settings of the window (``context_window``, ``model_windows``): ``given`` for
    every call (the user's), else the session's own (:func:`session_window`) and, for the calls of
    a model whose window differs, that model's (:func:`model_windows_of`)."""
    window = session_window(session, given)
    own = model_windows_of(session, window) if given is None and session is not None else ()
    return WindowSettings(context_window=window, model_windows=own)


def known_window(session: Session) -> KnownWindow | None:
    """The window ``session`` records (Codex's ``model_context_window``), else the window of the
    model that answered most of its calls in pi's model list (:func:`inspector.model_windows.model_window`);
    None when neither is known. Not for an agent that runs a model at one of several windows and
    does not record which (:attr:`inspector.agents.Agent.windows`: Claude Code's 200k or 1M; see
    :func:`unknown_window_why`), unless a call the provider answered went over the smallest: then
    it ran at the smallest that holds it (the API refuses a call over its window)."""
    w = recorded_context_window(session)
    if w:
        return KnownWindow(w, "recorded")
    agent = AGENTS.get(session.format)
    if agent is not None and agent.windows:
        peak = answered_peak(session)
        tokens = peak.tokens if peak is not None else 0
        held = next((w for w in agent.windows if tokens <= w), None)
        if held is None or held == agent.windows[0]:
            return None
        over = max(w for w in agent.windows if w < held)
        return KnownWindow(held, "answered", agent=agent.short_title, over=over)
    m = session_model(session)
    mw = model_windows.model_window(m.provider, m.model) if m is not None else None
    return KnownWindow(mw, "model", m) if mw else None


def model_windows_of(session: Session, window: int) -> tuple[tuple[str, str, int], ...]:
    """(provider, model, window) of each model that answered calls of ``session`` and whose window
    in pi's model list is not ``window`` (the one the replay runs with): pi checks each call
    against the window of the model that answered it (``agent-session.ts``, ``_checkCompaction``:
    ``this.model.contextWindow``), so a session that switched models is replayed with each
    model's window (:attr:`inspector.replay.ReplaySettings.model_windows`); Codex, too, checks a
    turn against its model's window. A session whose file records its window (Codex) gives each
    model's as recorded (:func:`inspector.importers.codex.recorded_model_windows`); an agent that
    runs a model at one of several windows (:attr:`inspector.agents.Agent.windows`: Claude Code)
    gives none; a model the list lacks runs with ``window``."""
    if recorded_context_window(session):  # each model's as the file records it (Codex)
        return tuple(sorted(x for x in recorded_model_windows(session) if x[2] != window))
    agent = AGENTS.get(session.format)
    if agent is not None and agent.windows:
        return ()
    out = []
    for provider, model in session_models(session):
        w = model_windows.model_window(provider, model)
        if w and w != window:
            out.append((provider or "", model, w))
    return tuple(sorted(out))


def unknown_window_why(session: Session, shown: Callable[[str], str] = str) -> str | None:
    """Why the window of ``session`` is not known (then :data:`DEFAULT_WINDOW` is assumed), as a
    clause ("claude-opus-5 is not in pi's model list"; the model's name as ``shown`` writes it);
    None when it is known, or the session names no model."""
    if known_window(session) is not None:
        return None
    agent = AGENTS.get(session.format)
    if agent is not None and agent.windows:
        return f"{agent.short_title} does not record whether it ran with the {_millions(agent.windows[-1])}-token window"
    m = session_model(session)
    if m is None:
        return None
    return f"{shown(m.name())} is not in pi's model list (pi-ai {model_windows.READ_FROM})"


class ModelTally:
    """Counts the models that answered, one message at a time (:func:`session_model`; a streamed
    load counts them as it reads)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str | None, str], int] = {}

    def add(self, m: object) -> None:
        if isinstance(m, AssistantMessage) and isinstance(m.model, str) and m.model.strip():
            key = (m.provider if isinstance(m.provider, str) else None, m.model)
            self._seen[key] = self._seen.pop(key, 0) + 1  # re-inserted: the later of a tie comes last

    def pairs(self) -> tuple[tuple[str | None, str], ...]:
        """Every (provider, model) that answered, in the order of their last answer."""
        return tuple(self._seen)

    def result(self) -> SessionModel | None:
        """The model of most answers (the later one of a tie), or None."""
        best = max(reversed(self._seen.items()), key=lambda kv: kv[1], default=None)
        if best is None:
            return None
        return SessionModel(best[0][0], best[0][1], len({m for _, m in self._seen}))


_MODELS: weakref.WeakKeyDictionary[
    Session, tuple[SessionModel | None, tuple[tuple[str | None, str], ...]]
] = weakref.WeakKeyDictionary()


def session_model(session: Session) -> SessionModel | None:
    """The (provider, model) that answered most of the session's calls, on any branch (the later
    one of a tie); None when no answer names its model (memoised per session)."""
    return _tally(session)[0]


def session_models(session: Session) -> tuple[tuple[str | None, str], ...]:
    """Every (provider, model) that answered a call of the session, on any branch (memoised)."""
    return _tally(session)[1]


def _tally(session: Session) -> tuple[SessionModel | None, tuple[tuple[str | None, str], ...]]:
    hit = _MODELS.get(session)
    if hit is not None:
        return hit
    tally = ModelTally()
    for e in session.entries:
        if isinstance(e, MessageEntry):
            tally.add(e.message)
    remember_model(session, tally)
    return _MODELS[session]


def remember_model(session: Session, tally: ModelTally) -> SessionModel | None:
    """Keep what ``tally`` counted as :func:`session_model` and :func:`session_models` of
    ``session`` (a skeleton, whose messages a streamed load counted as it read them); returns the
    model of most answers."""
    model = tally.result()
    _MODELS[session] = (model, tally.pairs())
    return model


_MEMO: weakref.WeakKeyDictionary[Session, AnsweredPeak | None] = weakref.WeakKeyDictionary()


class PeakTally:
    """Finds :func:`answered_peak` one entry at a time, every entry in order (a streamed load
    finds it as it reads: :func:`remember_peak`)."""

    def __init__(self) -> None:
        self._n = 0
        self.best: AnsweredPeak | None = None

    def add(self, e: object) -> None:
        if isinstance(e, MessageEntry):
            usage = assistant_usage(e.message)
            if usage is not None:
                t = int(clamp(calculate_context_tokens(usage)))
                if t > 0 and (self.best is None or t > self.best.tokens):
                    self.best = AnsweredPeak(t, self._n)
        self._n += 1


def answered_peak(session: Session) -> AnsweredPeak | None:
    """The largest context an answered call of ``session`` recorded, on any branch (the first
    entry of the largest); None when no answer records usage (memoised per session)."""
    if session in _MEMO:
        return _MEMO[session]
    tally = PeakTally()
    for e in session.entries:
        tally.add(e)
    return remember_peak(session, tally)


def assumed_too_small(session: Session, window: int) -> AnsweredPeak | None:
    """When ``window`` is the one assumed (:data:`DEFAULT_WINDOW`) for a session whose model's
    window is not known (:func:`unknown_window_why`) and a call the provider answered held more:
    that answer, which proves the model's window larger; else None."""
    if window != DEFAULT_WINDOW or unknown_window_why(session) is None:
        return None
    peak = answered_peak(session)
    return peak if peak is not None and peak.tokens > window else None


def remember_peak(session: Session, tally: PeakTally) -> AnsweredPeak | None:
    """Keep what ``tally`` found, having seen every entry of ``session`` in order, as its
    :func:`answered_peak` (a skeleton, whose messages a streamed load saw as it read them)."""
    _MEMO[session] = tally.best
    return tally.best
