"""The ``cache-break`` check: an answered call whose recorded cache read fell below half of what the
call before had cached, with the cause the file shows (from the usage each call recorded; no cache
model)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from ..cache.anthropic import LOOKBACK_BLOCKS
from ..cache.causes import (
    DISAGREE_MIN,
    DISAGREE_SHARE,
    TOOL_SEARCH,
    TOOL_SEARCH_NOTE,
    calls_tool,
    first_loads,
    message_blocks,
)
from ..cache.facts import AGENT_TOOLS, reasoned, thinking_changes
from ..cache.family import family_of
from ..cache.openai import drops_earlier_reasoning
from ..context import custom_message_from_entry
from ..numbers import clamp, finite_ms
from ..pruning.recorded import dcp_blocks, recorded_prune
from ..recon.flags import fewer_words, sent_fewer, threshold
from ..session.models import (
    AssistantMessage,
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ..session.tree import Session, iso_to_ms
from ..tokens import assistant_usage, estimate_tokens
from ..window import shown_name
from .findings import DoctorOptions, Finding, finding

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
    :func:`inspector.cache.openai.drops_earlier_reasoning`), a model change, a change of thinking
    level on Anthropic (:data:`inspector.cache.causes.THINKING`), older tool
    outputs the agent cleared itself between the two calls (OpenCode's pruning, Claude Code's
    microcompact: :mod:`inspector.pruning.recorded`), or an idle gap past the cache's lifetime (each
    expected: info); else nothing in the file explains it (a warning: a pruned or edited earlier
    message, a changed system prompt or tools, the DCP plugin's tags when the session runs it, or the
    provider's eviction)."""
    breaks: list[_Break] = []
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
                breaks.append(
                    _Break(i, m, usage, prev, between, cached, read, gone, growth, loads, dropped, wide)
                )
        prev, between, prev_pos, loads = (i, usage, m), [], pos, []
    reads = Counter(b.read for b in breaks if b.read > 0)
    limit = threshold(largest)
    dcp = dcp and "compress" in AGENT_TOOLS.get(session.format, ())  # DCP is an OpenCode plugin
    levels = thinking_changes(session, path) if breaks else {}  # answer → the change of thinking level
    return [_cache_break(session, b, reads[b.read] >= 2, dcp, limit, levels.get(b.i)) for b in breaks]


class _Break(NamedTuple):
    """What the file shows of one cache break: the answer at entry ``i`` read ``read`` of the
    ``cached`` tokens the previous answer (``prev``: entry, usage, message) had cached."""

    i: int
    m: AssistantMessage
    usage: Usage
    prev: tuple[int, Usage, AssistantMessage]
    between: list[int]
    """Entries between the two answers that change the prompt's start (compactions, branch
    summaries, model changes, DCP compresses)."""
    cached: float
    read: float
    cleared: Sequence[tuple[int, str]]
    """The outputs the agent cleared between the two calls (entry, agent)."""
    growth: tuple[float, float]
    """How much the recorded prompt grew, and how much the file appended (pi's estimate)."""
    loads: Sequence[tuple[int, list[str]]]
    """The ToolSearch results between the two calls that loaded a deferred tool new to the
    session, with their tools."""
    dropped: tuple[int, float] | None
    """The previous turn's first answer that reasoned and its prompt, where the read stopped, for a
    model that drops earlier turns' reasoning."""
    blocks: int
    """The content blocks sent since the previous request (Anthropic's lookback; 0 elsewhere)."""


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
    session: Session, b: _Break, shared: bool, dcp: bool, limit: int, thinking: int | None
) -> Finding:
    """One ``cache-break`` finding: what was lost at ``b``, and why, as far as the file says
    (``shared``: other breaks read the same amount, the prefix every request shares; ``dcp``: the
    session runs the DCP plugin; ``limit``: the threshold of
    :func:`inspector.recon.flags.sent_fewer`, for the prompt's growth; ``thinking``: the change of
    thinking level since the previous answer, its entry, or None)."""
    j, prev_usage, _ = b.prev
    cause, expected = _break_cause(session, b, dcp, limit, thinking)
    read, cached, dropped = b.read, b.cached, b.dropped
    what = f"read {read:,.0f} of the {cached:,.0f} tokens the call before had cached"
    if shared:
        what += f" (only the {read:,.0f}-token prefix every request shares: system prompt and tools)"
        if session.format == "claude-code" and cause.startswith(UNEXPLAINED):
            cause += CLAUDE_CODE_FLOOR
        elif session.format == "pi" and cause == NOTHING_HELD and family_of(b.m) == "anthropic":
            cause = PI_PREFIX_READ
    cost = ""
    now, before = _recorded_cost(b.usage), _recorded_cost(prev_usage)
    if now is not None and before is not None:
        cost = f"; this call cost ${now:,.4f}, the one before ${before:,.4f}"
    return finding(
        session,
        "cache-break",
        "info" if expected else "warning",
        f"prompt cache lost: {what}, so {cached - read:,.0f} tokens were paid again; {cause}{cost}",
        # the search that loaded a tool; the previous turn's first answer that reasoned; the change
        # of thinking level
        [
            b.i,
            j,
            *b.between[:2],
            *[k for k, _ in b.loads[:1]],
            *([dropped[0]] if dropped is not None else []),
            *([thinking] if thinking is not None and cause.startswith(THINKING_CHANGED) else []),
        ],
    )


THINKING_CHANGED = "the thinking level changed"
"""How :func:`_break_cause` starts a break after a change of thinking level."""

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
    session: Session, b: _Break, dcp: bool, limit: int, thinking: int | None
) -> tuple[str, bool]:
    """Why the cache was lost between the previous answer and ``b``'s, as far as the file says, and
    whether that is expected (``thinking``: as :func:`_cache_break` has it)."""
    m, (j, _, pm), blocks, dropped = b.m, b.prev, b.blocks, b.dropped
    recorded = _recorded_change(session, b.between, b.cleared, b.loads)
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
    if thinking is not None and family_of(m) == "anthropic":
        return (
            f"{THINKING_CHANGED} (entry {thinking}): when the thinking parameters change, "
            "Anthropic keeps only the system prompt and tools cached",
            True,
        )
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
    if short := sent_fewer(*b.growth, limit):
        return fewer_words(short, b.growth[0], b.growth[1]), False
    if TOOL_SEARCH in AGENT_TOOLS.get(session.format, ()) and calls_tool(pm, TOOL_SEARCH):  # Claude Code's
        return UNEXPLAINED + TOOL_SEARCH_NOTE, False
    if dcp:
        return (
            UNEXPLAINED + ": the session runs the DCP plugin, which re-renders its "
            "message-id tags and nudges right after the system prompt at each request (DCP #410, #614; "
            "the export does not show them), or the provider evicted the cache",
            False,
        )
    return NOTHING_HELD, False


NOTHING_HELD = (
    f"{UNEXPLAINED}: an earlier message pruned or edited, the system prompt or tools changed, or the provider "
    "evicted the cache"
)
"""The cause of a break the file holds nothing about."""

PI_PREFIX_READ = (
    f"{UNEXPLAINED}: an earlier message pruned or edited, or the provider evicted the rest of the cache; not "
    "the system prompt or tools, which were read from it (pi's breakpoint closes the system prompt, after "
    "the tools: a change in either would have left less to read)"
)
"""The cause of such a break in a pi session on Anthropic whose read was the prefix every request
shares: pi puts a cache breakpoint on the system prompt (pi-ai ``providers/anthropic.ts``), so that
read proves the tools and the system prompt unchanged. Not said on OpenAI, whose reads stop on a
128-token step: the last tokens of the system prompt (where pi writes the date and the working
directory) may lie past the read."""


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
