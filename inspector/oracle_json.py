"""The oracle-shaped JSON: our engine's answers in the exact shape ``../shared/oracle/oracle.mjs``
prints from pi's own code, so ``compare.py`` can check them field by field.

Main mode: ``meta``, ``defaults``, ``leafId``/``leafIndex``, ``entries``, ``tree``, ``path``,
``context``, ``contextTokens``, ``compaction[]`` (one per ``keep`` value), ``shouldCompact`` (the
oracle's 13 triples), ``serializeFirst10``, ``serializeWholeContext``. Branch mode (``branch=``):
``from``/``to``, ``commonAncestorId``/``Index``, ``entriesToSummarize``, contexts at both ends,
and ``prepareBranchEntries`` for the oracle's budgets.

Ids are always deterministic here (see the loader), so ``--deterministic-ids`` is accepted
and changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from . import __version__
from .branch_summary import collect_entries_for_branch_summary, default_branch_budget, prepare_branch_entries
from .compaction import (
    DEFAULT_COMPACTION_SETTINGS,
    CompactionEntry,
    CompactionSettings,
    compaction_boundary,
    context_after_compaction,
    find_cut_point,
    find_turn_start_index,
    make_compaction_entry,
    prepare_compaction,
    should_compact,
)
from .context import (
    ContextMessage,
    SessionContext,
    build_session_context,
    context_from_path,
    convert_to_llm,
    serialize_conversation,
)
from .jsjson import utf8_bytes, utf16_len
from .numbers import js_float
from .session.models import (
    AnyEntry,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    ThinkingLevelChangeEntry,
    ToolResultMessage,
)
from .session.tree import Session
from .tokens import (
    assistant_usage,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
)

DEFAULT_KEEPS = (2000, 5000, 10000, 20000, 40000)
ORACLE_BRANCH_BUDGETS = (0, default_branch_budget(), 100, 500, 2000, 5000)


def _sha256(text: str) -> str:
    return hashlib.sha256(utf8_bytes(text)).hexdigest()


def _settings_dict(s: CompactionSettings) -> dict[str, Any]:
    return {"enabled": s.enabled, "reserveTokens": s.reserveTokens, "keepRecentTokens": s.keepRecentTokens}


def describe_messages(msgs: Sequence[ContextMessage], session: Session) -> list[dict[str, Any]]:
    out = []
    for i, cm in enumerate(msgs):
        m = cm.message
        ei = cm.entry_index
        e = session.entries[ei] if ei is not None else None
        d: dict[str, Any] = {
            "i": i,
            "role": m.role,
            "entryIndex": ei,
            "entryId": e.id if e is not None else None,
            "entryType": e.type if e is not None else None,
            "tokens": estimate_tokens(m),
        }
        if isinstance(m, AssistantMessage):
            if "stopReason" in m.model_fields_set:  # pi copies the field: absent stays absent
                d["stopReason"] = m.stopReason
            d["usageContextTokens"] = calculate_context_tokens(m.usage) if m.usage is not None else None
        if isinstance(m, ToolResultMessage):
            d["isError"] = bool(m.isError)
        if isinstance(m, BashExecutionMessage) and m.excludeFromContext:
            d["excludeFromContext"] = True
        out.append(d)
    return out


def message_list_summary(msgs: Sequence[ContextMessage], session: Session, max_text: int) -> dict[str, Any]:
    described = describe_messages(msgs, session)
    llm = convert_to_llm([m.message for m in msgs])
    text = serialize_conversation(llm)
    out: dict[str, Any] = {
        "count": len(msgs),
        "tokens": sum(d["tokens"] for d in described),
        "entryIndexes": [d["entryIndex"] for d in described],
        "entryIds": [d["entryId"] for d in described],
        "roles": [d["role"] for d in described],
        "llmMessageCount": len(llm),
        "serializedChars": utf16_len(text),
        "serializedSha256": _sha256(text),
    }
    if utf16_len(text) <= max_text:
        out["serialized"] = text
    return out


def describe_entry(session: Session, i: int, path_set: set[int] | None) -> dict[str, Any]:
    e = session.entries[i]
    idx = session.index_of
    d: dict[str, Any] = {
        "index": i,
        "id": e.id,
        "parentId": e.parentId,
        "parentIndex": idx(e.parentId) if isinstance(e.parentId, str) else None,
        "type": e.type,
    }
    if isinstance(e, MessageEntry):
        m = e.message
        d["role"] = m.role
        d["tokens"] = estimate_tokens(m)
        if isinstance(m, AssistantMessage):
            if "stopReason" in m.model_fields_set:  # pi copies the field: absent stays absent
                d["stopReason"] = m.stopReason
            d["usageContextTokens"] = calculate_context_tokens(m.usage) if m.usage is not None else None
        if isinstance(m, ToolResultMessage):
            d["isError"] = bool(m.isError)
    elif isinstance(e, CompactionEntry):
        d["firstKeptEntryId"] = e.firstKeptEntryId
        d["firstKeptEntryIndex"] = idx(e.firstKeptEntryId)
        d["tokensBefore"] = e.tokensBefore
        d["summaryChars"] = utf16_len(e.summary)
        d["details"] = e.details
        if e.fromHook:
            d["fromHook"] = True
    elif isinstance(e, BranchSummaryEntry):
        d["fromId"] = e.fromId
        d["fromIndex"] = idx(e.fromId)
        d["summaryChars"] = utf16_len(e.summary)
        d["details"] = e.details
        if e.fromHook:
            d["fromHook"] = True
    elif isinstance(e, (CustomMessageEntry,)):
        d["customType"] = e.customType
        d["display"] = e.display
    elif isinstance(e, CustomEntry):
        d["customType"] = e.customType
    elif isinstance(e, LabelEntry):
        d["targetId"] = e.targetId
        d["targetIndex"] = idx(e.targetId)
        d["label"] = e.label
    elif isinstance(e, ModelChangeEntry):
        d["provider"] = e.provider
        d["modelId"] = e.modelId
    elif isinstance(e, ThinkingLevelChangeEntry):
        d["thinkingLevel"] = e.thinkingLevel
    if path_set is not None:
        d["onPath"] = i in path_set
    return d


def context_usage(
    session: Session, path: Sequence[int], ctx: SessionContext, window: int
) -> dict[str, Any] | None:
    """pi's ``AgentSession.getContextUsage`` (what pi's footer shows)."""
    if window <= 0:
        return None
    comp = -1
    for k in range(len(path) - 1, -1, -1):
        if isinstance(session.entries[path[k]], CompactionEntry):
            comp = k
            break
    if comp >= 0:
        has_post = False
        for k in range(len(path) - 1, comp, -1):
            e = session.entries[path[k]]
            if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
                if e.message.stopReason not in ("aborted", "error"):
                    u = e.message.usage
                    has_post = u is not None and calculate_context_tokens(u) > 0
                    break
        if not has_post:
            return {"tokens": None, "contextWindow": window, "percent": None}
    est = estimate_context_tokens(ctx.agent_messages)
    return {"tokens": est.tokens, "contextWindow": window, "percent": js_float(est.tokens) / window * 100}


def _context_summary(session: Session, leaf: int) -> dict[str, Any]:
    ctx = build_session_context(session, leaf)
    est = estimate_context_tokens(ctx.agent_messages)
    return {
        "leafId": session.entries[leaf].id,
        "leafIndex": leaf,
        "messageCount": len(ctx.messages),
        "estimateContextTokens": est.as_dict(),
        "sumEstimateTokens": sum(estimate_tokens(m) for m in ctx.agent_messages),
        "pathLength": len(session.path(leaf)),
    }


def _meta(session: Session, mode: str) -> dict[str, Any]:
    return {
        "oracle": "pi-compaction-oracle/1",
        "engine": f"context-inspector@{__version__}",
        "sessionFile": session.source,
        "originalHeaderVersion": session.original_version,
        "headerVersionAfterLoad": 3 if session.header is not None else None,
        "migrated": session.migrated,
        "sessionId": session.header.id if session.header is not None else None,
        "idMode": "deterministic-counter",
        "entryCount": len(session.entries),
        "mode": mode,
    }


def _boundary(path_entries: Sequence[AnyEntry], pi_version: str) -> tuple[int, dict[str, Any]]:
    """Where ``prepareCompaction`` starts on the path (after the previous compaction), and the
    ``path.boundary`` record: the rule of ``pi_version``, the previous compaction, the start."""
    boundary_start, prev = compaction_boundary(path_entries, pi_version)
    boundary: dict[str, Any] = {
        "rule": "legacy" if pi_version == "0.58" else "kept",
        "prevCompactionPathIndex": prev,
        "boundaryStart": boundary_start,
    }
    if prev >= 0 and pi_version != "0.58":
        boundary["firstKeptFound"] = boundary_start != prev + 1 or any(
            e.id == path_entries[prev].firstKeptEntryId  # type: ignore[union-attr]
            for e in path_entries
        )
    return boundary_start, boundary


def _path_ref(path_entries: Sequence[AnyEntry], path: Sequence[int], pi_: int | None) -> dict[str, Any]:
    """A path index, with the entry there (all None when it is off the path)."""
    if pi_ is None or not 0 <= pi_ < len(path_entries):
        return {"pathIndex": pi_, "entryIndex": None, "id": None, "type": None, "role": None}
    e = path_entries[pi_]
    return {
        "pathIndex": pi_,
        "entryIndex": path[pi_],
        "id": e.id,
        "type": e.type,
        "role": e.message.role if isinstance(e, MessageEntry) else None,
    }


def _cut_points(
    path_entries: Sequence[AnyEntry], path: Sequence[int], boundary_start: int, keep: int
) -> tuple[Any, dict[str, Any]]:
    """``findCutPoint`` from the boundary (and from 0 when the boundary is not 0): the cut, and its
    ``findCutPoint`` / ``findCutPointFrom0`` records."""
    cut = find_cut_point(path_entries, boundary_start, len(path_entries), keep)
    kept_tokens = sum(
        estimate_tokens(e.message)
        for e in path_entries[cut.firstKeptEntryIndex :]
        if isinstance(e, MessageEntry)
    )
    out: dict[str, Any] = {
        "findCutPoint": {
            "startIndex": boundary_start,
            "endIndex": len(path_entries),
            "firstKeptEntryIndex": cut.firstKeptEntryIndex,
            "turnStartIndex": cut.turnStartIndex,
            "isSplitTurn": cut.isSplitTurn,
            "firstKept": _path_ref(path_entries, path, cut.firstKeptEntryIndex),
            "turnStart": _path_ref(path_entries, path, cut.turnStartIndex),
            "keptMessageEntryTokens": kept_tokens,
        },
    }
    if boundary_start != 0:
        c0 = find_cut_point(path_entries, 0, len(path_entries), keep)
        out["findCutPointFrom0"] = {
            "firstKeptEntryIndex": c0.firstKeptEntryIndex,
            "turnStartIndex": c0.turnStartIndex,
            "isSplitTurn": c0.isSplitTurn,
            "firstKept": _path_ref(path_entries, path, c0.firstKeptEntryIndex),
        }
    return cut, out


def _prepared(prep: Any, session: Session, max_text: int) -> dict[str, Any]:
    """The ``prepareCompaction`` record of a preparation."""
    return {
        "firstKeptEntryId": prep.firstKeptEntryId,
        "firstKeptEntryIndex": session.index_of(prep.firstKeptEntryId),
        "firstKeptPathIndex": prep.first_kept_path_index,
        "isSplitTurn": prep.isSplitTurn,
        "tokensBefore": prep.tokensBefore,
        "previousSummaryPresent": prep.previousSummary is not None,
        "previousSummaryChars": utf16_len(prep.previousSummary) if prep.previousSummary is not None else None,
        "messagesToSummarize": message_list_summary(prep.messagesToSummarize, session, max_text),
        "turnPrefixMessages": message_list_summary(prep.turnPrefixMessages, session, max_text),
        "fileOps": prep.fileOps.as_dict(),
    }


def _compaction_at(
    session: Session,
    path_entries: Sequence[AnyEntry],
    path: Sequence[int],
    leaf_idx: int | None,
    boundary_start: int,
    keep: int,
    *,
    reserve: int,
    max_text: int,
    pi_version: str,
) -> dict[str, Any]:
    """One ``compaction[]`` record: pi's cut and preparation at ``keep``, and the context after a
    compaction with a placeholder summary."""
    settings = CompactionSettings(enabled=True, reserveTokens=reserve, keepRecentTokens=keep)
    cut, cut_points = _cut_points(path_entries, path, boundary_start, keep)
    r: dict[str, Any] = {"keepRecentTokens": keep, "settings": _settings_dict(settings), **cut_points}
    prep = prepare_compaction(path_entries, settings, path_indexes=path, pi_version=pi_version)
    if prep is None:
        r["prepareCompaction"] = None
        return r
    r["prepareCompaction"] = _prepared(prep, session, max_text)
    r["consistency"] = {
        "firstKeptMatchesFindCutPoint": prep.first_kept_path_index == cut.firstKeptEntryIndex,
        "isSplitTurnMatches": prep.isSplitTurn == cut.isSplitTurn,
    }
    fake = make_compaction_entry(
        prep,
        "ORACLE PLACEHOLDER SUMMARY",
        parent_id=session.entries[leaf_idx].id if leaf_idx is not None else None,
        details={},
    )
    after = context_after_compaction(path_entries, path, fake)
    r["afterCompaction"] = {
        "messageCount": len(after.messages),
        "entryIndexes": [
            "compaction(new)" if m.entry_index is None else m.entry_index for m in after.messages
        ],
        "sumEstimateTokens": sum(estimate_tokens(m) for m in after.agent_messages),
    }
    return r


def _should_compact(estimate: float, last_usage: Any) -> list[dict[str, Any]]:
    """``shouldCompact`` at the oracle's 13 (tokens, window, settings) triples: the path's estimate
    and recorded usage at three windows, then the edges of the threshold and of the settings."""
    D = DEFAULT_COMPACTION_SETTINGS
    triples: list[tuple[float, int, CompactionSettings]] = [
        (estimate, 200000, D),
        (estimate, 128000, D),
        (estimate, 32000, D),
        (calculate_context_tokens(last_usage) if last_usage is not None else 0, 200000, D),
        (111616, 128000, D),
        (111617, 128000, D),
        (183616, 200000, D),
        (183617, 200000, D),
        (150000, 200000, D.model_copy(update={"enabled": False})),
        (1000, 1000, D.model_copy(update={"reserveTokens": 0})),
        (1001, 1000, D.model_copy(update={"reserveTokens": 0})),
        (0, 0, D),
        (-16383, 0, D),
    ]
    return [
        {
            "contextTokens": t,
            "contextWindow": w,
            "settings": _settings_dict(s),
            "result": should_compact(t, w, s),
        }
        for t, w, s in triples
    ]


def _tree(session: Session) -> dict[str, Any]:
    return {
        "roots": list(session.roots),
        "nodes": len(session.entries),
        "leaves": len(session.leaves),
        "maxDepth": max((d + 1 for _, d in session.walk()), default=0),
        "branchPoints": list(session.fork_points),
    }


def _context_tokens(
    session: Session, path: Sequence[int], ctx: SessionContext, est: Any, last_usage: Any, context_window: int
) -> dict[str, Any]:
    """The ``contextTokens`` record: the estimate, the last recorded usage on the path, and what
    ``AgentSession.getContextUsage`` reports."""
    last_usage_entry = (
        ctx.messages[est.lastUsageIndex].entry_index if est.lastUsageIndex is not None else None
    )
    return {
        "estimateContextTokens": {**est.as_dict(), "lastUsageEntryIndex": last_usage_entry},
        "getLastAssistantUsageOnPath": (
            {"usage": last_usage.raw(), "calculateContextTokens": calculate_context_tokens(last_usage)}
            if last_usage is not None
            else None
        ),
        "agentSessionGetContextUsage": context_usage(session, path, ctx, context_window),
    }


def _context_record(session: Session, ctx: SessionContext) -> dict[str, Any]:
    """The ``context`` record: the leaf's context, message by message."""
    described = describe_messages(ctx.messages, session)
    return {
        "thinkingLevel": ctx.thinking_level,
        "model": ctx.model,
        "messageCount": len(ctx.messages),
        "sumEstimateTokens": sum(d["tokens"] for d in described),
        "messages": described,
    }


def oracle_main(
    session: Session,
    *,
    leaf: int | str | None = "leaf",
    keeps: Sequence[int] = DEFAULT_KEEPS,
    reserve: int = 16384,
    context_window: int = 200000,
    max_text: int = 100000,
    pi_version: str = "0.73",
) -> dict[str, Any]:
    leaf_idx = session.resolve(leaf) if leaf is not None else None
    path = session.path(leaf_idx) if leaf_idx is not None else []
    path_entries = session.entries_at(path)
    ctx = context_from_path(path_entries, path) if path else SessionContext(messages=())
    ctx_msgs = ctx.messages
    est = estimate_context_tokens(ctx.agent_messages)
    last_usage = get_last_assistant_usage(path_entries)
    boundary_start, boundary = _boundary(path_entries, pi_version)
    compactions = [
        _compaction_at(
            session,
            path_entries,
            path,
            leaf_idx,
            boundary_start,
            keep,
            reserve=reserve,
            max_text=max_text,
            pi_version=pi_version,
        )
        for keep in keeps
    ]
    first10 = convert_to_llm([m.message for m in ctx_msgs[:10]])
    whole = serialize_conversation(convert_to_llm(ctx.agent_messages))
    turn_starts = [find_turn_start_index(path_entries, i, boundary_start) for i in range(len(path_entries))]
    path_set = set(path)
    return {
        "meta": {**_meta(session, "main"), "prepareCompactionBoundaryRule": boundary["rule"]},
        "defaults": _settings_dict(DEFAULT_COMPACTION_SETTINGS),
        "leafId": session.entries[leaf_idx].id if leaf_idx is not None else None,
        "leafIndex": leaf_idx,
        "entries": [describe_entry(session, i, path_set) for i in range(len(session.entries))],
        "tree": _tree(session),
        "path": {
            "length": len(path),
            "entryIndexes": list(path),
            "boundary": boundary,
            "findTurnStartIndexFromBoundary": turn_starts,
        },
        "context": _context_record(session, ctx),
        "contextTokens": _context_tokens(session, path, ctx, est, last_usage, context_window),
        "compaction": compactions,
        "shouldCompact": _should_compact(est.tokens, last_usage),
        "serializeFirst10": {"llmRoles": [m.role for m in first10], "text": serialize_conversation(first10)},
        "serializeWholeContext": {"chars": utf16_len(whole), "sha256": _sha256(whole)},
    }


def oracle_branch(
    session: Session,
    from_ref: str,
    to_ref: str,
    *,
    budgets: Sequence[int] = (),
    max_text: int = 100000,
) -> dict[str, Any]:
    src = session.resolve(from_ref)
    dst = session.resolve(to_ref)
    if dst is None:
        raise KeyError("the target of a branch navigation cannot be null")
    col = collect_entries_for_branch_summary(session, src, dst)
    entries = session.entries_at(col.entries)
    all_budgets = list(dict.fromkeys([*ORACLE_BRANCH_BUDGETS, *budgets]))
    prepared = []
    for b in all_budgets:
        prep = prepare_branch_entries(entries, b, col.entries)
        prepared.append(
            {
                "tokenBudget": b,
                "totalTokens": prep.totalTokens,
                "messages": message_list_summary(prep.messages, session, max_text),
                "messageDetails": describe_messages(prep.messages, session),
                "fileOps": prep.fileOps.as_dict(),
            }
        )
    to_entry = session.entries[dst]

    def ref(r: str, i: int | None) -> dict[str, Any]:
        return {"ref": r, "id": session.entries[i].id if i is not None else None, "index": i}

    ca = col.common_ancestor
    return {
        "meta": _meta(session, "branch"),
        "from": ref(from_ref, src),
        "to": {
            **ref(to_ref, dst),
            "type": to_entry.type,
            "role": to_entry.message.role if isinstance(to_entry, MessageEntry) else None,
        },
        "commonAncestorId": session.entries[ca].id if ca is not None else None,
        "commonAncestorIndex": ca,
        "entriesToSummarize": [describe_entry(session, i, None) for i in col.entries],
        "contextAtFrom": _context_summary(session, src) if src is not None else None,
        "contextAtTo": _context_summary(session, dst),
        "prepareBranchEntries": prepared,
    }


__all__ = ["oracle_main", "oracle_branch", "assistant_usage"]
