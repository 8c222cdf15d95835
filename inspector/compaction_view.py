"""The moment of compaction, as data: the context the policy saw, split into what was summarised
and what was kept, the cut(s), and the context right after (pure; no streamlit, no plotly).

A replay pins, for each compaction, the context list just before and just after it (its
:class:`inspector.replay.CompactionRecord`). :func:`compaction_view` turns one of them into a
:class:`CompactionView`:

* **before**: every message of the context the policy saw, tagged ``summarised``, ``turn prefix``
  (the first part of a split turn, summarised by a second call), ``previous summary`` (an earlier
  compaction's summary, folded into the new one), ``kept`` (verbatim after the summary) or
  ``dropped`` (neither: pi 0.58 does not summarise the previous compaction's kept part again);
* **after**: the new summary message(s) then the kept messages — exactly the context the replay
  continued with;
* **cuts**: where the kept part starts. For a recorded pi compaction, both the recorded cut and
  the cut pi's rule makes at the same point with the sidebar's keepRecentTokens, and when they
  differ, why (:func:`keep_range_for_cut` finds the keepRecentTokens values that reproduce the
  recorded cut).

What was summarised follows the preparation the summarizer got (simulated compactions), pi's
``prepareCompaction`` at the recorded cut (:func:`inspector.compaction.prepare_at_cut`, recorded
pi compactions) or the agent's own split (other agents' recorded compactions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .compaction import (
    CompactionPreparation,
    CompactionSettings,
    compaction_boundary,
    find_cut_point,
    prepare_at_cut,
    prepare_compaction,
    prepare_recorded_split,
)
from .context import ContextMessage, _context_message
from .importers.codex import put_back_count
from .policies import get_policy
from .session.models import CompactionEntry, MessageEntry

if TYPE_CHECKING:
    from .replay.results import CompactionRecord

SUMMARISED = "summarised"
PREFIX = "turn prefix"
PREVIOUS = "previous summary"
KEPT = "kept"
DROPPED = "dropped"
SUMMARY = "summary"
GONE = (SUMMARISED, PREFIX, PREVIOUS, DROPPED)
"""Parts of the context before that do not survive verbatim."""


@dataclass(frozen=True)
class ViewPart:
    position: int
    """Position in its context (before or after)."""
    message: ContextMessage
    tokens: int
    part: str


@dataclass(frozen=True)
class Cut:
    label: str
    entry_index: int
    """The first kept entry (file order)."""
    position: int | None
    """Its position in the context before (None: not in it)."""
    offset: int
    """Tokens of the context before that precede it (where the line is drawn)."""


@dataclass(frozen=True)
class CompactionView:
    index: int
    """Which compaction of the replay (position in ``Replay.summaries``)."""
    step: int
    simulated: bool
    policy: str
    entry_index: int | None
    """The recorded compaction entry (None: simulated)."""
    before: tuple[ViewPart, ...]
    after: tuple[ViewPart, ...]
    cuts: tuple[Cut, ...]
    cut_note: str | None
    """Why the recorded and the replayed cut differ (None when they agree or only one is known)."""
    prep: CompactionPreparation | None
    summary_text: str

    def tokens(self, parts: Sequence[str], which: str = "before") -> int:
        return sum(p.tokens for p in getattr(self, which) if p.part in parts)

    @property
    def tokens_before(self) -> int:
        return sum(p.tokens for p in self.before)

    @property
    def tokens_after(self) -> int:
        return sum(p.tokens for p in self.after)

    @property
    def summarised(self) -> tuple[ViewPart, ...]:
        """Every message of the context before that does not survive verbatim."""
        return tuple(p for p in self.before if p.part in GONE)

    @property
    def summarised_tokens(self) -> int:
        return self.tokens(GONE)

    @property
    def kept_tokens(self) -> int:
        return self.tokens((KEPT,))

    @property
    def summary_tokens(self) -> int:
        return self.tokens((SUMMARY,), "after")


def put_back_messages(replay: Any, entry_index: int | None) -> list[ContextMessage]:
    """What the agent put back itself right after its recorded compaction, on the replayed branch
    (Codex: its ``replacement_history``, or the user messages it rebuilds:
    :func:`inspector.importers.codex.put_back`), in order. ``entry_index``: the compaction entry
    (None: a simulated compaction). They are entries of their own after the compaction entry, so
    the view's context after it holds only the summary; the model gets them next to it. Empty for
    the other agents' compactions."""
    path, ei = replay.path, entry_index
    if ei is None or ei not in path:
        return []
    entries = replay.session.entries
    at = path.index(ei) + 1
    got = (
        (i, entries[i].message if isinstance(entries[i], MessageEntry) else _context_message(entries[i]))
        for i in path[at : at + put_back_count(entries, path, at)]
    )
    return [ContextMessage(m, i) for i, m in got if m is not None]


def compactions_at(replay: Any, step: int) -> list[int]:
    """Positions in ``replay.summaries`` of the compactions that take effect before call ``step``."""
    return [i for i, rec in enumerate(replay.summaries) if rec.step == step]


def compaction_steps(replay: Any) -> list[int]:
    """The calls before which a compaction takes effect, in order (each once)."""
    return sorted({rec.step for rec in replay.summaries if rec.step < len(replay.steps)})


def _is_summary(cm: ContextMessage) -> bool:
    return cm.entry_index is None or cm.role == "compactionSummary"


def _part(cm: ContextMessage, kept: set[int], prefix: set[int], summarised: set[int] | None) -> str:
    if _is_summary(cm):
        return PREVIOUS
    if cm.entry_index in kept:
        return KEPT
    if cm.entry_index in prefix:
        return PREFIX
    return SUMMARISED if summarised is None or cm.entry_index in summarised else DROPPED


def _ids(msgs: Sequence[ContextMessage]) -> set[int]:
    return {m.entry_index for m in msgs if m.entry_index is not None}


def compaction_view(replay: Any, index: int) -> CompactionView:
    """The before/after view of compaction ``index`` of ``replay`` (see the module docstring)."""
    rec = replay.summaries[index]
    session, settings = replay.session, replay.settings
    from .replay import session_counter

    counter = session_counter(session, settings.counter)
    before_msgs, after_msgs = rec.before(), rec.after()
    prep: CompactionPreparation | None = rec.prep
    replayed: int | None = None
    if rec.entry_index is not None:
        prep, replayed = _recorded_preps(session, rec.entry_index, settings)
    kept = {m.entry_index for m in after_msgs if not _is_summary(m) and m.entry_index is not None}
    prefix = _ids(prep.turnPrefixMessages) if prep is not None else set()
    summarised = _ids(prep.messagesToSummarize) if prep is not None else None
    bt = counter.count_many([m.message for m in before_msgs])
    at = counter.count_many([m.message for m in after_msgs])
    before = tuple(
        ViewPart(i, m, t, _part(m, kept, prefix, summarised))
        for i, (m, t) in enumerate(zip(before_msgs, bt, strict=True))
    )
    after = tuple(
        ViewPart(i, m, t, SUMMARY if _is_summary(m) else KEPT)
        for i, (m, t) in enumerate(zip(after_msgs, at, strict=True))
    )
    cuts, note = _cuts(replay, rec, before, replayed)
    return CompactionView(
        index,
        rec.step,
        rec.simulated,
        rec.policy,
        rec.entry_index,
        before,
        after,
        cuts,
        note,
        prep,
        rec.text,
    )


def _parent_path(session: Any, comp_index: int) -> list[int]:
    parent = session.parents[comp_index]
    return session.path(parent) if parent is not None and parent >= 0 else []


def _recorded_preps(
    session: Any, comp_index: int, settings: Any
) -> tuple[CompactionPreparation | None, int | None]:
    """What a recorded compaction summarised (pi's rule at its recorded cut; another agent's own
    split), and, for pi sessions, where pi's rule cuts with the replay's keepRecentTokens."""
    path = _parent_path(session, comp_index)
    if not path:
        return None, None
    entries = session.entries_at(path)
    comp = session.entries[comp_index]
    kept = session.index_of(getattr(comp, "firstKeptEntryId", None))
    kept_pos = path.index(kept) if kept in path else None
    cs = CompactionSettings(
        keepRecentTokens=settings.keep_recent_tokens, reserveTokens=settings.reserve_tokens
    )
    if session.format != "pi":
        return prepare_recorded_split(entries, kept_pos, cs, path_indexes=path), None
    version = settings.pi_version
    prep = (
        prepare_at_cut(entries, kept_pos, cs, path_indexes=path, pi_version=version)
        if kept_pos is not None
        else None
    )
    mine = prepare_compaction(entries, cs, path_indexes=path, pi_version=version)
    return prep, (path[mine.first_kept_path_index] if mine is not None else None)


def _cut_at(label: str, entry: int, before: Sequence[ViewPart]) -> Cut:
    pos = next(
        (
            p.position
            for p in before
            if not _is_summary(p.message)
            and p.message.entry_index is not None
            and p.message.entry_index >= entry
        ),
        None,
    )
    offset = sum(p.tokens for p in before[:pos]) if pos is not None else sum(p.tokens for p in before)
    return Cut(label, entry, pos, offset)


def _cuts(
    replay: Any, rec: CompactionRecord, before: Sequence[ViewPart], replayed: int | None
) -> tuple[tuple[Cut, ...], str | None]:
    first = rec.first_kept_entry_index
    if rec.entry_index is None:  # simulated
        kept = [p.position for p in before if p.part == KEPT]
        suffix = bool(kept) and kept == list(
            range(kept[0], len(before))
        )  # a cut only where the kept part is the tail
        return (
            (_cut_at(f"cut ({rec.policy})", first, before),) if first is not None and suffix else ()
        ), None
    cuts = [_cut_at("recorded cut", first, before)] if first is not None else []
    if replayed is None:
        return tuple(cuts), None
    keep = replay.settings.keep_recent_tokens
    cuts.append(_cut_at(f"pi's cut, keepRecentTokens {keep:,}", replayed, before))
    if first == replayed:
        return tuple(cuts), None
    return tuple(cuts), recorded_cut_reason(
        replay.session, rec.entry_index, replayed, keep, replay.settings.pi_version
    )


def keep_range_for_cut(
    session: Any, comp_index: int, first_kept: int, pi_version: str = "0.73"
) -> tuple[int, int] | None:
    """The keepRecentTokens values (lowest, highest) for which pi's ``findCutPoint`` at the entry
    before compaction ``comp_index`` puts the cut at entry ``first_kept``; None when none does.
    The cut only moves back as keepRecentTokens grows, so two binary searches find the range."""
    from .replay import session_counter

    path = _parent_path(session, comp_index)
    if first_kept not in path:
        return None
    entries = session.entries_at(path)
    target = path.index(first_kept)
    start, _ = compaction_boundary(entries, pi_version)
    counter = session_counter(session, "pi")

    def tokens(i: int) -> int:
        e = entries[i]
        return counter.count(e.message) if isinstance(e, MessageEntry) else 0

    def cut(keep: int) -> int:
        return find_cut_point(entries, start, len(entries), keep, tokens).firstKeptEntryIndex

    total = sum(tokens(i) for i in range(start, len(entries))) + 1

    def lowest(pred: Any) -> int:  # the smallest keep in [0, total] with pred(cut(keep)); total if none
        lo, hi = 0, total
        while lo < hi:
            mid = (lo + hi) // 2
            if pred(cut(mid)):
                hi = mid
            else:
                lo = mid + 1
        return lo

    lo = lowest(lambda c: c <= target)
    if lo >= total or cut(lo) != target:
        return None
    return lo, lowest(lambda c: c < target) - 1


def recorded_cut_reason(
    session: Any, comp_index: int, replayed: int | None, keep: int, pi_version: str = "0.73"
) -> str:
    """Plain words: why pi's rule, replayed with keepRecentTokens ``keep``, cuts elsewhere (entry
    ``replayed``) than the recorded compaction did."""
    comp = session.entries[comp_index]
    recorded = session.index_of(getattr(comp, "firstKeptEntryId", None))
    head = (
        f"pi's rule with keepRecentTokens {keep:,} cuts at entry {replayed}; the session's compaction kept from "
        f"entry {recorded}."
    )
    if isinstance(comp, CompactionEntry) and comp.fromHook:
        return head + " That compaction was written by an extension's hook, not by pi's cut rule."
    for version in dict.fromkeys((pi_version, "0.73", "0.58")):
        rng = keep_range_for_cut(session, comp_index, recorded, version) if recorded is not None else None
        if rng is not None:
            lo, hi = rng
            return head + (
                f" pi {version}'s rule cuts there with keepRecentTokens from {lo:,} to {hi:,}: the "
                "session was compacted with another keepRecentTokens (or its messages weighed "
                "differently then)."
            )
    return head + (
        " No keepRecentTokens reproduces that cut with pi's rule: it was made another way (a manual "
        "/compact by an extension, another agent's rule, or an edited file)."
    )


RECORDED_TRIGGER = "recorded usage, input + output + cache (what the agent compared)"
REPLAYED_TRIGGER = "usage the policy compares (recorded, + what the what-if changed, fitted)"


def _recorded_compared(st: Any) -> float | None:
    """What the agent compared after a recorded answer: its recorded usage (pi's
    ``calculateContextTokens``), none for an aborted or failed answer."""
    return None if st.stop_reason in ("aborted", "error") else st.recorded_total


def compared_at(replay: Any, k: int) -> float | None:
    """:func:`trigger_series` at step ``k`` alone (None where nothing was compared)."""
    pol = get_policy(replay.settings.compaction)
    if pol.simulated:
        triggers = replay.triggers
        return triggers[k] if k < len(triggers) else None
    return _recorded_compared(replay.steps[k]) if pol.as_recorded else None


def trigger_label(replay: Any) -> str | None:
    """The label of :func:`trigger_series` without computing the series (None when it has none)."""
    pol = get_policy(replay.settings.compaction)
    if pol.simulated:
        return REPLAYED_TRIGGER
    if pol.as_recorded and any(_recorded_compared(st) is not None for st in replay.steps):
        return RECORDED_TRIGGER
    return None


def trigger_series(replay: Any) -> tuple[str, list[float | None]] | None:
    """What the replay's compaction policy compares with its threshold after each call, with a
    label (None: the policy never compacts on its own).

    * As recorded, the agent decided: pi's ``shouldCompact`` takes ``calculateContextTokens`` of
      the last answer's recorded usage (input + output + cache), skipping aborted and error
      answers — so the recorded usage, not the estimate, is what crosses the threshold.
    * A what-if policy compares the usage the provider would report after each answer, as the
      replay found it (:attr:`inspector.replay.Replay.triggers`: the recorded usage, plus what the
      what-if changed in the context).
    """
    s = replay.settings
    pol = get_policy(s.compaction)
    if not pol.simulated and not pol.as_recorded:
        return None
    if pol.as_recorded:
        vals: list[float | None] = [_recorded_compared(st) for st in replay.steps]
        if all(v is None for v in vals):
            return None
        return RECORDED_TRIGGER, vals
    return REPLAYED_TRIGGER, list(replay.triggers)
