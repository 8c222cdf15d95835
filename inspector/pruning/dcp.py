"""Dynamic Context Pruning's deterministic rules (the LLM-driven ``compress`` tool is not replayed).

Sources: Opencode-DCP/opencode-dynamic-context-pruning v3.0.4 (fbd75bce)
``lib/strategies/{deduplication,supersede-writes,purge-errors}.ts``, ``lib/messages/prune.ts``;
its pi port barisgit/pi-dynamic-context-pruning (f329d5ea), which runs the rules before every
call — as here (stateless). Reproduced:

* **Deduplication**: identical tool calls (same tool, same arguments with null keys removed
  and object keys sorted; status ignored) — all but the newest have their output replaced by
  ``[Output removed to save context - information superseded or no longer needed]``.
  ``write``/``edit`` outputs are left as they are (v3 leaves completed edit/write parts alone).
* **Purge errors**: a failed call at least ``purge_error_turns`` (4) turns old has every
  string input replaced by ``[input removed due to failed tool call]``; the error text stays.
  DCP's "turn" is an LLM step (one assistant message), not a user turn.
* **Supersede writes** (off by default: commented out in v3.0.4, and disabled in January 2026
  because models copied the placeholder into files): a ``write`` whose path is read later has
  its ``content`` input replaced by the placeholder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from ..session.models import AssistantMessage, ToolCall
from .base import CallInfo, Plan, PruneResult, Strategy, with_text

OUTPUT_MARKER = "[Output removed to save context - information superseded or no longer needed]"
ERROR_INPUT_MARKER = "[input removed due to failed tool call]"
WRITE_MARKER = "[content removed to save context, this is not what was written to the file, but a placeholder]"


class DcpSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    deduplication: bool = Field(True, description="Replace outputs of repeated identical calls (keep the newest).")
    purge_errors: bool = Field(True, description="Remove the inputs of failed calls after N turns.")
    purge_error_turns: int = Field(4, ge=1, le=100, description="Age in LLM steps before a failed call's inputs go.")
    supersede_writes: bool = Field(False, description="Remove a write's content once the file is read again.")
    protected_tools: tuple[str, ...] = Field((), description="Tools never deduplicated.")


def _normalize(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _normalize(v[k]) for k in sorted(v) if v[k] is not None}
    if isinstance(v, list):
        return [_normalize(x) for x in v]
    return v


def signature(call: ToolCall) -> str:
    return call.name + "|" + json.dumps(_normalize(call.arguments), ensure_ascii=False, separators=(",", ":"))


class Dcp(Strategy):
    name = "dcp"
    title = "Dynamic Context Pruning (deterministic rules)"
    source = "Opencode-DCP/opencode-dynamic-context-pruning v3.0.4 lib/strategies/*; pi port barisgit f329d5ea"
    description = "Deduplicate identical tool calls, strip inputs of old failed calls, optionally supersede writes."
    Settings = DcpSettings

    def apply(self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo,
              counter: Any) -> PruneResult:
        s: DcpSettings = settings
        plan = Plan(messages, counter)
        calls: list[tuple[int, int, ToolCall]] = []  # (message index, step, call)
        results: dict[str, int] = {}
        step = 0
        for i, cm in enumerate(messages):
            m = cm.message
            if isinstance(m, AssistantMessage):
                for b in m.content:
                    if isinstance(b, ToolCall):
                        calls.append((i, step, b))
                step += 1
            elif cm.role == "toolResult":
                results[m.toolCallId] = i  # type: ignore[union-attr]
        current = step
        if s.deduplication:
            newest: dict[str, str] = {}
            for _, _, c in calls:
                newest[signature(c)] = c.id
            for _, _, c in calls:
                if c.name in s.protected_tools or c.name in ("write", "edit"):
                    continue
                if newest[signature(c)] != c.id and c.id in results:
                    r = results[c.id]
                    plan.prune(r, with_text(messages[r], OUTPUT_MARKER), OUTPUT_MARKER,
                               f"the same {c.name} call is made again later (deduplication keeps the newest)")
        edits: dict[int, dict[str, Any]] = {}  # message index -> {call id: new arguments}
        if s.purge_errors:
            for i, st, c in calls:
                r = results.get(c.id)
                if r is None or not getattr(messages[r].message, "isError", False):
                    continue
                if current - st >= s.purge_error_turns and isinstance(c.arguments, dict):
                    edits.setdefault(i, {})[c.id] = {k: ERROR_INPUT_MARKER if isinstance(v, str) else v
                                                     for k, v in c.arguments.items()}
        if s.supersede_writes:
            for i, _, c in calls:
                if c.name != "write" or not isinstance(c.arguments, dict):
                    continue
                p = c.arguments.get("path")
                if any(j > i and c2.name == "read" and isinstance(c2.arguments, dict) and c2.arguments.get("path") == p
                       for j, _, c2 in calls):
                    edits.setdefault(i, {})[c.id] = {**c.arguments, "content": WRITE_MARKER}
        for i, new_args in edits.items():
            cm = messages[i]
            m = cm.message
            assert isinstance(m, AssistantMessage)
            content = [b.model_copy(update={"arguments": new_args[b.id]}) if isinstance(b, ToolCall) and b.id in new_args
                       else b for b in m.content]
            marker = ERROR_INPUT_MARKER if any(ERROR_INPUT_MARKER in json.dumps(a) for a in new_args.values()) \
                else WRITE_MARKER
            plan.prune(i, ContextMessage(m.model_copy(update={"content": content}), cm.entry_index), marker,
                       "inputs of a failed call older than the purge threshold" if marker == ERROR_INPUT_MARKER
                       else "write superseded by a later read of the same file")
        return plan.finish()
