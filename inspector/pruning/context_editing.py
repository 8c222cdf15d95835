"""Anthropic API context editing: the ``clear_tool_uses_20250919`` edit.

Source: Anthropic's "Context editing" documentation (beta ``context-management-2025-06-27``).
The edit runs server-side before every request; the client keeps its full history, so it is
stateless here. Reproduced:

* It acts when the prompt's input tokens exceed ``trigger`` (default 100,000).
* The ``keep`` most recent tool uses (default 3) keep their results; older results are
  cleared, **oldest first**, except tools in ``exclude_tools``.
* ``clear_at_least``: the edit happens only if it clears at least that many tokens.
* ``clear_tool_inputs``: the tool calls' inputs are cleared too.

"Input tokens" here are the context's tokens by the caller's counter: the system prompt and
tool definitions, which the API also counts, are not in a pi session file.

UNVERIFIED (the docs do not say): the placeholder text the model sees (we show
``[tool result cleared]``), whether the trigger is ``>`` or ``>=`` (we use ``>``, as LangChain's
clone does), what ``clear_at_least`` does when it cannot be reached (we skip the edit; LangChain's
clone reads it the other way, stopping once that many tokens are cleared), whether all older
results are cleared at once (we clear all of them), and whether results of ``exclude_tools``
count toward ``keep`` (we count them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from ..session.models import AssistantMessage, ToolCall
from .base import CallInfo, IdMemo, Plan, PruneResult, Strategy, with_text

MARKER = "[tool result cleared]"
_EDITED = IdMemo()


class ContextEditingSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    trigger: int = Field(100000, ge=0, le=2_000_000, description="Act when input tokens exceed this (trigger).")
    keep: int = Field(3, ge=0, le=1000, description="Most recent tool uses whose results are kept (keep).")
    clear_at_least: int = Field(0, ge=0, le=2_000_000, description="Only clear if at least this many tokens go.")
    exclude_tools: tuple[str, ...] = Field((), description="Tools whose results are never cleared.")
    clear_tool_inputs: bool = Field(False, description="Also clear the tool calls' inputs.")


class ContextEditing(Strategy):
    name = "context-editing"
    title = "Anthropic context editing (clear_tool_uses)"
    source = "Anthropic API docs: context editing, clear_tool_uses_20250919"
    description = "Over 100k input tokens, clear all but the 3 most recent tool results, oldest first (server-side)."
    verified = False
    unverified_notes = ("Placeholder text, > vs >= at the trigger, and clear_at_least handling are not "
                        "documented; see the module docstring.")
    Settings = ContextEditingSettings

    def apply(self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo,
              counter: Any) -> PruneResult:
        s: ContextEditingSettings = settings
        plan = Plan(messages, counter)
        tokens = call.context_tokens if call.context_tokens is not None else sum(
            plan.tokens(i) for i in range(len(messages)))
        results = [i for i, cm in enumerate(messages) if cm.role == "toolResult"]
        plan.scanned = sum(plan.tokens(i) for i in results)
        if tokens <= s.trigger:
            for i in results:
                plan.keep(i, f"input {tokens:,} tokens, not over the trigger {s.trigger:,}")
            return plan.finish()
        keep_set = set(results[-s.keep:]) if s.keep else set()
        eligible = []
        for i in results:
            if i in keep_set:
                plan.keep(i, f"one of the {s.keep} most recent tool uses (keep)")
            elif messages[i].message.toolName in s.exclude_tools:  # type: ignore[union-attr]
                plan.keep(i, "tool listed in exclude_tools")
            else:
                eligible.append(i)
        plan.protected = sum(plan.tokens(i) for i in results if i not in eligible)
        clearable = sum(plan.tokens(i) for i in eligible)
        if not eligible or clearable < s.clear_at_least:
            for i in eligible:
                plan.keep(i, f"clearable, but {clearable:,} tokens < clear_at_least {s.clear_at_least:,}")
            return plan.finish(events=[{"type": "prune_skipped", "strategy": self.name,
                                        "reason": f"{clearable:,} clearable < clear_at_least {s.clear_at_least:,}"}])
        cleared_ids = set()
        for i in eligible:  # oldest first
            plan.prune(i, with_text(messages[i], MARKER), MARKER,
                       f"input {tokens:,} > trigger {s.trigger:,}; older than the {s.keep} most recent tool uses")
            cleared_ids.add(messages[i].message.toolCallId)  # type: ignore[union-attr]
        if s.clear_tool_inputs:
            for i, cm in enumerate(messages):
                m = cm.message
                if isinstance(m, AssistantMessage) and any(
                        isinstance(b, ToolCall) and b.id in cleared_ids for b in m.content):
                    ids = tuple(b.id for b in m.content if isinstance(b, ToolCall) and b.id in cleared_ids)
                    new = _EDITED.get(m, ids, lambda m=m: m.model_copy(update={"content": [
                        b.model_copy(update={"arguments": {}}) if isinstance(b, ToolCall) and b.id in cleared_ids
                        else b for b in m.content]}))
                    plan.prune(i, ContextMessage(new, cm.entry_index),
                               "{}", "clear_tool_inputs: the cleared tool uses' arguments are sent as {}")
        return plan.finish(events=[{"type": "context_edit", "strategy": self.name, "cleared": len(eligible)}])
