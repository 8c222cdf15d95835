"""The size of the context the session really sent at each model call, without a second replay.

A what-if replay under a simulated compaction policy sends other contexts than the session did, so
its size fit (:mod:`.sizes`) is made on the as-recorded replay of the same branch and counter: the
recorded compactions applied, nothing pruned, each call's ``Step.tokens``. Only that column is
needed, so :func:`recorded_context_tokens` walks the branch the way that replay does
(:class:`inspector.replay.run.ReplayRun` under the "recorded" policy with no pruning strategy) and
keeps nothing else: each context message's count from the session's cached counter; at a
compaction entry, the context pi's ``buildSessionContext`` keeps after it
(:func:`inspector.context.compaction_context`: its summary, the kept entries, counted with
``count_many`` as the replay's reset does). Same pieces, same counts, summed in the same order: the
same integers (``tests/test_cache.py`` checks them against the replay on every sample and fixture).
It takes a fraction of the replay's time, which otherwise made a what-if's first cache model cost a
third of the what-if replay itself.

A file that records the agent's own pruning (OpenCode's cleared outputs, Claude Code's
microcompact) was measured on the context after it, so the walk takes each marked output out at
the calls made after its mark, as the "recorded" strategy's runner does
(:class:`inspector.pruning.recorded.RecordedRunner`: the call's time is its answer's timestamp,
else the newest message timestamp in the context; an output is sent cleared, as
:func:`~inspector.pruning.base.with_text` makes it, at a call at or after its mark): the as-recorded
replay with that strategy, whose every other step (events, re-reads, prices) the fit does not
read, made a what-if's first cache model on such a file cost as much as the what-if replay. DCP's
compresses (a layer of dropped ranges and inserted summaries) are left to that replay.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Sequence
from typing import Any

from ..context import ContextMessage, _context_message, compaction_context
from ..numbers import finite_ms
from ..pruning.base import with_text
from ..pruning.recorded import dcp_blocks, recorded_prune
from ..replay.counters import session_counter
from ..session.models import AssistantMessage, CompactionEntry, MessageEntry, ToolResultMessage
from ..session.tree import Session


def recorded_context_tokens(
    session: Session, counter: str, leaf: int | None = None, pruned: bool = False
) -> tuple[list[int], list[int]] | None:
    """(entry index of each model call on the branch ending at ``leaf``, the replayed tokens of
    the as-recorded context it was sent; ``leaf`` as in :class:`~inspector.replay.ReplaySettings`): the as-recorded replay's ``(s.entry_index, s.tokens)``
    for each step. ``pruned``: with the agent's own pruning the file records (the replay under the
    "recorded" strategy). None for the "usage" counter (pi's usage-based size is the replay's own
    state), and with ``pruned`` for a branch with a DCP compress."""
    if counter == "usage":
        return None
    counted = session_counter(session, counter)
    count = counted.count
    entries = session.entries
    path = session.path(leaf)
    on_path = [entries[i] for i in path]
    marks = _Marks(count) if pruned else None
    positions: dict[str, int] | None = None
    calls: list[int] = []
    tokens: list[int] = []
    total = 0
    for pos, e in enumerate(on_path):
        if isinstance(e, MessageEntry):
            m = e.message
            if isinstance(m, AssistantMessage):
                calls.append(path[pos])
                tokens.append(total if marks is None else total - marks.saved_at(finite_ms(m.timestamp)))
            elif marks is not None and type(m) is ToolResultMessage and dcp_blocks(m):
                return None
            total += count(m)
            if marks is not None:
                marks.add(ContextMessage(m, path[pos]))
        elif isinstance(e, CompactionEntry):
            if positions is None:
                positions = first_positions(on_path)
            kept = _after_compaction(on_path, path, pos, positions)
            total = sum(counted.count_many([c.message for c in kept]))
            if marks is not None:
                marks.restart(kept)
        else:
            cm = _context_message(e)
            if cm is not None:
                total += count(cm)
                if marks is not None:
                    marks.add(ContextMessage(cm, path[pos]))
    return calls, tokens


_ALWAYS = float("inf")


class _Marks:
    """The agent's own pruning marks in the current context, and the tokens the outputs cleared
    at the last call saved (the "recorded" strategy's runner, kept to its sums)."""

    def __init__(self, count: Any) -> None:
        self.count = count
        self.restart([])

    def restart(self, kept: Sequence[ContextMessage]) -> None:
        """A new context (after a compaction): its messages, none cleared yet."""
        self.marks: list[tuple[float, int]] = []  # (time of the mark, position), sorted
        self.markers: dict[int, str] = {}  # position -> the text its mark clears it to
        self.msgs: list[ContextMessage] = []
        self.cleared: dict[int, int] = {}  # position -> tokens its clearing saves
        self.saved = 0
        self.newest: float | None = None  # the newest message timestamp of msgs[: self.seen]
        self.seen = 0
        self.now = -_ALWAYS
        for cm in kept:
            self.add(cm)

    def add(self, cm: ContextMessage) -> None:
        pos = len(self.msgs)
        self.msgs.append(cm)
        m = cm.message
        if type(m) is not ToolResultMessage or m.details is None:  # no mark
            return
        r = recorded_prune(m)
        if r is not None:
            insort(self.marks, (r.at, pos))
            self.markers[pos] = r.marker
            if r.at <= self.now:
                self._clear(pos)

    def _newest(self) -> float | None:
        """The newest message timestamp in the context (read only for a call without one)."""
        for cm in self.msgs[self.seen :]:
            t = finite_ms(getattr(cm.message, "timestamp", None))
            if t is not None and (self.newest is None or t > self.newest):
                self.newest = t
        self.seen = len(self.msgs)
        return self.newest

    def saved_at(self, time_ms: float | None) -> int:
        """Tokens saved at a call made at ``time_ms`` (None: the newest message's time)."""
        now = time_ms if time_ms is not None else self._newest()
        now = _ALWAYS if now is None else now
        if self.marks and now != self.now:
            lo, hi = sorted((self.now, now))
            a = bisect_right(self.marks, (lo, _ALWAYS))
            b = bisect_right(self.marks, (hi, _ALWAYS))
            for _, pos in self.marks[a:b]:
                if now > self.now:
                    self._clear(pos)
                elif pos in self.cleared:
                    self.saved -= self.cleared.pop(pos)
        self.now = now
        return self.saved

    def _clear(self, pos: int) -> None:
        if pos in self.cleared:
            return
        cm = self.msgs[pos]
        s = self.cleared[pos] = self.count(cm.message) - self.count(with_text(cm, self.markers[pos]).message)
        self.saved += s


def first_positions(on_path: Sequence[Any]) -> dict[str, int]:
    """Each id's first position on the path (the replay's ``SimulatedPath.positions``, which holds
    the path up to the current entry: an id first seen later can only give a kept position past the
    compaction, which :func:`_after_compaction` ignores as the replay's lookup miss does)."""
    ids = [e.id for e in on_path]
    back = range(len(ids) - 1, -1, -1)  # last to first: the first position is the one left
    if set(map(type, ids)) == {str}:
        return dict(zip(reversed(ids), back, strict=True))
    return {eid: pos for eid, pos in zip(reversed(ids), back, strict=True) if isinstance(eid, str)}


def _after_compaction(
    on_path: list[Any], path: Sequence[int], pos: int, positions: dict[str, int]
) -> list[ContextMessage]:
    """The context after the compaction entry at ``pos`` (the replay's
    ``SimulatedPath.context_after_last`` then ``RunningContext.reset``): only the path up to it is
    seen, so a kept entry must come before it."""
    kept = getattr(on_path[pos], "firstKeptEntryId", None)
    fk = positions.get(kept) if isinstance(kept, str) else None
    lo = fk if fk is not None and fk < pos else pos
    return compaction_context(on_path[lo : pos + 1], path[lo : pos + 1], pos - lo, 0 if lo < pos else None)
