"""What each call shares with the previous one: the whole previous prompt when the context only
grew, nothing of the history after a compaction, and after a prune (or a prune undone) the
messages before the first one that changed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import accumulate, islice
from operator import attrgetter
from typing import Any

from ..replay.results import Pruned
from .causes import COMPACTION, PRUNE, UNPRUNE


def _first_change(prev: Sequence[Any], cur: Sequence[Any]) -> int:
    for i, (a, b) in enumerate(zip(prev, cur, strict=False)):
        if a is b or a.message is b.message:
            continue
        if a.entry_index != b.entry_index or a.message != b.message:
            return i
    return min(len(prev), len(cur))


_TYPE = attrgetter("type")
_PRUNES = ("pruned", "unpruned")


def _compared(steps: Sequence[Any]) -> list[int]:
    """The steps :meth:`Shared.at` compares context by context: each step that undoes a prune in
    the same context as the step before, and that step."""
    out: set[int] = set()
    for k in range(1, len(steps)):
        cur = steps[k]
        if cur.events and cur._segment is steps[k - 1]._segment and "unpruned" in map(_TYPE, cur.events):
            out.update((k - 1, k))
    return sorted(out)


class Shared:
    """Replayed tokens each call shares with the previous call's sent context, and the entry
    where they part (None: nothing changed)."""

    def __init__(self, replay: Any) -> None:
        from ..replay import session_counter

        self.replay = replay
        name = replay.settings.counter if replay.settings.counter != "usage" else "pi"
        self.counter = session_counter(replay.session, name)
        self._detail: dict[int, Any] = {}
        self._compactions = {s.step: s.entry_index for s in replay.summaries}
        """Step → the compaction entry before it (None: a simulated compaction)."""
        self._index: dict[int, tuple[list[Any], dict[int | None, int]]] = {}
        self._cum: dict[int, tuple[list[Any], list[int]]] = {}
        self._stream: Iterator[tuple[int, Sequence[Any]]] | None = None
        self._streamed: frozenset[int] = frozenset()
        self._last = -1  # the last step the stream gave

    def sent(self, k: int) -> Sequence[Any]:
        """The context sent at step ``k``. The steps :meth:`at` compares context by context (a
        prune undone in the same context, and the step before) come from one run of the replay's
        incremental runner over just those steps (:meth:`Replay.sent_contexts`: each costs what
        changed since the one before), taken in step order as the pricing loop asks; any other
        step from :meth:`Replay.step_detail` (``apply`` over its whole context)."""
        if k not in self._detail:
            if len(self._detail) > 2:
                self._detail.pop(min(self._detail))
            if self._stream is None:
                wanted = _compared(self.replay.steps)
                self._streamed = frozenset(wanted)
                self._stream = self.replay.sent_contexts(wanted)
            got = None
            if k in self._streamed and k > self._last:
                for j, ctx in self._stream:
                    self._last = j
                    if j == k:
                        got = ctx
                        break
            self._detail[k] = got if got is not None else self.replay.step_detail(k).after
        return self._detail[k]

    def at(self, k: int, exact: bool = False) -> tuple[str | None, int | None, int]:
        """(cause, entry index of the first changed message, shared replayed tokens); ``exact``
        compares the two sent contexts message by message even for a plain prune (tests)."""
        steps = self.replay.steps
        cur, prev = steps[k], steps[k - 1]
        if cur._segment is not prev._segment:
            ei = self._compactions.get(k)
            first = cur._segment[0].entry_index if cur._length else None
            return COMPACTION, first if ei is None else ei, 0
        if not cur.events:
            return None, None, prev.tokens
        kinds = set(map(_TYPE, cur.events))
        if kinds.isdisjoint(_PRUNES):
            return None, None, prev.tokens
        if "unpruned" not in kinds and not exact:
            return self._pruned(cur, prev)
        a, b = self.sent(k - 1), self.sent(k)
        i = _first_change(a, b)
        if i >= len(a):
            return None, None, prev.tokens
        shared = sum(self.counter.counts([c.message for c in b[:i]]))
        kind = PRUNE if "pruned" in kinds else UNPRUNE
        return kind, b[i].entry_index if i < len(b) else None, shared

    def _pruned(self, cur: Any, prev: Any) -> tuple[str | None, int | None, int]:
        """A prune without an undo: the context is unchanged before the oldest newly pruned message,
        and the outputs pruned before it were pruned at the previous call already (strategies prune
        oldest first), so the shared part is the messages before it less what pruning saved then."""
        first = min(
            (min(ev.entry_indexes) for ev in cur.events if isinstance(ev, Pruned) and ev.entry_indexes),
            default=None,
        )
        pos = self._position(cur._segment, first) if first is not None else None
        if pos is None or pos >= prev._length:
            return None, None, prev.tokens
        saved = prev.tokens_before_pruning - prev.tokens
        return PRUNE, first, max(0, min(prev.tokens, self._cumulative(cur._segment, pos) - saved))

    def _position(self, seg: list[Any], entry: int) -> int | None:
        idx = self._index.get(id(seg))
        if idx is None or idx[0] is not seg or len(idx[1]) < len(seg):
            idx = (seg, {c.entry_index: i for i, c in reversed(list(enumerate(seg)))})
            self._index[id(seg)] = idx
        return idx[1].get(entry)

    def _cumulative(self, seg: list[Any], pos: int) -> int:
        """Replayed tokens of ``seg[:pos]`` (a running sum kept per context list)."""
        hit = self._cum.get(id(seg))
        if hit is None or hit[0] is not seg:
            hit = (seg, [0])
            self._cum[id(seg)] = hit
        cum = hit[1]
        if len(cum) <= pos:
            counts = self.counter.counts([c.message for c in seg[len(cum) - 1 : pos]])
            cum += islice(accumulate(counts, initial=cum[-1]), 1, None)
        return cum[pos]
