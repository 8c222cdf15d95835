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
from .base import CallInfo, Plan, PruneResult, Strategy, with_text

MARKER = "[Old tool result content cleared]"
COMPACTABLE = ("Read", "Bash", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write", "find", "ls")


class MicrocompactSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    gap_minutes: float = Field(60, ge=0, le=10_000, description="Clear when the last answer is older than this (reported 60).")
    keep_recent: int = Field(5, ge=1, le=1000, description="Most recent compactable results kept (reported 5, at least 1).")
    tools: tuple[str, ...] = Field(COMPACTABLE, description="Compactable tools (case-insensitive).")


def _ms(m: Any) -> float | None:
    return finite_ms(getattr(m, "timestamp", None))


class ClaudeCodeMicrocompact(Strategy):
    name = "claude-code-microcompact"
    title = "Claude Code microcompact (time-based, reported)"
    source = "third-party analyses of Claude Code 2.1.x services/compact/microCompact.ts (not public)"
    description = "After an hour idle, clear all but the 5 most recent Read/Bash/Grep/… results (persists)."
    verified = False
    unverified_notes = ("Reported by third-party source analyses; threshold, count, tools and placeholder "
                        "are not documented by Anthropic. Tool names of pi are mapped by us.")
    Settings = MicrocompactSettings

    def apply(self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo,
              counter: Any) -> PruneResult:
        s: MicrocompactSettings = settings
        cleared: frozenset[int] = state if isinstance(state, frozenset) else frozenset()
        plan = Plan(messages, counter)
        tools = {t.lower() for t in s.tools}
        results = [i for i, cm in enumerate(messages) if cm.role == "toolResult"
                   and getattr(cm.message, "toolName", "").lower() in tools]
        last_answer = max((t for cm in messages if isinstance(cm.message, AssistantMessage)
                           and (t := _ms(cm.message)) is not None), default=None)
        now = max((t for cm in messages if (t := _ms(cm.message)) is not None), default=None)
        events: list[dict[str, Any]] = []
        if last_answer is not None and now is not None and now - last_answer > s.gap_minutes * 60_000:
            old = results[:-s.keep_recent]
            newly = frozenset(messages[i].entry_index for i in old if messages[i].entry_index is not None) - cleared
            if newly:
                cleared = cleared | newly
                events.append({"type": "prune_pass", "strategy": self.name, "items": len(newly),
                               "idleMinutes": round((now - last_answer) / 60_000, 1)})
        for i in results:
            if messages[i].entry_index in cleared:
                plan.prune(i, with_text(messages[i], MARKER), MARKER,
                           f"cleared after more than {s.gap_minutes:g} idle minutes (cache cold); not one of the "
                           f"{s.keep_recent} most recent compactable results")
            else:
                plan.keep(i, "recent, or no idle gap long enough yet")
        return plan.finish(state=cleared, events=events)
