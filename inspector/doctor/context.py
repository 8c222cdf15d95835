"""Checks of the context the model was given: compactions (their first kept entry, the files their
summary dropped, what they forgot), overflows of the window, giant tool outputs, duplicated and empty
summaries."""

from __future__ import annotations

import re

from ..context import build_session_context
from ..numbers import clamp
from ..session.models import (
    AssistantMessage,
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessage,
    MessageEntry,
    TextContent,
    UserMessage,
)
from ..session.tree import Session
from ..tokens import calculate_context_tokens, estimate_tokens
from ..visible import clip
from ..window import model_key
from .findings import DoctorOptions, Finding, Severity, finding, tool_calls


def check_compactions(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    """Each compaction's first kept entry on its path, and the files modified before its cut that its
    summary does not mention. The path is walked once: the position of each entry id and the first
    write or edit of each file are kept as it goes (not read again from the start at each
    compaction)."""
    out = []
    first_at: dict[str, int] = {}  # entry id -> its first position on the path
    first_write: dict[str, tuple[int, int]] = {}  # file -> (position, entry) of its first write or edit
    for k, i in enumerate(path):
        e = session.entries[i]
        if not isinstance(e, CompactionEntry):
            if isinstance(e.id, str):  # an entry pi could not read may have any JSON as its id
                first_at.setdefault(e.id, k)
            if isinstance(e, MessageEntry):
                for c in tool_calls(e.message):
                    p = c.arguments.get("path") if isinstance(c.arguments, dict) else None
                    if c.name in ("write", "edit") and isinstance(p, str) and p:
                        first_write.setdefault(p, (k, i))
            continue
        fk = first_at.get(e.firstKeptEntryId) if e.firstKeptEntryId is not None else None
        first_at.setdefault(e.id, k)
        if e.firstKeptEntryId is None:
            continue  # keeps nothing verbatim by design (e.g. an imported Claude Code compaction)
        if fk is None:
            out.append(
                finding(
                    session,
                    "compaction-first-kept-off-path",
                    "error",
                    f"compaction's firstKeptEntryId {e.firstKeptEntryId!r} is not on its path: pi keeps only "
                    "the summary",
                    [i],
                )
            )
            continue
        modified = {p: j for p, (pos, j) in first_write.items() if pos < fk}
        listed = set()
        if isinstance(e.details, dict) and isinstance(e.details.get("modifiedFiles"), list):
            listed = {x for x in e.details["modifiedFiles"] if isinstance(x, str)}
        dropped = [p for p in modified if p not in listed and p not in e.summary]
        if dropped:
            out.append(
                finding(
                    session,
                    "summary-dropped-modified-files",
                    "warning",
                    f"compaction summary does not mention {len(dropped)} file(s) modified before its cut: "
                    + ", ".join(dropped[:5])
                    + (" …" if len(dropped) > 5 else ""),
                    [i, *[modified[p] for p in dropped[:5]]],
                )
            )
    return out


def check_retention(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    """``low-retention``: a recorded compaction whose summary (with its file lists and the messages
    it kept) holds less than ``retention_min`` of the items the branch used later from the span it
    summarised (:mod:`inspector.retention`; replayed as recorded, only when the branch compacts)."""
    if not any(isinstance(session.entries[i], CompactionEntry) for i in path):
        return []
    from ..replay import ReplaySettings, default_strategy, replay
    from ..retention import retention

    rep = retention(replay(session, ReplaySettings(leaf=path[-1], strategy=default_strategy(session))))
    out = []
    for c in rep.compactions:
        if (
            c.span.source != "recorded"
            or len(c.needed) < o.retention_needed
            or (c.overall or 0) >= o.retention_min
        ):
            continue
        lost = ", ".join(
            f"{n.kind[:-1] if n.kind != 'task' else 'task'} {clip(n.item, 60)}" for n in c.forgotten[:3]
        )
        out.append(
            finding(
                session,
                "low-retention",
                "warning",
                f"compaction kept {len(c.needed) - len(c.forgotten)} of {len(c.needed)} items the session "
                f"needed later ({c.overall:.0%}); forgot {lost}"
                + (" …" if len(c.forgotten) > 3 else "")
                + (
                    f" ({c.span.unread}: only what was kept verbatim or put back counts)"
                    if c.span.unread
                    else ""
                ),
                [c.span.entry_index, *sorted({n.needed_at for n in c.forgotten})[:4]],
            )
        )
    return out


def check_overflow(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    """Recorded calls whose context (pi's usage count) went over the window. A call the provider
    answered fitted its model's window (:mod:`inspector.window`): over the window set, it says the
    window set is smaller than the model's (a warning), not that the call overflowed. A call that
    ended in an error over the window may be a real overflow (an error)."""
    answered: list[tuple[int, int | float]] = []
    failed: list[tuple[int, int | float]] = []
    own = {(p, m): w for p, m, w in o.model_windows}
    for i in path:
        e = session.entries[i]
        if (
            isinstance(e, MessageEntry)
            and isinstance(e.message, AssistantMessage)
            and e.message.usage is not None
        ):
            if e.message.stopReason in ("aborted",):
                continue
            t = clamp(calculate_context_tokens(e.message.usage))
            if t > own.get(model_key(e.message), o.context_window):
                (failed if e.message.stopReason == "error" else answered).append((i, t))
    w = f"{o.context_window:,}-token window" if not own else "window of their model"
    kinds: tuple[tuple[list[tuple[int, int | float]], Severity, str, str], ...] = (
        (failed, "error", f"over the {w} ended in an error", ""),
        (
            answered,
            "warning",
            f"used more than the {w} set" if not own else f"used more than the {w}",
            ", and the provider answered them: this session's model has a larger window; check against "
            "its own (--window, or the window in the sidebar)",
        ),
    )
    out = []
    for over, severity, what, then in kinds:
        if over:
            i, t = max(over, key=lambda x: x[1])
            message = f"{len(over)} call(s) {what} (largest {t:,.0f} at entry {i}){then}"
            out.append(finding(session, "context-overflow", severity, message, [x[0] for x in over[:20]]))
    return out


def check_giant_outputs(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    out = []
    for i in path:
        e = session.entries[i]
        if isinstance(e, MessageEntry) and e.message.role in ("toolResult", "bashExecution"):
            t = estimate_tokens(e.message)
            if t > o.giant_tokens:
                name = getattr(e.message, "toolName", None) or "bash (user)"
                out.append(
                    finding(
                        session,
                        "giant-tool-output",
                        "warning",
                        f"{name} output of {t:,} tokens ({t / o.context_window:.0%} of the window) in one message",
                        [i],
                    )
                )
    return out


_WS = re.compile(r"\s+")


def check_duplicated_summaries(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    ctx = build_session_context(session, path[-1]) if path else None
    if ctx is None:
        return []
    summaries: list[tuple[str, int]] = []
    texts: list[tuple[str, int]] = []
    for cm in ctx.messages:
        m = cm.message
        if m.role in ("compactionSummary", "branchSummary"):
            s = _WS.sub(" ", m.summary).strip()  # type: ignore[union-attr]
            if len(s) >= 40 and cm.entry_index is not None:
                summaries.append((s, cm.entry_index))
        elif isinstance(m, (UserMessage, CustomMessage)) and cm.entry_index is not None:
            c = m.content
            t = c if isinstance(c, str) else "".join(b.text for b in c if isinstance(b, TextContent))
            texts.append((_WS.sub(" ", t), cm.entry_index))
    out = []
    seen: dict[str, int] = {}
    for s, i in summaries:
        if s in seen:
            out.append(
                finding(
                    session,
                    "duplicated-summary",
                    "warning",
                    "the same summary text appears twice in the context",
                    [i, seen[s]],
                )
            )
        seen.setdefault(s, i)
        for t, j in texts:
            if s[:400] in t:
                out.append(
                    finding(
                        session,
                        "duplicated-summary",
                        "warning",
                        "a summary's text is repeated inside another message of the context",
                        [j, i],
                    )
                )
    return out


def check_branch_summaries(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    out = []
    for i in path:
        e = session.entries[i]
        if isinstance(e, BranchSummaryEntry) and not e.summary.strip():
            out.append(
                finding(
                    session,
                    "empty-branch-summary",
                    "info",
                    "empty branch summary: pi leaves it out of the context",
                    [i],
                )
            )
    return out
