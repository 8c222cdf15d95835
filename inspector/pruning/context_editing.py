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
from .runner import IncrementalRunner

MARKER = "[tool result cleared]"
_EDITED = IdMemo()


class ContextEditingSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    trigger: int = Field(
        100000, ge=0, le=2_000_000, description="Act when input tokens exceed this (trigger)."
    )
    keep: int = Field(3, ge=0, le=1000, description="Most recent tool uses whose results are kept (keep).")
    clear_at_least: int = Field(
        0, ge=0, le=2_000_000, description="Only clear if at least this many tokens go."
    )
    exclude_tools: tuple[str, ...] = Field((), description="Tools whose results are never cleared.")
    clear_tool_inputs: bool = Field(False, description="Also clear the tool calls' inputs.")


class ContextEditing(Strategy):
    name = "context-editing"
    title = "Anthropic context editing (clear_tool_uses)"
    source = "Anthropic API docs: context editing, clear_tool_uses_20250919"
    description = (
        "Over 100k input tokens, clear all but the 3 most recent tool results, oldest first (server-side)."
    )
    verified = False
    unverified_notes = (
        "Placeholder text, > vs >= at the trigger, and clear_at_least handling are not "
        "documented; see the module docstring."
    )
    Settings = ContextEditingSettings

    def runner(self, settings: Any, counter: Any) -> ContextEditingRunner:
        return ContextEditingRunner(self, settings, counter)

    def apply(
        self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo, counter: Any
    ) -> PruneResult:
        s: ContextEditingSettings = settings
        plan = Plan(messages, counter)
        tokens = (
            call.context_tokens
            if call.context_tokens is not None
            else sum(plan.tokens(i) for i in range(len(messages)))
        )
        results = [i for i, cm in enumerate(messages) if cm.role == "toolResult"]
        plan.scanned = sum(plan.tokens(i) for i in results)
        if tokens <= s.trigger:
            for i in results:
                plan.keep(i, f"input {tokens:,} tokens, not over the trigger {s.trigger:,}")
            return plan.finish()
        keep_set = set(results[-s.keep :]) if s.keep else set()
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
            return plan.finish(
                events=[
                    {
                        "type": "prune_skipped",
                        "strategy": self.name,
                        "reason": f"{clearable:,} clearable < clear_at_least {s.clear_at_least:,}",
                    }
                ]
            )
        cleared_ids = set()
        for i in eligible:  # oldest first
            plan.prune(
                i,
                with_text(messages[i], MARKER),
                MARKER,
                f"input {tokens:,} > trigger {s.trigger:,}; older than the {s.keep} most recent tool uses",
            )
            cleared_ids.add(messages[i].message.toolCallId)  # type: ignore[union-attr]
        if s.clear_tool_inputs:
            for i, cm in enumerate(messages):
                new = _inputs_cleared(cm, cleared_ids)
                if new is not None:
                    plan.prune(
                        i, new, "{}", "clear_tool_inputs: the cleared tool uses' arguments are sent as {}"
                    )
        return plan.finish(events=[{"type": "context_edit", "strategy": self.name, "cleared": len(eligible)}])


def _inputs_cleared(cm: ContextMessage, cleared_ids: Any) -> ContextMessage | None:
    """An assistant message with the arguments of its cleared tool uses sent as ``{}`` (None when
    it made none of them)."""
    m = cm.message
    if not isinstance(m, AssistantMessage):
        return None
    ids = tuple(b.id for b in m.content if isinstance(b, ToolCall) and b.id in cleared_ids)
    if not ids:
        return None
    new = _EDITED.get(
        m,
        ids,
        lambda: m.model_copy(
            update={
                "content": [
                    b.model_copy(update={"arguments": {}})
                    if isinstance(b, ToolCall) and b.id in cleared_ids
                    else b
                    for b in m.content
                ]
            }
        ),
    )
    return ContextMessage(new, cm.entry_index)


class ContextEditingRunner(IncrementalRunner):
    """:meth:`ContextEditing.apply`, call after call. The results it clears are always the oldest
    ones (all but the ``keep`` newest, less excluded tools), so prefix sums over the results give
    what can be cleared, and only the results that enter or leave that prefix change. With
    ``clear_tool_inputs``, the assistant messages that made those calls are redone as they do."""

    def _begin(self, msgs: Sequence[ContextMessage]) -> None:
        s: ContextEditingSettings = self.settings
        self.excluded = frozenset(s.exclude_tools)
        self.results: list[int] = []
        self.n_clearable: list[int] = [0]  # prefix counts of results not excluded
        self.clearable: list[int] = [0]  # prefix sums of their tokens (the caller's counter)
        self.callers: dict[str, list[int]] = {}  # tool call id -> assistant positions making it
        self.ids: dict[str, int] = {}  # cleared tool call id -> cleared results with it
        self.upto = 0  # results[:upto] (not excluded) are cleared now

    def _append(self, msgs: Sequence[ContextMessage], i: int) -> None:
        cm = msgs[i]
        m = cm.message
        if cm.role == "toolResult":
            self.results.append(i)
            ok = m.toolName not in self.excluded  # type: ignore[union-attr]
            self.n_clearable.append(self.n_clearable[-1] + ok)
            self.clearable.append(self.clearable[-1] + (self.counter.count(m) if ok else 0))
        elif isinstance(m, AssistantMessage) and self.settings.clear_tool_inputs:
            calls = [b.id for b in m.content if isinstance(b, ToolCall)]
            for cid in calls:
                self.callers.setdefault(cid, []).append(i)
            if any(cid in self.ids for cid in calls):
                self._redo_caller(msgs, i)

    def _decide(
        self, msgs: Sequence[ContextMessage], state: Any, call: Any
    ) -> tuple[list[dict[str, Any]], Any]:
        s: ContextEditingSettings = self.settings
        tokens = call.context_tokens if call.context_tokens is not None else self.total
        if tokens <= s.trigger:
            self._clear_upto(msgs, 0)
            return [], None
        m = max(0, len(self.results) - s.keep) if s.keep else len(self.results)
        eligible, clearable = self.n_clearable[m], self.clearable[m]
        if not eligible or clearable < s.clear_at_least:
            self._clear_upto(msgs, 0)
            return [
                {
                    "type": "prune_skipped",
                    "strategy": ContextEditing.name,
                    "reason": f"{clearable:,} clearable < clear_at_least {s.clear_at_least:,}",
                }
            ], None
        self._clear_upto(msgs, m)
        return [{"type": "context_edit", "strategy": ContextEditing.name, "cleared": eligible}], None

    def _clear_upto(self, msgs: Sequence[ContextMessage], m: int) -> None:
        lo, hi = sorted((self.upto, m))
        clear = m > self.upto
        for i in self.results[lo:hi]:
            cm = msgs[i]
            if cm.message.toolName in self.excluded:  # type: ignore[union-attr]
                continue
            if clear:
                self._prune(msgs, i, with_text(cm, MARKER))
            else:
                self._keep(i)
            if self.settings.clear_tool_inputs:
                self._count_id(msgs, cm.message.toolCallId, 1 if clear else -1)  # type: ignore[union-attr]
        self.upto = m

    def _count_id(self, msgs: Sequence[ContextMessage], cid: str, delta: int) -> None:
        before = self.ids.get(cid, 0)
        n = before + delta
        if n:
            self.ids[cid] = n
        else:
            self.ids.pop(cid, None)
        if (before == 0) != (n == 0):
            for i in self.callers.get(cid, ()):
                self._redo_caller(msgs, i)

    def _redo_caller(self, msgs: Sequence[ContextMessage], i: int) -> None:
        new = _inputs_cleared(msgs[i], self.ids)
        if new is None:
            self._keep(i)
        else:
            self._prune(msgs, i, new)
