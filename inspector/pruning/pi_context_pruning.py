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
* Estimate: pi's ``estimateTokens`` (text chars / 4 rounded up, images 1,200 tokens); the
  thresholds compare that, decisions and stats report the caller's counter.
* Marker ``[output pruned — ~N tokens | TOOL | key="value"]``: an em dash; N with en-US
  thousands separators (``toLocaleString``); ``value`` is ``args.path ?? args.command ??
  args.pattern ?? args.query`` — the first of those that is not null/undefined, and the detail
  is left out when that one is not a string (even if a later key holds a string); over 80
  UTF-16 units it is cut to 77 + ``...``; the printed key is the first argument key whose value
  is that same string. Arguments are looked up in the nearest preceding assistant message only.
  (The README's example has no `` | `` before ``key``; the code puts one.)
* ``PRUNABLE_TOOLS`` is the code's list at a9a247fe, which adds ``apply_patch`` to the README's.
* Not reproduced: the ``enabled`` switch (choose ``none`` instead) and the cumulative
  ``/prune-stats`` counters.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from ..jsjson import js_keys, utf16_len, utf16_slice
from ..session.models import AssistantMessage, ToolCall
from ..tokens import estimate_tokens
from .base import CallInfo, Plan, PruneResult, Strategy, pi_estimate, with_text
from .runner import IncrementalRunner

PRUNABLE_DEFAULT = ("read", "bash", "grep", "find", "ls", "edit", "write", "apply_patch")
_DETAIL_KEYS = ("path", "command", "pattern", "query")


class PiContextPruningSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    prune_protect: int = Field(
        40000,
        ge=0,
        le=1_000_000,
        description="PRUNE_PROTECT: older tool-output tokens kept (the crossing output is kept).",
    )
    prune_minimum: int = Field(
        20000,
        ge=0,
        le=1_000_000,
        description="PRUNE_MINIMUM: prune only if candidates total at least this (>=).",
    )
    protected_turns: int = Field(
        2, ge=0, le=50, description="PROTECTED_TURNS: recent user turns never pruned."
    )
    protected_tools: tuple[str, ...] = Field((), description="PROTECTED_TOOLS: never pruned, not counted.")
    prunable_tools: tuple[str, ...] = Field(
        PRUNABLE_DEFAULT, description="PRUNABLE_TOOLS: tools eligible (empty = all not protected)."
    )


def marker_for(tokens: int, tool: str, args: Any) -> str:
    """The extension's ``pruneMarker(toolName, tokens, args)``."""
    detail = ""
    if isinstance(args, dict):
        # `args.path ?? args.command ?? args.pattern ?? args.query`, then `typeof key === "string"`
        value = next((args[k] for k in _DETAIL_KEYS if args.get(k) is not None), None)
        if isinstance(value, str):
            key = next((k for k in js_keys(args) if isinstance(args[k], str) and args[k] == value), "arg")
            shown = value if utf16_len(value) <= 80 else utf16_slice(value, 77) + "..."
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
    description = (
        "Before every call: protect the last 2 user turns and the next 40k tokens of tool output "
        "(crossing output kept); if at least 20k more tokens are older, replace them with markers."
    )
    Settings = PiContextPruningSettings

    def runner(self, settings: Any, counter: Any) -> PiContextPruningRunner:
        return PiContextPruningRunner(self, settings, counter)

    def apply(
        self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo, counter: Any
    ) -> PruneResult:
        s: PiContextPruningSettings = settings
        plan = Plan(messages, counter)
        candidates, prunable_tokens = _walk(messages, s, plan)
        minimum = 0 if call.force else s.prune_minimum
        events: list[dict[str, Any]] = []
        if not candidates or prunable_tokens < minimum:
            for i, _ in candidates:
                plan.keep(
                    i,
                    f"past PRUNE_PROTECT, but only {prunable_tokens:,} tokens prunable < PRUNE_MINIMUM "
                    f"{minimum:,}",
                )
            if candidates:
                events.append(
                    {
                        "type": "prune_skipped",
                        "strategy": self.name,
                        "reason": f"{prunable_tokens:,} prunable < PRUNE_MINIMUM {minimum:,}",
                    }
                )
            return plan.finish(events=events)
        for i, tokens in candidates:
            cm = messages[i]
            m = cm.message
            if getattr(m, "isError", False):
                plan.keep(i, "error results are never pruned (checked when applying)")
                continue
            marker = marker_for(tokens, m.toolName, _args_for(messages, i, m.toolCallId))  # type: ignore[union-attr]
            plan.prune(
                i,
                with_text(cm, marker),
                marker,
                f"past the protected {s.prune_protect:,} tokens (PRUNE_PROTECT); {prunable_tokens:,} ≥ "
                f"PRUNE_MINIMUM {minimum:,}" + (" (forced by /prune: minimum 0)" if call.force else ""),
            )
        return plan.finish(events=events)


def _walk(
    messages: Sequence[ContextMessage], s: PiContextPruningSettings, plan: Plan
) -> tuple[list[tuple[int, int]], int]:
    """The extension's walk, newest to oldest: the protected outputs are kept in ``plan``;
    the candidates (position, estimate) and their total are returned."""
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
        tokens = estimate_tokens(m)  # the extension's own figure; reports use the caller's counter
        plan.scanned += plan.tokens(i)
        if user_turns < s.protected_turns:
            plan.protected += plan.tokens(i)
            plan.keep(i, f"in the last {s.protected_turns} user turns (PROTECTED_TURNS)")
            continue
        tool = m.toolName  # type: ignore[union-attr]
        if tool in s.protected_tools or (s.prunable_tools and tool not in s.prunable_tools):
            plan.protected += plan.tokens(i)
            plan.keep(i, f"tool {tool!r} is not prunable (PROTECTED_TOOLS / PRUNABLE_TOOLS); not counted")
            continue
        if protected_tokens < s.prune_protect:
            protected_tokens += tokens
            plan.protected += plan.tokens(i)
            plan.keep(i, f"within the newest {s.prune_protect:,} older tool-output tokens (PRUNE_PROTECT)")
            continue
        candidates.append((i, tokens))
        prunable_tokens += tokens
    return candidates, prunable_tokens


class PiContextPruningRunner(IncrementalRunner):
    """:meth:`PiContextPruning.apply`, call after call, without walking the context.

    The walk keeps prunable outputs (newest first, past the protected turns, after the last
    compaction summary) while the running total is below PRUNE_PROTECT; every older one is a
    candidate. Estimates are never negative, so the first candidate is found by bisecting prefix
    sums of the prunable outputs' estimates, and the candidates are always a contiguous run of
    them: only the ends of the run move from call to call. Markers are made once per position
    (the message that supplies a marker's arguments precedes the output, so it never changes)."""

    def _begin(self, msgs: Sequence[ContextMessage]) -> None:
        s: PiContextPruningSettings = self.settings
        self.protected = frozenset(s.protected_tools)
        self.allowed = frozenset(s.prunable_tools)
        self.users: list[int] = []
        self.summary = -1  # the last compaction summary's position
        self.prunable: list[int] = []  # outputs of prunable tools
        self.cum: list[int] = [0]  # prefix sums of their estimates (the extension's own figure)
        self.run: tuple[int, int] = (0, 0)  # prunable[a:b] are pruned now

    def _append(self, msgs: Sequence[ContextMessage], i: int) -> None:
        cm = msgs[i]
        role = cm.role
        if role == "user":
            self.users.append(i)
        elif role == "compactionSummary":
            self.summary = i
        elif role == "toolResult":
            tool = cm.message.toolName  # type: ignore[union-attr]
            if not (tool in self.protected or (self.allowed and tool not in self.allowed)):
                self.prunable.append(i)
                self.cum.append(self.cum[-1] + pi_estimate(cm.message))

    def _decide(
        self, msgs: Sequence[ContextMessage], state: Any, call: Any
    ) -> tuple[list[dict[str, Any]], Any]:
        s: PiContextPruningSettings = self.settings
        p = s.protected_turns
        # outputs before the P-th newest user message are past the protected turns
        bound = len(msgs) if p == 0 else self.users[-p] if len(self.users) >= p else -1
        lo = bisect_right(self.prunable, self.summary)
        hi = max(lo, bisect_left(self.prunable, bound))
        cum = self.cum
        # newest first, an output is kept while the total of the newer ones is below PRUNE_PROTECT:
        # prunable[j] is a candidate when cum[hi] - cum[j + 1] >= protect
        end = bisect_right(cum, cum[hi] - s.prune_protect, lo + 1, hi + 1) - 1  # candidates: [lo, end)
        end = max(lo, end)
        prunable_tokens = cum[end] - cum[lo]
        minimum = 0 if call.force else s.prune_minimum
        events: list[dict[str, Any]] = []
        if end == lo or prunable_tokens < minimum:
            if end > lo:
                events.append(
                    {
                        "type": "prune_skipped",
                        "strategy": PiContextPruning.name,
                        "reason": f"{prunable_tokens:,} prunable < PRUNE_MINIMUM {minimum:,}",
                    }
                )
            self._set_run(msgs, lo, lo)
        else:
            self._set_run(msgs, lo, end)
        return events, None

    def _set_run(self, msgs: Sequence[ContextMessage], a: int, b: int) -> None:
        """Prune the outputs ``prunable[a:b]`` (errors stay), keep the others."""
        a0, b0 = self.run
        if a0 != a:  # a new start (a compaction summary arrived): redo the whole run
            self._mark_run(msgs, a0, b0, False)
            a0 = b0 = a
        if b > b0:
            self._mark_run(msgs, b0, b, True)
        elif b < b0:
            self._mark_run(msgs, b, b0, False)
        self.run = (a, b)

    def _mark_run(self, msgs: Sequence[ContextMessage], a: int, b: int, prune: bool) -> None:
        for j in range(a, b):
            i = self.prunable[j]
            if not prune:
                self._keep(i)
                continue
            cm = msgs[i]
            m = cm.message
            if getattr(m, "isError", False):
                continue
            tokens = self.cum[j + 1] - self.cum[j]
            marker = marker_for(tokens, m.toolName, _args_for(msgs, i, m.toolCallId))  # type: ignore[union-attr]
            self._prune(msgs, i, with_text(cm, marker))
