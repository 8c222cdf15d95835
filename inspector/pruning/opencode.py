"""OpenCode's classic tool-output ``prune``.

Source: sst/opencode (now anomalyco/opencode) ``packages/opencode/src/session/compaction.ts``
(``prune``; stored version fd78ec63) and ``message-v2.ts`` (how a pruned part is shown).
Quirks reproduced:

* Runs after the agent's final answer to a prompt (in the background), never between the
  tool calls of one run: its effect shows from the **next** prompt's calls. In a replay it runs
  at a call with ``new_prompt`` set, over the messages before that new prompt.
* Walks newest → oldest. **Every** user message counts a turn, synthetic ones included
  (OpenCode's "Continue…" and compaction requests). In pi the model receives as user messages
  real prompts, ``custom`` (extension) messages, ``!`` bash runs and branch summaries, so all
  of them count here. Messages of the last 2 user turns are skipped.
* A compaction summary stops the walk (checked after the turn guard, as in OpenCode); so does
  the first output already pruned by an earlier pass (``break``, not ``continue`` — OpenCode
  issue #30807), so a pass only looks at outputs newer than the previous pass's.
* Only completed outputs count: error results are neither counted nor pruned. Tools in
  ``protected_tools`` (``skill``) are skipped and **not counted**.
* The estimate is OpenCode's own, ``round(len(output) / 4)`` on the output text (JS
  ``Math.round``, UTF-16 length; images not counted); the thresholds compare that. Every
  figure reported outside (decisions, stats) uses the caller's counter.
* ``total > PRUNE_PROTECT`` after adding an output marks it: the output that **crosses** the
  40,000 budget is itself pruned. Nothing happens unless ``pruned > PRUNE_MINIMUM`` (strict).
* Pruning persists (the part's ``time.compacted``, kept here in ``state`` by entry index, so it
  survives a pi compaction that keeps the entry): pruned outputs stay pruned at every later call.
  (The state is a :class:`~inspector.pruning.base.GrowingSet`: one per call, sharing storage.)
  The model sees ``[Old tool result content cleared]``; the call and its arguments stay.

Not reproduced: whether prune is on at all. Classic OpenCode runs it unless
``compaction.prune`` is ``false``; newer releases only when it is ``true`` (issue #24108).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from .base import (
    CallInfo,
    GrowingSet,
    IdMemo,
    Plan,
    PruneResult,
    Strategy,
    is_sent_as_user,
    js_round,
    result_text,
    text_len,
    with_text,
)
from .runner import IncrementalRunner

MARKER = "[Old tool result content cleared]"
_ESTIMATES = IdMemo()  # OpenCode's estimate per tool result object


class OpenCodeSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    prune_protect: int = Field(
        40000,
        ge=0,
        le=1_000_000,
        description="PRUNE_PROTECT: newest tool-output tokens always kept (crossing output pruned).",
    )
    prune_minimum: int = Field(
        20000,
        ge=0,
        le=1_000_000,
        description="PRUNE_MINIMUM: prune only if more than this many tokens would go (strict >).",
    )
    protected_turns: int = Field(
        2, ge=0, le=50, description="Recent user turns never touched (hard-coded 2 in OpenCode)."
    )
    protected_tools: tuple[str, ...] = Field(("skill",), description="Tools never pruned and not counted.")


def estimate(cm: ContextMessage) -> int:
    """OpenCode's ``Token.estimate(output)``: ``Math.round(output.length / 4)``."""
    return js_round(text_len(result_text(cm.message)) / 4)  # type: ignore[arg-type]


@dataclass(frozen=True)
class _Pass:
    marked: frozenset[int]
    """Entry indexes this pass clears (empty when the minimum is not exceeded)."""
    reasons: dict[int, str]
    """Why each tool output the pass looked at (or skipped) stays or goes, by position."""
    scanned: list[int]
    protected: list[int]
    estimate: int
    skipped: str


class OpenCodePrune(Strategy):
    name = "opencode"
    title = "OpenCode prune"
    source = "sst/opencode packages/opencode/src/session/compaction.ts (prune), fd78ec63"
    description = (
        "After each prompt's final answer: keep the newest 40k tool-output tokens and the last 2 "
        "turns, clear older outputs if more than 20k tokens would go; cleared outputs stay cleared."
    )
    Settings = OpenCodeSettings

    def runner(self, settings: Any, counter: Any) -> OpenCodeRunner:
        return OpenCodeRunner(self, settings, counter)

    def apply(
        self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo, counter: Any
    ) -> PruneResult:
        s: OpenCodeSettings = settings
        compacted: Any = state if isinstance(state, (frozenset, GrowingSet)) else GrowingSet()
        events: list[dict[str, Any]] = []
        plan = Plan(messages, counter)
        reasons: dict[int, str] = {}
        if call.new_prompt:
            last_user = max((i for i, cm in enumerate(messages) if cm.role == "user"), default=0)
            p = self.pass_(messages[:last_user], s, compacted)
            plan.scanned = sum(plan.tokens(i) for i in p.scanned)
            plan.protected = sum(plan.tokens(i) for i in p.protected)
            reasons = p.reasons
            if p.marked:
                compacted = compacted | p.marked
                events.append(
                    {
                        "type": "prune_pass",
                        "strategy": self.name,
                        "items": len(p.marked),
                        "estimate": p.estimate,
                    }
                )
            elif p.skipped:
                events.append({"type": "prune_skipped", "strategy": self.name, "reason": p.skipped})
        for i, cm in enumerate(messages):
            if cm.role != "toolResult":
                continue
            if cm.entry_index in compacted:
                why = reasons.get(i) or "cleared by an earlier OpenCode prune pass (pruning persists)"
                plan.prune(i, with_text(cm, MARKER), MARKER, why)
            else:
                plan.keep(
                    i,
                    reasons.get(i)
                    or "not cleared by any prune pass so far (prune runs after a prompt's final answer)",
                )
        return plan.finish(state=compacted, events=events)

    def pass_(self, messages: Sequence[ContextMessage], s: OpenCodeSettings, compacted: Any) -> _Pass:
        """One ``prune`` pass over the messages before the new prompt."""
        turns = total = pruned = 0
        to_prune: list[int] = []
        reasons: dict[int, str] = {}
        scanned: list[int] = []
        protected: list[int] = []
        for i in range(len(messages) - 1, -1, -1):
            cm = messages[i]
            m = cm.message
            if is_sent_as_user(cm) and cm.role != "compactionSummary":
                turns += 1
            if turns < s.protected_turns:
                if cm.role == "toolResult":
                    reasons[i] = f"in the last {s.protected_turns} user turns (never inspected)"
                continue
            if cm.role == "compactionSummary":
                break
            if cm.role != "toolResult":
                continue
            if getattr(m, "isError", False):
                reasons[i] = "error results are neither counted nor pruned (only completed outputs are)"
                continue
            if m.toolName in s.protected_tools:  # type: ignore[union-attr]
                reasons[i] = f"tool {m.toolName!r} is protected (PRUNE_PROTECTED_TOOLS) and not counted"  # type: ignore[union-attr]
                continue
            if cm.entry_index in compacted:
                break  # an earlier pass got this far: everything older is taken as pruned
            est = estimate(cm)
            total += est
            scanned.append(i)
            if total > s.prune_protect:
                pruned += est
                to_prune.append(i)
            else:
                protected.append(i)
                reasons[i] = f"within the newest {s.prune_protect:,} tool-output tokens (PRUNE_PROTECT)"
        if pruned > s.prune_minimum:
            why = (
                f"past the newest {s.prune_protect:,} tool-output tokens (PRUNE_PROTECT); the pass found "
                f"{pruned:,} > PRUNE_MINIMUM {s.prune_minimum:,}"
            )
            for i in to_prune:
                reasons[i] = why
            marked = frozenset(
                messages[i].entry_index for i in to_prune if messages[i].entry_index is not None
            )
            return _Pass(marked, reasons, scanned, protected, pruned, "")  # type: ignore[arg-type]
        for i in to_prune:
            reasons[i] = (
                f"past PRUNE_PROTECT, but the pass found only {pruned:,} tokens to clear, not more "
                f"than PRUNE_MINIMUM {s.prune_minimum:,}"
            )
        skipped = (
            f"only {pruned:,} tokens prunable, not more than PRUNE_MINIMUM {s.prune_minimum:,}"
            if total
            else ""
        )
        return _Pass(frozenset(), reasons, scanned, protected, pruned, skipped)


class OpenCodeRunner(IncrementalRunner):
    """:meth:`OpenCodePrune.apply`, call after call, without walking the context.

    A pass walks newest → oldest from the start of the protected turns to the first compaction
    summary or already-cleared output, adding estimates; every output past the point where the
    running total exceeds PRUNE_PROTECT is marked. Estimates are never negative, so that point is
    found by bisecting prefix sums of the estimates of the outputs a pass can count (completed,
    not protected); the walk's start and stop by bisecting the positions of user-like messages,
    summaries and cleared outputs. Cleared outputs are marked as they arrive or get cleared."""

    def __init__(self, strategy: Any, settings: Any, counter: Any) -> None:
        super().__init__(strategy, settings, counter)
        self.agg: Any = GrowingSet()  # the cleared entries the marks reflect (kept across contexts)

    def _begin(self, msgs: Sequence[ContextMessage]) -> None:
        s: OpenCodeSettings = self.settings
        self.protected_tools = frozenset(s.protected_tools)
        self.turns: list[int] = []  # user-like messages (they count a turn)
        self.users: list[int] = []  # role "user" (where the new prompt is)
        self.summaries: list[int] = []
        self.counted: list[int] = []  # outputs a pass counts: completed, tool not protected
        self.cum: list[int] = [0]  # prefix sums of their OpenCode estimates
        self.results: dict[int, list[int]] = {}  # entry -> tool result positions
        self.cleared: list[int] = []  # counted outputs whose entry is cleared (sorted)

    def _append(self, msgs: Sequence[ContextMessage], i: int) -> None:
        cm = msgs[i]
        role = cm.role
        if is_sent_as_user(cm) and role != "compactionSummary":
            self.turns.append(i)
        if role == "user":
            self.users.append(i)
        elif role == "compactionSummary":
            self.summaries.append(i)
        elif role == "toolResult":
            e = cm.entry_index
            m = cm.message
            counted = not getattr(m, "isError", False) and m.toolName not in self.protected_tools  # type: ignore[union-attr]
            if counted:
                self.counted.append(i)
                self.cum.append(self.cum[-1] + _ESTIMATES.get(m, None, lambda: estimate(cm)))
            if e is not None:
                self.results.setdefault(e, []).append(i)
                if e in self.agg:
                    self._prune(msgs, i, with_text(cm, MARKER))
                    if counted:
                        self.cleared.append(i)

    def _decide(
        self, msgs: Sequence[ContextMessage], state: Any, call: Any
    ) -> tuple[list[dict[str, Any]], Any]:
        s: OpenCodeSettings = self.settings
        compacted: Any = state if isinstance(state, (frozenset, GrowingSet)) else self.agg
        self._sync(msgs, compacted)
        events: list[dict[str, Any]] = []
        if call.new_prompt:
            marked, pruned, total = self._pass(s)
            if pruned > s.prune_minimum:
                if marked:
                    compacted = compacted | marked
                    events.append(
                        {
                            "type": "prune_pass",
                            "strategy": OpenCodePrune.name,
                            "items": len(marked),
                            "estimate": pruned,
                        }
                    )
            elif total:
                events.append(
                    {
                        "type": "prune_skipped",
                        "strategy": OpenCodePrune.name,
                        "reason": f"only {pruned:,} tokens prunable, not more than PRUNE_MINIMUM "
                        f"{s.prune_minimum:,}",
                    }
                )
            self._sync(msgs, compacted)
        return events, compacted

    def _pass(self, s: OpenCodeSettings) -> tuple[frozenset[int], int, int]:
        """(entries marked, estimate past PRUNE_PROTECT, estimate counted) of one pass."""
        end = self.users[-1] if self.users else 0  # the pass sees the messages before the new prompt
        if s.protected_turns == 0:
            g = end - 1
        else:
            k = bisect_left(self.turns, end)
            if k < s.protected_turns:
                return frozenset(), 0, 0
            g = self.turns[k - s.protected_turns]  # the oldest protected turn's message is looked at
        stop = max(_last_at_most(self.summaries, g), _last_at_most(self.cleared, g))
        lo, hi = bisect_right(self.counted, stop), bisect_right(self.counted, g)
        cum = self.cum
        total = cum[hi] - cum[lo]
        # outputs (newest first) are marked once the running total exceeds PRUNE_PROTECT:
        # index j is marked when cum[hi] - cum[j] > protect
        t = bisect_left(cum, cum[hi] - s.prune_protect, lo, hi + 1) - 1
        if t < lo:
            return frozenset(), 0, total
        pruned = cum[t + 1] - cum[lo]
        if pruned <= s.prune_minimum:
            return frozenset(), pruned, total
        msgs = self._msgs
        marked = frozenset(
            e for j in range(lo, t + 1) if (e := msgs[self.counted[j]].entry_index) is not None
        )
        return marked, pruned, total

    def _sync(self, msgs: Sequence[ContextMessage], compacted: Any) -> None:
        """Mark the outputs of ``compacted`` (normally a newer version of what is marked)."""
        if compacted is self.agg:
            return
        added = compacted.added_since(self.agg) if isinstance(compacted, GrowingSet) else None
        if added is None:  # another lineage (or an older version, before an overflow retry)
            for e in [e for e in self.agg if e not in compacted]:
                for i in self.results.get(e, ()):
                    self._keep(i)
                    if _contains(self.cleared, i):
                        del self.cleared[bisect_left(self.cleared, i)]
            added = [e for e in compacted if e not in self.agg]
        for e in added:
            for i in self.results.get(e, ()):
                self._prune(msgs, i, with_text(msgs[i], MARKER))
                if _contains(self.counted, i):
                    insort(self.cleared, i)
        self.agg = compacted


def _contains(positions: list[int], i: int) -> bool:
    k = bisect_left(positions, i)
    return k < len(positions) and positions[k] == i


def _last_at_most(positions: list[int], limit: int) -> int:
    k = bisect_right(positions, limit)
    return positions[k - 1] if k else -1
