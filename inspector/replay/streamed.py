"""The as-recorded replay of a large pi v3 file without holding its messages (issue 16: a flood of
2,000,000 tiny entries replayed within 3× the file's size).

The session is its skeleton (:func:`~inspector.session.loader.load_skeleton`: the tree and every
entry, each message entry holding a shared empty message of its role and no timestamp), and the file is read a second
time, one entry at a time, in step with the replay's walk down the branch (pi appends an entry after
its parent, so a branch runs forward through the file). The walk is :class:`~.run.ReplayRun`'s own:
each message is read where the walk reaches it and dropped after it. The running context keeps the
skeleton's stand-in in the message's place (as an entry index: :class:`_Segment`) and the
message's count by entry index (:class:`_CountedContext`, filled a batch of entries at a time; its
set of entries is one byte each: :class:`_Marks`); the answers' usage, stop reason and
tool calls and the tool results are read as they pass; every entry of the file, whole, goes to the
caller's ``visit`` (``inspector replay`` gives the cache model's
:class:`~inspector.cache.facts.FactsReader`); the mean recorded rate of the prices is gathered
while the skeleton loads (:class:`~inspector.pricing.MeanRate`).

The result is the :class:`~.results.Replay` that :func:`~.run.replay` gives for the loaded file (the
same steps, events, metrics and summaries: tested on odd files, samples and fixtures), except that
its contexts hold stand-ins: :meth:`~.results.Replay.step_detail` is not for it. Only for replays
that read no message again afterwards (:func:`streamable`): compaction as recorded, no pruning, the
``pi`` or ``tiktoken`` counter.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice, pairwise
from typing import Any

from ..context import ContextMessage
from ..gcpause import gc_paused
from ..policies import RunningContext
from ..pricing import MeanRate, streamed_price
from ..session.compact import is_stand_in
from ..session.loader import SessionLoadError, load_skeleton, stream_session
from ..session.models import MessageEntry
from ..session.tree import Session
from ..window import ModelTally, PeakTally, remember_model, remember_peak
from .counters import skeleton_counter
from .results import Replay
from .run import ReplayRun
from .settings import ReplaySettings

BATCH = 10_000
"""Entries read ahead of the walk: their messages are counted in one call."""


def streamable(settings: ReplaySettings) -> bool:
    """Can a replay under ``settings`` run from a skeleton (:func:`streamed_replay`)?"""
    return (
        settings.compaction == "recorded"
        and settings.strategy == "none"
        and settings.counter in ("pi", "tiktoken")
    )


@dataclass(frozen=True)
class Skeleton:
    """A pi v3 file loaded for a streamed replay: its skeleton and its messages' recorded rates."""

    session: Session
    rates: MeanRate


def load_for_replay(path: str | os.PathLike[str]) -> Skeleton | None:
    """The skeleton of a pi v3 file and its recorded rates, in one read; None for any other file."""
    rates = MeanRate()
    models = ModelTally()  # the skeleton holds no message: its model is counted here
    peak = PeakTally()  # and its largest answered context found

    def visit(e: Any) -> None:
        peak.add(e)
        if isinstance(e, MessageEntry):
            rates.add(e.message)
            models.add(e.message)

    s = load_skeleton(path, visit=visit, timestamps=False)  # the cache model reads them from the second read
    if s is None:
        return None
    remember_model(s, models)
    remember_peak(s, peak)
    return Skeleton(s, rates)


def streamed_replay(
    skeleton: Skeleton, settings: ReplaySettings, visit: Callable[[int, Any], None] | None = None
) -> Replay | None:
    """:func:`~.run.replay` of the file ``skeleton`` was loaded from, under ``settings`` (which must
    be :func:`streamable`), reading its messages again as the walk reaches them. None when the branch
    does not run forward through the file (load the file and replay that). ``visit(i, entry)`` sees
    every entry of the file whole, in file order, as the walk passes it. Raises
    :class:`~inspector.session.loader.SessionLoadError` if the file changed since the skeleton."""
    if not streamable(settings):
        raise ValueError("this replay reads messages again: load the session")
    with gc_paused():
        return StreamedRun(skeleton, settings, visit).run()


class _Marks:
    """A set of entry indexes as one byte per entry of the session (a set of 2,000,000 ints takes
    ~34 bytes each): ``in``, ``add``, iteration and ``isdisjoint`` as on the set it stands for."""

    __slots__ = ("_on",)

    def __init__(self, n: int, indexes: Iterable[int] = ()) -> None:
        self._on = bytearray(n)
        for i in indexes:
            self._on[i] = 1

    def __contains__(self, i: object) -> bool:
        return isinstance(i, int) and 0 <= i < len(self._on) and self._on[i] == 1

    def add(self, i: int) -> None:
        self._on[i] = 1

    def __iter__(self) -> Iterator[int]:
        return (i for i, on in enumerate(self._on) if on)

    def isdisjoint(self, other: Iterable[int]) -> bool:
        return not any(i in self for i in other)


class _Segment:
    """The running context's list in a streamed replay: each message's entry index (8 bytes) and,
    read back, a :class:`~inspector.context.ContextMessage` of the skeleton's stand-in made again
    (equal to the one appended); any other message (a summary, a custom message) is kept as it is.
    Read as the list it stands for: ``len``, an index, a slice, iteration; only ever appended to."""

    __slots__ = ("_at", "_entries", "_kept")

    def __init__(self, entries: Sequence[Any], msgs: Iterable[ContextMessage] = ()) -> None:
        self._entries = entries  # the skeleton's
        self._at = array("q")
        self._kept: dict[int, ContextMessage] = {}
        for cm in msgs:
            self.append(cm)

    def append(self, cm: ContextMessage) -> None:
        i = cm.entry_index
        if (
            i is not None
            and is_stand_in(cm.message)
            and getattr(self._entries[i], "message", None) is cm.message
        ):
            self._at.append(i)
        else:
            self._kept[len(self._at)] = cm
            self._at.append(-1)

    def _get(self, k: int) -> ContextMessage:
        i = self._at[k]
        if i < 0:
            return self._kept[k if k >= 0 else len(self._at) + k]
        return ContextMessage(self._entries[i].message, i)

    def __len__(self) -> int:
        return len(self._at)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self._get(j) for j in range(*k.indices(len(self._at)))]
        return self._get(k)

    def __iter__(self) -> Iterator[ContextMessage]:
        return (self._get(k) for k in range(len(self._at)))


class _CountedContext(RunningContext):
    """The running context of a streamed replay: a stand-in counts as the message it stands for
    (``counts``, by entry index); any other message is counted as it is."""

    def __init__(self, counter: Any, entries: Sequence[Any]) -> None:
        super().__init__(counter)
        self.skeleton_entries = entries
        self.msgs: _Segment = _Segment(entries)  # type: ignore[assignment]
        n_entries = len(entries)
        self.counts = array("q", [0]) * n_entries
        self.entries: _Marks = _Marks(n_entries)  # type: ignore[assignment]

    def _count(self, cm: ContextMessage) -> int:
        if cm.entry_index is not None and is_stand_in(cm.message):
            return self.counts[cm.entry_index]
        return int(self.counter.count(cm.message))

    def reset(self, msgs: Iterable[ContextMessage]) -> None:
        self.msgs = _Segment(self.skeleton_entries, msgs)
        self.entries = _Marks(
            len(self.counts), (m.entry_index for m in self.msgs if m.entry_index is not None)
        )
        self.total = sum(map(self._count, self.msgs))

    def add(self, cm: ContextMessage) -> None:
        self.msgs.append(cm)
        if cm.entry_index is not None:
            self.entries.add(cm.entry_index)
        self.total += self._count(cm)


class StreamedRun(ReplayRun):
    """:class:`~.run.ReplayRun` over a skeleton, the messages read from the file as the walk goes."""

    def __init__(
        self, skeleton: Skeleton, settings: ReplaySettings, visit: Callable[[int, Any], None] | None = None
    ) -> None:
        self.rates, self.visit = skeleton.rates, visit
        super().__init__(skeleton.session, settings)

    def _counter(self) -> Any:
        return skeleton_counter(self.session, self.settings.counter)

    def _price(self) -> Any:
        return streamed_price(self.rates)

    def _context(self) -> RunningContext:
        return _CountedContext(self.counter, self.session.entries)

    def run(self) -> Replay | None:  # type: ignore[override]
        if any(b <= a for a, b in pairwise(self.path)):
            return None
        src = self.session.source
        stream = stream_session(src) if src is not None else None
        if stream is None:
            raise SessionLoadError(f"{src} changed while it was read")
        entries = self.session.entries
        on_path = bytearray(len(entries))
        for i in self.path:
            on_path[i] = 1
        visit, path, i, pos = self.visit, self.path, 0, 0
        try:
            for batch in _batches(stream.entries):
                if i + len(batch) > len(entries):
                    raise SessionLoadError(f"{src} changed while it was read")
                self._count(batch, i, on_path)
                for e in batch:
                    if e.id != entries[i].id:
                        raise SessionLoadError(f"{src} changed while it was read")
                    ei = i
                    if on_path[i]:
                        ei = path[pos]  # the path's int object: the replay keeps it, once
                        pos += 1
                    if visit is not None:
                        visit(ei, e)
                    if on_path[i]:
                        self.entry(entries[ei], ei, e)
                    i += 1
                self._progress(i / max(1, len(entries)))
        finally:
            stream.entries.close()
        if i != len(entries):
            raise SessionLoadError(f"{src} changed while it was read")
        return self.result()

    def _count(self, batch: list[Any], first: int, on_path: bytearray) -> None:
        """The counts of the batch's messages on the branch, in one call of the counter."""
        at = [k for k, e in enumerate(batch, first) if on_path[k] and isinstance(e, MessageEntry)]
        counts = self.ctx.counts  # type: ignore[attr-defined]
        for k, n in zip(
            at, self.counter.base.count_many([batch[k - first].message for k in at]), strict=True
        ):
            counts[k] = n

    def _progress(self, done: float) -> None:
        if self.progress is not None:
            self.progress(done)


def _batches(entries: Iterator[Any]) -> Iterator[list[Any]]:
    while batch := list(islice(entries, BATCH)):
        yield batch
