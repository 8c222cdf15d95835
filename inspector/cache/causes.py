"""Why a call read what it read: the causes of an invalidation (a compaction, a prune, an agent
switch, a tool load, the provider's lookback, dropped reasoning, a TTL expiry), and, where the
predicted and recorded reads disagree, the likely cause, each with its source."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from ..recon.flags import fewer_words
from ..session.models import AssistantMessage, OpaqueBlock, ToolCall, ToolResultMessage
from .prices import Rates
from .rule import CacheRule

#: a call's predicted and recorded cache reads disagree when they differ by more than this share of
#: its prompt (and at least DISAGREE_MIN tokens)
DISAGREE_SHARE = 0.05
DISAGREE_MIN = 1024


PRUNE = "prune"
"""The cause of an invalidation where a message before the cached part was pruned at this call."""
UNPRUNE = "unprune"
"""... where an output pruned at the previous call is sent whole again (the strategy's clock went back)."""
COMPACTION = "compaction"
"""... where a compaction replaced the history before this call."""
TTL = "ttl"
"""... where the cache entry expired: the call came more than the TTL after the previous one used it."""
START = "start"
"""What :func:`inspector.cache.report` finds at the first call (nothing before it to break)."""


DCP_CAUSE = (
    "the DCP plugin re-renders its message-id tags and nudges at each request, changing the prompt "
    "just after the system prompt (DCP #410, #614); the export does not show them"
)


DCP_LARGER = (
    "; DCP's own notifications count the summaries it sends larger than the export's compress calls "
    "record (`inspector check` lists them), so what stands before a later change is longer than the "
    "replay's"
)
"""Added where a DCP session's call read more than predicted (see
:func:`inspector.importers.opencode_dcp.notified`)."""


AGENT_SWITCH = "agent"
"""The cause of an invalidation when OpenCode's agent changes between two calls (``plan`` ↔
``build``, the message's ``agent`` field). Source: OpenCode ``session/llm.ts`` (``resolveTools``):
the tools a request offers are the agent's, less those its permissions deny
(``PermissionNext.disabled``; the plan agent denies editing), so the prompt differs right after the
prefix all agents share, and the call reads only that (the session's hidden prefix). In the shared
OpenCode export each of the five calls after a switch read exactly its 20,992-token shared prefix."""

MODEL_SWITCH = "model"
"""The cause of an invalidation when the call's model differs from the previous call's: each model
has its own cache (the model is part of the cache key, not of the prompt text: Claude Code's
prompt-caching page lists a ``/model`` switch as invalidating the entire request; OpenAI's and
Anthropic's caches hold a model's own computed states). The call reads what that model itself
cached earlier, while it lives: the prefix of its last call when the context has only grown
since, else the system prompt and tools; nothing when the model has not answered before, or its
entries expired (LiteLLM measured 97.4 % of 4,684 switch-backs warm at a 5-minute lifetime)."""

THINKING = "thinking"
"""The cause of an invalidation on Anthropic when the session's thinking level changed since the
previous call (pi's ``thinking_level_change``: another thinking budget or effort, or thinking
turned on or off): changing the thinking parameters invalidates the conversation's cached
messages, while the system prompt and tools stay cached (Anthropic's extended-thinking and
prompt-caching pages). The shared fixture before-compaction shows it: the thinking level raised
from off to high, then the next call, 4.5 minutes after the previous request, read nothing and
wrote its whole 43,835-token prompt (pi's system prompt and tools there are under Opus 4.5's
4,096-token minimum, so nothing of them was cached apart)."""

TOOL_SEARCH = "ToolSearch"
TOOL_SEARCH_NOTE = (
    "; the previous answer called ToolSearch: when a search first loads a deferred tool, Claude Code "
    "sends its tool list again and the cache is read only up to the system prompt (claude-code #53132, "
    "#91514), but the file names no tool this search loaded for the first time"
)
"""Said where a call right after a ``ToolSearch`` read less than predicted and the file names no
new tool that search loaded (the modelled case is :data:`TOOL_LOAD`)."""

ENTRY_GONE = "the conversation's own entry was gone although nothing before it changed in the file"
"""Said of a call that read only the prefix every request shares while nothing in the file changed
before the cached part: the cache server the request reached held no entry for this conversation."""
OLDER_COPY = "this request reached a cache copy that had not seen the calls since"
"""Said of a call that read, to within :data:`OLDER_SLACK`, what an earlier call (not the previous
one) had sent (:func:`older_prefix`)."""
SERVER_SIDE = (ENTRY_GONE, OLDER_COPY)
"""Disagreements the provider's cache servers decide as far as the file shows (which server a
request reaches, what it still holds), nothing before the cached part having changed in the file.
Nothing in the file lets a model foresee them; the check reports their share of the error apart
(:meth:`CacheReport.server_side_share`)."""
OPENAI_ROUTING_NOTE = (
    "; OpenAI routes each request to a cache server by the prompt's first tokens and "
    "prompt_cache_key, and sends some elsewhere when one prefix is busy (prompt-caching guide); "
    "reads stuck at the system prompt and tools are reported for gpt-5.x on the ChatGPT/Codex backend "
    "(openai/codex #20301)"
)
"""Added to a disagreement saying :data:`ENTRY_GONE`, under the OpenAI rule."""


def server_side(cause: str | None) -> bool:
    """Is this disagreement one the provider's cache servers decided (:data:`SERVER_SIDE`)?"""
    return cause is not None and any(phrase in cause for phrase in SERVER_SIDE)


TOOL_LOAD = "tool-load"
"""The cause of an invalidation on the call right after a Claude Code ``ToolSearch`` that loaded a
deferred tool new to the session (its result's ``tool_reference`` blocks, kept by the importer in
``details.claudeCode.toolReferences``). Not in any source we can read: Anthropic's page on tool use
with prompt caching says a tool found by tool search leaves the cached prefix alone, but Claude Code
users measured the opposite, the call after the search reading only the system prompt and tools
and writing the whole conversation again (claude-code #53132 on 2.1.119, #91514 on 2.1.258, #63930),
and the shared transcript ta93abe (2.1.177) does the same: 16,222 tokens read after ToolSearch
loaded WebSearch, the previous call having read 103,337. Modelled as OpenCode's agent switch is:
the call reads only the session's hidden prefix. A search for a tool already loaded changes nothing
(#53132: the first time a tool is unlocked)."""


LOOKBACK = "lookback"
"""The cause of an invalidation when the call appended more content blocks since the previous
request than the provider looks back from a breakpoint (:attr:`CacheRule.lookback_blocks`:
Anthropic's 20): the previous entry is out of reach, and only the system prompt and tools are
read. ``brokenAtEntryIndex`` is the first message appended (the previous answer)."""


def message_blocks(m: Any) -> int:
    """The content blocks message ``m`` sends, as the provider counts them for its lookback: each
    block of an answer or of a user message (text, thinking, tool call, image), one for a tool
    result and for any other message."""
    content = getattr(m, "content", None)
    return len(content) if isinstance(content, list) and not isinstance(m, ToolResultMessage) else 1


def blocks_appended(segment: Sequence[Any], start: int, end: int) -> int:
    """The content blocks of the context messages ``segment[start:end]`` (:func:`message_blocks`)."""
    return sum(message_blocks(cm.message) for cm in segment[start:end])


REASONING = "reasoning"
"""The cause of an invalidation at the first call of a turn, when the model drops the reasoning of
earlier turns (:func:`inspector.cache.openai.drops_earlier_reasoning`: OpenAI reasoning models
before GPT-5.6, through the Responses API): the prompt it processes changes where the previous
turn's first reasoning item sat, so the cache is read only up to the prompt of that turn's first
call that reasoned (its ``brokenAtEntryIndex`` is that call's answer). Sources:
:data:`inspector.cache.openai.REASONING_SOURCE`."""

WARM_START = (
    "assumed warm at the start: Claude Code caches its system prompt and tools apart and every "
    "session sends the same ones, so a session's first call reads them from the cache another session "
    "left (claude-code #94417, #47098)"
)
"""How a Claude Code session's first call is modelled: it reads the session's hidden prefix (the
system prompt and tools, fitted) instead of writing it. Claude Code's prompt-caching page says
sessions in the same directory build matching prefixes and read each other's cache; its users
measured it: over 674 sessions, the first call of each of the 474 warm starts read the same
system-and-tools prefix in every project (claude-code #94417, 2.1.156–2.1.272), and a relaunch
read it seconds later (#47098). Both shared Claude Code transcripts start that way (16,141 and
16,129 tokens read by their first call). An assumption all the same: a session started when no
other had run within the cache's lifetime reads nothing, and its first call then disagrees with
the model (:func:`disagreement` says so)."""


def loaded_tools(m: Any) -> list[str]:
    """The deferred tools a Claude Code ``ToolSearch`` result loaded (its ``tool_reference`` blocks,
    as the importer keeps them), or none."""
    details = getattr(m, "details", None)
    cc = details.get("claudeCode") if isinstance(details, dict) else None
    names = cc.get("toolReferences") if isinstance(cc, dict) else None
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def tool_loads(entries: Sequence[Any], answer_index: Sequence[int]) -> dict[int, int]:
    """The answers (entry indexes; ``answer_index`` increasing) that first send a ``ToolSearch``
    result loading a tool no earlier result loaded, in file order, each → that result's entry index
    (:data:`TOOL_LOAD`)."""
    seen: set[str] = set()
    out: dict[int, int] = {}
    for i, e in enumerate(entries):
        if first_loads(getattr(e, "message", None), seen):
            k = bisect_right(answer_index, i)
            if k < len(answer_index):
                out.setdefault(answer_index[k], i)
    return out


def first_loads(m: Any, seen: set[str]) -> list[str]:
    """The tools the ``ToolSearch`` result ``m`` loads that no earlier result loaded (``seen``: those
    so far, updated), in its order; none for any other message."""
    if not isinstance(m, ToolResultMessage) or m.toolName != TOOL_SEARCH:
        return []
    new = [n for n in dict.fromkeys(loaded_tools(m)) if n not in seen]
    seen.update(new)
    return new


def _tool_names(content: Sequence[Any]) -> tuple[Any, ...]:
    """The names of the tools an answer's content calls (:func:`calls_tool` for all of them)."""
    if not content:
        return ()
    return tuple(
        b.name if isinstance(b, ToolCall) else getattr(b, "name", None)
        for b in content
        if isinstance(b, (ToolCall, OpaqueBlock))
    )


def calls_tool(m: AssistantMessage, name: str) -> bool:
    """Whether the answer calls the tool ``name``."""
    return any(
        (
            b.name
            if isinstance(b, ToolCall)
            else getattr(b, "name", None)
            if isinstance(b, OpaqueBlock)
            else None
        )
        == name
        for b in m.content
    )


def invalidation(
    rule: CacheRule,
    rate: Rates,
    lost: int,
    cause: str | None,
    warm: bool,
    broke: int | None,
    idle: float | None,
) -> dict[str, Any] | None:
    """The record of a call whose cached prefix shrank by ``lost`` tokens: why, where, what it cost
    (the lost prefix written, or sent uncached, instead of read)."""
    if lost <= 0:
        return None
    why = cause if warm else TTL
    extra = (rate.write if rule.writes else rate.input) - rate.read
    return {
        "cause": why,
        "brokenAtEntryIndex": broke if why != TTL else None,
        "tokensRewritten": lost,
        "premiumUsd": round(lost * extra, 6),
        "idleSeconds": None if idle is None else round(idle, 1),
    }


INVALIDATION_WORDS = {
    PRUNE: "a prune",
    UNPRUNE: "an undone prune",
    COMPACTION: "a compaction",
    TTL: "the cache expiring",
    AGENT_SWITCH: "a switch of agent (its own tools)",
    MODEL_SWITCH: "a switch of model (each model has its own cache)",
    THINKING: "a change of thinking level (Anthropic keeps only the system prompt and tools cached)",
    TOOL_LOAD: "a deferred tool ToolSearch loaded (Claude Code then sends its tool list again, as its users measured it)",
    REASONING: "the previous turn's reasoning, which OpenAI models before GPT-5.6 drop at a new turn, beginning",
    LOOKBACK: "more than 20 content blocks sent since the previous request (Anthropic looks back at most 20 from a breakpoint), from the answer",
}
"""An invalidation's cause (the ``cause`` of :func:`invalidation`, as the JSON gives it) in words."""


def invalidated_by(inv: dict[str, Any]) -> str:
    """What broke the cached prefix, in words: the cause, where, and for a TTL expiry after how
    long idle ("a prune at entry 12", "the cache expiring after 7.5 idle minutes"). The CLI, the
    timeline's markers and the Replay page's story say it alike."""
    cause = inv.get("cause")
    out = INVALIDATION_WORDS.get(cause, str(cause)) if isinstance(cause, str) else "a change"
    if inv.get("brokenAtEntryIndex") is not None:
        out += f" at entry {inv['brokenAtEntryIndex']}"
    if cause == TTL and inv.get("idleSeconds") is not None:
        out += f" after {inv['idleSeconds'] / 60:.1f} idle minutes"
    return out


def disagreement(
    k: int,
    pred: int,
    rec: int,
    prompt: int,
    warm: bool,
    idle: float | None,
    dcp: bool | Callable[[], bool] = False,
    previous: int | None = None,
    hidden: int = 0,
    interrupted: bool | Callable[[], bool] = False,
    earlier: Sequence[int] | Callable[[], Sequence[int]] = (),
    tool_search: bool | Callable[[], bool] = False,
    fewer: tuple[int, float, float] | None | Callable[[], tuple[int, float, float] | None] = None,
    never_read: bool | Callable[[], bool] = False,
) -> str | None:
    """Why call ``k``'s recorded read ``rec`` differs from the predicted ``pred`` (None: it does
    not). ``earlier``: the prompts of the calls before the previous one, newest first (or what
    gives them: only the calls that get that far look them up);
    ``tool_search``: the previous answer called ``ToolSearch`` (:data:`TOOL_SEARCH_NOTE`); ``dcp``: the
    session ran the DCP plugin; ``interrupted``: an interruption marker came before the call;
    ``fewer``: the recorded prompt fell short of what the file explains (:func:`inspector.recon.flags.sent_fewer`:
    the shortfall, the recorded growth, the file's growth); ``never_read``: no call of the replay
    recorded a cache read (:data:`NO_READS`) (each may be what gives it, asked only when needed)."""
    if abs(pred - rec) <= max(DISAGREE_MIN, DISAGREE_SHARE * prompt):
        return None
    mins = f"{idle / 60:.1f} min idle" if idle is not None else "idle time unknown"
    if k == 0 and rec < pred:  # only Claude Code's first call is predicted to read (WARM_START)
        return (
            "the first call read less than the system prompt and tools Claude Code's sessions share: no "
            "session had used them within the cache's lifetime, or part of this session's fixed prefix "
            "(its CLAUDE.md, its project context) is not shared (claude-code #94417)"
        )
    if rec > pred:
        if k == 0:
            return "the cache was already warm (an earlier request with the same system prompt and tools)"
        if not warm:
            return f"the cache outlived the modelled lifetime ({mins})"
        if previous is not None and rec > previous and given(interrupted):
            return (
                "more was read than the previous call sent: the request the user interrupted just before "
                "(the agent's interruption marker is in the file; its usage is not) had written a longer prefix"
            )
        if previous is not None and rec > previous:
            return (
                "more was read than the previous call sent: a request not in this file (a retry, a side "
                "request, a sub-agent) had written a longer prefix"
            )
        return (
            "the provider kept more of the prefix than the model predicts (a change it did not count as one)"
            + (DCP_LARGER if given(dcp) else "")
        )
    if rec == 0 and given(never_read):
        return NO_READS
    if idle is not None and idle > 240:
        return f"the cache had expired sooner than modelled ({mins})"
    floor = bool(hidden) and abs(rec - hidden) <= 128  # only the prefix every request shares was read
    if (short := given(fewer)) is not None:
        return (_floor_read(hidden) + ": " if floor else "") + fewer_words(*short)
    if floor:
        return (
            f"{_floor_read(hidden, ', cached apart')}: {ENTRY_GONE} (evicted, or the request went to another "
            "cache server)" + (TOOL_SEARCH_NOTE if given(tool_search) else "")
        )
    back = older_prefix(rec, earlier)
    if back is not None:
        return (
            f"the provider read the prefix the prompt of {back} calls back left: {OLDER_COPY} (OpenAI "
            "routes requests across cache servers by the prompt's prefix; its cache is best-effort)"
        )
    if given(dcp):
        return DCP_CAUSE
    return (
        "the provider read less than the unchanged prefix: the prompt changed before the cached part in a way "
        "the file does not show (a system-prompt or tool change), or the cache was evicted or routed elsewhere"
    )


def _floor_read(hidden: int, more: str = "") -> str:
    """The words for a call that read only the ``hidden``-token prefix every request shares."""
    return (
        f"only the system prompt and tools were read (the {hidden:,}-token prefix every request of this agent "
        f"shares{more})"
    )


def given(v: Any) -> Any:
    """``v``, or what ``v`` gives when it is a function (a fact looked up only when it is needed)."""
    return v() if callable(v) else v


OLDER_SLACK = 1024
"""How far below an earlier prompt's end a read may stop and still be that prompt's cached prefix:
its uncached tail and the 128-token rounding (the shared OpenCode export: 204–1,020 tokens)."""


CACHED_MIN = 1024
"""The shortest prefix any modelled provider caches (OpenAI's minimum, Anthropic's least): a
read below it is no cached copy of an earlier prompt (:func:`older_prefix`)."""

NO_READS = (
    "no call of this replay's session recorded a cache read: its provider served none of these requests "
    "from the cache, or does not report it (caching off, or an endpoint that leaves the field at 0)"
)
"""Said of a call that read nothing where the model predicts a read, in a session none of whose
calls recorded a read: one cause for the whole session, rather than a cause per call."""


OLDER_MAX_BACK = 64
"""How many calls back :func:`older_prefix` looks (newest first). The shared sessions' older
copies were 2–23 calls back; the bound keeps the check linear in the session's length (a what-if
replay disagrees with the recorded reads at most calls)."""


def alive(earlier: Sequence[tuple[int, float | None]], t: float | None, ttl: float) -> list[int]:
    """The prompts of the last :data:`OLDER_MAX_BACK` calls of ``earlier`` (oldest first, each with
    when its cache was last used) still within ``ttl`` of ``t``, newest first."""
    return [
        p for p, used in reversed(earlier[-OLDER_MAX_BACK:]) if t is None or used is None or t - used <= ttl
    ]


def older_prefix(rec: int, earlier: Sequence[int] | Callable[[], Sequence[int]]) -> int | None:
    """How many calls back (2 = the one before the previous) a prompt ends where the read ``rec``
    stopped (within :data:`OLDER_SLACK` below its end), the newest such; None when none does.

    In the shared OpenCode + DCP export (gpt-5.5) 12 of the 43 calls whose read fell short of the
    previous prompt read, to within 204–1,020 tokens, what a call 2–23 calls earlier had sent:
    the cache that request reached held that older prompt, not the latest one. OpenAI's
    prompt-caching guide: requests are routed to a cache server by a hash of the prompt's first
    tokens (and ``prompt_cache_key``), overflow goes to other servers, and a cached prefix is
    best-effort. So these are provider-side, not changes to the prompt."""
    if rec < CACHED_MIN:  # no provider caches a prefix that short: nothing of an older prompt was read
        return None
    for back, p in enumerate(given(earlier), start=2):
        if 0 <= p - rec < OLDER_SLACK:
            return back
    return None
