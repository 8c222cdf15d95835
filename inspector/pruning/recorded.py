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
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from ..context import ContextMessage
from ..numbers import finite_ms, utc_of_ms
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


def _consumes(block: dict[str, Any]) -> list[int]:
    """The block ids a DCP block says it consumes (anything else in the field is ignored: a file
    may hold a number or a string there, and no block id is read from those)."""
    got = block.get("consumes")
    return [c for c in got if isinstance(c, int)] if isinstance(got, list) else []


def _span(block: dict[str, Any]) -> tuple[int, int] | None:
    """The first and last entry index a block covers, when both are given."""
    first, last = block.get("first"), block.get("last")
    return (first, last) if isinstance(first, int) and isinstance(last, int) else None


def _positions(at: dict[int, list[int]], first: int, last: int) -> list[int]:
    """The positions (sorted) of the entries ``first`` … ``last`` in a context whose entry
    indexes map to their positions by ``at``."""
    if last - first < len(at):  # the range's entries, or the context's, whichever are fewer
        return sorted(i for e in range(first, last + 1) if e in at for i in at[e])
    return sorted(i for e, ps in at.items() if first <= e <= last for i in ps)


def dcp_layer(messages: Sequence[ContextMessage]) -> tuple[dict[int, str], list[tuple[int, ContextMessage]]]:
    """What DCP's compresses in ``messages`` do to them: the positions they leave out (with the
    reason) and the summary messages they put in (each before the position it stands at). Each
    block id takes its last definition; a block another one consumes, or that names no range,
    does nothing; a position in two blocks is given the higher block's reason. (The reference:
    :class:`RecordedRunner` keeps the same layer up to date as the context grows.)"""
    at: dict[int, list[int]] = {}
    for i, cm in enumerate(messages):
        if cm.entry_index is not None:
            at.setdefault(cm.entry_index, []).append(i)
    blocks = {b["block"]: b for cm in messages for b in dcp_blocks(cm.message)}
    consumed = {c for b in blocks.values() for c in _consumes(b)}
    dropped: dict[int, str] = {}
    inserted: list[tuple[int, ContextMessage]] = []
    for bid, b in sorted(blocks.items()):
        span = _span(b)
        if bid in consumed or span is None:
            continue
        hit = _positions(at, *span)
        dropped.update(dict.fromkeys(hit, f"DCP compressed it into block b{bid} (recorded)"))
        if hit:
            inserted.append((hit[0], _summary_message(b)))
    return dropped, inserted


def _apply_dcp(plan: Plan, messages: Sequence[ContextMessage]) -> None:
    dropped, inserted = dcp_layer(messages)
    for i, reason in dropped.items():
        plan.drop(i, reason)
    for before, cm in inserted:
        plan.insert(before, cm)


def _reach(blocks: list[dict[str, Any]]) -> int:
    """The last entry index a compress result's blocks name (-1: none)."""
    return max((b["last"] for b in blocks if isinstance(b.get("last"), int)), default=-1)


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
            dt = utc_of_ms(r.at)
            when = dt.strftime("%Y-%m-%d %H:%M:%S UTC") if dt is not None else f"time {r.at:g} ms"
            if now is None or r.at <= now:
                plan.prune(i, with_text(cm, r.marker), r.marker, f"{r.agent} cleared it at {when} (recorded)")
            else:
                plan.keep(i, f"{r.agent} clears it later, at {when}")
        return plan.finish()


_ALWAYS = float("inf")  # the time of a call that has none: every mark applies


class RecordedRunner(IncrementalRunner):
    """:meth:`Recorded.apply`, call after call: the marked outputs sorted by the time of their
    mark, and the call's time moving through them. A call without a time of its own takes the
    newest message timestamp in the context, read up to date only for such a call. DCP's layer
    (:func:`dcp_layer`) is kept up to date block by block: a compress result defines blocks and
    consumes others, and only the blocks it changes are laid on or taken off (each position counts
    the active blocks that leave it out); a message a block's range holds joins that block. So a
    compress costs what it changes, not the context's length. Only a tool result with details can
    carry a mark or a compress."""

    def _begin(self, msgs: Sequence[ContextMessage]) -> None:
        self.marks: list[tuple[float, int]] = []  # (time of the mark, position), sorted
        self.markers: dict[int, str] = {}  # position -> the text its mark clears it to
        self.newest: float | None = None  # the newest message timestamp of msgs[: self.seen]
        self.seen = 0
        self.now = -_ALWAYS  # the marks at or before this time are pruned
        self.at: dict[int, list[int]] = {}  # entry index -> its positions
        self.reach = -1  # the last entry index the blocks of this context name
        self.defs: dict[int, dict[str, Any]] = {}  # block id -> its last definition
        self.consumers: dict[int, int] = {}  # block id -> how many definitions consume it
        self.active: dict[int, tuple[dict[str, Any], int, int, list[int]]] = {}
        """Block id -> (definition, first, last, its positions) of each block laid on the context."""
        self.covers: dict[int, int] = {}  # position -> how many active blocks leave it out
        self.dropped: set[int] = set()  # positions DCP leaves out, as the runner's fates have them
        self.moved: set[int] = set()  # positions whose cover changed since the last call
        self.relaid = False  # the active blocks, or their first positions, changed since

    def _append(self, msgs: Sequence[ContextMessage], i: int) -> None:
        cm = msgs[i]
        e = cm.entry_index
        if e is not None:
            self.at.setdefault(e, []).append(i)
            if e <= self.reach:  # a block's range may hold it
                for _, first, last, pos in self.active.values():
                    if first <= e <= last:
                        pos.append(i)  # the newest position: the list stays sorted
                        self._cover([i])  # (its summary moves when this is its first position)
        m = cm.message
        if not isinstance(m, ToolResultMessage) or m.details is None:
            return
        blocks = dcp_blocks(m)
        if blocks:  # a compress result: DCP's layer changes
            self.reach = max(self.reach, _reach(blocks))
            self._define(blocks)
        r = recorded_prune(m)
        if r is not None:
            k = bisect_right(self.marks, (r.at, i))
            self.marks.insert(k, (r.at, i))
            self.markers[i] = r.marker
            if r.at <= self.now:
                self._prune(msgs, i, with_text(cm, r.marker))

    def _define(self, blocks: list[dict[str, Any]]) -> None:
        """A compress result's blocks: each defines its id again, and consumes the ids it names;
        the blocks whose standing changed are taken off or laid on."""
        touched: set[int] = set()
        for b in blocks:
            bid = b["block"]
            old = self.defs.get(bid)
            if old is not None:
                for c in _consumes(old):
                    self.consumers[c] -= 1
                    touched.add(c)
            self.defs[bid] = b
            for c in _consumes(b):
                self.consumers[c] = self.consumers.get(c, 0) + 1
                touched.add(c)
            touched.add(bid)
        for bid in touched:
            got = self.defs.get(bid)
            span = _span(got) if got is not None and not self.consumers.get(bid) else None
            cur = self.active.get(bid)
            if cur is not None and (span is None or cur[0] is not got):
                del self.active[bid]
                self._uncover(cur[3])
            if span is not None and got is not None and bid not in self.active:
                hit = _positions(self.at, *span)
                self.active[bid] = (got, span[0], span[1], hit)
                self._cover(hit)

    def _cover(self, positions: list[int]) -> None:
        """One more active block leaves ``positions`` out."""
        covers = self.covers
        for p in positions:
            covers[p] = covers.get(p, 0) + 1
        self.moved.update(positions)
        self.relaid = True

    def _uncover(self, positions: list[int]) -> None:
        """One active block fewer leaves ``positions`` out."""
        covers = self.covers
        for p in positions:
            n = covers[p] - 1
            if n:
                covers[p] = n
            else:
                del covers[p]
        self.moved.update(positions)
        self.relaid = True

    def _newest(self, msgs: Sequence[ContextMessage]) -> float | None:
        """The newest message timestamp in the context."""
        for cm in msgs[self.seen :]:
            t = _ms(cm.message)
            if t is not None and (self.newest is None or t > self.newest):
                self.newest = t
        self.seen = len(msgs)
        return self.newest

    def _decide(
        self, msgs: Sequence[ContextMessage], state: Any, call: Any
    ) -> tuple[list[dict[str, Any]], Any]:
        if self.moved or self.relaid:
            self._relayer(msgs)
        now = call.time_ms if call.time_ms is not None else self._newest(msgs)
        now = _ALWAYS if now is None else now
        if self.marks and now != self.now:
            lo, hi = sorted((self.now, now))
            a = bisect_right(self.marks, (lo, _ALWAYS))
            b = bisect_right(self.marks, (hi, _ALWAYS))
            for _, i in self.marks[a:b]:
                if i in self.dropped:  # DCP left it out: not sent, marked or not
                    continue
                if now > self.now:
                    self._mark_pruned(msgs, i)
                else:
                    self._keep(i)
        self.now = now
        return [], None

    def _mark_pruned(self, msgs: Sequence[ContextMessage], i: int) -> None:
        self._prune(msgs, i, with_text(msgs[i], self.markers[i]))

    def _relayer(self, msgs: Sequence[ContextMessage]) -> None:
        """The positions DCP's layer took off or laid on since the last call: one no longer left
        out is sent as its mark says at the current time; and the summaries, in block order, each
        before its block's first position."""
        for pos in self.moved:
            out = pos in self.covers
            if out and pos not in self.dropped:
                self.dropped.add(pos)
                self._drop(msgs, pos)
            elif not out and pos in self.dropped:
                self.dropped.discard(pos)
                self._keep(pos)
                r = recorded_prune(msgs[pos].message) if pos in self.markers else None
                if r is not None and r.at <= self.now:
                    self._mark_pruned(msgs, pos)
        self.moved = set()
        if self.relaid:
            self.relaid = False
            self.inserted = tuple(
                (pos[0], _summary_message(b)) for _, (b, _, _, pos) in sorted(self.active.items()) if pos
            )
