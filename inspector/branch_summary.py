"""What pi's ``/tree`` navigation summarises from the branch it leaves.

Reproduces ``core/compaction/branch-summarization.ts`` (pi 0.73.1; unchanged since 0.58):

* :func:`collect_entries_for_branch_summary` — the common ancestor is the deepest entry of the
  target's path that is also on the old leaf's path (it may be the target itself); the entries
  are those from the old leaf back to that ancestor (excluded), oldest first, **of every type**
  — labels, settings, compactions included; there is no stop at a compaction. No old leaf: none.
* :func:`prepare_branch_entries` — messages come from ``message`` entries **except tool
  results**, and from custom messages, branch summaries and compactions (as ``custom``,
  ``branchSummary`` and ``compactionSummary`` messages). Walking newest to oldest, each is
  prepended while ``total + tokens <= budget`` (budget 0: no limit). At the first that does
  not fit, a compaction or branch summary is still taken if ``total < 0.9 × budget``; then the
  walk stops. File operations come first from the ``details`` of every branch summary entry
  (not ``fromHook``; compaction details are not used), then from every message visited —
  including the one that broke the budget.
* pi's default budget is ``(model.contextWindow or 128000) - reserveTokens`` with
  ``branchSummary.reserveTokens`` 16384 (:func:`default_branch_budget`), the model being the
  session's current one (``agent-session.ts`` passes ``this.model``): so the window of the
  session's model, not 128000, for any model pi knows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .compaction import FileOps, extract_file_ops
from .context import ContextMessage, message_from_entry
from .session.models import AnyEntry, AnyMessage, BranchSummaryEntry, CompactionEntry, MessageEntry
from .session.tree import Session
from .tokens import estimate_tokens

DEFAULT_BRANCH_RESERVE_TOKENS = 16384
DEFAULT_BRANCH_CONTEXT_WINDOW = 128000


def default_branch_budget(
    context_window: int | None = None, reserve_tokens: int = DEFAULT_BRANCH_RESERVE_TOKENS
) -> int:
    """pi's ``generateBranchSummary`` budget: ``(contextWindow || 128000) - reserveTokens``."""
    return (context_window or DEFAULT_BRANCH_CONTEXT_WINDOW) - reserve_tokens


@dataclass(frozen=True)
class BranchCollection:
    entries: tuple[int, ...]
    """Entry indexes to summarise, oldest first."""
    common_ancestor: int | None


def collect_entries_for_branch_summary(
    session: Session, old_leaf: int | None, target: int
) -> BranchCollection:
    """pi's ``collectEntriesForBranchSummary(session, oldLeafId, targetId)`` by entry index."""
    if old_leaf is None:
        return BranchCollection((), None)
    ancestor = session.common_ancestor(old_leaf, target)
    out = []
    i = old_leaf
    while i >= 0 and i != ancestor:
        out.append(i)
        i = session.parents[i]
    out.reverse()
    return BranchCollection(tuple(out), ancestor)


def _branch_message(e: AnyEntry) -> AnyMessage | None:
    if isinstance(e, MessageEntry) and e.message.role == "toolResult":
        return None
    return message_from_entry(e, include_compaction=True)


@dataclass(frozen=True)
class BranchPreparation:
    messages: tuple[ContextMessage, ...]
    fileOps: FileOps
    totalTokens: int
    budget: int


def prepare_branch_entries(
    entries: Sequence[AnyEntry], token_budget: int = 0, indexes: Sequence[int | None] | None = None
) -> BranchPreparation:
    """pi's ``prepareBranchEntries(entries, tokenBudget)``."""
    idx: Sequence[int | None] = indexes if indexes is not None else range(len(entries))
    ops = FileOps()
    for e in entries:
        if isinstance(e, BranchSummaryEntry) and not e.fromHook and e.details:
            ops.add_details(e.details)
    picked: list[ContextMessage] = []
    total = 0
    for k in range(len(entries) - 1, -1, -1):
        e = entries[k]
        m = _branch_message(e)
        if m is None:
            continue
        extract_file_ops(m, ops)
        t = estimate_tokens(m)
        if token_budget > 0 and total + t > token_budget:
            if isinstance(e, (CompactionEntry, BranchSummaryEntry)) and total < token_budget * 0.9:
                picked.append(ContextMessage(m, idx[k]))
                total += t
            break
        picked.append(ContextMessage(m, idx[k]))
        total += t
    picked.reverse()
    return BranchPreparation(tuple(picked), ops, total, token_budget)


def prepare_branch_summary(
    session: Session,
    old_leaf: int | None,
    target: int,
    token_budget: int | None = None,
    context_window: int | None = None,
) -> tuple[BranchCollection, BranchPreparation]:
    """Both steps for a navigation from ``old_leaf`` to ``target``, at ``token_budget``, else pi's
    default budget for a model of ``context_window`` tokens (:func:`default_branch_budget`)."""
    col = collect_entries_for_branch_summary(session, old_leaf, target)
    budget = default_branch_budget(context_window) if token_budget is None else token_budget
    prep = prepare_branch_entries(session.entries_at(col.entries), budget, col.entries)
    return col, prep
