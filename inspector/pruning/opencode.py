"""OpenCode's classic tool-output ``prune``.

Source: sst/opencode ``packages/opencode/src/session/compaction.ts`` (``prune``; stored version
fd78ec63) and ``message-v2.ts`` (how a pruned part is shown). Quirks reproduced:

* Runs after the agent's final answer to a prompt (in the background), never between the
  tool calls of one run: its effect shows from the **next** prompt's calls. In a replay it runs
  when a call has ``new_prompt`` set, over the messages before that new prompt.
* Walks newest → oldest. **Every** user message counts a turn — real prompts and synthetic
  ones (in pi: ``custom`` messages, and ``bashExecution`` runs, which pi sends as user text);
  messages of the last 2 user turns are skipped.
* A compaction summary stops the walk; so does the first output already pruned by an earlier
  pass (``break``, not ``continue`` — OpenCode issue #30807).
* Only completed outputs count: error results are neither counted nor pruned. Tools in
  ``protected_tools`` (``skill``) are skipped and **not counted**.
* The estimate is OpenCode's own, ``round(len(output) / 4)`` on the output text (JS
  ``Math.round``, UTF-16 length); figures reported outside use the caller's counter.
* ``total > PRUNE_PROTECT`` after adding an output marks it: the output that **crosses** the
  40,000 budget is itself pruned. Nothing happens unless ``pruned > PRUNE_MINIMUM`` (strict).
* Pruning persists (the part's ``time.compacted``): pruned outputs stay pruned at every later
  call. The model sees ``[Old tool result content cleared]``; the call and its arguments stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from .base import CallInfo, Plan, PruneResult, Strategy, js_round, result_text, text_len, with_text

MARKER = "[Old tool result content cleared]"
_TURN_ROLES = ("user", "custom", "bashExecution")


class OpenCodeSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    prune_protect: int = Field(40000, ge=0, le=1_000_000,
                               description="PRUNE_PROTECT: newest tool-output tokens always kept (crossing output pruned).")
    prune_minimum: int = Field(20000, ge=0, le=1_000_000,
                               description="PRUNE_MINIMUM: prune only if more than this many tokens would go (strict >).")
    protected_turns: int = Field(2, ge=0, le=50, description="Recent user turns never touched (hard-coded 2 in OpenCode).")
    protected_tools: tuple[str, ...] = Field(("skill",), description="Tools never pruned and not counted.")


class OpenCodePrune(Strategy):
    name = "opencode"
    title = "OpenCode prune"
    source = "sst/opencode packages/opencode/src/session/compaction.ts (prune), fd78ec63"
    description = ("After each prompt's final answer: keep the newest 40k tool-output tokens and the last 2 "
                   "turns, clear older outputs if more than 20k tokens would go; cleared outputs stay cleared.")
    Settings = OpenCodeSettings

    def apply(self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo,
              counter: Any) -> PruneResult:
        s: OpenCodeSettings = settings
        compacted: frozenset[int] = state if isinstance(state, frozenset) else frozenset()
        events: list[dict[str, Any]] = []
        plan = Plan(messages, counter)
        if call.new_prompt:
            last_user = max((i for i, cm in enumerate(messages) if cm.role == "user"), default=0)
            newly, scanned, protected, pruned, reason = self.pass_(messages[:last_user], s, compacted)
            plan.scanned, plan.protected = scanned, protected
            if newly:
                compacted = compacted | newly
                events.append({"type": "prune_pass", "strategy": self.name, "items": len(newly),
                               "estimate": pruned})
            elif reason:
                events.append({"type": "prune_skipped", "strategy": self.name, "reason": reason})
        for i, cm in enumerate(messages):
            if cm.role == "toolResult" and cm.entry_index in compacted:
                plan.prune(i, with_text(cm, MARKER), MARKER,
                           "cleared by an earlier OpenCode prune pass (pruning persists)")
        return plan.finish(state=compacted, events=events)

    def pass_(self, messages: Sequence[ContextMessage], s: OpenCodeSettings,
              compacted: frozenset[int]) -> tuple[frozenset[int], int, int, int, str]:
        """One ``prune`` pass: (entry indexes to mark, scanned, protected, pruned estimate, skip reason)."""
        turns = total = pruned = 0
        to_prune: list[int] = []
        protected = 0
        for cm in reversed(messages):
            m = cm.message
            if cm.role in _TURN_ROLES:
                turns += 1
            if turns < s.protected_turns:
                continue
            if cm.role == "compactionSummary":
                break
            if cm.role != "toolResult" or getattr(m, "isError", False):
                continue
            if m.toolName in s.protected_tools:  # type: ignore[union-attr]
                continue
            if cm.entry_index in compacted:
                break
            est = js_round(text_len(result_text(m)) / 4)  # type: ignore[arg-type]
            total += est
            if total > s.prune_protect:
                pruned += est
                if cm.entry_index is not None:
                    to_prune.append(cm.entry_index)
            else:
                protected += est
        if pruned > s.prune_minimum:
            return frozenset(to_prune), total, protected, pruned, ""
        reason = (f"only {pruned:,} tokens prunable, not more than PRUNE_MINIMUM {s.prune_minimum:,}" if total
                  else "")
        return frozenset(), total, protected, pruned, reason
