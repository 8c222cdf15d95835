"""Plain-words explanations of pi's decisions, for the CLI and the app's teaching panel."""

from __future__ import annotations

from pydantic import BaseModel

from .compaction import (
    CompactionPreparation,
    CompactionSettings,
    context_after_compaction,
    make_compaction_entry,
    prepare_compaction,
)
from .context import build_session_context
from .cut_story import cut_story
from .numbers import clamp
from .session.models import AnyEntry
from .session.tree import Session
from .tokens import estimate_context_tokens, estimate_tokens


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


def _plan(
    session: Session,
    li: int | None,
    path: list[int],
    entries: list[AnyEntry],
    prep: CompactionPreparation,
    settings: CompactionSettings,
    pi_version: str,
) -> CompactionPlan:
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
