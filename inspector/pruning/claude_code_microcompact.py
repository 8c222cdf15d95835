"""Claude Code's time-based microcompact, as third-party analyses of its 2.1.x source report it.

REPORTED, NOT VERIFIED (``../shared/research/pruning.md`` §5.2: write-ups of
``services/compact/microCompact.ts``; Claude Code's source is not public):

* Before a model call, if the time since the last assistant message exceeds a threshold
  (reported 60 minutes, the prompt cache's lifetime: the cache is cold, clearing costs nothing),
  the content of every compactable tool result except the most recent N (reported 5, at least 1)
  is replaced by ``[Old tool result content cleared]``; the tool calls stay.
* Compactable tools (reported): Read, Bash, Grep, Glob, WebSearch, WebFetch, Edit, Write.
  pi's tool names (``read``, ``bash``, ``grep``, ``find``, ``ls``, ``edit``, ``write``) count as
  their Claude Code equivalents here — our mapping.
* The messages themselves are edited, so a cleared result stays cleared at later calls.
* Reportedly behind a server-side feature flag, off by default. Not reproduced: the cached
  microcompact (server-side ``cache_edits``; local messages unchanged) and the API context
  management edit (see the ``context-editing`` strategy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from ..numbers import finite_ms
from ..session.models import AssistantMessage
from .base import CallInfo, GrowingSet, Plan, PruneResult, Strategy, with_text
from .runner import IncrementalRunner

MARKER = "[Old tool result content cleared]"
COMPACTABLE = ("Read", "Bash", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write", "find", "ls")


class MicrocompactSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    gap_minutes: float = Field(
        60, ge=0, le=10_000, description="Clear when the last answer is older than this (reported 60)."
    )
    keep_recent: int = Field(
        5, ge=1, le=1000, description="Most recent compactable results kept (reported 5, at least 1)."
    )
    tools: tuple[str, ...] = Field(COMPACTABLE, description="Compactable tools (case-insensitive).")


def _ms(m: Any) -> float | None:
    return finite_ms(getattr(m, "timestamp", None))


class ClaudeCodeMicrocompact(Strategy):
    name = "claude-code-microcompact"
    title = "Claude Code microcompact (time-based, reported)"
    source = "third-party analyses of Claude Code 2.1.x services/compact/microCompact.ts (not public)"
    description = "After an hour idle, clear all but the 5 most recent Read/Bash/Grep/… results (persists)."
    verified = False
    unverified_notes = (
        "Reported by third-party source analyses; threshold, count, tools and placeholder "
        "are not documented by Anthropic. Tool names of pi are mapped by us."
    )
    Settings = MicrocompactSettings

    def runner(self, settings: Any, counter: Any) -> MicrocompactRunner:
        return MicrocompactRunner(self, settings, counter)

    def apply(
        self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo, counter: Any
    ) -> PruneResult:
        s: MicrocompactSettings = settings
        cleared: Any = state if isinstance(state, (frozenset, GrowingSet)) else GrowingSet()
        plan = Plan(messages, counter)
        tools = {t.lower() for t in s.tools}
        results = [
            i
            for i, cm in enumerate(messages)
            if cm.role == "toolResult" and getattr(cm.message, "toolName", "").lower() in tools
        ]
        last_answer = max(
            (
                t
                for cm in messages
                if isinstance(cm.message, AssistantMessage) and (t := _ms(cm.message)) is not None
            ),
            default=None,
        )
        now = max((t for cm in messages if (t := _ms(cm.message)) is not None), default=None)
        events: list[dict[str, Any]] = []
        if last_answer is not None and now is not None and now - last_answer > s.gap_minutes * 60_000:
            old = results[: -s.keep_recent]
            newly = (
                frozenset(messages[i].entry_index for i in old if messages[i].entry_index is not None)
                - cleared
            )
            if newly:
                cleared = cleared | newly
                events.append(
                    {
                        "type": "prune_pass",
                        "strategy": self.name,
                        "items": len(newly),
                        "idleMinutes": round((now - last_answer) / 60_000, 1),
                    }
                )
        for i in results:
            if messages[i].entry_index in cleared:
                plan.prune(
                    i,
                    with_text(messages[i], MARKER),
                    MARKER,
                    f"cleared after more than {s.gap_minutes:g} idle minutes (cache cold); not one of the "
                    f"{s.keep_recent} most recent compactable results",
                )
            else:
                plan.keep(i, "recent, or no idle gap long enough yet")
        return plan.finish(state=cleared, events=events)


class MicrocompactRunner(IncrementalRunner):
    """:meth:`ClaudeCodeMicrocompact.apply`, call after call: the newest answer's and the newest
    message's times are kept as messages arrive, and a clearing only looks at the compactable
    results not yet known to be cleared (cleared ones stay cleared)."""

    def __init__(self, strategy: Any, settings: Any, counter: Any) -> None:
        super().__init__(strategy, settings, counter)
        self.agg: Any = GrowingSet()  # the cleared entries the marks reflect

    def _begin(self, msgs: Sequence[ContextMessage]) -> None:
        self.tools = {t.lower() for t in self.settings.tools}
        self.results: list[int] = []  # compactable results
        self.by_entry: dict[int, list[int]] = {}
        self.done = 0  # results[:done] are all cleared (or have no entry)
        self.last_answer: float | None = None
        self.now: float | None = None

    def _append(self, msgs: Sequence[ContextMessage], i: int) -> None:
        cm = msgs[i]
        m = cm.message
        t = _ms(m)
        if t is not None:
            self.now = t if self.now is None else max(self.now, t)
            if isinstance(m, AssistantMessage):
                self.last_answer = t if self.last_answer is None else max(self.last_answer, t)
        if cm.role == "toolResult" and getattr(m, "toolName", "").lower() in self.tools:
            self.results.append(i)
            if cm.entry_index is not None:
                self.by_entry.setdefault(cm.entry_index, []).append(i)
                if cm.entry_index in self.agg:
                    self._prune(msgs, i, with_text(cm, MARKER))

    def _decide(
        self, msgs: Sequence[ContextMessage], state: Any, call: Any
    ) -> tuple[list[dict[str, Any]], Any]:
        s: MicrocompactSettings = self.settings
        cleared: Any = state if isinstance(state, (frozenset, GrowingSet)) else self.agg
        self._sync(msgs, cleared)
        events: list[dict[str, Any]] = []
        last, now = self.last_answer, self.now
        if last is not None and now is not None and now - last > s.gap_minutes * 60_000:
            old = max(0, len(self.results) - s.keep_recent)  # all but the most recent keep_recent
            newly = [
                e
                for e in dict.fromkeys(msgs[i].entry_index for i in self.results[self.done : old])
                if e is not None and e not in cleared
            ]
            self.done = max(self.done, old)
            if newly:
                cleared = cleared | newly
                events.append(
                    {
                        "type": "prune_pass",
                        "strategy": ClaudeCodeMicrocompact.name,
                        "items": len(newly),
                        "idleMinutes": round((now - last) / 60_000, 1),
                    }
                )
                self._sync(msgs, cleared)
        return events, cleared

    def _sync(self, msgs: Sequence[ContextMessage], cleared: Any) -> None:
        if cleared is self.agg:
            return
        added = cleared.added_since(self.agg) if isinstance(cleared, GrowingSet) else None
        if added is None:  # another lineage (or an older version, before an overflow retry)
            gone = [e for e in self.agg if e not in cleared]
            for e in gone:
                for i in self.by_entry.get(e, ()):
                    self._keep(i)
            if gone:
                self.done = 0  # no longer known to be cleared: look again
            added = [e for e in cleared if e not in self.agg]
        for e in added:
            for i in self.by_entry.get(e, ()):
                self._prune(msgs, i, with_text(msgs[i], MARKER))
        self.agg = cleared
