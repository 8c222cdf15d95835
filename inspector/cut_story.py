"""pi's compaction cut in plain words: where the cut lands and why, as sentences with entry indexes.

Read by the pi policy (the story of each simulated compaction) and by :mod:`inspector.explain`
(``inspector compact``, the app's teaching panel).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .compaction import CompactionPreparation
from .context import message_from_entry
from .session.models import (
    AnyEntry,
    BranchSummaryEntry,
    BranchSummaryMessage,
    CustomMessageEntry,
    MessageEntry,
)
from .session.tree import Session
from .tokens import estimate_tokens


def describe_entry(e: AnyEntry) -> str:
    if isinstance(e, MessageEntry):
        return f"{e.message.role} message"
    return f"{e.type} entry".replace("_", " ")


def cut_story(
    session: Session, path: Sequence[int], entries: Sequence[AnyEntry], prep: CompactionPreparation, keep: int
) -> list[str]:
    """The cut, as sentences with entry indexes (file order)."""
    at = lambda p: path[p] if 0 <= p < len(path) else None  # noqa: E731
    return [*_previous(prep, at), *_walk(prep, entries, keep, at), *_turn(prep, entries, at)]


def _previous(prep: CompactionPreparation, at: Callable[[int], int | None]) -> list[str]:
    """Where the summarised part starts after an earlier compaction (pi 0.58 and 0.73 differ)."""
    if prep.prev_compaction_path_index < 0:
        return []
    prev = at(prep.prev_compaction_path_index)
    which = f"entry {prev}" if prev is not None and prev >= 0 else "the previous simulated compaction"
    if prep.pi_version == "0.58":
        return [
            f"The last compaction is {which}; pi 0.58 starts right after it, at entry "
            f"{at(prep.boundary_start)}."
        ]
    return [
        f"The last compaction is {which}; pi 0.73 starts at its first kept entry, "
        f"{at(prep.boundary_start)}, so the previously kept messages are summarised again."
    ]


def _walk(
    prep: CompactionPreparation, entries: Sequence[AnyEntry], keep: int, at: Callable[[int], int | None]
) -> list[str]:
    """``findCutPoint``'s walk back over keepRecentTokens, where it snaps, and the move back
    over non-message entries."""
    c = prep.cut
    out: list[str] = []
    if c.fallback == "no-cut-points":
        out.append(
            "There is no valid cut point (user, assistant, bash, custom or summary message) in range: nothing is cut."
        )
    elif c.fallback == "budget-not-reached":
        out.append(
            f"Walking back from the newest message, the messages add up to only {c.walked_tokens:,} tokens, "
            f"less than keepRecentTokens = {keep:,}: everything is kept (cut at the first cut point, "
            f"entry {at(c.firstKeptEntryIndex)})."
        )
        out.extend(_uncounted(entries, c.start, c.end, keep))
    else:
        out.append(
            f"Walking back from the newest message and adding message estimates, the total reaches "
            f"{c.walked_tokens:,} ≥ keepRecentTokens = {keep:,} at entry {at(c.walked_to or 0)} "
            f"({describe_entry(entries[c.walked_to or 0])})."
        )
        if c.fallback == "no-cut-point-after":
            out.append(
                "No valid cut point lies at or after it (a tool result cannot start the kept part), so pi "
                f"falls back to the first cut point, entry {at(c.firstKeptEntryIndex)}: nothing is summarised."
            )
        elif c.snapped_to is not None and c.snapped_to != c.walked_to:
            out.append(
                f"That entry cannot start the kept part, so the cut snaps forward to the next cut point, entry "
                f"{at(c.snapped_to)} ({describe_entry(entries[c.snapped_to])})."
            )
        else:
            out.append("That entry is a valid cut point: the kept part starts there.")
        out.extend(_uncounted(entries, c.walked_to or 0, c.end, keep))
    if c.moved_back:
        out.append(
            f"The cut then moves back over {c.moved_back} preceding non-message entr"
            f"{'y' if c.moved_back == 1 else 'ies'} (settings changes, labels, custom entries) to entry "
            f"{at(c.firstKeptEntryIndex)}."
        )
    return out


UNCOUNTED_SHARE = 0.05
"""Uncounted messages are mentioned from this share of keepRecentTokens."""


def _uncounted(entries: Sequence[AnyEntry], start: int, end: int, keep: int) -> list[str]:
    """pi's walk adds message entries only: the custom messages and branch summaries of the range
    are in the context but not counted (another agent's attachments, imported as custom messages,
    can be most of it). Said when they weigh :data:`UNCOUNTED_SHARE` of keepRecentTokens."""
    extra = [
        message_from_entry(e, include_compaction=False)
        for e in entries[start:end]
        if isinstance(e, CustomMessageEntry) or (isinstance(e, BranchSummaryEntry) and e.summary)
    ]
    if not extra:
        return []
    total = sum(estimate_tokens(m) for m in extra)
    if total < UNCOUNTED_SHARE * keep:
        return []
    return [
        f"pi counts message entries only: {_count(extra)} in that range ({total:,} tokens): sent to the "
        "model, not counted."
    ]


def _count(messages: Sequence[Any]) -> str:
    summaries = sum(isinstance(m, BranchSummaryMessage) for m in messages)
    custom = len(messages) - summaries
    parts = [f"{custom} custom message{'s' if custom != 1 else ''}"] if custom else []
    parts += [f"{summaries} branch summar{'ies' if summaries != 1 else 'y'}"] if summaries else []
    return " and ".join(parts)


def _turn(
    prep: CompactionPreparation, entries: Sequence[AnyEntry], at: Callable[[int], int | None]
) -> list[str]:
    """Whether the cut splits a turn, and pi's quirk when the cut moved back off a user message."""
    c = prep.cut
    snapped_user = (
        c.snapped_to is not None
        and isinstance(entries[c.snapped_to], MessageEntry)
        and entries[c.snapped_to].message.role == "user"  # type: ignore[union-attr]
    )
    if prep.isSplitTurn and c.moved_back and snapped_user:
        return [
            f"pi quirk: the cut had reached a user message, but now sits on a non-message entry, so pi "
            f"looks for the turn start before it and finds entry {at(c.turnStartIndex)}: the whole previous "
            f'turn becomes the "turn prefix" ({len(prep.turnPrefixMessages)} message(s)).'
        ]
    if prep.isSplitTurn:
        if c.turnStartIndex == c.firstKeptEntryIndex:
            return [
                f"The cut is not at a user message, so pi treats it as a split turn; the turn starts at the "
                f"cut itself (entry {at(c.turnStartIndex)}), so the turn prefix is empty."
            ]
        return [
            f"The cut is inside a turn that started at entry {at(c.turnStartIndex)}: a split turn. The "
            f"turn's first {len(prep.turnPrefixMessages)} message(s) are summarised separately (turn prefix)."
        ]
    if c.fallback is None:
        return ["The cut is at a user message: no turn is split."]
    return []
