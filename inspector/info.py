"""A readable summary of a session: what ``inspector info`` prints and the app's Load page shows."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from .context import _context_message, build_session_context, compaction_summary_message, entry_setting
from .numbers import clamp
from .session.loader import SessionLoadError, stream_session
from .session.models import CompactionEntry, MessageEntry
from .session.tree import Session
from .tokens import assistant_usage, calculate_context_tokens, estimate_context_tokens, get_counter
from .visible import visible
from .window import (
    DEFAULT_WINDOW,
    ModelTally,
    PeakTally,
    assumed_too_small,
    known_window,
    model_windows_from,
    model_windows_of,
    model_windows_said,
    remember_model,
    remember_peak,
    session_model,
    unknown_window_why,
)

RECORDED_ALSO_COUNTS = (
    "the recorded usage also counts what the file does not hold: the system prompt, the tools, "
    "reasoning kept only as a signature; `inspector check` splits it"
)
"""Said where a recorded prompt is far above the context counted from the file (:func:`far_above`)."""


def far_above(recorded: float | None, counted: float) -> bool:
    """Is a recorded figure so far above the one counted from the file (over 1.5×) that
    :data:`RECORDED_ALSO_COUNTS` should be said (``info``, ``replay``)?"""
    return recorded is not None and counted > 0 and recorded > 1.5 * counted


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
    window: int | None = None
    """The context window the session makes known (:func:`inspector.window.known_window`)."""
    windowSource: str | None = None
    """Where it comes from: "recorded", or "model" (its model's in pi's model list)."""
    windowModel: str | None = None
    """The model that answered most calls (whose window it is, or that pi's model list lacks)."""
    windowSaid: str | None = None
    """Where the window comes from, in words (:meth:`inspector.window.KnownWindow.short`)."""
    windowUnknown: str | None = None
    """Why the window is not known (:func:`inspector.window.unknown_window_why`)."""
    windowAtLeast: int | None = None
    """When the window is not known: the largest context an answered call recorded
    (:func:`inspector.window.answered_peak`), which the model's window holds."""
    windowAtLeastEntry: int | None = None
    """The entry of that answer."""
    modelWindows: list[dict[str, Any]] = []
    """The other models that answered calls, whose window differs (``provider``, ``model``,
    ``window``; :func:`inspector.window.model_windows_of`): a replay following the session runs
    their calls against it, as the agents check them."""
    modelWindowsFrom: str | None = None
    """Where those windows come from: "pi's model list", or "as the session records them"."""
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
        if self.window is not None:
            add(f"window    {self.window:,} tokens ({_vis(self.windowSaid)})")
        elif self.windowUnknown is not None:
            add(f"window    unknown: {_vis(self.windowUnknown)}")
            if self.windowAtLeast is not None:
                add(
                    f"          at least {self.windowAtLeast:,}: the provider answered a context that large "
                    f"(entry {self.windowAtLeastEntry})"
                )
        if self.modelWindows:
            said = model_windows_said(
                tuple((w["provider"], w["model"], w["window"]) for w in self.modelWindows), _vis
            )
            add(
                f"          {said} (each call against its model's window, as the agent checks it; {self.modelWindowsFrom})"
            )
        add(f"context   {self.contextMessages} messages")
        for name, t in self.contextTokens.items():
            add(f"  {t:>9,} tokens  by {name}")
        if self.usageContextTokens is not None:
            add(
                f"  {self.usageContextTokens:>9,.0f} tokens  by recorded usage + pi estimate of what follows (pi's footer)"
            )
            if far_above(self.usageContextTokens, max(self.contextTokens.values(), default=0)):
                add(f"            ({RECORDED_ALSO_COUNTS})")
        add(f"compactions {len(self.compactions)}")
        for c in self.compactions:
            add(
                f"  entry {c.index}: "
                + (
                    f"keeps from entry {c.firstKeptEntryIndex}"
                    if c.firstKeptEntryIndex is not None
                    else "keeps nothing verbatim"
                )
                + f", tokensBefore {c.tokensBefore:,.0f}, "
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


@dataclass(frozen=True)
class _ContextFigures:
    """What ``info`` says of the leaf's context."""

    messages: int
    tokens: dict[str, int]
    usage_tokens: float | None
    model: dict[str, str] | None
    thinking_level: str | None


def session_info(
    session: Session, leaf: int | str = "leaf", counters: Sequence[str] = ("pi", "tiktoken")
) -> SessionInfo:
    leaf_idx = session.resolve(leaf) if session.entries else None
    path = session.path(leaf_idx) if leaf_idx is not None else []
    ctx = build_session_context(session, leaf_idx) if leaf_idx is not None else None
    msgs = ctx.agent_messages if ctx else []
    has_usage = any(assistant_usage(m) is not None for m in msgs)
    figures = _ContextFigures(
        len(msgs),
        {name: _total(_counter(session, name), msgs) for name in counters},
        clamp(estimate_context_tokens(msgs).tokens) if has_usage else None,
        ctx.model if ctx else None,
        ctx.thinking_level if ctx else None,
    )
    return _info(session, leaf_idx, path, figures)


def _info(session: Session, leaf_idx: int | None, path: list[int], figures: _ContextFigures) -> SessionInfo:
    on_path = set(path) if any(isinstance(e, CompactionEntry) for e in session.entries) else set()
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
    h = session.header
    known, model = known_window(session), session_model(session)
    why = unknown_window_why(session)
    peak = assumed_too_small(session, DEFAULT_WINDOW)  # None where the window assumed holds every answer
    own = model_windows_of(session, known.tokens if known is not None else DEFAULT_WINDOW)
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
        contextMessages=figures.messages,
        contextTokens=figures.tokens,
        usageContextTokens=figures.usage_tokens,
        model=figures.model,
        thinkingLevel=figures.thinking_level,
        window=known.tokens if known is not None else None,
        windowSource=known.source if known is not None else None,
        windowModel=model.name() if model is not None else None,
        windowSaid=known.short() if known is not None else None,
        windowUnknown=why,
        windowAtLeast=peak.tokens if peak is not None else None,
        windowAtLeastEntry=peak.entry_index if peak is not None else None,
        modelWindows=[{"provider": p, "model": m, "window": w} for p, m, w in own],
        modelWindowsFrom=model_windows_from(session) if own else None,
        compactions=comps,
        labels=dict(session.labels),
        issues=[
            IssueRow(severity=i.severity, kind=i.kind, line=i.line, message=i.message) for i in session.issues
        ],
    )


def streamed_session_info(
    skeleton: Session, leaf: int | str = "leaf", counters: Sequence[str] = ("pi", "tiktoken")
) -> SessionInfo:
    """:func:`session_info` of a large pi v3 file without holding its messages: ``skeleton`` is
    :func:`~inspector.session.loader.load_skeleton`'s (the tree, kinds, other entries, issues),
    and the leaf's context is read again from the file a batch of messages at a time
    (:func:`_streamed_figures`). The same result as :func:`session_info` of the loaded file."""
    leaf_idx = skeleton.resolve(leaf) if skeleton.entries else None
    path = skeleton.path(leaf_idx) if leaf_idx is not None else []
    if leaf_idx is None:
        figures = _ContextFigures(0, {name: 0 for name in counters}, None, None, None)
    else:
        figures = _streamed_figures(skeleton, path, counters)
    return _info(skeleton, leaf_idx, path, figures)


def _context_range(skeleton: Session, path: list[int]) -> tuple[Any, Callable[[int], bool]]:
    """The compaction shaping the leaf's context (or None) and which path positions it keeps:
    ``buildSessionContext``'s rule (:func:`~inspector.context.context_from_path`), read from the
    skeleton (compaction entries and ids are whole there)."""
    entries = skeleton.entries
    comp_pos = max((p for p, i in enumerate(path) if isinstance(entries[i], CompactionEntry)), default=-1)
    if comp_pos < 0:
        return None, lambda p: True
    comp = entries[path[comp_pos]]
    assert isinstance(comp, CompactionEntry)
    first = next((k for k in range(comp_pos) if entries[path[k]].id == comp.firstKeptEntryId), comp_pos)
    return comp, lambda p: first <= p < comp_pos or p > comp_pos


def _streamed_figures(skeleton: Session, path: list[int], counters: Sequence[str]) -> _ContextFigures:
    """The context figures of ``session_info``, its messages read from the file in batches, in file
    order: token sums do not depend on the order, and pi's usage estimate (last trusted usage, plus
    the estimates of the messages after it: :func:`~inspector.tokens.estimate_context_tokens`) and
    the settings (last on the path wins) are taken by path position."""
    assert skeleton.source is not None
    stream = stream_session(skeleton.source)
    if stream is None:
        raise SessionLoadError(f"{skeleton.source} changed while it was read")
    pos_of = array("q", [-1]) * len(skeleton.entries)
    for p, i in enumerate(path):
        pos_of[i] = p
    comp, kept = _context_range(skeleton, path)
    acc = _Figures(counters, len(path))
    models = ModelTally()  # of every branch, as session_model counts them
    peak = PeakTally()  # and the largest answered context, as answered_peak finds it
    if comp is not None:
        acc.add(-1, compaction_summary_message(comp))
    try:
        for i, e in enumerate(stream.entries):
            peak.add(e)
            if isinstance(e, MessageEntry):
                models.add(e.message)
            p = pos_of[i] if i < len(pos_of) else -1
            if p < 0:
                continue
            acc.setting(p, entry_setting(e))
            m = _context_message(e) if kept(p) else None
            if m is not None:
                acc.add(p, m)
    finally:
        stream.entries.close()
    remember_model(skeleton, models)
    remember_peak(skeleton, peak)
    return acc.figures()


class _Figures:
    """Sums of a context's messages, added a batch at a time in any order (see :func:`_streamed_figures`)."""

    def __init__(self, counters: Sequence[str], n_path: int, batch: int = 10_000) -> None:
        self.counters = {name: get_counter(name) for name in counters}
        self.tokens = dict.fromkeys(counters, 0)
        self.pi = get_counter("pi")
        self.estimates = array("q", [0]) * (n_path + 1)  # pi's estimate by path position + 1
        self.messages = 0
        self.usage: tuple[int, Any] = (-2, None)  # (position, tokens) of the last trusted usage
        self.settings: dict[str, tuple[int, Any]] = {"thinking": (-1, "off"), "model": (-1, None)}
        self.batch: list[tuple[int, Any]] = []
        self.size = batch

    def setting(self, p: int, setting: tuple[str, Any] | None) -> None:
        if setting is not None and p > self.settings[setting[0]][0]:
            self.settings[setting[0]] = (p, setting[1])

    def add(self, p: int, m: Any) -> None:
        self.messages += 1
        u = assistant_usage(m)
        if u is not None and p > self.usage[0]:
            self.usage = (p, calculate_context_tokens(u))
        self.batch.append((p, m))
        if len(self.batch) >= self.size:
            self.flush()

    def flush(self) -> None:
        msgs = [m for _, m in self.batch]
        for name, counter in self.counters.items():
            self.tokens[name] += sum(counter.count_many(msgs))
        for (p, _), n in zip(self.batch, self.pi.count_many(msgs), strict=True):
            self.estimates[p + 1] = n
        self.batch = []

    def figures(self) -> _ContextFigures:
        self.flush()
        at, usage = self.usage
        trailing = sum(self.estimates[at + 2 :]) if usage is not None else 0
        return _ContextFigures(
            self.messages,
            self.tokens,
            clamp(usage + trailing) if usage is not None else None,
            self.settings["model"][1],
            self.settings["thinking"][1],
        )


def _counter(session: Session, name: str) -> Any:
    """The counter ``name``; ``calibrated`` fitted to this session's recorded usage, as a replay
    fits it (:func:`inspector.replay.counters.session_counter`), not tiktoken's plain counts."""
    if name == "calibrated":
        from .replay.counters import session_counter

        return session_counter(session, name)
    return get_counter(name)


def _total(counter: Any, msgs: Sequence[Any], batch: int = 10_000) -> int:
    """The sum of the messages' counts, a batch at a time (a 2M-message context stays cheap)."""
    return sum(sum(counter.count_many(msgs[k : k + batch])) for k in range(0, len(msgs), batch))


def _format_label(fmt: str) -> str:
    from .importers import FORMAT_LABELS, _modules

    _modules()  # fills FORMAT_LABELS with the importers' labels
    return FORMAT_LABELS.get(fmt, fmt)
