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
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .cache.anthropic import LOOKBACK_BLOCKS
from .cache.causes import (
    DISAGREE_MIN,
    DISAGREE_SHARE,
    TOOL_SEARCH,
    TOOL_SEARCH_NOTE,
    calls_tool,
    first_loads,
    message_blocks,
)
from .cache.facts import AGENT_TOOLS, reasoned
from .cache.family import family_of
from .cache.openai import drops_earlier_reasoning
from .context import build_session_context, custom_message_from_entry
from .jsjson import js_stringify
from .numbers import clamp, finite_ms
from .pruning.recorded import dcp_blocks, recorded_prune
from .recon.flags import fewer_words, sent_fewer, threshold
from .session.models import (
    AssistantMessage,
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessage,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from .session.tree import Session, iso_to_ms
from .tokens import assistant_usage, calculate_context_tokens, estimate_tokens
from .visible import clip
from .window import DEFAULT_WINDOW, model_key, shown_name

Severity = Literal["error", "warning", "info"]


class DoctorOptions(BaseModel):
    model_config = ConfigDict(frozen=True)

    context_window: int = Field(DEFAULT_WINDOW, description="Window for the overflow check.")
    model_windows: tuple[tuple[str, str, int], ...] = Field(
        (),
        description="(provider, model, window) of the models whose calls are checked against their own "
        "window (:attr:`inspector.replay.ReplaySettings.model_windows`).",
    )
    giant_tokens: int = Field(20000, description="A single tool output above this many tokens is giant.")
    read_repeat: int = Field(4, description="Reading the same file this many times is flagged.")
    loop_repeat: int = Field(3, description="The same tool call this many times in a row is a loop.")
    streak: int = Field(3, description="This many aborted/error answers in a row is a streak.")
    reread_window: int = Field(5, description="Calls after a compaction in which a re-read counts.")
    retention_min: float = Field(
        0.5,
        description="A compaction keeping less than this share of what the session "
        "needed later from its span is flagged (inspector.retention).",
    )
    retention_needed: int = Field(
        3, description="... when the session needed at least this many items from it."
    )
    cache_break_tokens: int = Field(
        10000, description="A call that lost at least this many cached tokens is a cache break."
    )


class Finding(BaseModel):
    kind: str
    severity: Severity
    message: str
    entries: list[int] = Field(default_factory=list)
    """Entry indexes involved (file order, header excluded), first the main one."""
    lines: list[int] = Field(default_factory=list)


@dataclass(frozen=True)
class DoctorReport:
    findings: tuple[Finding, ...]
    leaf: int | None
    options: DoctorOptions

    def counts(self) -> dict[str, int]:
        return dict(Counter(f.severity for f in self.findings))

    def as_dict(self) -> dict[str, object]:
        return {
            "leaf": self.leaf,
            "options": self.options.model_dump(),
            "counts": self.counts(),
            "findings": [f.model_dump() for f in self.findings],
        }


_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def _f(session: Session, kind: str, severity: Severity, message: str, entries: Sequence[int]) -> Finding:
    return Finding(
        kind=kind,
        severity=severity,
        message=message,
        entries=list(entries),
        lines=[session.lines[i] for i in entries if 0 <= i < len(session.lines)],
    )


def _calls(m: object) -> list[ToolCall]:
    return [b for b in m.content if isinstance(b, ToolCall)] if isinstance(m, AssistantMessage) else []


def check_tool_pairing(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    out = []
    open_calls: dict[str, tuple[int, str, bool]] = {}
    seen_ids: set[str] = set()
    for i in path:
        e = session.entries[i]
        if not isinstance(e, MessageEntry):
            continue
        m = e.message
        for c in _calls(m):
            seen_ids.add(c.id)
            if getattr(c, "serverSide", None) is True:  # run by the provider: no result to wait for
                continue
            open_calls[c.id] = (i, c.name, getattr(m, "stopReason", None) in ("aborted", "error"))
        if isinstance(m, ToolResultMessage):
            if m.toolCallId in open_calls:
                del open_calls[m.toolCallId]
            elif m.toolCallId not in seen_ids:
                out.append(
                    _f(
                        session,
                        "result-without-call",
                        "error",
                        f"tool result for call {m.toolCallId!r} ({m.toolName}) has no matching tool call before it",
                        [i],
                    )
                )
    last = path[-1] if path else -1
    for cid, (i, name, failed) in open_calls.items():
        # the newest answer's calls may simply still be running
        if i == last:
            continue
        if failed:
            out.append(
                _f(
                    session,
                    "tool-call-without-result",
                    "info",
                    f"tool call {name} ({cid}) has no result: its answer was aborted or failed",
                    [i],
                )
            )
        else:
            out.append(
                _f(
                    session,
                    "tool-call-without-result",
                    "warning",
                    f"tool call {name} ({cid}) never got a result on this branch",
                    [i],
                )
            )
    return out


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
                for c in _calls(e.message):
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
                _f(
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
                _f(
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
    from .replay import ReplaySettings, default_strategy, replay
    from .retention import retention

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
            _f(
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
            out.append(_f(session, "context-overflow", severity, message, [x[0] for x in over[:20]]))
    return out


IDLE_EXPIRY_S = 300
"""The shortest cache lifetime of the providers modelled (Anthropic's 5 minutes; OpenAI's in-memory
retention is 5–10 minutes): an idle gap longer than this explains a lost cache."""


def check_cache_breaks(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    """``cache-break``: an answered call whose recorded cache read fell below half of what the
    previous answered call had read or written to the cache, losing at least ``cache_break_tokens``
    (from the usage each call recorded; no model). The cause, from the file: a compaction, a
    branch summary or a DCP compress between the two, an agent switch (OpenCode's ``plan`` ↔
    ``build``), a deferred tool Claude Code's ``ToolSearch`` loaded, a new turn on an OpenAI model
    that drops earlier turns' reasoning (the read stopped where the previous turn's began:
    :func:`inspector.cache.openai.drops_earlier_reasoning`), a model change, older tool
    outputs the agent cleared itself between the two calls (OpenCode's pruning, Claude Code's
    microcompact: :mod:`inspector.pruning.recorded`), or an idle gap past the cache's lifetime (each
    expected: info); else nothing in the file explains it (a warning: a pruned or edited earlier
    message, a changed system prompt or tools, the DCP plugin's tags when the session runs it, or the
    provider's eviction)."""
    breaks: list[Any] = []  # _cache_break's arguments, one tuple per break
    prev: tuple[int, Usage, AssistantMessage] | None = None
    prev_pos = 0  # the previous answer's position on the path
    largest = 0.0  # the largest recorded prompt
    between: list[int] = []  # entries since the previous answer that change the prompt's start
    cleared: list[tuple[float, int, str]] = []  # (when, entry, agent): the outputs the agent cleared
    dcp = False  # the DCP plugin is seen (its compress tool)
    loads: list[tuple[int, list[str]]] = []  # (entry, names): ToolSearch results loading new tools
    tools: set[str] = set()  # the deferred tools loaded so far
    asked = False  # a user message since the previous answer: this answer starts a turn
    reasoning: tuple[int, float] | None = None  # this turn's first answer that reasoned: (entry, prompt)
    for pos, i in enumerate(path):
        e = session.entries[i]
        if isinstance(e, (CompactionEntry, BranchSummaryEntry, ModelChangeEntry)):
            between.append(i)
            continue
        if isinstance(e, CustomMessageEntry):
            asked = True
        if not isinstance(e, MessageEntry):
            continue
        m = e.message
        if isinstance(m, UserMessage):
            asked = True
        if isinstance(m, ToolResultMessage):
            if dcp_blocks(m):  # a DCP compress: its range is replaced from the next call on
                between.append(i)
            if (mark := recorded_prune(m)) is not None:
                cleared.append((mark.at, i, mark.agent))
            dcp = dcp or m.toolName == "compress" or bool(dcp_blocks(m))
            if new := first_loads(m, tools):
                loads.append((i, new))
            continue
        usage = assistant_usage(m)
        if usage is None or not isinstance(m, AssistantMessage):
            continue
        largest = max(largest, _prompt(usage))
        dropped, asked = (reasoning if asked else None), False  # the previous turn's, dropped at this one
        if dropped is not None or reasoning is None:
            reasoning = (
                (i, _prompt(usage)) if drops_earlier_reasoning(m.model, m.api) and reasoned(m) else None
            )
        if prev is not None:
            cached = clamp(prev[1].cacheRead) + clamp(prev[1].cacheWrite)
            read = clamp(usage.cacheRead)
            if read < 0.5 * cached and cached - read >= o.cache_break_tokens:
                t0, t1 = finite_ms(prev[2].timestamp), finite_ms(m.timestamp)
                gone = [
                    (k, who) for at, k, who in cleared if t0 is not None and t1 is not None and t0 < at <= t1
                ]
                growth = (_prompt(usage) - _prompt(prev[1]), _appended(session, path[prev_pos:pos]))
                if dropped is not None and not _dropped_at(read, dropped[1], _prompt(usage)):
                    dropped = None
                wide = _blocks(session, path[prev_pos:pos]) if family_of(m) == "anthropic" else 0
                breaks.append((i, m, usage, prev, between, cached, read, gone, growth, loads, dropped, wide))
        prev, between, prev_pos, loads = (i, usage, m), [], pos, []
    reads = Counter(b[6] for b in breaks if b[6] > 0)
    limit = threshold(largest)
    dcp = dcp and "compress" in AGENT_TOOLS.get(session.format, ())  # DCP is an OpenCode plugin
    return [
        _cache_break(session, i, m, u, p, bt, c, r, reads[r] >= 2, gone, dcp, (*grown, limit), ld, dr, w)
        for i, m, u, p, bt, c, r, gone, grown, ld, dr, w in breaks
    ]


def _blocks(session: Session, span: Sequence[int]) -> int:
    """The content blocks the entries ``span`` send (the previous answer and what followed it:
    :func:`inspector.cache.causes.message_blocks`; a custom message is one)."""
    n = 0
    for i in span:
        e = session.entries[i]
        if isinstance(e, CustomMessageEntry):
            n += 1
        elif isinstance(e, MessageEntry):
            n += message_blocks(e.message)
    return n


def _dropped_at(read: float, where: float, prompt: float) -> bool:
    """Whether a read of ``read`` tokens stopped where the previous turn's reasoning began (the
    prompt ``where`` of its first call that reasoned), as the cache model's check counts agreement
    for a call of ``prompt`` tokens (:data:`inspector.cache.causes.DISAGREE_SHARE`)."""
    return where - max(DISAGREE_MIN, DISAGREE_SHARE * prompt) <= read <= where + 128


def _appended(session: Session, span: Sequence[int]) -> int:
    """pi's estimate of what the file appended between two answers (``span``: the path from the
    earlier one): that answer, then every message and custom message but answers (asked only at a
    cache break)."""
    n = 0
    for k, i in enumerate(span):
        e = session.entries[i]
        if isinstance(e, CustomMessageEntry):
            n += estimate_tokens(custom_message_from_entry(e))
        elif isinstance(e, MessageEntry) and (k == 0 or not isinstance(e.message, AssistantMessage)):
            n += estimate_tokens(e.message)
    return n


def _prompt(u: Usage) -> float:
    """The prompt a call's usage records: its input and cache reads and writes."""
    return clamp(u.input) + clamp(u.cacheRead) + clamp(u.cacheWrite)


def _cache_break(
    session: Session,
    i: int,
    m: AssistantMessage,
    usage: Usage,
    prev: tuple[int, Usage, AssistantMessage],
    between: list[int],
    cached: float,
    read: float,
    shared: bool = False,
    cleared: Sequence[tuple[int, str]] = (),
    dcp: bool = False,
    growth: tuple[float, float, int] | None = None,
    loads: Sequence[tuple[int, list[str]]] = (),
    dropped: tuple[int, float] | None = None,
    blocks: int = 0,
) -> Finding:
    """One ``cache-break`` finding: what was lost at entry ``i``, and why, as far as the file says
    (``shared``: other breaks read the same amount, the prefix every request shares; ``cleared``:
    the outputs the agent cleared between the two calls; ``dcp``: the session runs the DCP plugin;
    ``growth``: how much the recorded prompt grew, how much the file appended (pi's estimate), and
    the check's threshold: :func:`inspector.recon.flags.sent_fewer`; ``loads``: the ToolSearch results
    between the two calls that loaded a deferred tool new to the session, with their tools;
    ``dropped``: the previous turn's first answer that reasoned and its prompt, where the read stopped,
    for a model that drops earlier turns' reasoning; ``blocks``: the content blocks sent since the
    previous request, on Anthropic)."""
    j, prev_usage, pm = prev
    cause, expected = _break_cause(
        session, i, m, j, pm, between, cleared, dcp, growth, loads, dropped, blocks
    )
    what = f"read {read:,.0f} of the {cached:,.0f} tokens the call before had cached"
    if shared:
        what += f" (only the {read:,.0f}-token prefix every request shares: system prompt and tools)"
        if session.format == "claude-code" and cause.startswith(UNEXPLAINED):
            cause += CLAUDE_CODE_FLOOR
    cost = ""
    now, before = _recorded_cost(usage), _recorded_cost(prev_usage)
    if now is not None and before is not None:
        cost = f"; this call cost ${now:,.4f}, the one before ${before:,.4f}"
    return _f(
        session,
        "cache-break",
        "info" if expected else "warning",
        f"prompt cache lost: {what}, so {cached - read:,.0f} tokens were paid again; {cause}{cost}",
        # the search that loaded a tool; the previous turn's first answer that reasoned
        [i, j, *between[:2], *[k for k, _ in loads[:1]], *([dropped[0]] if dropped is not None else [])],
    )


UNEXPLAINED = "nothing in the file explains it"
"""How :func:`_break_cause` starts when the file shows no cause."""
CLAUDE_CODE_FLOOR = (
    "; Claude Code users have measured such reads of only that prefix coming and going seconds apart "
    "with nothing changed, the next call reading the whole conversation again (claude-code #87966, "
    "#91514)"
)
"""Said of a Claude Code break the file does not explain that read only the prefix every request
shares: the intermittent floor reads users measured (claude-code #87966: 89 over 9 days, not
correlated with idle time, self-healing; #91514)."""


def _break_cause(
    session: Session,
    i: int,
    m: AssistantMessage,
    j: int,
    pm: AssistantMessage,
    between: list[int],
    cleared: Sequence[tuple[int, str]] = (),
    dcp: bool = False,
    growth: tuple[float, float, int] | None = None,
    loads: Sequence[tuple[int, list[str]]] = (),
    dropped: tuple[int, float] | None = None,
    blocks: int = 0,
) -> tuple[str, bool]:
    """Why the cache was lost between the answers at ``j`` and ``i``, as far as the file says, and
    whether that is expected."""
    recorded = _recorded_change(session, between, cleared, loads)
    if recorded is not None:
        return recorded, True
    agents = (_agent(pm), _agent(m))
    if agents[0] is not None and agents[1] is not None and agents[0] != agents[1]:
        return (
            f"the agent changed ({agents[0]} → {agents[1]}): each agent is offered its own tools, so only "
            "the prefix they share was cached",
            True,
        )
    if (pm.model, pm.provider) != (m.model, m.provider):
        return f"the model changed ({pm.model} → {m.model}): each model has its own cache", True
    end = iso_to_ms(getattr(session.entries[j], "timestamp", None))  # the previous answer's end
    start = finite_ms(m.timestamp)
    if end is not None and start is not None and start - end > IDLE_EXPIRY_S * 1000:
        return f"after {(start - end) / 60000:.1f} idle minutes: a 5-minute cache had expired", True
    if blocks > LOOKBACK_BLOCKS:
        return (
            f"{blocks} content blocks were sent since the previous request (its answer's tool calls and "
            f"their results): Anthropic looks back at most {LOOKBACK_BLOCKS} blocks from a breakpoint for an "
            "earlier cache entry, so that request's entry was out of reach",
            True,
        )
    if dropped is not None:
        return (
            f"a new turn: {shown_name(str(m.model))} (an OpenAI model before GPT-5.6) drops the reasoning of "
            f"earlier turns, so the prompt changed where the previous turn's reasoning began (after the prompt of "
            f"entry {dropped[0]}) and the cache was read up to there",
            True,
        )
    if growth is not None and (short := sent_fewer(*growth)):
        return fewer_words(short, growth[0], growth[1]), False
    if TOOL_SEARCH in AGENT_TOOLS.get(session.format, ()) and calls_tool(pm, TOOL_SEARCH):  # Claude Code's
        return UNEXPLAINED + TOOL_SEARCH_NOTE, False
    if dcp:
        return (
            UNEXPLAINED + ": the session runs the DCP plugin, which re-renders its "
            "message-id tags and nudges right after the system prompt at each request (DCP #410, #614; "
            "the export does not show them), or the provider evicted the cache",
            False,
        )
    return (
        UNEXPLAINED + ": an earlier message pruned or edited, the system prompt or "
        "tools changed, or the provider evicted the cache",
        False,
    )


def _recorded_change(
    session: Session,
    between: list[int],
    cleared: Sequence[tuple[int, str]],
    loads: Sequence[tuple[int, list[str]]],
) -> str | None:
    """The change the file records between two calls that broke the cache (a compaction, a branch
    summary, a DCP compress, outputs the agent cleared, a deferred tool loaded), or None."""
    for k in between:
        e = session.entries[k]
        if isinstance(e, CompactionEntry):
            return f"after the compaction at entry {k}, which rewrites the prompt's start"
        if isinstance(e, BranchSummaryEntry):
            return f"after the branch summary at entry {k}"
        if isinstance(e, MessageEntry):  # a DCP compress result (check_cache_breaks)
            return (
                f"after DCP's compress at entry {k}: the range it compressed is replaced by its summary "
                "from this call on, so the prompt changed there"
            )
    if cleared:
        return (
            f"{cleared[0][1]} cleared {len(cleared)} older tool output(s) between the two calls (from "
            f"entry {min(k for k, _ in cleared)}): the prompt changed there, and everything after it was "
            "sent again"
        )
    if loads:
        k, names = loads[0]
        named = ", ".join(map(shown_name, names[:3])) + (
            f" and {len(names) - 3} more" if len(names) > 3 else ""
        )
        return (
            f"ToolSearch loaded {named} at entry {k}: Claude Code then sends its tool list again, "
            "and the cache is read only up to the system prompt (as Claude Code users measured it: "
            "claude-code #53132, #91514)"
        )
    return None


def _agent(m: AssistantMessage) -> str | None:
    """The agent that gave an answer, where the file names it (OpenCode's ``agent``: ``plan``,
    ``build``)."""
    a = (m.__pydantic_extra__ or {}).get("agent")
    return a if isinstance(a, str) else None


def _recorded_cost(usage: Usage) -> float | None:
    """The call's recorded cost in dollars (``usage.cost.total``, read as the replay reads it:
    :func:`~inspector.numbers.clamp`), when the file has it."""
    total = (usage.cost or {}).get("total")
    if isinstance(total, bool) or not isinstance(total, (int, float)):
        return None
    return float(clamp(total))


def check_reads(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    reads: dict[str, list[int]] = {}
    comp_steps: list[int] = []
    step = 0
    calls_at: list[tuple[int, int, str]] = []  # (step, entry, path)
    for i in path:
        e = session.entries[i]
        if isinstance(e, CompactionEntry):
            comp_steps.append(step)
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
            for c in _calls(e.message):
                p = c.arguments.get("path") if isinstance(c.arguments, dict) else None
                if c.name == "read" and isinstance(p, str) and p:
                    reads.setdefault(p, []).append(i)
                    calls_at.append((step, i, p))
            step += 1
    out = []
    for p, idx in reads.items():
        if len(idx) >= o.read_repeat:
            out.append(
                _f(session, "file-read-many-times", "info", f"{p} was read {len(idx)} times", idx[:20])
            )
    for cs in comp_steps:
        before = {p for s, _, p in calls_at if s < cs}
        for s, i, p in calls_at:
            if cs <= s < cs + o.reread_window and p in before:
                out.append(
                    _f(
                        session,
                        "reread-after-compaction",
                        "warning",
                        f"{p} read again {s - cs + 1} call(s) after a compaction summarised the earlier read away",
                        [i],
                    )
                )
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
                    _f(
                        session,
                        "giant-tool-output",
                        "warning",
                        f"{name} output of {t:,} tokens ({t / o.context_window:.0%} of the window) in one message",
                        [i],
                    )
                )
    return out


def check_loops(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    out = []
    run: list[int] = []
    prev: str | None = None

    polling = False

    def flush() -> None:
        if len(run) >= o.loop_repeat and prev is not None:
            out.append(
                _f(
                    session,
                    "repeated-tool-call",
                    "info",
                    f"polled a running command {len(run)} times in a row (write_stdin with no input: "
                    "Codex waiting for the command's output): a long command, not a loop",
                    run[:20],
                )
                if polling
                else _f(
                    session,
                    "repeated-tool-call",
                    "warning",
                    f"the same call {clip(prev, 80)} {len(run)} times in a row (a loop?)",
                    run[:20],
                )
            )

    for i in path:
        e = session.entries[i]
        if not (isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)):
            continue
        calls = _calls(e.message)
        key = ";".join(f"{c.name}({js_stringify(c.arguments)})" for c in calls) if calls else None
        if key is not None and key == prev:
            run.append(i)
        else:
            flush()
            run = [i] if key is not None else []
            prev = key
            polling = bool(calls) and all(_polls(c) for c in calls)
    flush()
    return out


def _polls(c: ToolCall) -> bool:
    """Codex's ``write_stdin`` with no input: it waits for more output of a command it started
    (``exec_command``) — calls that repeat while a long command runs."""
    a = c.arguments
    return c.name == "write_stdin" and isinstance(a, dict) and not a.get("chars")


def check_failure_streaks(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    out = []
    run: list[int] = []

    def flush() -> None:
        if len(run) >= o.streak:
            out.append(
                _f(
                    session,
                    "failure-streak",
                    "warning",
                    f"{len(run)} aborted/error answers in a row",
                    run[:20],
                )
            )

    for i in path:
        e = session.entries[i]
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
            if e.message.stopReason in ("aborted", "error"):
                run.append(i)
            else:
                flush()
                run = []
    flush()
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
                _f(
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
                    _f(
                        session,
                        "duplicated-summary",
                        "warning",
                        "a summary's text is repeated inside another message of the context",
                        [j, i],
                    )
                )
    return out


def check_model_changes(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    out = []
    in_turn_answers = 0
    last_stop: str | None = None  # a switch after a final answer (before the next prompt) is between turns
    last_model: tuple[str | None, str | None] | None = None
    for i in path:
        e = session.entries[i]
        if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage):
            in_turn_answers = 0
            continue
        if isinstance(e, ModelChangeEntry) and in_turn_answers > 0 and last_stop == "toolUse":
            out.append(
                _f(
                    session,
                    "model-change-mid-turn",
                    "info",
                    f"model changed to {e.provider}/{e.modelId} in the middle of a turn",
                    [i],
                )
            )
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
            model = (e.message.provider, e.message.model)
            if in_turn_answers > 0 and last_model is not None and model != last_model:
                out.append(
                    _f(
                        session,
                        "model-change-mid-turn",
                        "info",
                        f"answer from {model[0]}/{model[1]} after {last_model[0]}/{last_model[1]} in the same turn",
                        [i],
                    )
                )
            last_model = model
            last_stop = e.message.stopReason
            in_turn_answers += 1
    return out


def check_branch_summaries(session: Session, path: list[int], o: DoctorOptions) -> list[Finding]:
    out = []
    for i in path:
        e = session.entries[i]
        if isinstance(e, BranchSummaryEntry) and not e.summary.strip():
            out.append(
                _f(
                    session,
                    "empty-branch-summary",
                    "info",
                    "empty branch summary: pi leaves it out of the context",
                    [i],
                )
            )
    return out


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
    findings.sort(key=lambda f: (_SEVERITY_ORDER[f.severity], f.entries[0] if f.entries else -1))
    return DoctorReport(tuple(findings), li, o)
