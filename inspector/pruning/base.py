"""The pruning interface every strategy implements, and the helpers they share.

A strategy sees the context of one model call (``ContextMessage``s, oldest first), its settings,
whatever it decided at earlier calls (``state``, for strategies that persist) and facts about the
call (:class:`CallInfo`). It returns what the model receives instead: a :class:`Decision` per
input message (kept, pruned = replaced by a marker, or dropped), the new message list, stats
and events. Strategies are pure: inputs are never mutated, the session file is never touched.

Token figures in decisions and stats are in the caller's counter (``pi`` or ``tiktoken``);
a strategy compares its thresholds in its own source's estimate (OpenCode ``round(len/4)``,
pi ``estimateTokens``), which its module docstring names. :class:`Plan` counts each message at
most once per call, so a strategy is O(n) in counter calls even with an uncached counter.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from ..context import ContextMessage
from ..jsjson import utf16_len
from ..session.models import AssistantMessage, BashExecutionMessage, TextContent, ToolCall, ToolResultMessage
from ..tokens import estimate_tokens
from .runner import FullRunner, Runner

Action = Literal["kept", "pruned", "dropped"]


@dataclass(frozen=True)
class CallInfo:
    step: int
    """0-based index of the model call on the branch."""
    new_prompt: bool
    """A real user message arrived since the previous call (the previous agent run ended)."""
    context_window: int
    context_tokens: int | None
    """Tokens of the context at this call (the caller's counter), before pruning."""
    force: bool = False
    """pi-context-pruning's ``/prune``: run once, ignoring the minimum."""
    time_ms: float | None = None
    """When the call was made, if the session says (the recorded answer's timestamp, ms)."""


@dataclass(frozen=True)
class Decision:
    position: int
    entry_index: int | None
    role: str
    tool_name: str | None
    action: Action
    tokens_before: int
    tokens_after: int
    marker: str | None
    reason: str


@dataclass(frozen=True)
class PruneStats:
    tokens_before: int
    tokens_after: int
    tokens_scanned: int
    tokens_protected: int
    tokens_pruned: int
    items_pruned: int
    items_dropped: int

    def as_dict(self) -> dict[str, int]:
        return {
            "tokensBefore": self.tokens_before,
            "tokensAfter": self.tokens_after,
            "tokensScanned": self.tokens_scanned,
            "tokensProtected": self.tokens_protected,
            "prunedTokens": self.tokens_pruned,
            "prunedItems": self.items_pruned,
            "droppedItems": self.items_dropped,
        }


@dataclass(frozen=True)
class PruneResult:
    messages: tuple[ContextMessage, ...]
    decisions: tuple[Decision, ...]
    stats: PruneStats
    state: Any = None
    events: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()


class Strategy:
    """Base class: subclasses set the class attributes and implement :meth:`apply`."""

    name: ClassVar[str]
    title: ClassVar[str]
    source: ClassVar[str]
    description: ClassVar[str]
    verified: ClassVar[bool] = True
    unverified_notes: ClassVar[str] = ""
    Settings: ClassVar[type[BaseModel]]

    def apply(
        self,
        messages: Sequence[ContextMessage],
        settings: BaseModel,
        state: Any,
        call: CallInfo,
        counter: Any,
    ) -> PruneResult:
        raise NotImplementedError

    def runner(self, settings: BaseModel, counter: Any) -> Runner:
        """What a replay calls at every model call: by default ``apply`` on the whole context;
        a strategy whose rule allows it returns an incremental runner that decides the same."""
        return FullRunner(self, settings, counter)

    def info(self) -> dict[str, Any]:
        """Name, source, description, verification and each setting's default, bounds and help."""
        settings: dict[str, Any] = {}
        for k, f in self.Settings.model_fields.items():
            lo, hi = field_bounds(f)
            default = list(f.default) if isinstance(f.default, tuple) else f.default
            settings[k] = {"default": default, "min": lo, "max": hi, "help": f.description}
        return {
            "name": self.name,
            "title": self.title,
            "source": self.source,
            "description": self.description,
            "verified": self.verified,
            "unverifiedNotes": self.unverified_notes,
            "settings": settings,
        }


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def js_round(x: float) -> int:
    """JavaScript's ``Math.round`` (halves round up)."""
    return math.floor(x + 0.5)


def field_bounds(field: Any) -> tuple[Any, Any]:
    """(lower, upper) bounds of a pydantic field from its ``ge``/``gt``/``le``/``lt`` metadata."""
    lo = hi = None
    for m in field.metadata:
        for name in ("ge", "gt"):
            if getattr(m, name, None) is not None:
                lo = getattr(m, name)
        for name in ("le", "lt"):
            if getattr(m, name, None) is not None:
                hi = getattr(m, name)
    return lo, hi


def result_text(m: ToolResultMessage) -> str:
    c = m.content
    if isinstance(c, str):
        return c
    return "".join(b.text for b in c if isinstance(b, TextContent))


class IdMemo:
    """Results of a pure function of an immutable object, keyed by the object's ``id`` (the
    object is kept alongside, so a recycled id never hits). Bounded: cleared when full.

    A replay calls a strategy once per model call over mostly the same message objects; this
    lets a strategy reuse a replacement message (and so the replay's per-object token cache)
    or a tool-call signature from one call to the next."""

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = limit
        self._d: dict[Any, tuple[Any, Any]] = {}

    def get(self, obj: Any, key: Any, make: Any) -> Any:
        k = (id(obj), key)
        hit = self._d.get(k)
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = make()
        if len(self._d) >= self.limit:
            self._d.clear()
        self._d[k] = (obj, value)
        return value


_GROWING = threading.Lock()


class GrowingSet:
    """An immutable set of entry indexes that only grows, sharing its storage with the sets it
    grew from. A persistent strategy's state (the outputs it cleared) is kept per model call by
    the replay; as frozensets that is O(calls × cleared) memory (370 MB for one replay of a 50k
    entry session that never compacts). Here ``s | more`` appends to a log every version shares
    and a version is a length of it; only growing a set that is not the newest version copies.
    Behaves as a frozenset for ``in``, ``len``, iteration, ``|``, ``-`` and equality."""

    __slots__ = ("_log", "_pos", "_n")

    def __init__(self, items: Any = ()) -> None:
        self._log: list[int] = []
        self._pos: dict[int, int] = {}
        for e in items:
            if e not in self._pos:
                self._pos[e] = len(self._log)
                self._log.append(e)
        self._n = len(self._log)

    @classmethod
    def _version(cls, log: list[int], pos: dict[int, int], n: int) -> GrowingSet:
        new = cls.__new__(cls)
        new._log, new._pos, new._n = log, pos, n
        return new

    def __contains__(self, e: object) -> bool:
        i = self._pos.get(e)  # type: ignore[call-overload]
        return i is not None and i < self._n

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Any:
        return iter(self._log[: self._n])

    def __or__(self, other: Any) -> GrowingSet:
        more = [e for e in dict.fromkeys(other) if e not in self]
        if not more:
            return self
        with _GROWING:  # replays are shared between threads (the app's cache)
            if self._n != len(self._log):  # an older version: branch off with a copy
                return GrowingSet([*self, *more])
            for e in more:
                self._pos[e] = len(self._log)
                self._log.append(e)
            return GrowingSet._version(self._log, self._pos, len(self._log))

    def __sub__(self, other: Any) -> frozenset[int]:
        return frozenset(e for e in self if e not in other)

    def __rsub__(self, other: Any) -> frozenset[int]:
        return frozenset(e for e in other if e not in self)

    def added_since(self, older: GrowingSet) -> list[int] | None:
        """The entries this version has and ``older`` has not, when ``older`` is an earlier
        version of the same log (None otherwise)."""
        if older._log is self._log and older._n <= self._n:
            return self._log[older._n : self._n]
        return None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (GrowingSet, frozenset, set)):
            return len(self) == len(other) and all(e in other for e in self)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self))

    def __repr__(self) -> str:
        return f"GrowingSet({sorted(self)!r})"


_REPLACED = IdMemo()
_ESTIMATES = IdMemo()


def pi_estimate(message: Any) -> int:
    """pi's ``estimateTokens`` of a message, remembered per message object (a replay sees the
    same messages again at every call and after every compaction)."""
    return _ESTIMATES.get(message, None, lambda: estimate_tokens(message))


def with_text(cm: ContextMessage, text: str) -> ContextMessage:
    """A copy of a tool result whose whole content is ``text`` (images dropped). The same
    original and text give the same copy object at every call."""
    m = cm.message
    assert isinstance(m, ToolResultMessage)
    new = _REPLACED.get(m, text, lambda: m.model_copy(update={"content": [TextContent(text=text)]}))
    return ContextMessage(new, cm.entry_index)


def tool_calls_by_id(messages: Sequence[ContextMessage]) -> dict[str, tuple[int, ToolCall]]:
    out: dict[str, tuple[int, ToolCall]] = {}
    for i, cm in enumerate(messages):
        if isinstance(cm.message, AssistantMessage):
            for b in cm.message.content:
                if isinstance(b, ToolCall):
                    out[b.id] = (i, b)
    return out


@dataclass
class Plan:
    """Decisions being built for one call; turned into a :class:`PruneResult` by :meth:`finish`."""

    messages: Sequence[ContextMessage]
    counter: Any
    replaced: dict[int, tuple[ContextMessage, str, str]] = field(default_factory=dict)
    dropped: dict[int, str] = field(default_factory=dict)
    reasons: dict[int, str] = field(default_factory=dict)
    inserted: list[tuple[int, ContextMessage]] = field(default_factory=list)
    scanned: int = 0
    protected: int = 0
    _counts: dict[int, int] = field(default_factory=dict)

    def tokens(self, i: int) -> int:
        """Tokens of input message ``i`` by the caller's counter (counted once per call)."""
        n = self._counts.get(i)
        if n is None:
            n = self._counts[i] = self.counter.count(self.messages[i].message)
        return n

    def prune(self, i: int, new: ContextMessage, marker: str, reason: str) -> None:
        self.replaced[i] = (new, marker, reason)

    def drop(self, i: int, reason: str) -> None:
        self.dropped[i] = reason

    def keep(self, i: int, reason: str) -> None:
        self.reasons[i] = reason

    def insert(self, before: int, cm: ContextMessage) -> None:
        self.inserted.append((before, cm))

    def finish(
        self, state: Any = None, events: Sequence[dict[str, Any]] = (), notes: Sequence[str] = ()
    ) -> PruneResult:
        count = self.counter.count
        out: list[ContextMessage] = []
        decisions: list[Decision] = []
        inserts = sorted(self.inserted, key=lambda x: x[0])
        k = 0
        before_total = after_total = pruned_tokens = 0
        n_pruned = n_dropped = 0
        for i, cm in enumerate(self.messages):
            while k < len(inserts) and inserts[k][0] <= i:
                out.append(inserts[k][1])
                after_total += count(inserts[k][1].message)
                k += 1
            t = self.tokens(i)
            before_total += t
            m = cm.message
            tool = getattr(m, "toolName", None) if isinstance(m, ToolResultMessage) else None
            if i in self.dropped:
                decisions.append(
                    Decision(i, cm.entry_index, str(m.role), tool, "dropped", t, 0, None, self.dropped[i])
                )
                pruned_tokens += t
                n_dropped += 1
                continue
            if i in self.replaced:
                new, marker, reason = self.replaced[i]
                ta = count(new.message)
                out.append(new)
                after_total += ta
                pruned_tokens += t - ta
                n_pruned += 1
                decisions.append(
                    Decision(i, cm.entry_index, str(m.role), tool, "pruned", t, ta, marker, reason)
                )
                continue
            out.append(cm)
            after_total += t
            decisions.append(
                Decision(
                    i,
                    cm.entry_index,
                    str(m.role),
                    tool,
                    "kept",
                    t,
                    t,
                    None,
                    self.reasons.get(i, "not a candidate"),
                )
            )
        for _, cm in inserts[k:]:
            out.append(cm)
            after_total += count(cm.message)
        stats = PruneStats(
            before_total, after_total, self.scanned, self.protected, pruned_tokens, n_pruned, n_dropped
        )
        return PruneResult(tuple(out), tuple(decisions), stats, state, tuple(events), tuple(notes))


def text_len(s: str) -> int:
    """JavaScript's ``s.length`` (UTF-16 code units)."""
    return utf16_len(s)


def is_sent_as_user(cm: ContextMessage) -> bool:
    """Messages pi's ``convertToLlm`` turns into user-role messages for the model: real prompts,
    ``custom`` (extension) messages, ``!`` bash runs (not ``!!`` ones, which are left out) and
    branch / compaction summaries."""
    m = cm.message
    if isinstance(m, BashExecutionMessage):
        return not m.excludeFromContext
    return cm.role in ("user", "custom", "branchSummary", "compactionSummary")
