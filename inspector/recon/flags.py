"""Where the offset between the recorded prompt and the rebuilt context jumps, and why.

Between two consecutive calls the offset (recorded − calibrated rebuilt context) should not move:
both grow by what was appended. A move of at least the threshold
(:func:`threshold`: 1.5 % of the largest recorded prompt, at least 2,000 tokens) flags the later
call with one cause, tried in this order:

``mid-session start``
    the first call of a file that continues an earlier one (its first entry's parent is not in
    the file): the history before it is missing. Its recorded prompt becomes the baseline.
``compaction``
    a compaction we replay took effect at this call (the agent's summary and what it kept
    differ from what it sent: re-injected files, the summary's own wrapping).
``prune``
    a recorded prune took effect (OpenCode's cleared outputs, Claude Code's microcompact, a DCP
    compress).
``tokenizer drift``
    the text appended since the previous call counts differently than the session's fitted
    ratio says: the move is at most half the calibrated size of what was appended.
``context change not in the file``
    nothing in the file explains it: an extension or the transport changed what was sent (the
    cache read collapsing says the provider saw a different prefix), or a server-side tool
    (web search) added results the file does not store. A later fall about as large as what the
    searches flagged since the last compaction added is said to be those results gone
    (:func:`_searches_gone`); a fall whose shorter prompt was read from a breakpoint cache at a
    length no recorded call had cached, to have been sent first by a request the file does not
    record (:func:`_sent_first`).

A flagged move is carried to every later call (the departure), so one unexplained change does
not count as a miss at every call after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..replay.results import Event
from ..session.models import AssistantMessage, ToolCall

CAUSES = ("mid-session start", "compaction", "prune", "tokenizer drift", "context change not in the file")
UNEXPLAINED = CAUSES[-1]
DRIFT_SHARE = 0.5
SERVER_TOOLS = frozenset({"web_search", "web_search_call", "WebSearch"})


@dataclass(frozen=True)
class Flag:
    step: int
    entry_index: int
    cause: str
    tokens: int
    """The jump: positive, the agent sent more than the file explains; negative, fewer."""
    detail: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"step": self.step, "entryIndex": self.entry_index, "cause": self.cause, "tokens": self.tokens}


@dataclass(frozen=True)
class Observed:
    """One compared call, as the flagging needs it."""

    step: int
    entry_index: int
    recorded: float
    sent: int
    calibrated: float
    events: tuple[Event, ...]
    """Events of the replay steps since the previous compared call (this one included)."""
    previous_answer: Any
    cache_read: float
    reinjected: int = 0
    """Tokens of Claude Code's post-compaction re-injection this call's count estimates."""
    answer: Any = None
    """This call's own answer (a hosted tool it ran added its results to this call's usage)."""
    dcp: tuple[tuple[int, int, int | None], ...] = ()
    """Per DCP compress taking effect at this call whose notification the export holds: (the
    summaries' tokens DCP's notification gives, the tokens of those the export records, how many
    more than the export DCP's notifications had counted for the blocks it replaced, None when
    unknown)."""


def threshold(max_recorded: float) -> int:
    return max(2_000, round(0.015 * max_recorded))


END_BREAKPOINT = frozenset({"pi", "claude-code"})
"""Agents whose requests mark the conversation for caching only at its end (pi: the last user
message, pi-ai ``providers/anthropic.ts``; Claude Code: one marker per request), so a call can read
only up to where an earlier request ended (:func:`_sent_first`). OpenCode also marks the message
before the last, which a later call may read up to."""


def flag_calls(
    calls: Sequence[Observed], limit: int, mid_session: bool, end_breakpoint: bool = False
) -> tuple[list[Flag | None], list[float], list[float]]:
    """Each call's flag (or None), the departure carried at it, and the part of that departure no
    entry explains (the *context changes not in the file*). A compaction rebuilds the context
    from what the agent kept, so the departures carried before it end there: the offset is then
    expected back at its base level (the first calls'), and the compaction is flagged only when
    it is not. ``end_breakpoint``: the agent caches the conversation only at each request's end
    (:data:`END_BREAKPOINT`)."""
    flags: list[Flag | None] = []
    carried: list[float] = []
    unexplained: list[float] = []
    departure = odd = 0.0
    base = None if mid_session else _base(calls)
    searched: list[Flag] = []  # web search results flagged since the last compaction (_searches_gone)
    wrote: set[int] = set()  # where the earlier calls' cached prefixes end (_sent_first)
    for i, c in enumerate(calls):
        offset = c.recorded - c.calibrated
        compacted = any(e.type == "compaction" for e in c.events)
        if i == 0:
            flag = (
                Flag(
                    c.step,
                    c.entry_index,
                    "mid-session start",
                    round(offset),
                    "the file continues an earlier session: its first recorded prompt is the baseline",
                )
                if mid_session
                else None
            )
            departure = offset if mid_session else 0.0
        elif base is not None and compacted:
            residual = offset - base
            flag = classify(c, calls[i - 1], residual) if abs(residual) >= limit else None
            departure, odd = (residual if flag is not None else 0.0), 0.0
        else:
            p = calls[i - 1]
            jump = offset - departure - (p.recorded - p.calibrated - carried[-1])
            flag = classify(c, p, jump) if abs(jump) >= limit else None
            departure += jump if flag is not None else 0.0
            odd += jump if flag is not None and flag.cause == UNEXPLAINED else 0.0
        if compacted:
            searched = []  # the context was rebuilt: what the searches added is gone with it
        if flag is not None and flag.cause == UNEXPLAINED:
            if flag.tokens > 0 and (_server_tools(c.answer) or _server_tools(c.previous_answer)):
                searched.append(flag)
            elif flag.tokens < 0 and (gone := _searches_gone(searched, flag)) is not None:
                flag, searched = gone, []
            elif (
                end_breakpoint
                and flag.tokens < 0
                and (first := _sent_first(wrote, c, calls[i - 1], flag, limit)) is not None
            ):
                flag = first
        if (end := _cached_end(c)) is not None:
            wrote.add(end)
        flags.append(flag)
        carried.append(departure)
        unexplained.append(odd)
    return flags, carried, unexplained


UNSEEN_SHARE = 0.5
"""A prompt short of what the file explains by less than this share of what the file appended is
the tokenizer's drift."""


def sent_fewer(recorded_growth: float, file_growth: float, limit: int) -> int:
    """By how many tokens a call's recorded prompt fell short of what the file explains (0: within
    the noise): it grew by ``recorded_growth`` since the previous call where the file appended
    ``file_growth`` (in the same tokens). Flagged from ``limit`` (:func:`threshold` of the largest
    recorded prompt, as the check flags) and :data:`UNSEEN_SHARE` of what was appended: the cheap
    form of the check's ``context change not in the file`` for a call that sent fewer tokens, used
    where the cache read collapsed (the cache model's disagreements, the doctor's breaks)."""
    short = file_growth - recorded_growth
    return round(short) if short >= max(limit, UNSEEN_SHARE * file_growth) else 0


def fewer_words(short: int, recorded_growth: float, file_growth: float) -> str:
    """:func:`sent_fewer`'s finding in words."""
    grew = f"grew by {recorded_growth:,.0f}" if recorded_growth >= 0 else f"shrank by {-recorded_growth:,.0f}"
    adds = f"adds {file_growth:,.0f}" if file_growth >= 0 else f"removes {-file_growth:,.0f}"
    return (
        f"the prompt was about {short / 1000:.0f}k tokens smaller than the file explains (it {grew} tokens "
        f"where the file {adds}): what was sent differed from the file in a way it does "
        "not record (an extension, the transport, or earlier reasoning the provider no longer counts; "
        "`inspector check` flags it), so the provider saw a different prefix"
    )


def _base(calls: Sequence[Observed], n: int = 5) -> float | None:
    """The offset's level at the start: the median of the first calls' offsets."""
    first = sorted(c.recorded - c.calibrated for c in calls[:n])
    return first[len(first) // 2] if first else None


def classify(c: Observed, prev: Observed, jump: float) -> Flag:
    kinds = {e.type for e in c.events}
    appended = c.calibrated - prev.calibrated
    n = round(jump)
    if "compaction" in kinds:
        note = (
            (
                f"; the files Claude Code attaches again after it are estimated from their last reads "
                f"({c.reinjected:,} tokens)"
            )
            if c.reinjected
            else ""
        )
        return Flag(
            c.step,
            c.entry_index,
            "compaction",
            n,
            "a recorded compaction took effect here, and the context "
            "after it differs from the one rebuilt (summary, kept messages)" + note,
        )
    if kinds & {"pruned", "unpruned"}:
        return Flag(c.step, c.entry_index, "prune", n, "a recorded prune took effect here" + _dcp_note(c))
    if appended > 0 and abs(jump) <= DRIFT_SHARE * appended:
        return Flag(
            c.step,
            c.entry_index,
            "tokenizer drift",
            n,
            f"the {round(appended):,} tokens appended count differently than this session's fitted ratio",
        )
    return Flag(c.step, c.entry_index, UNEXPLAINED, n, _unexplained(c, prev, jump))


def _dcp_note(c: Observed) -> str:
    """What DCP's own notification says of the summaries a compress at this call sent, when it
    counts more than the export holds (DCP sent content the export does not record)."""
    told = sum(t for t, _, _ in c.dcp)
    held = sum(h for _, h, _ in c.dcp)
    if not c.dcp or told - held < 1_000:
        return ""
    replaced = [r for _, _, r in c.dcp]
    net = (
        f" ({(told - held - sum(replaced)) / 1000:.0f}k more than the blocks it replaced had)"  # type: ignore[arg-type]
        if None not in replaced and any(replaced)
        else ""
    )
    return (
        f"; DCP's own notification counts the summary it sent at {told / 1000:.1f}k tokens (Anthropic's "
        f"tokenizer), the export's compress call holds {held / 1000:.1f}k: DCP sent about "
        f"{(told - held) / 1000:.0f}k tokens more than the export records{net}"
    )


def _unexplained(c: Observed, prev: Observed, jump: float) -> str:
    amount = f"about {abs(jump) / 1000:.0f}k" if abs(jump) >= 1000 else f"{abs(round(jump))}"
    if jump > 0 and (_server_tools(c.answer) or _server_tools(c.previous_answer)):
        which = "this call" if _server_tools(c.answer) else "the call before"
        return (
            f"the agent sent {amount} more tokens than this file explains (a server-side tool, web search, "
            f"in {which} added results the file does not store)"
        )
    text = (
        f"the agent sent {amount} {'fewer' if jump < 0 else 'more'} tokens than this file explains "
        "(an extension or the transport changed the context)"
    )
    if prev.cache_read > 0 and c.cache_read < 0.5 * prev.recorded:
        text += "; the cache read collapsed: the provider saw a different prefix"
    return text


SEARCHES_GONE = 0.25
"""A fall within this share of what earlier web searches added is said to be their results."""


def _searches_gone(searched: Sequence[Flag], flag: Flag) -> Flag | None:
    """``flag`` (the agent sent fewer tokens than the file explains) with the likely reason, when
    it is about as large as what the web searches flagged since the last compaction had added
    (within :data:`SEARCHES_GONE`): the provider no longer had their results, which the file
    never held (seen in a Codex rollout, 888ba8: about 78k tokens of searches, then 69k fewer at
    the first call after an interrupted turn)."""
    added = sum(f.tokens for f in searched)
    if not added or abs(abs(flag.tokens) - added) > SEARCHES_GONE * added:
        return None
    steps = ", ".join(str(f.step) for f in searched)
    return replace(
        flag,
        detail=f"{flag.detail}; about as much as the web search results flagged at step(s) {steps} had "
        f"added ({added / 1000:.0f}k tokens): likely the provider no longer had them (the file never held "
        "them)",
    )


def _cached_end(c: Observed) -> int | None:
    """Where the prefix ``c``'s provider cached ends (cache read + cache write), for a provider that
    reports its cache writes: one that caches at the breakpoints a request sets (Anthropic), so a
    later call can read only up to where an earlier request's breakpoint wrote. None when the call
    records no write."""
    usage = getattr(c.answer, "usage", None)
    write = getattr(usage, "cacheWrite", 0)
    if not isinstance(write, int | float) or not 0 < write < 1e12:
        return None
    return round(c.cache_read + write)


def _sent_first(wrote: set[int], c: Observed, prev: Observed, flag: Flag, limit: int) -> Flag | None:
    """``flag`` (the agent sent fewer tokens than the file explains) with what the cache read shows,
    when the provider caches at breakpoints (the session records cache writes: ``wrote`` holds
    where the earlier calls' cached prefixes end) and this call read its shorter prompt from the
    cache but at most the content appended since the previous call (within the check's ``limit``),
    at a length no earlier call had cached: a request the file does not record had sent this shorter context first.
    Seen in a Claude Code transcript (entireio b0dc55, call 29: 44k fewer tokens, all but 18 of
    the 95,864 read from the cache); its other calls show such requests at every new prompt, whose
    read covers the previous answer that no recorded request had sent."""
    from ..cache.family import family_of  # here: the cache package reads this module as it loads

    if family_of(c.answer) != "anthropic":  # OpenAI reads any prefix it processed, in 128-token steps
        return None
    read = round(c.cache_read)
    uncached = c.recorded - read
    appended = max(0.0, c.calibrated - prev.calibrated)
    if not wrote or read <= 0 or read in wrote or uncached > appended + limit:
        return None
    return replace(
        flag,
        detail=f"the agent sent about {abs(flag.tokens) / 1000:.0f}k fewer tokens than this file explains, "
        f"and the provider read all but {max(0, round(uncached)):,} tokens of this shorter prompt from its "
        "cache, a prefix no earlier call in the file had cached: a request the file does not record (the "
        "agent's own side request, or an extension's) had sent this shorter context first, so the change "
        "was made before this call",
    )


def _server_tools(m: Any) -> bool:
    return isinstance(m, AssistantMessage) and any(
        isinstance(b, ToolCall) and b.name in SERVER_TOOLS for b in m.content
    )
