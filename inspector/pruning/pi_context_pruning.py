"""The pi extension ``pi-context-pruning`` (an OpenCode port), as its code behaves.

Source: FammasMaz/pi-context-pruning ``extensions/context-pruning/pruner.ts`` and ``config.ts``
@ a9a247fe (v1.1.0); the seed README describes it. Quirks reproduced:

* Stateless: recomputed before **every** model call (pi's ``context`` event) from the whole
  context, so the pruned set slides as new results arrive.
* Walks newest → oldest; only ``user`` messages count turns (not bash runs or custom
  messages); a ``compactionSummary`` stops the walk (checked before the turn guard).
* Tool results of the last ``PROTECTED_TURNS`` (2) user turns are protected; so are tools not
  prunable (in ``PROTECTED_TOOLS``, or outside a non-empty ``PRUNABLE_TOOLS``) — and those do
  **not** consume the protect budget.
* ``protectedTokens < PRUNE_PROTECT`` keeps an output and adds it: the output that **crosses**
  the budget is kept (OpenCode prunes it). Later ones are candidates.
* Acts only if the candidates total ``>= PRUNE_MINIMUM`` (OpenCode: ``>``); ``/prune`` (``force``)
  sets the minimum to 0 for one call.
* ``isError`` results are protected **at apply time only**: they still used budget and counted
  toward the minimum.
* Estimate: pi's ``estimateTokens`` (images 1200 tokens). Marker
  ``[output pruned — ~N tokens | TOOL | key="value"]`` (em dash; N with thousands separators;
  ``key`` from the first of ``path``/``command``/``pattern``/``query`` found as a string in the
  call's arguments — looked up in the nearest preceding assistant message only; values over 80
  characters cut to 77 + ``...``; the printed key is the first argument key holding that value).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from ..session.models import AssistantMessage, ToolCall
from ..tokens import estimate_tokens
from .base import CallInfo, Plan, PruneResult, Strategy, with_text

PRUNABLE_DEFAULT = ("read", "bash", "grep", "find", "ls", "edit", "write", "apply_patch")
_DETAIL_KEYS = ("path", "command", "pattern", "query")


class PiContextPruningSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    prune_protect: int = Field(40000, ge=0, le=1_000_000,
                               description="PRUNE_PROTECT: older tool-output tokens kept (the crossing output is kept).")
    prune_minimum: int = Field(20000, ge=0, le=1_000_000,
                               description="PRUNE_MINIMUM: prune only if candidates total at least this (>=).")
    protected_turns: int = Field(2, ge=0, le=50, description="PROTECTED_TURNS: recent user turns never pruned.")
    protected_tools: tuple[str, ...] = Field((), description="PROTECTED_TOOLS: never pruned, not counted.")
    prunable_tools: tuple[str, ...] = Field(PRUNABLE_DEFAULT,
                                            description="PRUNABLE_TOOLS: tools eligible (empty = all not protected).")


def marker_for(tokens: int, tool: str, args: Any) -> str:
    detail = ""
    if isinstance(args, dict):
        value = next((args[k] for k in _DETAIL_KEYS if isinstance(args.get(k), str)), None)
        if value is not None:
            key = next(k for k, v in args.items() if v == value)
            shown = value if len(value) <= 80 else value[:77] + "..."
            detail = f' | {key}="{shown}"'
    return f"[output pruned \u2014 ~{tokens:,} tokens | {tool}{detail}]"


def _args_for(messages: Sequence[ContextMessage], i: int, call_id: str) -> Any:
    for j in range(i - 1, -1, -1):
        m = messages[j].message
        if isinstance(m, AssistantMessage):
            for b in m.content:
                if isinstance(b, ToolCall) and b.id == call_id:
                    return b.arguments
            return None  # only the nearest preceding assistant message is searched
    return None


class PiContextPruning(Strategy):
    name = "pi-context-pruning"
    title = "pi-context-pruning (pi extension)"
    source = "FammasMaz/pi-context-pruning extensions/context-pruning/pruner.ts, a9a247fe"
    description = ("Before every call: protect the last 2 user turns and the next 40k tokens of tool output "
                   "(crossing output kept); if at least 20k more tokens are older, replace them with markers.")
    Settings = PiContextPruningSettings

    def apply(self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo,
              counter: Any) -> PruneResult:
        s: PiContextPruningSettings = settings
        plan = Plan(messages, counter)
        user_turns = protected_tokens = prunable_tokens = 0
        candidates: list[tuple[int, int]] = []
        for i in range(len(messages) - 1, -1, -1):
            cm = messages[i]
            if cm.role == "user":
                user_turns += 1
                continue
            if cm.role == "compactionSummary":
                break
            if cm.role != "toolResult":
                continue
            m = cm.message
            tokens = estimate_tokens(m)
            plan.scanned += tokens
            if user_turns < s.protected_turns:
                plan.protected += tokens
                plan.keep(i, f"in the last {s.protected_turns} user turns (PROTECTED_TURNS)")
                continue
            tool = m.toolName  # type: ignore[union-attr]
            if tool in s.protected_tools or (s.prunable_tools and tool not in s.prunable_tools):
                plan.keep(i, f"tool {tool!r} is not prunable (PROTECTED_TOOLS / PRUNABLE_TOOLS)")
                continue
            if protected_tokens < s.prune_protect:
                protected_tokens += tokens
                plan.protected += tokens
                plan.keep(i, f"within the newest {s.prune_protect:,} older tool-output tokens (PRUNE_PROTECT)")
                continue
            candidates.append((i, tokens))
            prunable_tokens += tokens
        minimum = 0 if call.force else s.prune_minimum
        events: list[dict[str, Any]] = []
        if not candidates or prunable_tokens < minimum:
            for i, _ in candidates:
                plan.keep(i, f"candidate, but only {prunable_tokens:,} tokens prunable < PRUNE_MINIMUM {minimum:,}")
            if candidates:
                events.append({"type": "prune_skipped", "strategy": self.name,
                               "reason": f"{prunable_tokens:,} prunable < PRUNE_MINIMUM {minimum:,}"})
            return plan.finish(events=events)
        for i, tokens in candidates:
            cm = messages[i]
            m = cm.message
            if getattr(m, "isError", False):
                plan.keep(i, "error results are never pruned (checked when applying)")
                continue
            marker = marker_for(tokens, m.toolName, _args_for(messages, i, m.toolCallId))  # type: ignore[union-attr]
            plan.prune(i, with_text(cm, marker), marker,
                       f"older than the protected {s.prune_protect:,} tokens; {prunable_tokens:,} ≥ "
                       f"PRUNE_MINIMUM {minimum:,}" + (" (forced by /prune)" if call.force else ""))
        return plan.finish(events=events)
