"""What the agent itself pruned, as its session file records it (no simulation).

pi records no pruning (its extensions prune in memory). Other agents write it down, and the
importers keep each original output together with the agent's mark:

* OpenCode with the DCP plugin: a ``compress`` call's blocks (the OpenCode importer keeps them in
  the call's tool result ``details["dcp"]``, see :mod:`inspector.importers.opencode_dcp`). While
  that tool result is in the context — the call after the compress on — each block not consumed
  by a later one leaves its entries out and DCP's summary stands, as one user message, where its
  first entry was (DCP's ``filterCompressedRanges`` / ``syncCompressionBlocks``).

* OpenCode: a tool part's ``state.time.compacted`` (ms) — the model sees
  ``[Old tool result content cleared]`` from then on (``message-v2.ts``). The OpenCode importer
  keeps it in the tool result's ``details["opencode"]["compacted"]``.
* Claude Code: a ``microcompact_boundary`` line's ``compactedToolIds`` (the reported format; the
  shared transcript b0dc55 has two such lines, each followed by the cache break it causes). The
  Claude Code importer marks those results with ``details["claudeCode"]["microcompacted"]`` (ms of
  the boundary line).

A marked output is shown pruned at every model call made after the mark (the call's time is the
recorded answer's timestamp; without one, the newest message timestamp in the context).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from ..context import ContextMessage
from ..numbers import finite_ms
from ..session.models import ToolResultMessage, UserMessage
from .base import CallInfo, IdMemo, Plan, PruneResult, Strategy, with_text
from .runner import IncrementalRunner

CLEARED = "[Old tool result content cleared]"


class RecordedPrune(NamedTuple):
    agent: str
    at: float
    """ms since the epoch"""
    marker: str


def recorded_prune(m: Any) -> RecordedPrune | None:
    """The agent's own pruning mark on a tool result, if it has one."""
    if not isinstance(m, ToolResultMessage) or not isinstance(m.details, dict):
        return None
    for agent, key, field in (
        ("OpenCode", "opencode", "compacted"),
        ("Claude Code", "claudeCode", "microcompacted"),
    ):
        d = m.details.get(key)
        at = d.get(field) if isinstance(d, dict) else None
        if (ms := finite_ms(at)) is not None:
            return RecordedPrune(agent, ms, CLEARED)
    return None


def dcp_blocks(m: Any) -> list[dict[str, Any]]:
    """The DCP blocks a compress call's tool result records (see the module docstring)."""
    d = m.details if isinstance(m, ToolResultMessage) and isinstance(m.details, dict) else None
    dcp = d.get("dcp") if d is not None else None
    blocks = dcp.get("blocks") if isinstance(dcp, dict) else None
    return (
        [b for b in blocks if isinstance(b, dict) and isinstance(b.get("block"), int)]
        if isinstance(blocks, list)
        else []
    )


def records_pruning(m: Any) -> bool:
    """Does this message carry an agent's own pruning (a cleared output, a DCP compress)?"""
    return recorded_prune(m) is not None or bool(dcp_blocks(m))


_SUMMARIES = IdMemo()


def _summary_message(block: dict[str, Any]) -> ContextMessage:
    text = str(block.get("summary", ""))
    return ContextMessage(_SUMMARIES.get(block, text, lambda: UserMessage(content=text)), None)


def _apply_dcp(plan: Plan, messages: Sequence[ContextMessage]) -> None:
    blocks = {b["block"]: b for cm in messages for b in dcp_blocks(cm.message)}
    consumed = {c for b in blocks.values() for c in b.get("consumes", []) if isinstance(c, int)}
    for bid, b in sorted(blocks.items()):
        if bid in consumed or not isinstance(b.get("first"), int) or not isinstance(b.get("last"), int):
            continue
        hit = [
            i
            for i, cm in enumerate(messages)
            if cm.entry_index is not None and b["first"] <= cm.entry_index <= b["last"]
        ]
        for i in hit:
            plan.drop(i, f"DCP compressed it into block b{bid} (recorded)")
        if hit:
            plan.insert(hit[0], _summary_message(b))


def _ms(m: Any) -> float | None:
    return finite_ms(getattr(m, "timestamp", None))


class RecordedSettings(BaseModel):
    model_config = ConfigDict(frozen=True)


class Recorded(Strategy):
    name = "recorded"
    title = "As recorded (the agent's own pruning)"
    source = "the session file (OpenCode time.compacted; the DCP plugin's compress; Claude Code microcompact_boundary)"
    description = (
        "Tool outputs the agent itself cleared, and ranges DCP compressed, from the moment the file says "
        "it did."
    )
    Settings = RecordedSettings

    def runner(self, settings: Any, counter: Any) -> RecordedRunner:
        return RecordedRunner(self, settings, counter)

    def apply(
        self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo, counter: Any
    ) -> PruneResult:
        plan = Plan(messages, counter)
        _apply_dcp(plan, messages)
        now = (
            call.time_ms
            if call.time_ms is not None
            else max((t for cm in messages if (t := _ms(cm.message)) is not None), default=None)
        )
        for i, cm in enumerate(messages):
            r = recorded_prune(cm.message)
            if r is None or i in plan.dropped:
                continue
            when = datetime.fromtimestamp(r.at / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            if now is None or r.at <= now:
                plan.prune(i, with_text(cm, r.marker), r.marker, f"{r.agent} cleared it at {when} (recorded)")
            else:
                plan.keep(i, f"{r.agent} clears it later, at {when}")
        return plan.finish()


_ALWAYS = float("inf")  # the time of a call that has none: every mark applies


class RecordedRunner(IncrementalRunner):
    """:meth:`Recorded.apply`, call after call: the marked outputs sorted by the time of their
    mark, and the call's time moving through them. A call without a time of its own takes the
    newest message timestamp in the context, which is kept as messages arrive. A context that
    holds a DCP compress is decided by ``apply`` from the compress on."""

    def _begin(self, msgs: Sequence[ContextMessage]) -> None:
        self.marks: list[tuple[float, int]] = []  # (time of the mark, position), sorted
        self.newest: float | None = None
        self.now = -_ALWAYS  # the marks at or before this time are pruned

    def _append(self, msgs: Sequence[ContextMessage], i: int) -> None:
        cm = msgs[i]
        if dcp_blocks(cm.message):  # DCP's compress drops and inserts messages: decided by apply from here
            self._fall_back()
        t = _ms(cm.message)
        if t is not None and (self.newest is None or t > self.newest):
            self.newest = t
        r = recorded_prune(cm.message)
        if r is not None:
            k = bisect_right(self.marks, (r.at, i))
            self.marks.insert(k, (r.at, i))
            if r.at <= self.now:
                self._prune(msgs, i, with_text(cm, r.marker))

    def _decide(
        self, msgs: Sequence[ContextMessage], state: Any, call: Any
    ) -> tuple[list[dict[str, Any]], Any]:
        now = call.time_ms if call.time_ms is not None else self.newest
        now = _ALWAYS if now is None else now
        if self.marks and now != self.now:
            lo, hi = sorted((self.now, now))
            a = bisect_right(self.marks, (lo, _ALWAYS))
            b = bisect_right(self.marks, (hi, _ALWAYS))
            for _, i in self.marks[a:b]:
                if now > self.now:
                    self._prune(msgs, i, with_text(msgs[i], recorded_prune(msgs[i].message).marker))  # type: ignore[union-attr]
                else:
                    self._keep(i)
        self.now = now
        return [], None
