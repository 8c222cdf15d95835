"""The doctor: what went wrong in a session, each finding located and explained in one line.

Checks (each is a function ``check_*(session, path, opts) -> list[Finding]``):

* ``tool-call-without-result`` / ``result-without-call`` — pairing of ``toolCall`` ids and
  ``toolResult.toolCallId`` along the branch (a call the provider runs itself, ``serverSide``
  — Codex's hosted web search —, has no result to wait for).
* ``compaction-first-kept-off-path`` — a compaction whose ``firstKeptEntryId`` is not on its own
  path before it: pi then keeps nothing but the summary.
* ``summary-dropped-modified-files`` — files written or edited before a compaction's cut that
  its summary neither mentions nor lists in ``details.modifiedFiles``.
* ``low-retention`` — a compaction that kept less than ``retention_min`` of what the branch used
  later from the span it summarised (:mod:`inspector.retention`).
* ``context-overflow`` — a recorded call whose context (pi's usage-based count) exceeds the window:
  an error when the call failed; a warning that the window set is too small when the provider
  answered it (:mod:`inspector.window`).
* ``cache-break`` — an answered call whose recorded cache read fell below half of what the call
  before had cached (at least ``cache_break_tokens`` lost), with the cause the file shows: a
  compaction, a branch summary, a DCP compress, outputs the agent cleared itself, a model or agent
  change, a deferred tool loaded, a new turn dropping the previous turn's reasoning or an idle gap
  (info), or nothing (a warning).
* ``file-read-many-times`` — the same path read ``read_repeat`` times or more.
* ``reread-after-compaction`` — a path read again within a few calls after a compaction
  summarised its earlier read away.
* ``giant-tool-output`` — one tool output over ``giant_tokens``.
* ``repeated-tool-call`` — the same tool with the same arguments ``loop_repeat`` times in a row
  (a loop); Codex polling a running command (``write_stdin`` with no input) is info, not a loop.
* ``failure-streak`` — ``streak`` or more aborted/error answers in a row.
* ``duplicated-summary`` — the same summary text more than once in the context the model gets.
* ``model-change-mid-turn`` — the model changed between two answers of one turn (while tool calls
  were pending; a switch after the final answer, before the next prompt, is between turns).
* ``load-issue`` — every load issue, as findings too.

One module per concern: :mod:`.findings` (options, a finding, the report), :mod:`.calls` (the
agent's calls and answers), :mod:`.context` (the context the model was given), :mod:`.cache_breaks`
(the prompt cache lost).
"""

from __future__ import annotations

from ..session.tree import Session
from .cache_breaks import check_cache_breaks
from .calls import check_failure_streaks, check_loops, check_model_changes, check_reads, check_tool_pairing
from .context import (
    check_branch_summaries,
    check_compactions,
    check_duplicated_summaries,
    check_giant_outputs,
    check_overflow,
    check_retention,
)
from .findings import SEVERITY_ORDER, DoctorOptions, DoctorReport, Finding, Severity

__all__ = ["CHECKS", "DoctorOptions", "DoctorReport", "Finding", "Severity", "diagnose"]

CHECKS = (
    check_tool_pairing,
    check_compactions,
    check_retention,
    check_overflow,
    check_cache_breaks,
    check_reads,
    check_giant_outputs,
    check_loops,
    check_failure_streaks,
    check_duplicated_summaries,
    check_model_changes,
    check_branch_summaries,
)


def diagnose(
    session: Session, leaf: int | str | None = "leaf", options: DoctorOptions | None = None
) -> DoctorReport:
    """Run every check on the branch ending at ``leaf`` (load issues cover the whole file)."""
    o = options or DoctorOptions()
    li = session.resolve(leaf) if (leaf is not None and session.entries) else None
    path = session.path(li) if li is not None else []
    findings: list[Finding] = [
        Finding(
            kind=f"load-issue:{i.kind}",
            severity=i.severity,
            message=i.message,
            entries=[i.entry_index] if i.entry_index is not None else [],
            lines=[i.line] if i.line is not None else [],
        )
        for i in session.issues
    ]
    for check in CHECKS:
        findings.extend(check(session, path, o))
    findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.entries[0] if f.entries else -1))
    return DoctorReport(tuple(findings), li, o)
