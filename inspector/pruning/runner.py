"""Running a strategy at every model call of a replay, incrementally.

A strategy's :meth:`~inspector.pruning.base.Strategy.apply` decides one call from the whole
context. A replay calls it once per model call over a context that only grows between
compactions, so applying it from scratch at every call costs O(calls × context): minutes on a
long session that never compacts. A :class:`Runner` carries what the strategy needs from one
call to the next instead and looks only at what changed: the messages appended since the last
call, and the few positions whose fate the new call moves.

What a replay needs from a call is an :class:`Outcome` (tokens sent, items pruned or dropped,
events, the strategy's state), which entries are pruned now (:meth:`Runner.is_pruned`, and the
changes since the last step, :meth:`Runner.take_changes`) and, for pi's usage-based size, the
messages sent (:meth:`Runner.usage_tokens`). The decisions themselves (reasons, markers) are
rebuilt on demand by ``apply`` for the one step shown; :class:`FullRunner` is that reference
(``apply`` at every call) and the fallback of an incremental runner that meets a context it was
not written for (duplicate tool-call ids, say). The tests compare both on every sample.

The context a runner sees is the replay's list object: appended to between calls, replaced by a
new list when a compaction rebuilds it. A new list object restarts the runner's view of it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..context import ContextMessage
from ..numbers import clamp_int
from ..tokens import assistant_usage, calculate_context_tokens, estimate_context_tokens

_UNKNOWN = ContextMessage(None, None)  # type: ignore[arg-type]  # a fallback's replacement (not kept)


@dataclass(frozen=True)
class Outcome:
    """What one call did, as a replay records it."""

    tokens: int
    """Tokens sent (after pruning), by the runner's counter."""
    items: int
    """Positions pruned (replaced) or dropped."""
    events: tuple[dict[str, Any], ...]
    state: Any
    """The strategy's state after the call (what ``apply`` returns as ``PruneResult.state``)."""


class Runner:
    """One strategy, one replay: :meth:`call` at every model call, in order."""

    def __init__(self, strategy: Any, settings: Any, counter: Any) -> None:
        self.strategy = strategy
        self.settings = settings
        self.counter = counter
        self._added: set[int] = set()
        self._removed: set[int] = set()

    def call(self, msgs: Sequence[ContextMessage], state: Any, call: Any) -> Outcome:
        raise NotImplementedError

    def is_pruned(self, entry: int) -> bool:
        """Is a message of this entry pruned or dropped at the last call?"""
        raise NotImplementedError

    def take_changes(self) -> tuple[set[int], set[int]]:
        """Entries newly pruned and entries no longer pruned since the last time this was asked
        (a call whose outcome the replay discards, before an overflow retry, nets out)."""
        added, removed = self._added, self._removed
        self._added, self._removed = set(), set()
        return added, removed

    def usage_tokens(self, msgs: Sequence[ContextMessage]) -> int:
        """pi's ``estimateContextTokens`` over the messages sent at the last call (the runner's
        counter must be pi's estimate, as it is for the ``usage`` counter)."""
        raise NotImplementedError


class FullRunner(Runner):
    """The reference: ``apply`` on the whole context at every call."""

    def __init__(self, strategy: Any, settings: Any, counter: Any) -> None:
        super().__init__(strategy, settings, counter)
        self.pruned: set[int] = set()
        self.result: Any = None

    def call(self, msgs: Sequence[ContextMessage], state: Any, call: Any) -> Outcome:
        res = self.result = self.strategy.apply(tuple(msgs), self.settings, state, call, self.counter)
        now = {d.entry_index for d in res.decisions if d.action != "kept" and d.entry_index is not None}
        self._note(self.pruned, now)
        self.pruned = now
        st = res.stats
        return Outcome(st.tokens_after, st.items_pruned + st.items_dropped, tuple(res.events), res.state)

    def _note(self, before: set[int], now: set[int]) -> None:
        for e in now - before:
            if e in self._removed:
                self._removed.discard(e)
            else:
                self._added.add(e)
        for e in before - now:
            if e in self._added:
                self._added.discard(e)
            else:
                self._removed.add(e)

    def is_pruned(self, entry: int) -> bool:
        return entry in self.pruned

    def usage_tokens(self, msgs: Sequence[ContextMessage]) -> int:
        return clamp_int(estimate_context_tokens([c.message for c in self.result.messages]).tokens)


class IncrementalRunner(Runner):
    """Bookkeeping shared by the incremental runners: the fate of each position (kept unless
    marked here), the tokens it saves, which entries are pruned, and the context's growth.

    Subclasses implement :meth:`_begin` (a new context list), :meth:`_append` (one new
    position) and :meth:`_decide` (the call itself, after the appends), and mark positions with
    :meth:`_prune`, :meth:`_drop` and :meth:`_keep`. A subclass that meets a context its
    incremental rule does not cover calls :meth:`_fall_back`: that context is then decided by
    ``apply`` at every call, exactly."""

    def __init__(self, strategy: Any, settings: Any, counter: Any) -> None:
        super().__init__(strategy, settings, counter)
        self._msgs: Any = None
        self._n = 0
        self.total = 0
        self._fate: dict[int, tuple[int | None, ContextMessage | None, int]] = {}
        """Position → (entry, replacement or None when dropped, tokens saved) for every position not kept."""
        self.saved = 0
        self._entries: dict[int, int] = {}  # entry -> positions of it not kept
        self._trusted: list[int] = []  # positions of assistant messages whose usage pi trusts
        self.front: tuple[ContextMessage, ...] = ()
        """Messages inserted before the first position (turn-aware's packet)."""
        self.inserted: tuple[tuple[int, ContextMessage], ...] = ()
        """Messages inserted elsewhere: (the position each is sent before, the message)."""
        self._extra_of: tuple[Any, Any, int] | None = None  # (front, inserted, their tokens), last summed
        self._fallback = False
        self._full: Any = None
        self._sent: _Sent | None = None  # sent_messages' positions and messages, kept from call to call
        self._touched: set[int] = set()  # positions whose fate changed since

    # -- the call ------------------------------------------------------------------------------

    def call(self, msgs: Sequence[ContextMessage], state: Any, call: Any) -> Outcome:
        if msgs is not self._msgs:
            self._restart(msgs)
        count = self.counter.count
        for i in range(self._n, len(msgs)):
            self.total += count(msgs[i].message)
            if assistant_usage(msgs[i].message) is not None:
                self._trusted.append(i)
            if not self._fallback:
                self._append(msgs, i)
        self._n = len(msgs)
        if self._fallback:
            return self._call_full(msgs, state, call)
        events, new_state = self._decide(msgs, state, call)
        return Outcome(self.total - self.saved + self._extra(), len(self._fate), tuple(events), new_state)

    def _extra(self) -> int:
        """Tokens of the messages this runner inserts (:attr:`front`, :attr:`inserted`)."""
        front, inserted = self.front, self.inserted
        if not front and not inserted:
            return 0
        last = self._extra_of
        if last is not None and last[0] is front and last[1] is inserted:  # the same tuples: the same sum
            return last[2]
        count = self.counter.count
        n = sum(count(cm.message) for cm in front) + sum(count(cm.message) for _, cm in inserted)
        self._extra_of = (front, inserted, n)
        return n

    def _restart(self, msgs: Sequence[ContextMessage]) -> None:
        for pos in list(self._fate):
            self._keep(pos)
        self._msgs = msgs
        self._n = 0
        self.total = 0
        self._trusted = []
        self.front = ()
        self.inserted = ()
        self._fallback = False
        self._begin(msgs)

    def _fall_back(self) -> None:
        """Decide the rest of this context with ``apply`` (exact, O(context) per call)."""
        self._fallback = True

    def _call_full(self, msgs: Sequence[ContextMessage], state: Any, call: Any) -> Outcome:
        res = self._full = self.strategy.apply(tuple(msgs), self.settings, state, call, self.counter)
        wanted = {d.position: d for d in res.decisions if d.action != "kept"}
        for pos in [p for p in self._fate if p not in wanted]:
            self._keep(pos)
        for pos, d in wanted.items():
            self._set(pos, (msgs[pos].entry_index, _UNKNOWN, d.tokens_before - d.tokens_after))
        st = res.stats
        return Outcome(st.tokens_after, st.items_pruned + st.items_dropped, tuple(res.events), res.state)

    # -- for subclasses --------------------------------------------------------------------------

    def _begin(self, msgs: Sequence[ContextMessage]) -> None:
        raise NotImplementedError

    def _append(self, msgs: Sequence[ContextMessage], i: int) -> None:
        raise NotImplementedError

    def _decide(
        self, msgs: Sequence[ContextMessage], state: Any, call: Any
    ) -> tuple[list[dict[str, Any]], Any]:
        raise NotImplementedError

    def _prune(self, msgs: Sequence[ContextMessage], pos: int, new: ContextMessage) -> None:
        """Position ``pos`` is sent as ``new``."""
        cur = self._fate.get(pos)
        if cur is not None and cur[1] is new:
            return
        count = self.counter.count
        cm = msgs[pos]
        self._set(pos, (cm.entry_index, new, count(cm.message) - count(new.message)))

    def _drop(self, msgs: Sequence[ContextMessage], pos: int) -> None:
        """Position ``pos`` is not sent."""
        cur = self._fate.get(pos)
        if cur is not None and cur[1] is None:
            return
        cm = msgs[pos]
        self._set(pos, (cm.entry_index, None, self.counter.count(cm.message)))

    def _keep(self, pos: int) -> None:
        cur = self._fate.pop(pos, None)
        if cur is None:
            return
        self.saved -= cur[2]
        self._unmark(cur[0])
        if self._sent is not None:
            self._changed(pos)

    def _set(self, pos: int, fate: tuple[int | None, ContextMessage | None, int]) -> None:
        cur = self._fate.get(pos)
        if cur is not None:
            self.saved -= cur[2]
        else:
            self._mark(fate[0])
        self._fate[pos] = fate
        self.saved += fate[2]
        if self._sent is not None:
            self._changed(pos)

    def _changed(self, pos: int) -> None:
        """Position ``pos`` is sent otherwise now, or sent now and was not, or the other way round
        (:meth:`sent_messages` brings its positions up to date from these, noted once it has made
        them)."""
        self._touched.add(pos)

    def _mark(self, entry: int | None) -> None:
        if entry is None:
            return
        n = self._entries.get(entry, 0)
        self._entries[entry] = n + 1
        if n == 0:
            if entry in self._removed:
                self._removed.discard(entry)
            else:
                self._added.add(entry)

    def _unmark(self, entry: int | None) -> None:
        if entry is None:
            return
        n = self._entries[entry] - 1
        if n:
            self._entries[entry] = n
            return
        del self._entries[entry]
        if entry in self._added:
            self._added.discard(entry)
        else:
            self._removed.add(entry)

    def _floor(self) -> int:
        """Positions below this are never sent (turn-aware's dropped turns); 0 by default."""
        return 0

    # -- what the replay asks ------------------------------------------------------------------

    def is_pruned(self, entry: int) -> bool:
        return entry in self._entries

    def sent_messages(self, msgs: Sequence[ContextMessage]) -> tuple[ContextMessage, ...]:
        """The messages sent at the last call, in order (what ``apply``'s ``PruneResult.messages``
        holds): :attr:`front`, then each position from :meth:`_floor` on as its fate says, each
        :attr:`inserted` message before its position. The positions sent and their messages are
        kept from one call to the next and only brought up to date — the new positions appended,
        each position whose fate changed looked up again (sent otherwise, sent again, or no longer
        sent) — in the same context; :attr:`front` and :attr:`inserted` are put in as the list is
        given out. A context that only grows but sends little of it (DCP's) costs what changed,
        not its length, at each call, and so does each compress that drops a range of it."""
        if self._fallback:
            return tuple(self._full.messages)
        c, floor = self._sent, self._floor()
        if c is None or c.msgs is not msgs or c.floor != floor or c.n > len(msgs):
            c = self._sent = self._made(msgs, floor)
        else:
            get, present, base = self._fate.get, c.present, c.base
            for pos in self._touched:
                if pos >= c.n:
                    continue  # read with the new positions below
                i = bisect_left(present, pos)
                there = i < len(present) and present[i] == pos
                f = get(pos)
                if f is None or f[1] is not None:
                    m = msgs[pos] if f is None else f[1]
                    if there:
                        base[i] = m  # type: ignore[assignment]
                    else:
                        present.insert(i, pos)
                        base.insert(i, m)  # type: ignore[arg-type]
                elif there:
                    del present[i], base[i]
            for pos in range(c.n, len(msgs)):
                f = get(pos)
                if f is None or f[1] is not None:
                    present.append(pos)
                    base.append(msgs[pos] if f is None else f[1])  # type: ignore[arg-type]
            c.n = len(msgs)
        self._touched = set()
        return self._merged(c)

    def _made(self, msgs: Sequence[ContextMessage], floor: int) -> _Sent:
        get = self._fate.get
        present = [p for p in range(floor, len(msgs)) if (f := get(p)) is None or f[1] is not None]
        base = [msgs[p] if (f := get(p)) is None else f[1] for p in present]
        return _Sent(msgs, floor, len(msgs), present, base)  # type: ignore[arg-type]

    def _merged(self, c: _Sent) -> tuple[ContextMessage, ...]:
        """:attr:`front`, then the messages sent, each of :attr:`inserted` before the first
        position at or after the one it names (in ``apply``'s order: a stable sort)."""
        if not self.inserted:
            return (*self.front, *c.base)
        out = list(self.front)
        prev = 0
        for before, cm in sorted(self.inserted, key=lambda x: x[0]):
            i = bisect_left(c.present, before)
            out += c.base[prev:i]
            out.append(cm)
            prev = i
        out += c.base[prev:]
        return tuple(out)

    def sent(self, msgs: Sequence[ContextMessage], pos: int) -> ContextMessage | None:
        """What position ``pos`` is sent as at the last call (None: dropped)."""
        fate = self._fate.get(pos)
        return msgs[pos] if fate is None else fate[1]

    def usage_tokens(self, msgs: Sequence[ContextMessage]) -> int:
        # pi's estimateContextTokens over the messages sent: the newest trusted usage among them
        # plus the estimates of the messages after it. A replacement keeps its original's usage
        # and stop reason, and inserted messages have none, so only those positions can hold it.
        if self._fallback:
            return clamp_int(estimate_context_tokens([c.message for c in self._full.messages]).tokens)
        count = self.counter.count
        floor = self._floor()
        for p in reversed(self._trusted):
            if p < floor:
                break
            cm = self.sent(msgs, p)
            u = assistant_usage(cm.message) if cm is not None else None
            if u is None:
                continue
            trailing = sum(count(cm.message) for before, cm in self.inserted if before > p)
            for j in range(p + 1, len(msgs)):
                s = self.sent(msgs, j)
                if s is not None:
                    trailing += count(s.message)
            return clamp_int(calculate_context_tokens(u) + trailing)
        return int(self.total - self.saved + self._extra())


@dataclass
class _Sent:
    """:meth:`IncrementalRunner.sent_messages`' positions sent and their messages, and what they
    were made from."""

    msgs: Any
    floor: int
    n: int
    """Positions read."""
    present: list[int]
    """The positions sent, in order."""
    base: list[ContextMessage]
    """What each is sent as."""


class PlainRunner(IncrementalRunner):
    """No pruning (strategy ``none``): only the bookkeeping, for pi's usage-based size."""

    def _begin(self, msgs: Sequence[ContextMessage]) -> None:
        pass

    def _append(self, msgs: Sequence[ContextMessage], i: int) -> None:
        pass

    def _decide(
        self, msgs: Sequence[ContextMessage], state: Any, call: Any
    ) -> tuple[list[dict[str, Any]], Any]:
        return [], state
