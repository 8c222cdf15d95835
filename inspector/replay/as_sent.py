"""The size of the context the session really sent at each model call, without a second replay.

Two readers need it, and the size fit made on it (:func:`sent_fit`, :mod:`.sizes`: provider
tokens per replayed token). A what-if's cache model prices the provider's prompt sizes from them.
And a what-if's compaction trigger: every agent compares the usage the provider reports for an
answer, which a what-if knows only for the contexts the session really sent; it takes the recorded
usage plus what the what-if changed in the context, sized by the fit
(:meth:`inspector.replay.run.ReplayRun.provider_size`).

That column is the as-recorded replay of the same branch and counter (the recorded compactions
applied, nothing pruned), each call's ``Step.tokens``; :func:`recorded_context_tokens` walks the
branch the way that replay does (:class:`inspector.replay.run.ReplayRun` under the "recorded"
policy with no pruning strategy) and keeps nothing else: each context message's count from the
session's cached counter; at a compaction entry, the context pi's ``buildSessionContext`` keeps
after it (:func:`inspector.context.compaction_context`: its summary, the kept entries, counted
with ``count_many`` as the replay's reset does). Same pieces, same counts, summed in the same
order: the same integers (``tests/test_cache.py`` checks them against the replay on every sample
and fixture). It takes a fraction of the replay's time.

A file that records the agent's own pruning (OpenCode's cleared outputs, Claude Code's
microcompact, the DCP plugin's compresses) was measured on the context after it, so with
``pruned`` the walk hands the context, as it grows, to the "recorded" strategy's own runner
(:class:`inspector.pruning.recorded.RecordedRunner`) at each call, with the call's time, and takes
the tokens it sends: the as-recorded replay with that strategy, whose every other step (events,
re-reads, prices) the fit does not read, made a what-if's first cache model on such a file cost as
much as the what-if replay.
"""

from __future__ import annotations

import weakref
from bisect import bisect_right, insort
from collections.abc import Sequence
from typing import Any

from ..calibration import recorded_prompt
from ..context import ContextMessage, _context_message, compaction_context
from ..numbers import finite_ms
from ..pruning.base import CallInfo, with_text
from ..pruning.recorded import Recorded, RecordedSettings, dcp_blocks, recorded_prune, records_pruning
from ..session.models import AssistantMessage, CompactionEntry, MessageEntry, ToolResultMessage
from ..session.tree import Session
from .counters import session_counter
from .sizes import UNFITTED, SizeFit, fit_columns

_ALWAYS = float("inf")  # a call with no time: every mark applies (the runner's)


def recorded_context_tokens(
    session: Session, counter: str, leaf: int | None = None, pruned: bool = False
) -> tuple[list[int], list[int]] | None:
    """(entry index of each model call on the branch ending at ``leaf``, the replayed tokens of
    the as-recorded context it was sent; ``leaf`` as in :class:`~inspector.replay.ReplaySettings`): the as-recorded replay's ``(s.entry_index, s.tokens)``
    for each step. ``pruned``: with the agent's own pruning the file records (the replay under the
    "recorded" strategy: its runner, given the context as it grows and each call's time; without
    a DCP compress, the same integers by :func:`_cleared_walk`). None for the "usage" counter
    (pi's usage-based size is the replay's own state)."""
    if counter == "usage":
        return None
    counted = session_counter(session, counter)
    entries = session.entries
    path = session.path(leaf)
    on_path = [entries[i] for i in path]
    if pruned and (cleared := _cleared_walk(on_path, path, counted)) is not None:
        return cleared
    return _walk(on_path, path, counted, pruned)


def _walk(on_path: list[Any], path: Sequence[int], counted: Any, pruned: bool) -> tuple[list[int], list[int]]:
    """:func:`recorded_context_tokens` on the entries ``on_path`` (at the indexes ``path``); with
    ``pruned``, the "recorded" strategy's runner given the context as it grows."""
    count = counted.count
    runner = Recorded().runner(RecordedSettings(), counted) if pruned else None
    msgs: list[ContextMessage] = []  # the context as the runner sees it (only with ``pruned``)
    positions: dict[str, int] | None = None
    calls: list[int] = []
    tokens: list[int] = []
    total = 0
    for pos, e in enumerate(on_path):
        if isinstance(e, MessageEntry):
            m = e.message
            if isinstance(m, AssistantMessage):
                if runner is None:
                    tokens.append(total)
                else:
                    call = CallInfo(len(calls), False, 0, None, time_ms=finite_ms(m.timestamp))
                    tokens.append(runner.call(msgs, None, call).tokens)
                calls.append(path[pos])
            if runner is None:
                total += count(m)
            else:
                msgs.append(ContextMessage(m, path[pos]))
        elif isinstance(e, CompactionEntry):
            if positions is None:
                positions = first_positions(on_path)
            kept = _after_compaction(on_path, path, pos, positions)
            if runner is None:
                total = sum(counted.count_many([c.message for c in kept]))
            else:
                msgs = list(kept)  # a new list: the runner starts again on it, as on the replay's
        else:
            cm = _context_message(e)
            if cm is not None:
                if runner is None:
                    total += count(cm)
                else:
                    msgs.append(ContextMessage(cm, path[pos]))
    return calls, tokens


def _cleared_walk(
    on_path: list[Any], path: Sequence[int], counted: Any
) -> tuple[list[int], list[int]] | None:
    """:func:`recorded_context_tokens` with ``pruned``, for a file whose only recorded pruning is
    outputs the agent cleared (OpenCode's ``time.compacted``, Claude Code's microcompact): None at
    the first DCP compress met (that layer is the runner's alone). The "recorded" strategy's runner
    sends such an output as its marker exactly when its mark is at or before the call's time (the
    answer's timestamp; without one, the newest message timestamp in the context; with neither,
    every mark applies), and nothing else changes what it sends. So each call's tokens are the
    context's minus what the marks at or before that time save, kept as one running sum while
    the time moves through the marks sorted by time, as the runner moves its own: the runner's
    integers without a runner (``tests/test_cache.py`` checks both on every sample, fixture and
    edge of the clock), at a fraction of its cost (it made most of a what-if's first cache model
    on an OpenCode export)."""
    count = counted.count
    calls: list[int] = []
    tokens: list[int] = []
    total = saved = 0  # the context's tokens; what the marks at or before ``now`` save of them
    marks: list[tuple[float, int]] = []  # (time of a mark, the tokens it saves), sorted
    now = -_ALWAYS  # the last call's time in this context
    ctx: list[Any] = []  # the context's messages (their newest timestamp is read only when asked)
    seen, newest = 0, None  # the newest timestamp of ctx[:seen]
    positions: dict[str, int] | None = None

    def marked(m: Any) -> bool:
        """A tool result with details joined the context: its mark noted; False at a DCP compress."""
        nonlocal saved
        if dcp_blocks(m):
            return False
        r = recorded_prune(m)
        if r is not None:
            s = count(m) - count(with_text(ContextMessage(m, None), r.marker).message)
            insort(marks, (r.at, s))
            if r.at <= now:
                saved += s
        return True

    for pos, e in enumerate(on_path):
        if isinstance(e, MessageEntry):
            m = e.message
            if isinstance(m, AssistantMessage):
                t = finite_ms(m.timestamp)
                if t is None:  # the newest message timestamp in the context (the runner's ``_newest``)
                    for x in ctx[seen:]:
                        u = finite_ms(getattr(x, "timestamp", None))
                        if u is not None and (newest is None or u > newest):
                            newest = u
                    seen = len(ctx)
                    t = newest if newest is not None else _ALWAYS
                if t != now and marks:  # the marks between the two times change sides
                    lo, hi = (now, t) if t > now else (t, now)
                    i, j = bisect_right(marks, (lo, _ALWAYS)), bisect_right(marks, (hi, _ALWAYS))
                    moved = sum(s for _, s in marks[i:j])
                    saved += moved if t > now else -moved
                now = t
                tokens.append(total - saved)
                calls.append(path[pos])
        elif isinstance(e, CompactionEntry):
            if positions is None:
                positions = first_positions(on_path)
            total = saved = seen = 0  # the runner starts again on the context after it
            marks, now, newest, ctx = [], -_ALWAYS, None, []
            for cm in _after_compaction(on_path, path, pos, positions):
                total += count(cm.message)
                ctx.append(cm.message)
                if isinstance(cm.message, ToolResultMessage) and cm.message.details is not None:
                    if not marked(cm.message):
                        return None
            continue
        else:
            other = _context_message(e)  # a custom message, a branch summary, ...
            if other is None:
                continue
            m = other
        total += count(m)
        ctx.append(m)
        if isinstance(m, ToolResultMessage) and m.details is not None and not marked(m):
            return None
    return calls, tokens


_SENT: weakref.WeakKeyDictionary[Session, dict[tuple[str, int | None], dict[int, int] | None]] = (
    weakref.WeakKeyDictionary()
)


def sent_as_recorded(session: Session, counter: str, leaf: int | None = None) -> dict[int, int] | None:
    """Each model call's as-recorded context (entry index → replayed tokens; the agent's own
    pruning applied when the file records some, :func:`agent_pruned`), memoised per session, branch
    and counter; None for the "usage" counter."""
    memo = _SENT.setdefault(session, {})
    key = (counter, leaf)
    if key not in memo:
        walked = recorded_context_tokens(session, counter, leaf, agent_pruned(session))
        memo[key] = None if walked is None else dict(zip(*walked, strict=True))
    return memo[key]


_FIT: weakref.WeakKeyDictionary[Session, dict[tuple[str, int | None], SizeFit]] = weakref.WeakKeyDictionary()


def sent_fit(session: Session, counter: str, leaf: int | None = None) -> SizeFit:
    """The session's size fit (:func:`~.sizes.fit_columns`: provider tokens ≈ hidden + scale ×
    replayed tokens) on the context each recorded prompt was measured on
    (:func:`sent_as_recorded`), memoised like it; unfitted for the "usage" counter. A what-if's
    trigger sizes what it changed with it, as the cache model prices it
    (:func:`~.sizes.changed_size`)."""
    memo = _FIT.setdefault(session, {})
    key = (counter, leaf)
    if key not in memo:
        sent = sent_as_recorded(session, counter, leaf)
        if sent is None:
            memo[key] = UNFITTED
        else:
            entries = session.entries
            answers = [getattr(entries[ei], "message", None) for ei in sent]  # each call's answer
            prompts = [recorded_prompt(m) if isinstance(m, AssistantMessage) else None for m in answers]
            memo[key] = fit_columns(list(sent.values()), prompts)
    return memo[key]


_PRUNED: weakref.WeakKeyDictionary[Session, bool] = weakref.WeakKeyDictionary()


def agent_pruned(session: Session) -> bool:
    """Does the file record pruning the agent did itself (OpenCode's cleared outputs, Claude Code's
    microcompact, DCP's compress: :func:`inspector.pruning.recorded.records_pruning`)? Then the
    recorded prompts were measured on the context after that pruning (looked for once per session,
    in the files of the agents that write it down: pi records none, and reaching every tool result
    of a long pi file costs a sixth of the cache model)."""
    if session.format not in ("opencode", "claude-code"):
        return False
    got = _PRUNED.get(session)
    if got is None:
        got = _PRUNED[session] = any(
            records_pruning(m)
            for e in session.entries
            if type(m := getattr(e, "message", None)) is ToolResultMessage and m.details is not None
        )
    return got


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
