"""What the session file says about each answer, read once per session as columns: its recorded
cache read, write and input, its input cost, when it was requested and used the cache, its
model and cache family, and the few facts the causes of a disagreement ask for (interruption
markers, tool searches, DCP, OpenCode's agent switches, the turns' first calls)."""

from __future__ import annotations

import weakref
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from itertools import chain, compress
from operator import add, attrgetter, itemgetter
from typing import Any

from ..session.answers import Answers, answers, read_answers
from ..session.models import (
    AssistantMessage,
    CustomMessageEntry,
    ImageContent,
    MessageEntry,
    OpaqueBlock,
    TextContent,
    ThinkingContent,
    ThinkingLevelChangeEntry,
    ToolCall,
    UserMessage,
)
from ..session.tree import Session
from .causes import TOOL_SEARCH, given, tool_loads
from .family import family_named
from .openai import drops_earlier_reasoning
from .prices import RateSums
from .timing import iso_times, output_rate, seconds, start_times, used_times


@dataclass(frozen=True)
class Facts:
    """What the session file says about each answer, read once per session."""

    calls: Mapping[
        int, tuple[str, int | None, int | None, int | None, float | None, float | None, float | None, str]
    ]
    """entry index → (family, recorded read, write, input, recorded input cost, request start, when
    the provider used the cache, model name or ""; times in s): see :func:`used_at`. Empty when
    :attr:`columns` holds them."""
    models: Mapping[int, Any]
    """entry index → the answering message (its provider and model choose the rule)."""
    rates: dict[Any, tuple[float | None, float | None, float | None]]
    """per model, and per ``(model, "long")`` for its long-context tier: recorded (input, read, write) rates."""
    marks: Sequence[int] | Callable[[], Sequence[int]] = ()
    """The entry indexes of the agents' interruption markers (:data:`INTERRUPTED`), or what finds
    them (a loaded session's are looked for when a call first asks :meth:`follows_interruption`)."""
    agent_switch: frozenset[int] = frozenset()
    """Answers given by another OpenCode agent than the previous answer (see :data:`AGENT_SWITCH`)."""
    content: Sequence[Any] = ()
    """Each answer's content (in file order, as :attr:`models`)."""
    called: dict[str, list[int]] | None = None
    """What :attr:`_called` says, when it was read already (a :class:`FactsReader` reads it as the
    answers pass, and keeps no content)."""
    columns: tuple[list[Any], ...] | None = None
    """The answers' entry indexes (increasing) and the eight columns of :attr:`calls`, in file
    order (a loaded session's facts; None for a :class:`FactsReader`'s, held in :attr:`calls`)."""
    tool_loads: Mapping[int, int] = field(default_factory=dict)
    """Answers that send the result of a Claude Code ``ToolSearch`` which loaded a deferred tool new
    to the session → that result's entry index (see :data:`TOOL_LOAD`)."""
    warm_start: bool = False
    """The first call reads the system prompt and tools from the cache the agent's other sessions
    keep warm (Claude Code: see :data:`WARM_START`)."""
    asked: Sequence[int] = ()
    """The entry indexes of the user messages and custom message entries (what the agent sends as
    the user's), in file order: a call after one starts a turn (:attr:`turn_starts`)."""
    tools: tuple[str, ...] = ()
    """The tools whose calls a cause asks about, for this session's agent (:data:`AGENT_TOOLS`)."""

    def picked(self, entries: list[int]) -> tuple[Sequence[Any], ...]:
        """The eight columns of :attr:`calls` at the answers ``entries`` (entry indexes), in that order."""
        cols = self.columns
        if cols is None:
            rows = list(map(self.calls.__getitem__, entries))
            return tuple(map(list, zip(*rows, strict=True))) if rows else ([],) * 8
        if entries == cols[0]:
            return cols[1:]
        at = list(map(self._position.__getitem__, entries))
        if len(at) < 2:
            return tuple([c[k] for k in at] for c in cols[1:])
        return tuple(map(itemgetter(*at), cols[1:]))

    @cached_property
    def _position(self) -> dict[int, int]:
        """Entry index → the answer's position in :attr:`columns`."""
        idx = self.columns[0] if self.columns is not None else ()
        return dict(zip(idx, range(len(idx)), strict=True))

    # What the answers' tool calls say: looked up only by the few calls that need it (it visits every
    # content block of the session), once.
    @cached_property
    def _called(self) -> dict[str, list[int]]:
        if self.called is not None:
            return self.called
        return _called(self.content, self.tools)

    @cached_property
    def dcp(self) -> bool:
        """The session ran the DCP plugin (an OpenCode answer calls its ``compress`` tool)."""
        return bool(self._called.get("compress"))

    @cached_property
    def tool_search(self) -> frozenset[int]:
        """Answers whose previous answer called Claude Code's ``ToolSearch`` (a deferred tool loaded:
        see :data:`TOOL_SEARCH_NOTE`)."""
        idx = list(self.models)
        return frozenset(idx[k + 1] for k in self._called.get(TOOL_SEARCH, ()) if k + 1 < len(idx))

    @cached_property
    def interrupted(self) -> frozenset[int]:
        """Answers preceded (since the previous answer) by an agent's interruption marker: a request
        was sent and cut off there, with no usage recorded (see :data:`INTERRUPTED`)."""
        idx = list(self.models)
        return frozenset(idx[k] for k in (bisect_right(idx, i) for i in given(self.marks)) if k < len(idx))

    @cached_property
    def turn_starts(self) -> frozenset[int]:
        """Answers preceded (since the previous answer) by a user message: the first call of a turn
        (asked only by a model that drops earlier turns' reasoning: :data:`REASONING`)."""
        idx = list(self.models)
        return frozenset(idx[k] for k in (bisect_right(idx, i) for i in self.asked) if k < len(idx))

    def follows_interruption(self, entry_index: int) -> bool:
        return entry_index in self.interrupted

    def uses_dcp(self) -> bool:
        return self.dcp

    def follows_tool_search(self, entry_index: int) -> bool:
        return entry_index in self.tool_search


AGENT_TOOLS = {"claude-code": (TOOL_SEARCH,), "opencode": ("compress",)}
"""Per agent, the tools whose calls a cause of a disagreement asks about: Claude Code's
``ToolSearch`` (:data:`~inspector.cache.causes.TOOL_SEARCH_NOTE`) and the DCP plugin's
``compress``, an OpenCode plugin (:data:`~inspector.cache.causes.DCP_CAUSE`). A tool of the same
name in another agent's session is not theirs, and its calls are not looked for."""


INTERRUPTED = ("[Request interrupted by user", "<turn_aborted>")
"""Markers the agents write when the user stops a request: Claude Code's user message
``[Request interrupted by user]`` (``… for tool use]``), Codex's ``<turn_aborted>`` context item."""


def _interrupts(e: Any) -> bool:
    if isinstance(e, MessageEntry):
        if not isinstance(e.message, UserMessage):
            return False
        content = e.message.content
    elif isinstance(e, CustomMessageEntry):
        content = e.content
    else:
        return False
    if isinstance(content, str):
        return content.startswith(INTERRUPTED)
    return any(isinstance(t := getattr(b, "text", None), str) and t.startswith(INTERRUPTED) for b in content)


def _markers(entries: Sequence[Any], asked: Sequence[int]) -> list[int]:
    """The entries at ``asked`` (the user messages and custom message entries) that are an agent's
    interruption marker."""
    return [i for i in asked if _interrupts(entries[i])]


_FACTS: weakref.WeakKeyDictionary[Session, Facts] = weakref.WeakKeyDictionary()


def session_facts(session: Session) -> Facts:
    """Every answer's recorded usage, cost, time and cache family, and the session's recorded
    rates (:func:`inspector.cache.prices.recorded_rates`), read column by column over the answers
    (memoised per session: a sweep or the app's reruns read the file's usage once). The usage and
    dollars come from :func:`inspector.session.answers.answers`, which the replay's pricing of
    the same session has usually read already."""
    hit = _FACTS.get(session)
    if hit is not None:
        return hit
    entries = session.entries
    got = answers(session)
    cols = _Columns(agents=session.format == "opencode")
    contents = cols.add(got.index, got, [entries[i] for i in got.index])
    marks = partial(_markers, entries, got.asked)
    facts = cols.facts(
        marks,
        _ByEntry(array("q", got.index), got.messages.__getitem__),
        contents,
        asked=got.asked,
        tools=AGENT_TOOLS.get(session.format, ()),
    )
    if session.format == "claude-code":
        facts = replace(facts, tool_loads=tool_loads(entries, got.index), warm_start=True)
    _FACTS[session] = facts
    return facts


_LEVELS: weakref.WeakKeyDictionary[Session, list[tuple[int, str]]] = weakref.WeakKeyDictionary()


def thinking_changes(
    session: Session, path: Sequence[int], calls: Sequence[int] | None = None
) -> dict[int, int]:
    """The answers (entry indexes ``calls``, in order on the branch ``path``, which runs forward in
    the file; by default every answer on it) whose thinking level differs from the previous
    answer's: answer → the last level change before it. The level is the session's
    ``thinking_level_change`` entries on the branch (pi), from the header's level where it gives
    one; an answer before any known level is no change. A session without a change of level costs
    one look at its entries' classes, remembered."""
    levels = _LEVELS.get(session)
    if levels is None:
        entries = session.entries
        levels = _LEVELS[session] = [
            (i, entries[i].thinkingLevel or "")  # type: ignore[union-attr]
            for i, k in enumerate(map(type, entries))
            if k is ThinkingLevelChangeEntry
        ]
    if not levels:
        return {}
    on_path = set(path)
    on = [(i, level) for i, level in levels if i in on_path]
    if calls is None:
        calls = [i for i in answers(session).index if i in on_path]
    extra = (session.header.__pydantic_extra__ or {}) if session.header is not None else {}
    level = extra.get("thinkingLevel") if isinstance(extra.get("thinkingLevel"), str) else None
    out: dict[int, int] = {}
    at = 0
    for a in calls:
        before, last = level, None
        while at < len(on) and on[at][0] < a:
            last, level = on[at]
            at += 1
        if last is not None and before is not None and level != before:
            out[a] = last
    return out


def remember_facts(session: Session, facts: Facts) -> None:
    """Give ``session`` the facts read from its file elsewhere (a skeleton, whose answers are
    absent: :mod:`inspector.replay.streamed` reads them with a :class:`FactsReader`)."""
    _FACTS[session] = facts


_ANSWER_FIELDS = attrgetter("timestamp", "provider", "api", "model", "__pydantic_extra__", "content")
"""What the cache model reads of each answer besides its usage (each message visited once: the
cost is in reaching them); of its entry, only the entry's ``timestamp``."""
_FIELDS_NO_AGENT = attrgetter("timestamp", "provider", "api", "model", "content")
"""The same, for a file no agent field is read from (only OpenCode's answers name their agent)."""
_STAMP = attrgetter("timestamp")


class _Columns:
    """The answers' columns :func:`session_facts` reads, added a run of answers at a time (all of
    them for a loaded session; a chunk at a time for a :class:`FactsReader`)."""

    def __init__(self, agents: bool = True) -> None:
        self.agents = agents
        """Read the agent that answered (an OpenCode file's: :func:`_agent_switches`)."""
        self.idx: list[int] = []
        self.families: list[str] = []
        self.ints: tuple[list[Any], list[Any], list[Any]] = ([], [], [])  # recorded read, write, input
        self.costs: list[float | None] = []
        self.outputs: list[float] = []
        self.starts: list[float | None] = []
        self.ends: list[float | None] = []
        self.names: list[str] = []
        self.sums = RateSums()
        self.switches: set[int] = set()
        self.agent: Any = None  # the agent the last answer named (:func:`_agent_switches`)

    def add(self, idx: list[int], got: Answers, entries: Sequence[Any]) -> list[Any]:
        """Answers ``got`` (of the entries ``entries``, at entry indexes ``idx``), after those added
        before; returns their contents."""
        num = got.numbers()
        stamps = list(map(_STAMP, entries))
        if not entries:
            started, providers, apis, models, extras, contents = ([],) * 6
        elif self.agents:
            started, providers, apis, models, extras, contents = map(
                list, zip(*map(_ANSWER_FIELDS, got.messages), strict=True)
            )
        else:
            started, providers, apis, models, contents = map(
                list, zip(*map(_FIELDS_NO_AGENT, got.messages), strict=True)
            )
        inputs, reads, writes = num.counts
        names = [x or "" for x in models]
        self.sums.add_all(names, num.tokens, num.dollars, list(compress(range(len(names)), got.costed)))
        self.idx += idx
        self.families += _families((providers, apis, models))
        for col, part in zip(self.ints, (reads, writes, inputs), strict=True):
            col += part
        self.costs += _summed(num.dollars, num.paid)
        self.outputs += num.output
        self.starts += start_times(started)
        self.ends += iso_times(stamps)
        self.names += names
        if self.agents:
            switched, self.agent = _agent_switches(idx, extras, self.agent)
            self.switches |= switched
        return contents

    def facts(
        self,
        marks: Sequence[int] | Callable[[], Sequence[int]],
        models: Mapping[int, Any],
        content: Sequence[Any] = (),
        called: dict[str, list[int]] | None = None,
        compact: bool = False,
        asked: Sequence[int] = (),
        tools: tuple[str, ...] = (),
    ) -> Facts:
        """The facts of every answer added (``marks``: the interruption markers' entry indexes, or
        what finds them;
        ``compact``: :attr:`Facts.calls` as columns, for a file too large to hold a tuple per answer)."""
        starts, outputs, idx = self.starts, self.outputs, self.idx
        ends = [
            t if t is not None and (e is None or e < t) else e for t, e in zip(starts, self.ends, strict=True)
        ]
        rate = output_rate(zip(starts, ends, outputs, strict=True))
        used = used_times(starts, ends, outputs, rate)
        floats = (self.costs, seconds(starts), seconds(used))
        calls: Mapping[int, Any] = {}
        if compact:
            calls, columns = _calls(array("q", idx), self.families, self.ints, floats, self.names), None
        else:
            columns = (idx, self.families, *self.ints, *floats, self.names)
        return Facts(
            calls,
            models,
            self.sums.rates(),
            marks,
            frozenset(self.switches),
            content,
            called,
            columns,
            asked=asked,
            tools=tools,
        )


class FactsReader:
    """:func:`session_facts` from the entries given one at a time in file order (a streamed replay:
    :mod:`inspector.replay.streamed`), the answers turned into columns a chunk at a time. No answer
    is kept: in :attr:`Facts.models` a shared stand-in with its provider, API and model, and
    content or none, is all the cache loop reads; what their tool calls say is read as they pass."""

    def __init__(self, chunk: int = 2_000) -> None:
        self.chunk = chunk
        self.cols = _Columns(agents=False)  # a pi file: its answers name no agent
        self.marks: list[int] = []
        self.asked: list[int] = []
        self.called: dict[str, list[int]] = {}  # a pi file: none of AGENT_TOOLS' tools is looked for
        self._idx: list[int] = []
        self._entries: list[Any] = []
        self._models: list[AssistantMessage] = []
        self._keys: dict[tuple[Any, ...], AssistantMessage] = {}

    def add(self, i: int, e: Any) -> None:
        """Entry ``i`` of the file: an answer joins the pending chunk, an interruption marker is noted."""
        if isinstance(e, MessageEntry):
            m = e.message
            if isinstance(m, AssistantMessage):
                self._idx.append(i)
                self._entries.append(e)
                if len(self._entries) >= self.chunk:
                    self._flush()
            elif isinstance(m, UserMessage):
                self.asked.append(i)
                if _interrupts(e):
                    self.marks.append(i)
        elif isinstance(e, CustomMessageEntry):
            self.asked.append(i)
            if _interrupts(e):
                self.marks.append(i)

    def _flush(self) -> None:
        entries, base = self._entries, len(self.cols.idx)
        if not entries:
            return
        contents = self.cols.add(self._idx, read_answers(entries), entries)
        for name, ks in _called(contents, tuple(self.called)).items():
            self.called[name] += [base + k for k in ks]
        self._models += [self._key(e.message) for e in entries]
        self._idx, self._entries = [], []

    def _key(self, m: AssistantMessage) -> AssistantMessage:
        """What the cache loop reads of an answer (:func:`rule_for`, ``m.model``, ``m.content``),
        one shared stand-in per provider, API, model, whether it has content and, for a model that
        drops earlier turns' reasoning, whether it reasoned (:func:`reasoned`)."""
        k = (
            m.provider,
            m.api,
            m.model,
            not m.content,
            drops_earlier_reasoning(m.model, m.api) and reasoned(m),
        )
        got = self._keys.get(k)
        if got is None:
            content: list[Any] = [] if k[3] else [_THOUGHT] if k[4] else [_SOME]
            got = self._keys[k] = AssistantMessage.model_construct(
                provider=m.provider, api=m.api, model=m.model, content=content
            )
        return got

    def facts(self) -> Facts:
        self._flush()
        idx = array("q", self.cols.idx)
        return self.cols.facts(
            self.marks,
            _ByEntry(idx, self._models.__getitem__),
            called=self.called,
            compact=True,
            asked=self.asked,
        )


class _ByEntry(Mapping[int, Any]):
    """Entry index → a value of that answer, as a dict would hold it, in a fraction of the memory
    (a dict of 667,000 answers takes ~100 bytes each): the answers' entry indexes, increasing, in
    an array, each value read by its position (``get``)."""

    __slots__ = ("_get", "_idx")

    def __init__(self, idx: array[int], get: Callable[[int], Any]) -> None:
        self._idx, self._get = idx, get

    def __getitem__(self, ei: int) -> Any:
        k = bisect_left(self._idx, ei)
        if k == len(self._idx) or self._idx[k] != ei:
            raise KeyError(ei)
        return self._get(k)

    def __iter__(self) -> Iterator[int]:
        return iter(self._idx)

    def __len__(self) -> int:
        return len(self._idx)


def _optional(code: str, col: Sequence[Any]) -> tuple[array[Any], bytearray]:
    """A column of numbers or None as an array (None stored as 0) and a byte per value: is it None?"""
    return array(code, [0 if v is None else v for v in col]), bytearray(v is None for v in col)


def _calls(
    idx: array[int],
    families: list[str],
    ints: tuple[list[Any], ...],
    floats: tuple[list[Any], ...],
    names: list[str],
) -> Mapping[int, tuple[Any, ...]]:
    """:attr:`Facts.calls` as columns (:class:`_ByEntry`): each answer's tuple made again when
    read (equal to the one a dict would hold); a dict where an integer is beyond 64 bits."""
    try:
        cols = [_optional("q", c) for c in ints] + [_optional("d", c) for c in floats]
    except OverflowError:
        cols = []
    if not cols:
        return dict(zip(idx, zip(families, *ints, *floats, names, strict=True), strict=True))

    def get(k: int) -> tuple[Any, ...]:
        return (families[k], *(None if none[k] else values[k] for values, none in cols), names[k])

    return _ByEntry(idx, get)


_SOME = TextContent.model_construct(type="text", text="")
"""The content of a stand-in answer that had content (:meth:`FactsReader._key`)."""
_THOUGHT = ThinkingContent.model_construct(type="thinking", thinking="")
"""The content of a stand-in answer that reasoned (:meth:`FactsReader._key`)."""


def reasoned(m: Any) -> bool:
    """Whether answer ``m`` holds reasoning (a thinking block: what the agent sends back)."""
    content = getattr(m, "content", None)
    return isinstance(content, list) and any(type(b) is ThinkingContent for b in content)


def _families(who: tuple[list[Any], list[Any], list[Any]]) -> list[str]:
    """Each answer's cache family (:func:`family_of`) from its provider, API and model columns,
    once per distinct three (per model name when every answer has the same provider and API)."""
    providers, apis, models = who
    if len(dict.fromkeys(providers)) == 1 and len(dict.fromkeys(apis)) == 1:
        p, a = providers[0], apis[0]
        by_model = {m: family_named(p, a, m) for m in dict.fromkeys(models)}
        return list(map(by_model.__getitem__, models))
    rows = list(zip(*who, strict=True))
    memo = {w: family_named(*w) for w in dict.fromkeys(rows)}
    return list(map(memo.__getitem__, rows))


def _summed(cols: tuple[list[float], list[float], list[float]], paid: list[bool]) -> list[float | None]:
    """Each answer's recorded input cost (the sum of its three dollar values; None where unpaid)."""
    if all(paid):
        return list(map(add, map(add, *cols[:2]), cols[2]))
    return [d0 + d1 + d2 if p else None for d0, d1, d2, p in zip(*cols, paid, strict=True)]


_PLAIN_BLOCKS = frozenset({TextContent, ThinkingContent, ImageContent, ToolCall})


def _called(contents: Sequence[Any], names: tuple[str, ...]) -> dict[str, list[int]]:
    """Per tool name, the positions (in ``contents``, each answer's content) of the answers that
    call it (:func:`calls_tool`), each answer once, in order."""
    out: dict[str, list[int]] = {n: [] for n in names}
    if not names:  # an agent with none of these tools (AGENT_TOOLS): nothing to read
        return out
    wanted = frozenset(names)
    blocks = list(chain.from_iterable(contents))
    if set(map(type, blocks)) <= _PLAIN_BLOCKS and wanted.isdisjoint(
        [b.name for b in blocks if type(b) is ToolCall]
    ):
        return out  # no block names a wanted tool (the usual session)
    found = [
        (k, b)
        for k, content in enumerate(contents)
        for b in content
        if (b.name in wanted if type(b) is ToolCall else isinstance(b, (ToolCall, OpaqueBlock)))
    ]
    for k, b in found:
        name = b.name if isinstance(b, ToolCall) else getattr(b, "name", None)
        got = out.get(name) if isinstance(name, str) else None
        if got is not None and (not got or got[-1] != k):
            got.append(k)
    return out


def _agent_switches(idx: list[int], extras: list[Any], last: Any = None) -> tuple[set[int], Any]:
    """Answers given by another agent (the message's ``agent``, an OpenCode extra: ``extras``, each
    answer's extra fields) than the last answer that named one (``last``: the agent named before
    these answers); and the last agent named."""
    out: set[int] = set()
    named = [(i, a) for i, e in zip(idx, extras, strict=True) if e and isinstance(a := e.get("agent"), str)]
    for i, agent in named:
        if isinstance(last, str) and agent != last:
            out.add(i)
        last = agent
    return out, last
