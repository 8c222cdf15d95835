"""A readable summary of a session: what ``inspector info`` prints and the app's Load page shows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from .context import build_session_context
from .numbers import clamp
from .session.models import CompactionEntry
from .session.tree import Session
from .tokens import assistant_usage, estimate_context_tokens, get_counter
from .visible import visible


def _vis(text: object) -> str:
    return visible(text, inline=True)


class IssueRow(BaseModel):
    severity: str
    kind: str
    line: int | None
    message: str


class CompactionRow(BaseModel):
    index: int
    id: str | None
    firstKeptEntryIndex: int | None
    tokensBefore: float
    summaryChars: int
    onCurrentPath: bool


class SessionInfo(BaseModel):
    source: str | None
    sessionId: str | None
    name: str | None
    cwd: str | None
    originalVersion: int | None
    format: str = "pi"
    formatLabel: str = "pi session (JSONL tree)"
    migrated: bool
    entries: int
    byType: dict[str, int]
    roots: int
    leaves: list[int]
    forkPoints: list[int]
    leafIndex: int | None
    leafId: str | None
    pathLength: int
    contextMessages: int
    contextTokens: dict[str, int]
    """Sum of per-message tokens of the leaf context, by counter."""
    usageContextTokens: float | None
    """pi's estimateContextTokens (last valid usage + estimates after it)."""
    model: dict[str, str] | None
    thinkingLevel: str | None
    compactions: list[CompactionRow]
    labels: dict[int, str]
    issues: list[IssueRow]

    def to_text(self) -> str:
        """The text ``inspector info`` prints; every string from the session made terminal-safe."""
        out: list[str] = []
        add = out.append
        add(f"session   {_vis(self.source or '(text)')}")
        if self.sessionId:
            add(f"id        {_vis(self.sessionId)}" + (f"  name: {_vis(self.name)}" if self.name else ""))
        if self.cwd:
            add(f"cwd       {_vis(self.cwd)}")
        v = self.originalVersion
        if self.format != "pi":
            add(f"format    {self.formatLabel}, imported into pi's session model")
        else:
            add(
                f"format    pi v{v if v is not None else '?'}"
                + (" (migrated to v3 in memory)" if self.migrated else "")
            )
        add(f"entries   {self.entries}")
        for k, n in sorted(self.byType.items(), key=lambda kv: (-kv[1], kv[0])):
            add(f"  {n:>7}  {_vis(k)}")
        add(
            f"tree      {self.roots} root(s), {len(self.leaves)} leaf/leaves, {len(self.forkPoints)} fork point(s)"
        )
        if self.forkPoints:
            add(
                f"  forks at entries {', '.join(map(str, self.forkPoints[:12]))}{' …' if len(self.forkPoints) > 12 else ''}"
            )
        add(f"leaf      entry {self.leafIndex} ({_vis(self.leafId)}), path of {self.pathLength} entries")
        if self.model:
            add(
                f"model     {_vis(self.model.get('provider', '?'))}/{_vis(self.model.get('modelId', '?'))}  "
                f"thinking: {_vis(self.thinkingLevel)}"
            )
        add(f"context   {self.contextMessages} messages")
        for name, t in self.contextTokens.items():
            add(f"  {t:>9,} tokens  by {name}")
        if self.usageContextTokens is not None:
            add(
                f"  {self.usageContextTokens:>9,.0f} tokens  by recorded usage + pi estimate of what follows (pi's footer)"
            )
        add(f"compactions {len(self.compactions)}")
        for c in self.compactions:
            add(
                f"  entry {c.index}: keeps from entry {c.firstKeptEntryIndex}, tokensBefore {c.tokensBefore:,.0f}, "
                f"summary {c.summaryChars:,} chars{'' if c.onCurrentPath else ' (other branch)'}"
            )
        if self.labels:
            add("labels    " + ", ".join(f"{i}: {_vis(t)}" for i, t in list(self.labels.items())[:10]))
        if self.issues:
            add(f"load issues {len(self.issues)}")
            for i in self.issues:
                where = f"line {i.line}: " if i.line is not None else ""
                add(f"  {i.severity:<7} {where}{_vis(i.message)}")
        else:
            add("load issues none")
        return "\n".join(out) + "\n"


def _sid(v: object) -> str | None:
    """An id as text (an opaque entry may carry any JSON value as its id)."""
    return v if isinstance(v, str) or v is None else repr(v)


def session_info(
    session: Session, leaf: int | str = "leaf", counters: Sequence[str] = ("pi", "tiktoken")
) -> SessionInfo:
    leaf_idx = session.resolve(leaf) if session.entries else None
    path = session.path(leaf_idx) if leaf_idx is not None else []
    ctx = build_session_context(session, leaf_idx) if leaf_idx is not None else None
    msgs = ctx.agent_messages if ctx else []
    tokens = {name: _total(get_counter(name), msgs) for name in counters}
    on_path = set(path)
    comps = [
        CompactionRow(
            index=i,
            id=_sid(e.id),
            firstKeptEntryIndex=session.index_of(e.firstKeptEntryId),
            tokensBefore=clamp(e.tokensBefore),
            summaryChars=len(e.summary),
            onCurrentPath=i in on_path,
        )
        for i, e in enumerate(session.entries)
        if isinstance(e, CompactionEntry)
    ]
    has_usage = any(assistant_usage(m) is not None for m in msgs)
    h = session.header
    return SessionInfo(
        source=session.source,
        sessionId=h.id if h else None,
        name=session.name,
        cwd=h.cwd if h else None,
        originalVersion=session.original_version,
        format=session.format,
        formatLabel=_format_label(session.format),
        migrated=session.migrated,
        entries=len(session.entries),
        byType=session.counts_by_type(),
        roots=len(session.roots),
        leaves=list(session.leaves),
        forkPoints=list(session.fork_points),
        leafIndex=leaf_idx,
        leafId=_sid(session.entries[leaf_idx].id) if leaf_idx is not None else None,
        pathLength=len(path),
        contextMessages=len(msgs),
        contextTokens=tokens,
        usageContextTokens=clamp(estimate_context_tokens(msgs).tokens) if has_usage else None,
        model=ctx.model if ctx else None,
        thinkingLevel=ctx.thinking_level if ctx else None,
        compactions=comps,
        labels=dict(session.labels),
        issues=[
            IssueRow(severity=i.severity, kind=i.kind, line=i.line, message=i.message) for i in session.issues
        ],
    )


def _total(counter: Any, msgs: Sequence[Any], batch: int = 10_000) -> int:
    """The sum of the messages' counts, a batch at a time (a 2M-message context stays cheap)."""
    return sum(sum(counter.count_many(msgs[k : k + batch])) for k in range(0, len(msgs), batch))


def _format_label(fmt: str) -> str:
    from .importers import FORMAT_LABELS, _modules

    _modules()  # fills FORMAT_LABELS with the importers' labels
    return FORMAT_LABELS.get(fmt, fmt)
