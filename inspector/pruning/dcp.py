"""Dynamic Context Pruning's deterministic rules (the LLM-driven ``compress`` tool is not replayed).

Source: Opencode-DCP/opencode-dynamic-context-pruning v3.0.4 (fbd75bce)
``lib/strategies/{deduplication,supersede-writes,purge-errors}.ts``, ``lib/messages/prune.ts``,
``lib/state/{tool-cache,utils}.ts``; the write placeholder from ``lib/messages/prune.ts`` before
commit 4618a7f (January 2026). Reproduced:

* Rules mark tool calls; what a marked call looks like depends on its status and tool:
  completed → its output becomes
  ``[Output removed to save context - information superseded or no longer needed]``
  (``question``: its ``questions`` input becomes
  ``[questions removed - see output for user's answers]`` instead; completed ``edit``/``write``
  are left alone in v3); errored → every string input becomes
  ``[input removed due to failed tool call]`` and the error text stays.
* **Deduplication** (on): calls with the same tool and the same arguments (null keys removed,
  object keys sorted, array order kept) — all but the newest are marked. Status is ignored,
  so an earlier *failed* identical call loses its inputs at once.
* **Purge errors** (on, ``turns`` 4): a failed call whose age ``currentTurn − callTurn`` is at
  least 4 is marked. DCP's "turn" is an LLM step (``step-start`` part), not a user turn: here
  the k-th assistant message (1-based) is turn k, and ``currentTurn`` is the number of
  assistant messages in the context when the call is made.
* **Supersede writes** (off: disabled by default since 4618a7f, and its call is commented out
  in v3.0.4): a ``write`` whose file is ``read`` later is marked; as DCP did before 4618a7f,
  the write's ``content`` input becomes
  ``[content removed to save context, this is not what was written to the file, but a placeholder]``
  (models copied that placeholder into files — DCP issue #215). The file is ``path`` (pi's
  tools) or ``filePath`` (OpenCode's).
* Calls created before the last compaction are never touched and their steps are not counted
  (``isMessageCompacted``): in pi that is everything up to the compaction summary, including
  the messages the compaction kept.
* Stateless here, recomputed at every call: DCP persists the marked ids, which only differs
  when the newer duplicate leaves the context. DCP prunes nothing by size, so no token
  estimate is needed; reports use the caller's counter.

Not reproduced: ``protectedFilePatterns``, manual mode, turn protection (off by default), the
``compress`` tool and nudges. The pi port (barisgit/pi-dynamic-context-pruning f329d5ea) runs
the same rules with other details — failed outputs replaced by
``[Error output removed - tool failed more than N turns ago]``, "logical" turns, ``write``/``edit``
never deduplicated — which this module does not follow.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ContextMessage
from ..jsjson import js_sort_key, js_stringify
from ..session.models import AssistantMessage, ToolCall
from .base import CallInfo, IdMemo, Plan, PruneResult, Strategy, with_text
from .runner import IncrementalRunner

OUTPUT_MARKER = "[Output removed to save context - information superseded or no longer needed]"
ERROR_INPUT_MARKER = "[input removed due to failed tool call]"
QUESTION_MARKER = "[questions removed - see output for user's answers]"
WRITE_MARKER = (
    "[content removed to save context, this is not what was written to the file, but a placeholder]"
)


class DcpSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    deduplication: bool = Field(True, description="Mark all but the newest of identical tool calls.")
    purge_errors: bool = Field(True, description="Remove the inputs of failed calls after N turns.")
    purge_error_turns: int = Field(
        4, ge=1, le=100, description="Age in LLM steps before a failed call's inputs go."
    )
    supersede_writes: bool = Field(False, description="Remove a write's content once the file is read again.")
    protected_tools: tuple[str, ...] = Field(
        (), description="Tools no rule marks (each rule's protectedTools)."
    )


def _sort_keys(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _sort_keys(v[k]) for k in sorted(v, key=js_sort_key)}
    if isinstance(v, list):
        return [_sort_keys(x) for x in v]
    return v


_SIGNATURES = IdMemo()
_EDITED = IdMemo()


def signature(call: ToolCall) -> str:
    """DCP's ``createToolSignature``: null keys dropped at the top level, keys sorted throughout."""
    return _SIGNATURES.get(call, None, lambda: _signature(call))


def _signature(call: ToolCall) -> str:
    a = call.arguments
    if a is None:
        return call.name
    if isinstance(a, dict):
        a = {k: v for k, v in a.items() if v is not None}
    try:
        sorted_args = _sort_keys(a)
    except RecursionError:  # arguments nested thousands deep (pi accepts them)
        from ..deep import deep_call

        sorted_args = deep_call(_sort_keys, a)
    return call.name + "::" + js_stringify(sorted_args)


def _file_of(call: ToolCall) -> str | None:
    a = call.arguments
    if not isinstance(a, dict):
        return None
    p = a.get("path", a.get("filePath"))
    return p if isinstance(p, str) and p else None


def with_args(cm: ContextMessage, by_id: dict[str, tuple[Any, ...]]) -> ContextMessage:
    """An assistant message whose tool calls in ``by_id`` (id → (arguments, marker, …)) are sent
    with those arguments (the same object for the same message and markers at every call)."""
    m = cm.message
    assert isinstance(m, AssistantMessage)
    key = tuple(sorted((cid, v[1]) for cid, v in by_id.items()))
    new = _EDITED.get(
        m,
        key,
        lambda: m.model_copy(
            update={
                "content": [
                    b.model_copy(update={"arguments": by_id[b.id][0]})
                    if isinstance(b, ToolCall) and b.id in by_id
                    else b
                    for b in m.content
                ]
            }
        ),
    )
    return ContextMessage(new, cm.entry_index)


def after_last_compaction(messages: Sequence[ContextMessage]) -> int:
    """Position from which messages count for DCP: after the last compaction summary and after
    the messages that compaction kept (their entries come before the compaction's)."""
    last = max((i for i, cm in enumerate(messages) if cm.role == "compactionSummary"), default=None)
    if last is None:
        return 0
    boundary = messages[last].entry_index
    i = last + 1
    if boundary is not None:
        while i < len(messages) and (e := messages[i].entry_index) is not None and e < boundary:
            i += 1
    return i


class Dcp(Strategy):
    name = "dcp"
    title = "Dynamic Context Pruning (deterministic rules)"
    source = "Opencode-DCP/opencode-dynamic-context-pruning v3.0.4 lib/strategies/*, lib/messages/prune.ts, fbd75bce"
    description = (
        "Deduplicate identical tool calls (keep the newest), strip the inputs of failed calls after 4 "
        "LLM steps, optionally supersede a write by a later read."
    )
    Settings = DcpSettings

    def runner(self, settings: Any, counter: Any) -> DcpRunner:
        return DcpRunner(self, settings, counter)

    def apply(
        self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo, counter: Any
    ) -> PruneResult:
        s: DcpSettings = settings
        plan = Plan(messages, counter)
        start = after_last_compaction(messages)
        calls: list[tuple[int, int, ToolCall]] = []  # (message position, turn, call)
        results: dict[str, int] = {}
        turn = 0
        for i in range(start, len(messages)):
            m = messages[i].message
            if isinstance(m, AssistantMessage):
                turn += 1
                calls.extend((i, turn, b) for b in m.content if isinstance(b, ToolCall))
            elif messages[i].role == "toolResult":
                results[m.toolCallId] = i  # type: ignore[union-attr]
                plan.scanned += plan.tokens(i)
        for i in range(start):
            if messages[i].role == "toolResult":
                plan.keep(i, "before the last compaction: DCP leaves it alone")
        marked = self._mark(calls, results, messages, turn, s)
        self._render(marked, calls, results, messages, plan, s)
        return plan.finish()

    def _mark(
        self,
        calls: list[tuple[int, int, ToolCall]],
        results: dict[str, int],
        messages: Sequence[ContextMessage],
        current: int,
        s: DcpSettings,
    ) -> dict[str, tuple[str, str]]:
        """Marked call ids → (rule, reason), in DCP's order: dedup, supersede writes, purge errors."""
        marked: dict[str, tuple[str, str]] = {}
        eligible = [(i, t, c) for i, t, c in calls if c.name not in s.protected_tools]
        if s.deduplication:
            newest: dict[str, str] = {}
            for _, _, c in eligible:
                newest[signature(c)] = c.id
            for _, _, c in eligible:
                if newest[signature(c)] != c.id:
                    marked.setdefault(
                        c.id,
                        (
                            "dedup",
                            f"the same {c.name} call with the same arguments is made again "
                            "later (deduplication keeps the newest)",
                        ),
                    )
        if s.supersede_writes:
            last_read: dict[str, int] = {}
            for k, (_, _, c) in enumerate(calls):
                f = _file_of(c)
                if c.name == "read" and f:
                    last_read[f] = k
            for k, (_, _, c) in enumerate(calls):
                f = _file_of(c)
                if c.name == "write" and f and last_read.get(f, -1) > k and c.name not in s.protected_tools:
                    marked.setdefault(
                        c.id, ("supersede", "write superseded by a later read of the same file")
                    )
        if s.purge_errors:
            for _, t, c in eligible:
                r = results.get(c.id)
                if (
                    r is not None
                    and getattr(messages[r].message, "isError", False)
                    and current - t >= s.purge_error_turns
                ):
                    marked.setdefault(
                        c.id, ("purge", f"failed at least {s.purge_error_turns} LLM steps ago (purge errors)")
                    )
        return marked

    def _render(
        self,
        marked: dict[str, tuple[str, str]],
        calls: list[tuple[int, int, ToolCall]],
        results: dict[str, int],
        messages: Sequence[ContextMessage],
        plan: Plan,
        s: DcpSettings,
    ) -> None:
        new_args: dict[
            int, dict[str, tuple[Any, str, str]]
        ] = {}  # assistant position -> id -> (args, marker, why)
        for i, _, c in calls:
            if c.id not in marked:
                continue
            rule, why = marked[c.id]
            r = results.get(c.id)
            if r is None:
                continue  # no result (aborted): nothing to replace
            args = c.arguments if isinstance(c.arguments, dict) else {}
            if getattr(messages[r].message, "isError", False):
                if any(isinstance(v, str) for v in args.values()):
                    purged = {k: ERROR_INPUT_MARKER if isinstance(v, str) else v for k, v in args.items()}
                    new_args.setdefault(i, {})[c.id] = (purged, ERROR_INPUT_MARKER, why)
                plan.keep(r, "a failed call's error text is kept (its inputs go)")
            elif c.name == "question":
                if "questions" in args:
                    new_args.setdefault(i, {})[c.id] = (
                        {**args, "questions": QUESTION_MARKER},
                        QUESTION_MARKER,
                        why,
                    )
            elif c.name in ("edit", "write"):
                if rule == "supersede" and "content" in args:
                    new_args.setdefault(i, {})[c.id] = ({**args, "content": WRITE_MARKER}, WRITE_MARKER, why)
                else:
                    plan.keep(r, f"marked ({rule}), but DCP v3 leaves completed edit/write calls alone")
            else:
                plan.prune(r, with_text(messages[r], OUTPUT_MARKER), OUTPUT_MARKER, why)
        for i, by_id in new_args.items():
            first = next(iter(by_id.values()))
            plan.prune(i, with_args(messages[i], by_id), first[1], "tool inputs replaced: " + first[2])


@dataclass
class _Call:
    pos: int
    turn: int
    call: ToolCall
    eligible: bool
    dedup: bool = False
    supersede: bool = False
    purge: bool = False
    effect: Any = None  # what its marks do now: ("result", position) or ("args", position)


class DcpRunner(IncrementalRunner):
    """:meth:`Dcp.apply`, call after call. Within one context every rule only ever adds marks:
    a newer identical call marks the older one for good, a later read supersedes a write for good,
    and a failed call's age only grows. So each tool call is looked at when it arrives, when a
    rule marks it and when its result arrives; the order of the rules (dedup, supersede, purge)
    decides what a mark does, as in ``apply``. A context with a tool-call id used twice falls
    back to ``apply``."""

    def _begin(self, msgs: Sequence[ContextMessage]) -> None:
        s: DcpSettings = self.settings
        self.protected = frozenset(s.protected_tools)
        self.boundary: int | None = None
        self.skipping = False  # still skipping what the last compaction kept
        self._seq = itertools.count()
        self._region()

    def _region(self) -> None:
        """Start DCP's count (a new context, or a compaction summary within one)."""
        self.turn = 0
        self.calls: list[_Call] = []
        self.by_id: dict[str, _Call] = {}
        self.results: dict[str, int] = {}
        self.newest: dict[str, _Call] = {}  # signature -> newest eligible call
        self.writes: dict[str, list[_Call]] = {}  # file -> writes not superseded yet
        self.failed: list[tuple[int, int, _Call]] = []  # heap of (turn, order, call) not purged yet
        self.args: dict[int, dict[str, tuple[Any, str]]] = {}  # assistant position -> replaced inputs

    def _append(self, msgs: Sequence[ContextMessage], i: int) -> None:
        cm = msgs[i]
        if cm.role == "compactionSummary":
            for c in self.calls:  # what came before no longer counts
                if c.effect is not None:
                    self._keep(c.effect[1] if c.effect[0] == "result" else c.pos)
            self._region()
            self.boundary = cm.entry_index
            self.skipping = self.boundary is not None
            return
        if self.skipping:
            if cm.entry_index is not None and cm.entry_index < self.boundary:  # type: ignore[operator]
                return
            self.skipping = False
        m = cm.message
        if isinstance(m, AssistantMessage):
            self.turn += 1
            for b in m.content:
                if isinstance(b, ToolCall):
                    self._new_call(msgs, _Call(i, self.turn, b, b.name not in self.protected))
        elif cm.role == "toolResult":
            cid = m.toolCallId  # type: ignore[union-attr]
            if cid in self.results:
                self._fall_back()
                return
            self.results[cid] = i
            done = self.by_id.get(cid)
            if done is not None:
                if done.eligible and self.settings.purge_errors and getattr(m, "isError", False):
                    heapq.heappush(self.failed, (done.turn, next(self._seq), done))
                self._render(msgs, done)

    def _new_call(self, msgs: Sequence[ContextMessage], c: _Call) -> None:
        s: DcpSettings = self.settings
        if c.call.id in self.by_id or c.call.id in self.results:
            self._fall_back()
            return
        self.calls.append(c)
        self.by_id[c.call.id] = c
        if c.eligible and s.deduplication:
            sig = signature(c.call)
            older = self.newest.get(sig)
            self.newest[sig] = c
            if older is not None and not older.dedup:
                older.dedup = True
                self._render(msgs, older)
        if s.supersede_writes:
            f = _file_of(c.call)
            if f and c.call.name == "read":
                for w in self.writes.pop(f, ()):
                    w.supersede = True
                    self._render(msgs, w)
            elif f and c.call.name == "write" and c.eligible:
                self.writes.setdefault(f, []).append(c)

    def _decide(
        self, msgs: Sequence[ContextMessage], state: Any, call: Any
    ) -> tuple[list[dict[str, Any]], Any]:
        n = self.settings.purge_error_turns
        while self.failed and self.turn - self.failed[0][0] >= n:
            c = heapq.heappop(self.failed)[2]
            c.purge = True
            self._render(msgs, c)
        return [], None

    def _render(self, msgs: Sequence[ContextMessage], c: _Call) -> None:
        """What ``Dcp._render`` does with this call's marks now."""
        rule = "dedup" if c.dedup else "supersede" if c.supersede else "purge" if c.purge else None
        r = self.results.get(c.call.id)
        effect: Any = None
        if rule is not None and r is not None:
            name = c.call.name
            args = c.call.arguments if isinstance(c.call.arguments, dict) else {}
            if getattr(msgs[r].message, "isError", False):
                if any(isinstance(v, str) for v in args.values()):
                    effect = (
                        "args",
                        {k: ERROR_INPUT_MARKER if isinstance(v, str) else v for k, v in args.items()},
                        ERROR_INPUT_MARKER,
                    )
            elif name == "question":
                if "questions" in args:
                    effect = ("args", {**args, "questions": QUESTION_MARKER}, QUESTION_MARKER)
            elif name in ("edit", "write"):
                if rule == "supersede" and "content" in args:
                    effect = ("args", {**args, "content": WRITE_MARKER}, WRITE_MARKER)
            else:
                effect = ("result", r)
        self._apply(c, effect, msgs)

    def _apply(self, c: _Call, effect: Any, msgs: Sequence[ContextMessage]) -> None:
        old = c.effect
        c.effect = effect
        if old is not None and old[0] == "result" and (effect is None or effect[0] != "result"):
            self._keep(old[1])
        if old is not None and old[0] == "args" and (effect is None or effect[0] != "args"):
            by_id = self.args.get(c.pos, {})
            by_id.pop(c.call.id, None)
            self._redo_args(c.pos, by_id)
        if effect is None:
            return
        if effect[0] == "result":
            self._prune(msgs, effect[1], with_text(msgs[effect[1]], OUTPUT_MARKER))
        else:
            self.args.setdefault(c.pos, {})[c.call.id] = (effect[1], effect[2])
            self._redo_args(c.pos, self.args[c.pos])

    def _redo_args(self, pos: int, by_id: dict[str, tuple[Any, str]]) -> None:
        if not by_id:
            self.args.pop(pos, None)
            self._keep(pos)
        else:
            self._prune(self._msgs, pos, with_args(self._msgs[pos], by_id))
