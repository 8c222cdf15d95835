"""Plain-words explanations of pi's decisions, for the CLI and the app's teaching panel."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from .compaction import (
    CompactionPreparation,
    CompactionSettings,
    context_after_compaction,
    make_compaction_entry,
    prepare_compaction,
)
from .context import build_session_context
from .numbers import clamp
from .session.models import AnyEntry, MessageEntry
from .session.tree import Session
from .tokens import estimate_context_tokens, estimate_tokens


def describe_entry(e: AnyEntry) -> str:
    if isinstance(e, MessageEntry):
        return f"{e.message.role} message"
    return f"{e.type} entry".replace("_", " ")


class CompactionPlan(BaseModel):
    """What ``inspector compact`` prints: where pi's cut lands, why, and what it keeps."""

    leafIndex: int | None
    piVersion: str
    keepRecentTokens: int
    reserveTokens: int
    firstKeptEntryIndex: int | None
    firstKeptEntryId: str | None
    isSplitTurn: bool
    turnStartEntryIndex: int | None
    boundaryStartEntryIndex: int | None
    previousCompactionEntryIndex: int | None
    tokensBefore: float
    tokensAfter: int
    """Estimated context right after the compaction (summary excluded: it is not written yet)."""
    summarizeEntryIndexes: list[int | None]
    summarizeTokens: int
    turnPrefixEntryIndexes: list[int | None]
    turnPrefixTokens: int
    keptMessages: int
    readFiles: list[str]
    modifiedFiles: list[str]
    steps: list[str]
    nothingToCompact: bool


def explain_compaction(
    session: Session,
    leaf: int | str | None = "leaf",
    settings: CompactionSettings | None = None,
    pi_version: str = "0.73",
) -> CompactionPlan | None:
    """pi's ``prepareCompaction`` at ``leaf``, told step by step. None when pi would refuse
    (the path ends in a compaction, is empty, or the first kept entry has no id)."""
    settings = settings or CompactionSettings()
    li = session.resolve(leaf) if leaf is not None else None
    path = session.path(li) if li is not None else []
    entries = session.entries_at(path)
    prep = prepare_compaction(entries, settings, path_indexes=path, pi_version=pi_version)
    if prep is None:
        return None
    return _plan(session, li, path, entries, prep, settings, pi_version)


def cut_story(session: Session, path: Sequence[int], entries: Sequence[AnyEntry], prep: CompactionPreparation,
              keep: int) -> list[str]:
    """The cut, as sentences with entry indexes (file order)."""
    c = prep.cut
    at = lambda p: path[p] if 0 <= p < len(path) else None  # noqa: E731
    out: list[str] = []
    if prep.prev_compaction_path_index >= 0:
        prev = at(prep.prev_compaction_path_index)
        which = f"entry {prev}" if prev is not None and prev >= 0 else "the previous simulated compaction"
        if prep.pi_version == "0.58":
            out.append(f"The last compaction is {which}; pi 0.58 starts right after it, at entry "
                       f"{at(prep.boundary_start)}.")
        else:
            out.append(f"The last compaction is {which}; pi 0.73 starts at its first kept entry, "
                       f"{at(prep.boundary_start)}, so the previously kept messages are summarised again.")
    if c.fallback == "no-cut-points":
        out.append("There is no valid cut point (user, assistant, bash, custom or summary message) in range: nothing is cut.")
    elif c.fallback == "budget-not-reached":
        out.append(f"Walking back from the newest message, the messages add up to only {c.walked_tokens:,} tokens, "
                   f"less than keepRecentTokens = {keep:,}: everything is kept (cut at the first cut point, "
                   f"entry {at(c.firstKeptEntryIndex)}).")
    else:
        out.append(f"Walking back from the newest message and adding message estimates, the total reaches "
                   f"{c.walked_tokens:,} ≥ keepRecentTokens = {keep:,} at entry {at(c.walked_to or 0)} "
                   f"({describe_entry(entries[c.walked_to or 0])}).")
        if c.fallback == "no-cut-point-after":
            out.append("No valid cut point lies at or after it (a tool result cannot start the kept part), so pi "
                       f"falls back to the first cut point, entry {at(c.firstKeptEntryIndex)}: nothing is summarised.")
        elif c.snapped_to is not None and c.snapped_to != c.walked_to:
            out.append(f"That entry cannot start the kept part, so the cut snaps forward to the next cut point, entry "
                       f"{at(c.snapped_to)} ({describe_entry(entries[c.snapped_to])}).")
        else:
            out.append("That entry is a valid cut point: the kept part starts there.")
    if c.moved_back:
        out.append(f"The cut then moves back over {c.moved_back} preceding non-message entr"
                   f"{'y' if c.moved_back == 1 else 'ies'} (settings changes, labels, custom entries) to entry "
                   f"{at(c.firstKeptEntryIndex)}.")
    snapped_user = (
        c.snapped_to is not None and isinstance(entries[c.snapped_to], MessageEntry)
        and entries[c.snapped_to].message.role == "user"  # type: ignore[union-attr]
    )
    if prep.isSplitTurn and c.moved_back and snapped_user:
        out.append(f"pi quirk: the cut had reached a user message, but now sits on a non-message entry, so pi "
                   f"looks for the turn start before it and finds entry {at(c.turnStartIndex)}: the whole previous "
                   f"turn becomes the \"turn prefix\" ({len(prep.turnPrefixMessages)} message(s)).")
    elif prep.isSplitTurn:
        if c.turnStartIndex == c.firstKeptEntryIndex:
            out.append(f"The cut is not at a user message, so pi treats it as a split turn; the turn starts at the "
                       f"cut itself (entry {at(c.turnStartIndex)}), so the turn prefix is empty.")
        else:
            out.append(f"The cut is inside a turn that started at entry {at(c.turnStartIndex)}: a split turn. The "
                       f"turn's first {len(prep.turnPrefixMessages)} message(s) are summarised separately (turn prefix).")
    elif c.fallback is None:
        out.append("The cut is at a user message: no turn is split.")
    return out


def _plan(session: Session, li: int | None, path: list[int], entries: list[AnyEntry], prep: CompactionPreparation,
          settings: CompactionSettings, pi_version: str) -> CompactionPlan:
    at = lambda p: path[p] if 0 <= p < len(path) else None  # noqa: E731
    first_kept_pos = prep.first_kept_path_index
    placeholder = make_compaction_entry(prep, "", parent_id=entries[-1].id if entries else None)
    after = context_after_compaction(entries, path, placeholder)
    kept = [m for m in after.messages if m.entry_index is not None]
    kept_tokens = sum(estimate_tokens(m.message) for m in kept)
    r, m = prep.fileOps.lists()
    steps = cut_story(session, path, entries, prep, settings.keepRecentTokens)
    nothing = not prep.messagesToSummarize and not prep.turnPrefixMessages
    if nothing:
        steps.append("Nothing would be summarised; pi would still call the model with an empty history.")
    else:
        steps.append(
            f"Summarised: {len(prep.messagesToSummarize)} message(s), "
            f"{sum(estimate_tokens(x.message) for x in prep.messagesToSummarize):,} tokens"
            + (f"; turn prefix: {len(prep.turnPrefixMessages)} message(s)" if prep.turnPrefixMessages else "")
            + f". Kept verbatim: {len(kept)} message(s), {kept_tokens:,} tokens."
        )
    return CompactionPlan(
        leafIndex=li,
        piVersion=pi_version,
        keepRecentTokens=settings.keepRecentTokens,
        reserveTokens=settings.reserveTokens,
        firstKeptEntryIndex=at(first_kept_pos),
        firstKeptEntryId=prep.firstKeptEntryId,
        isSplitTurn=prep.isSplitTurn,
        turnStartEntryIndex=at(prep.cut.turnStartIndex) if prep.isSplitTurn else None,
        boundaryStartEntryIndex=at(prep.boundary_start),
        previousCompactionEntryIndex=at(prep.prev_compaction_path_index),
        tokensBefore=clamp(prep.tokensBefore),  # pi's value may be Infinity (1e400 in a usage)
        tokensAfter=kept_tokens,
        summarizeEntryIndexes=[x.entry_index for x in prep.messagesToSummarize],
        summarizeTokens=sum(estimate_tokens(x.message) for x in prep.messagesToSummarize),
        turnPrefixEntryIndexes=[x.entry_index for x in prep.turnPrefixMessages],
        turnPrefixTokens=sum(estimate_tokens(x.message) for x in prep.turnPrefixMessages),
        keptMessages=len(kept),
        readFiles=r,
        modifiedFiles=m,
        steps=steps,
        nothingToCompact=nothing,
    )


def context_tokens_now(session: Session, leaf: int | str = "leaf") -> float:
    ctx = build_session_context(session, leaf)
    return estimate_context_tokens(ctx.agent_messages).tokens
