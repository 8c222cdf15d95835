"""pi's compaction decisions: when to compact, where to cut, what to summarise.

Reproduces ``core/compaction/compaction.ts`` and ``utils.ts`` of ``@mariozechner/pi-coding-agent``
0.73.1 (and 0.58.3's ``prepareCompaction`` with ``pi_version="0.58"``). All functions work on a
root→leaf *path* of entries, as pi's do; positions in that list are "path indexes".

Quirks reproduced, each pinned by a test:

* ``should_compact`` is strict: ``contextTokens > contextWindow - reserveTokens``.
* Valid cut points are ``message`` entries of every role but ``toolResult``, plus
  ``branch_summary`` and ``custom_message`` entries; never settings, labels, ``custom``,
  ``session_info`` or ``compaction`` entries.
* The backward walk adds the estimates of ``message`` entries **only** (custom messages and
  branch summaries are cut points but weigh nothing), stops at the first entry where the sum
  reaches ``keepRecentTokens`` (``>=``), then snaps **forward** to the first cut point at or
  after it, so fewer tokens than asked may be kept.
* If the budget is never reached, or no cut point lies at or after the stop (the newest tool
  result alone is over budget), the cut is the first cut point of the range: nothing is
  summarised. With no cut point at all: ``(startIndex, -1, False)``.
* The cut then moves back over every preceding entry that is neither a ``message`` nor a
  ``compaction`` (settings changes, labels, custom entries, and also custom messages and
  branch summaries). A cut that reached a user message can so land on a settings entry, and
  then the turn search finds the *previous* user message: the whole previous turn becomes
  the "turn prefix".
* A cut at anything but a user ``message`` is a split turn when a turn start (user or
  bashExecution message, branch summary, custom message) exists at or before it; a cut at a
  bashExecution gives a split turn with an empty prefix.
* ``prepare_compaction``: 0.73 starts the summarised span at the previous compaction's
  ``firstKeptEntryId`` (when on the path, else right after that compaction) and skips
  compaction entries inside it; ``tokensBefore`` is ``estimateContextTokens`` of the whole
  rebuilt context (so it can be a stale pre-compaction usage). 0.58 starts right after the
  previous compaction and estimates ``tokensBefore`` from that compaction's summary onward.
  A preparation is returned even when nothing is to be summarised; ``None`` only when the
  path ends in a compaction, is empty, or the first kept entry has no id.
* File operations: the previous compaction's ``details`` (unless ``fromHook``): read files
  count as read, modified ones as edited; then ``read``/``write``/``edit`` tool calls with a
  string ``path`` in the summarised span, then in the turn prefix. Lists are sorted by UTF-16
  code units; a file both read and modified is listed as modified only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .context import ContextMessage, SessionContext, context_from_path, message_from_entry
from .jsjson import js_sorted, js_string
from .session.models import (
    AnyEntry,
    AnyMessage,
    AssistantMessage,
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    ToolCall,
)
from .session.tree import Session
from .tokens import estimate_context_tokens, estimate_tokens

PiVersion = Literal["0.73", "0.58"]
PI_VERSIONS: tuple[str, ...] = ("0.73", "0.58")


class CompactionSettings(BaseModel):
    """pi's ``CompactionSettings`` (settings.json ``compaction``), with pi's defaults."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = Field(True, description="Compact automatically when the context is over the threshold.")
    reserveTokens: int = Field(
        16384, ge=0, description="Tokens kept free for the answer: compact when context > window − reserve."
    )
    keepRecentTokens: int = Field(
        20000,
        ge=0,
        description="Recent tokens kept verbatim after a compaction (the cut walks back this far).",
    )


DEFAULT_COMPACTION_SETTINGS = CompactionSettings()


def should_compact(context_tokens: float, context_window: float, settings: CompactionSettings) -> bool:
    """pi's ``shouldCompact``: strictly over ``contextWindow - reserveTokens``, when enabled."""
    if not settings.enabled:
        return False
    return context_tokens > context_window - settings.reserveTokens


# ---------------------------------------------------------------------------------------------
# Cut points
# ---------------------------------------------------------------------------------------------

_CUT_ROLES = frozenset({"bashExecution", "custom", "branchSummary", "compactionSummary", "user", "assistant"})


def is_cut_point(e: AnyEntry) -> bool:
    if isinstance(e, MessageEntry):
        role = e.message.role
        return (
            isinstance(role, str) and role in _CUT_ROLES
        )  # an unknown message may carry any JSON as its role
    return isinstance(e, (BranchSummaryEntry, CustomMessageEntry))


def find_valid_cut_points(entries: Sequence[AnyEntry], start: int, end: int) -> list[int]:
    return [i for i in range(start, end) if is_cut_point(entries[i])]


def is_turn_start(e: AnyEntry) -> bool:
    if isinstance(e, (BranchSummaryEntry, CustomMessageEntry)):
        return True
    return isinstance(e, MessageEntry) and e.message.role in ("user", "bashExecution")


def find_turn_start_index(entries: Sequence[AnyEntry], entry_index: int, start: int) -> int:
    """pi's ``findTurnStartIndex``: scan back from ``entry_index`` (inclusive) to ``start``."""
    for i in range(entry_index, start - 1, -1):
        if is_turn_start(entries[i]):
            return i
    return -1


@dataclass(frozen=True)
class CutPoint:
    """pi's ``CutPointResult`` plus how the cut was found (for explanations)."""

    firstKeptEntryIndex: int
    turnStartIndex: int
    isSplitTurn: bool
    start: int = 0
    end: int = 0
    walked_to: int | None = None
    """Path index where the backward walk reached the budget (None: never reached)."""
    walked_tokens: int = 0
    snapped_to: int | None = None
    """The cut point chosen before moving back over non-message entries."""
    moved_back: int = 0
    fallback: str | None = None
    """Why the cut fell back to the first cut point: "budget-not-reached", "no-cut-point-after",
    or "no-cut-points"."""


def find_cut_point(
    entries: Sequence[AnyEntry],
    start: int,
    end: int,
    keep_recent_tokens: float,
    tokens: Callable[[int], int] | None = None,
) -> CutPoint:
    """pi's ``findCutPoint(entries, startIndex, endIndex, keepRecentTokens)``.

    ``tokens(i)`` may supply the estimate of the message of ``entries[i]`` (a cache).
    """
    cut_points = find_valid_cut_points(entries, start, end)
    if not cut_points:
        return CutPoint(start, -1, False, start, end, fallback="no-cut-points")
    accumulated = 0
    cut = cut_points[0]
    walked_to: int | None = None
    fallback: str | None = "budget-not-reached"
    for i in range(end - 1, start - 1, -1):
        e = entries[i]
        if not isinstance(e, MessageEntry):
            continue
        accumulated += tokens(i) if tokens is not None else estimate_tokens(e.message)
        if accumulated >= keep_recent_tokens:
            walked_to = i
            fallback = "no-cut-point-after"
            for c in cut_points:
                if c >= i:
                    cut = c
                    fallback = None
                    break
            break
    snapped = cut
    while cut > start:
        prev = entries[cut - 1]
        if isinstance(prev, (CompactionEntry, MessageEntry)):
            break
        cut -= 1
    cut_entry = entries[cut]
    is_user = isinstance(cut_entry, MessageEntry) and cut_entry.message.role == "user"
    turn_start = -1 if is_user else find_turn_start_index(entries, cut, start)
    return CutPoint(
        firstKeptEntryIndex=cut,
        turnStartIndex=turn_start,
        isSplitTurn=(not is_user) and turn_start != -1,
        start=start,
        end=end,
        walked_to=walked_to,
        walked_tokens=accumulated,
        snapped_to=snapped,
        moved_back=snapped - cut,
        fallback=fallback,
    )


# ---------------------------------------------------------------------------------------------
# File operations
# ---------------------------------------------------------------------------------------------


@dataclass
class FileOps:
    """pi's ``FileOperations``: sets in insertion order."""

    read: dict[str, None] = field(default_factory=dict)
    written: dict[str, None] = field(default_factory=dict)
    edited: dict[str, None] = field(default_factory=dict)

    def lists(self) -> tuple[list[str], list[str]]:
        """pi's ``computeFileLists``: (readFiles, modifiedFiles)."""
        modified = {**self.edited, **self.written}
        read_only = js_sorted(f for f in self.read if f not in modified)
        return read_only, js_sorted(modified)

    @property
    def read_files(self) -> list[str]:
        return self.lists()[0]

    @property
    def modified_files(self) -> list[str]:
        return self.lists()[1]

    def as_dict(self) -> dict[str, list[str]]:
        r, m = self.lists()
        return {
            "read": js_sorted(self.read),
            "written": js_sorted(self.written),
            "edited": js_sorted(self.edited),
            "readFiles": r,
            "modifiedFiles": m,
        }

    def add_details(self, details: Any) -> None:
        """A previous summary's ``details``: read files as read, modified files as edited."""
        if not isinstance(details, dict):
            return
        rf, mf = details.get("readFiles"), details.get("modifiedFiles")
        if isinstance(rf, list):
            for f in rf:
                self.read[f if isinstance(f, str) else js_string(f)] = None
        if isinstance(mf, list):
            for f in mf:
                self.edited[f if isinstance(f, str) else js_string(f)] = None


def extract_file_ops(message: AnyMessage, ops: FileOps) -> None:
    """pi's ``extractFileOpsFromMessage``: read/write/edit tool calls with a non-empty string path."""
    if not isinstance(message, AssistantMessage):
        return
    for b in message.content:
        if not isinstance(b, ToolCall) or not isinstance(b.arguments, dict):
            continue
        p = b.arguments.get("path")
        if not isinstance(p, str) or not p:
            continue
        if b.name == "read":
            ops.read[p] = None
        elif b.name == "write":
            ops.written[p] = None
        elif b.name == "edit":
            ops.edited[p] = None


def format_file_operations(read_files: Sequence[str], modified_files: Sequence[str]) -> str:
    """pi's ``formatFileOperations``: the blocks appended to a summary."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


# ---------------------------------------------------------------------------------------------
# prepareCompaction
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompactionPreparation:
    """pi's ``CompactionPreparation`` with the path positions behind it."""

    firstKeptEntryId: str
    first_kept_path_index: int
    messagesToSummarize: tuple[ContextMessage, ...]
    turnPrefixMessages: tuple[ContextMessage, ...]
    isSplitTurn: bool
    tokensBefore: int | float
    previousSummary: str | None
    fileOps: FileOps
    settings: CompactionSettings
    cut: CutPoint
    boundary_start: int
    prev_compaction_path_index: int
    pi_version: str

    @property
    def summarized_entry_indexes(self) -> list[int | None]:
        return [m.entry_index for m in self.messagesToSummarize]


def compaction_boundary(
    path: Sequence[AnyEntry], pi_version: str = "0.73", positions: Mapping[str, int] | None = None
) -> tuple[int, int]:
    """(boundaryStart, previous compaction's path index or -1) by each version's rule.
    ``positions`` may map ids to their first path position (saves a scan of the path)."""
    prev = -1
    for i in range(len(path) - 1, -1, -1):
        if isinstance(path[i], CompactionEntry):
            prev = i
            break
    if prev < 0:
        return 0, -1
    if pi_version == "0.58":
        return prev + 1, prev
    fk = path[prev].firstKeptEntryId  # type: ignore[union-attr]
    if positions is not None:
        pos = positions.get(fk) if isinstance(fk, str) else None
        return (pos, prev) if pos is not None else (prev + 1, prev)
    for i, e in enumerate(path):
        if e.id == fk:
            return i, prev
    return prev + 1, prev


def _span(
    path: Sequence[AnyEntry], idx: Sequence[int | None], a: int, b: int, include_compaction: bool
) -> list[ContextMessage]:
    out = []
    for i in range(a, b):
        m = message_from_entry(path[i], include_compaction=include_compaction)
        if m is not None:
            out.append(ContextMessage(m, idx[i]))
    return out


def _previous_and_file_ops(
    path: Sequence[AnyEntry], prev: int, messages: Sequence[ContextMessage]
) -> tuple[str | None, FileOps]:
    """The previous compaction's summary (if any) and the file operations a new summary lists:
    the previous compaction's own lists (unless a hook wrote it), then those of ``messages``."""
    ops = FileOps()
    previous_summary = None
    if prev >= 0:
        pc = path[prev]
        assert isinstance(pc, CompactionEntry)
        previous_summary = pc.summary
        if not pc.fromHook and pc.details:
            ops.add_details(pc.details)
    for m in messages:
        extract_file_ops(m.message, ops)
    return previous_summary, ops


def prepare_compaction(
    path: Sequence[AnyEntry],
    settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS,
    *,
    path_indexes: Sequence[int | None] | None = None,
    pi_version: str = "0.73",
    tokens: Callable[[int], int] | None = None,
    context: Sequence[AnyMessage] | None = None,
    positions: Mapping[str, int] | None = None,
) -> CompactionPreparation | None:
    """pi's ``prepareCompaction(pathEntries, settings)``; ``path_indexes`` maps path positions to
    session entry indexes (default: the same numbers).

    A caller that already holds pi's context for this path (``buildSessionContext``) may pass
    its messages as ``context``, and a map of ids to first path positions as ``positions``;
    the replay does, to avoid two scans of the whole path per compaction."""
    if pi_version not in PI_VERSIONS:
        raise ValueError(f"pi_version must be one of {PI_VERSIONS}, not {pi_version!r}")
    if not path or isinstance(path[-1], CompactionEntry):
        return None
    idx: Sequence[int | None] = path_indexes if path_indexes is not None else range(len(path))
    boundary_start, prev = compaction_boundary(path, pi_version, positions)
    tokens_before = _tokens_before(path, idx, prev, pi_version, context)
    cut = find_cut_point(path, boundary_start, len(path), settings.keepRecentTokens, tokens)
    return _preparation(path, idx, cut, boundary_start, prev, settings, tokens_before, pi_version)


def prepare_compaction_at(
    session: Session,
    leaf: int,
    settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS,
    pi_version: str = "0.73",
) -> CompactionPreparation | None:
    """:func:`prepare_compaction` on the branch of ``session`` that ends at entry ``leaf`` (what
    pi's ``/compact`` would prepare with that entry as the session's leaf)."""
    path = session.path(leaf)
    return prepare_compaction(session.entries_at(path), settings, path_indexes=path, pi_version=pi_version)


def _tokens_before(
    path: Sequence[AnyEntry],
    idx: Sequence[int | None],
    prev: int,
    pi_version: str,
    context: Sequence[AnyMessage] | None = None,
) -> float:
    """pi's ``tokensBefore``: 0.73 estimates the whole rebuilt context, 0.58 from the previous
    compaction's summary onward."""
    if pi_version == "0.58":
        return estimate_context_tokens(
            [m.message for m in _span(path, idx, max(prev, 0), len(path), True)]
        ).tokens
    msgs = context if context is not None else context_from_path(path, idx).agent_messages
    return estimate_context_tokens(msgs).tokens


def _preparation(
    path: Sequence[AnyEntry],
    idx: Sequence[int | None],
    cut: CutPoint,
    boundary_start: int,
    prev: int,
    settings: CompactionSettings,
    tokens_before: float,
    pi_version: str,
) -> CompactionPreparation | None:
    """The rest of pi's ``prepareCompaction`` once the cut is known: the spans and the file lists."""
    legacy = pi_version == "0.58"
    first_kept = path[cut.firstKeptEntryIndex] if 0 <= cut.firstKeptEntryIndex < len(path) else None
    if first_kept is None or not isinstance(first_kept.id, str) or not first_kept.id:
        return None
    history_end = cut.turnStartIndex if cut.isSplitTurn else cut.firstKeptEntryIndex
    to_summarize = _span(path, idx, boundary_start, history_end, legacy)
    prefix = _span(path, idx, cut.turnStartIndex, cut.firstKeptEntryIndex, legacy) if cut.isSplitTurn else []
    previous_summary, ops = _previous_and_file_ops(path, prev, [*to_summarize, *prefix])
    return CompactionPreparation(
        firstKeptEntryId=first_kept.id,
        first_kept_path_index=cut.firstKeptEntryIndex,
        messagesToSummarize=tuple(to_summarize),
        turnPrefixMessages=tuple(prefix),
        isSplitTurn=cut.isSplitTurn,
        tokensBefore=tokens_before,
        previousSummary=previous_summary,
        fileOps=ops,
        settings=settings,
        cut=cut,
        boundary_start=boundary_start,
        prev_compaction_path_index=prev,
        pi_version=pi_version,
    )


def prepare_at_cut(
    path: Sequence[AnyEntry],
    first_kept: int,
    settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS,
    *,
    path_indexes: Sequence[int | None] | None = None,
    pi_version: str = "0.73",
) -> CompactionPreparation | None:
    """pi's ``prepareCompaction`` with the cut at path index ``first_kept`` instead of where
    ``findCutPoint`` puts it: what pi summarised for a *recorded* pi compaction (the split turn
    found by pi's ``findTurnStartIndex``, the spans, the file lists). None when ``first_kept`` is
    not inside the range pi would summarise from (then pi cannot have cut there)."""
    if not path or isinstance(path[-1], CompactionEntry):
        return None
    idx: Sequence[int | None] = path_indexes if path_indexes is not None else range(len(path))
    boundary_start, prev = compaction_boundary(path, pi_version)
    if not boundary_start <= first_kept < len(path):
        return None
    e = path[first_kept]
    is_user = isinstance(e, MessageEntry) and e.message.role == "user"
    turn_start = -1 if is_user else find_turn_start_index(path, first_kept, boundary_start)
    cut = CutPoint(
        first_kept,
        turn_start,
        (not is_user) and turn_start != -1,
        boundary_start,
        len(path),
        fallback="recorded",
    )
    return _preparation(
        path,
        idx,
        cut,
        boundary_start,
        prev,
        settings,
        _tokens_before(path, idx, prev, pi_version),
        pi_version,
    )


def prepare_recorded_split(
    path: Sequence[AnyEntry],
    first_kept: int | None,
    settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS,
    *,
    path_indexes: Sequence[int | None] | None = None,
) -> CompactionPreparation | None:
    """A preparation that follows a *recorded* split instead of pi's cut rule: everything since
    the previous compaction up to path index ``first_kept`` (None: the whole path — the agent kept
    nothing verbatim) is summarised. Beyond pi: this is how a summary generated here is compared
    with one another agent (Claude Code, Codex, OpenCode) wrote, whose cut rules are not pi's.
    The previous compaction is found by pi 0.73's rule."""
    if not path or isinstance(path[-1], CompactionEntry):
        return None
    idx: Sequence[int | None] = path_indexes if path_indexes is not None else range(len(path))
    boundary_start, prev = compaction_boundary(path, "0.73")
    end = len(path) if first_kept is None or not boundary_start <= first_kept < len(path) else first_kept
    to_summarize = _span(path, idx, boundary_start, end, False)
    if not to_summarize:
        return None
    previous_summary, ops = _previous_and_file_ops(path, prev, to_summarize)
    kept = path[end] if end < len(path) else None
    return CompactionPreparation(
        firstKeptEntryId=kept.id if kept is not None and isinstance(kept.id, str) else "",
        first_kept_path_index=end,
        messagesToSummarize=tuple(to_summarize),
        turnPrefixMessages=(),
        isSplitTurn=False,
        tokensBefore=estimate_context_tokens(context_from_path(path, idx).agent_messages).tokens,
        previousSummary=previous_summary,
        fileOps=ops,
        settings=settings,
        cut=CutPoint(
            firstKeptEntryIndex=end,
            turnStartIndex=-1,
            isSplitTurn=False,
            start=boundary_start,
            end=end,
            fallback="recorded",
        ),
        boundary_start=boundary_start,
        prev_compaction_path_index=prev,
        pi_version="0.73",
    )


# ---------------------------------------------------------------------------------------------
# Applying a compaction (in memory only)
# ---------------------------------------------------------------------------------------------

SIMULATED_COMPACTION_ID = "__inspector_compaction__"


def make_compaction_entry(
    prep: CompactionPreparation,
    summary: str,
    *,
    parent_id: str | None,
    timestamp: str = "2100-01-01T00:00:00.000Z",
    entry_id: str = SIMULATED_COMPACTION_ID,
    details: Any = None,
) -> CompactionEntry:
    """The ``CompactionEntry`` pi would append for this preparation (never written anywhere)."""
    if details is None:
        r, m = prep.fileOps.lists()
        details = {"readFiles": r, "modifiedFiles": m}
    return CompactionEntry(
        id=entry_id,
        parentId=parent_id if isinstance(parent_id, str) else None,
        timestamp=timestamp,
        summary=summary,
        firstKeptEntryId=prep.firstKeptEntryId,
        tokensBefore=prep.tokensBefore,
        details=details,
    )


def context_after_compaction(
    path: Sequence[AnyEntry],
    path_indexes: Sequence[int | None],
    entry: CompactionEntry,
) -> SessionContext:
    """The context pi builds once ``entry`` is appended after the last entry of ``path``."""
    return context_from_path([*path, entry], [*path_indexes, None])


def file_lists_of(messages: Iterable[AnyMessage]) -> tuple[list[str], list[str]]:
    ops = FileOps()
    for m in messages:
        extract_file_ops(m, ops)
    return ops.lists()
