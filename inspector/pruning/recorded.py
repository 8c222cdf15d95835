"""What the agent itself pruned, as its session file records it (no simulation).

pi records no pruning (its extensions prune in memory). Other agents write it down, and the
importers keep each original output together with the agent's mark:

* OpenCode: a tool part's ``state.time.compacted`` (ms) — the model sees
  ``[Old tool result content cleared]`` from then on (``message-v2.ts``). The OpenCode importer
  keeps it in the tool result's ``details["opencode"]["compacted"]``.
* Claude Code: a ``microcompact_boundary`` line's ``compactedToolIds`` (reported format,
  unverified against a real file). The Claude Code importer marks those results with
  ``details["claudeCode"]["microcompacted"]`` (ms of the boundary line).

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
from ..session.models import ToolResultMessage
from .base import CallInfo, Plan, PruneResult, Strategy, with_text
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
    for agent, key, field in (("OpenCode", "opencode", "compacted"), ("Claude Code", "claudeCode", "microcompacted")):
        d = m.details.get(key)
        at = d.get(field) if isinstance(d, dict) else None
        if finite_ms(at) is not None:
            return RecordedPrune(agent, finite_ms(at), CLEARED)
    return None


def _ms(m: Any) -> float | None:
    return finite_ms(getattr(m, "timestamp", None))


class RecordedSettings(BaseModel):
    model_config = ConfigDict(frozen=True)


class Recorded(Strategy):
    name = "recorded"
    title = "As recorded (the agent's own pruning)"
    source = "the session file (OpenCode time.compacted; Claude Code microcompact_boundary)"
    description = "Tool outputs the agent itself cleared, from the moment the file says it cleared them."
    Settings = RecordedSettings

    def runner(self, settings: Any, counter: Any) -> RecordedRunner:
        return RecordedRunner(self, settings, counter)

    def apply(self, messages: Sequence[ContextMessage], settings: Any, state: Any, call: CallInfo,
              counter: Any) -> PruneResult:
        plan = Plan(messages, counter)
        now = call.time_ms if call.time_ms is not None else max(
            (t for cm in messages if (t := _ms(cm.message)) is not None), default=None)
        for i, cm in enumerate(messages):
            r = recorded_prune(cm.message)
            if r is None:
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
    newest message timestamp in the context, which is kept as messages arrive."""

    def _begin(self, msgs: Sequence[ContextMessage]) -> None:
        self.marks: list[tuple[float, int]] = []  # (time of the mark, position), sorted
        self.newest: float | None = None
        self.now = -_ALWAYS  # the marks at or before this time are pruned

    def _append(self, msgs: Sequence[ContextMessage], i: int) -> None:
        cm = msgs[i]
        t = _ms(cm.message)
        if t is not None and (self.newest is None or t > self.newest):
            self.newest = t
        r = recorded_prune(cm.message)
        if r is not None:
            k = bisect_right(self.marks, (r.at, i))
            self.marks.insert(k, (r.at, i))
            if r.at <= self.now:
                self._prune(msgs, i, with_text(cm, r.marker))

    def _decide(self, msgs: Sequence[ContextMessage], state: Any, call: Any) -> tuple[list[dict[str, Any]], Any]:
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
