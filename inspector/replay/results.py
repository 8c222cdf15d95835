"""What a replay returns: its steps (one per model call), typed events, metrics, and the replay itself."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from pydantic import BaseModel

from ..context import ContextMessage
from ..session.tree import Session
from .settings import ReplaySettings, effective_settings

# ---------------------------------------------------------------------------------------------
# Events: one small frozen dataclass per kind; ``to_json()`` is the dict replays have always written
# ---------------------------------------------------------------------------------------------


class Event:
    """Base of the typed events of a step: read their fields; ``to_json()`` gives the event as
    JSON (``replay --json``, reports, and the renderers that show any event's fields)."""

    type: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True)
class Pruned(Event):
    """Pruning newly cleared ``items`` tool outputs (``tokens`` fewer) at this call."""

    type: ClassVar[str] = "pruned"
    items: int
    tokens: int
    entry_indexes: tuple[int, ...]
    """The first 50 cleared entries."""

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "items": self.items,
            "tokens": self.tokens,
            "entryIndexes": list(self.entry_indexes),
        }


@dataclass(frozen=True)
class Unpruned(Event):
    """Outputs cleared before are whole again (a strategy restored them)."""

    type: ClassVar[str] = "unpruned"
    items: int

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "items": self.items}


@dataclass(frozen=True)
class StrategyEvent(Event):
    """An event the pruning strategy reported (its own ``type`` and fields, kept as written)."""

    data: dict[str, Any]

    @property
    def type(self) -> str:  # type: ignore[override]
        return str(self.data.get("type"))

    def to_json(self) -> dict[str, Any]:
        return dict(self.data)


@dataclass(frozen=True)
class Overflow(Event):
    """The context is over the window (``before="compaction"``: found before the call, so a
    simulated policy compacts and retries)."""

    type: ClassVar[str] = "overflow"
    tokens: int
    window: int
    before: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "tokens": self.tokens, "window": self.window}
        if self.before is not None:
            out["before"] = self.before
        return out


@dataclass(frozen=True)
class Reread(Event):
    """A read of ``path`` whose earlier output (entry ``earlier_entry_index``) was gone or pruned."""

    type: ClassVar[str] = "reread"
    path: str
    earlier_entry_index: int

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "path": self.path, "earlierEntryIndex": self.earlier_entry_index}


@dataclass(frozen=True)
class SimulatedCompaction(Event):
    """A compaction the replay's policy made."""

    type: ClassVar[str] = "compaction"
    policy: str
    kind: str
    """``threshold`` (after an answer) or ``overflow`` (before a call)."""
    reason: str
    first_kept_entry_index: int | None
    summarized_messages: int
    summary_tokens: int
    summarizer: str | None
    fell_back: bool
    error: str | None
    tokens_after: int

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "simulated": True,
            "policy": self.policy,
            "kind": self.kind,
            "reason": self.reason,
            "firstKeptEntryIndex": self.first_kept_entry_index,
            "summarizedMessages": self.summarized_messages,
            "summaryTokens": self.summary_tokens,
            "summarizer": self.summarizer,
            "fellBack": self.fell_back,
            "error": self.error,
            "tokensAfter": self.tokens_after,
        }


@dataclass(frozen=True)
class RecordedCompaction(Event):
    """A compaction entry of the session, applied as recorded."""

    type: ClassVar[str] = "compaction"
    entry_index: int
    first_kept_entry_index: int | None
    summary_tokens: int
    tokens_after: int
    tokens_before: int | float

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "simulated": False,
            "policy": "recorded",
            "entryIndex": self.entry_index,
            "firstKeptEntryIndex": self.first_kept_entry_index,
            "summaryTokens": self.summary_tokens,
            "tokensAfter": self.tokens_after,
            "tokensBefore": self.tokens_before,
        }


@dataclass(frozen=True)
class CompactionSkipped(Event):
    """The policy was triggered but found nothing to compact."""

    type: ClassVar[str] = "compaction_skipped"
    reason: str
    trigger: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "reason": self.reason, "trigger": self.trigger}


@dataclass(frozen=True)
class RecordedCompactionSetAside(Event):
    """A compaction entry of the session, set aside by a what-if policy."""

    type: ClassVar[str] = "recorded_compaction_set_aside"
    entry_index: int

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "entryIndex": self.entry_index}


@dataclass(frozen=True)
class BranchSummary(Event):
    """A branch summary entry joins the context (``tokens`` of summary)."""

    type: ClassVar[str] = "branch_summary"
    entry_index: int
    tokens: int

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "entryIndex": self.entry_index, "tokens": self.tokens}


# ---------------------------------------------------------------------------------------------
# Steps, metrics, the replay
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)  # slots: a 2M-entry session replays ~700k steps
class Step:
    step: int
    entry_index: int
    """The assistant message answering this call."""
    stop_reason: str | None
    tokens: int
    """Context tokens the model receives (after pruning), by the replay's counter."""
    tokens_before_pruning: int
    recorded_input: int | float | None
    """Recorded prompt size: usage input + cacheRead + cacheWrite."""
    recorded_total: int | float | None
    """pi's calculateContextTokens of the recorded usage (prompt + answer)."""
    messages: int
    pruned_items: int
    pruned_tokens: int
    events: tuple[Event, ...]
    cost: float
    window: int
    """The context window this call ran against (:attr:`ReplaySettings.context_window`, or its
    model's: :attr:`ReplaySettings.model_windows`)."""
    provider_tokens: int | None = None
    """The prompt as the provider counts it, which the overflow check compares with the window
    (:attr:`Metrics.overflows`): over it exactly when the call has an overflow event."""
    # -- to rebuild the exact context lazily ------------------------------------------------
    _segment: list[ContextMessage] = field(repr=False, compare=False, default_factory=list)
    _length: int = field(repr=False, compare=False, default=0)
    _state: Any = field(repr=False, compare=False, default=None)
    _call: Any = field(repr=False, compare=False, default=None)

    @property
    def aborted(self) -> bool:
        return self.stop_reason == "aborted"

    @property
    def error(self) -> bool:
        return self.stop_reason == "error"

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "entryIndex": self.entry_index,
            "stopReason": self.stop_reason,
            "contextTokens": self.tokens,
            "tokensBeforePruning": self.tokens_before_pruning,
            "recordedTokens": self.recorded_input,
            "recordedTotalTokens": self.recorded_total,
            "providerTokens": self.provider_tokens,
            "messages": self.messages,
            "prunedItems": self.pruned_items,
            "prunedTokens": self.pruned_tokens,
            "cost": round(self.cost, 6),
            "window": self.window,
            "events": [e.to_json() for e in self.events],
        }


class Metrics(BaseModel):
    steps: int
    total_input_tokens: int
    cost_usd: float
    recorded_cost_usd: float | None
    peak_context: int
    mean_context: float
    compactions: int
    summary_tokens: int
    """Tokens the summaries cost (summarizer input + output)."""
    tokens_pruned: int
    """Sum over calls of tokens removed by pruning."""
    overflows: int
    """Calls whose prompt, as the provider counts it, is over the window
    (:meth:`inspector.replay.run.ReplayRun.provider_size`: the recorded prompt where the replay
    sends what was sent, plus the fitted change where it does not; a call without usage from the
    last answer's and what was counted since; a file without usage: counted)."""
    rereads: int
    """Later reads of a path whose earlier output was pruned or summarised away at that time."""
    recorded_total_input: int | None


Pinned = tuple[Sequence[ContextMessage], int]
"""A context list and its length when it was pinned: the replay replaces its context list at a
compaction and only appends to it otherwise, so the first ``n`` messages stay what they were."""


@dataclass(frozen=True)
class CompactionRecord:
    """One compaction of a replay, recorded or simulated: its event, the call it comes before, its
    summary, and the contexts just before and just after it (what :mod:`inspector.compaction_view`,
    retention and the cache model's summarisation requests read)."""

    event: RecordedCompaction | SimulatedCompaction
    step: int
    """The model call it comes before (``len(steps)`` when it comes after the last one)."""
    text: str
    """The summary: the session's own, or the one the replay's summarizer wrote."""
    summarized_entry_indexes: tuple[int | None, ...]
    """The entries a simulated compaction summarised (None for a message made in memory; empty for a
    recorded one)."""
    pinned_before: Pinned = field(repr=False)
    pinned_after: Pinned = field(repr=False)
    lost: int | None = field(repr=False)
    """Tokens of the context before that the context after does not keep (None: the context
    after does not start with a summary)."""
    tokens_before: int
    """The context before it, by the replay's counter (the agent's own figure, when the file
    records one, is :attr:`recorded_tokens_before`)."""
    story: tuple[str, ...] = ()
    """How a simulated compaction chose its cut, sentence by sentence."""
    prep: Any = field(default=None, repr=False)
    """The preparation the summarizer got (``CompactionPreparation``; simulated compactions only)."""

    @property
    def simulated(self) -> bool:
        return isinstance(self.event, SimulatedCompaction)

    @property
    def entry_index(self) -> int | None:
        """The compaction entry of the session (None: simulated)."""
        return self.event.entry_index if isinstance(self.event, RecordedCompaction) else None

    @property
    def recorded_tokens_before(self) -> int | float | None:
        """The context before it as the agent recorded it (``tokensBefore``; None: simulated)."""
        return self.event.tokens_before if isinstance(self.event, RecordedCompaction) else None

    @property
    def policy(self) -> str:
        return self.event.policy if isinstance(self.event, SimulatedCompaction) else "recorded"

    @property
    def reason(self) -> str | None:
        return self.event.reason if isinstance(self.event, SimulatedCompaction) else None

    @property
    def first_kept_entry_index(self) -> int | None:
        return self.event.first_kept_entry_index

    @property
    def summary_tokens(self) -> int:
        return self.event.summary_tokens

    @property
    def tokens_after(self) -> int:
        return self.event.tokens_after

    def before(self) -> list[ContextMessage]:
        """The context just before the compaction."""
        msgs, n = self.pinned_before
        return list(msgs[:n])

    def after(self) -> list[ContextMessage]:
        """The context just after it (its summary first)."""
        msgs, n = self.pinned_after
        return list(msgs[:n])

    def to_json(self) -> dict[str, Any]:
        """The record as JSON: its event's fields, the call, the summary and what it summarised."""
        return {
            **self.event.to_json(),
            "step": self.step,
            "text": self.text,
            "summarizedEntryIndexes": list(self.summarized_entry_indexes),
            **({"story": list(self.story)} if self.simulated else {}),
        }


@dataclass(frozen=True)
class Replay:
    settings: ReplaySettings
    steps: tuple[Step, ...]
    metrics: Metrics
    path: tuple[int, ...]
    summaries: tuple[CompactionRecord, ...]
    """One record per compaction in the replay (recorded or simulated), in order."""
    session: Session = field(repr=False)
    seconds: float = 0.0
    triggers: tuple[int | None, ...] = field(default=(), repr=False, compare=False)
    """Per step, the size a simulated policy compared with its threshold after the answer
    (:meth:`~inspector.replay.run.ReplayRun.provider_size`); None where nothing was compared (an
    as-recorded replay, a failed answer with no usage to estimate from)."""

    def step_detail(self, k: int) -> StepDetail:
        """The exact context of step ``k``: before pruning, after pruning, and the decisions."""
        st = self.steps[k]
        base = tuple(st._segment[: st._length])
        from .counters import session_counter
        from .strategies import effective_strategy, strategy_settings

        strat = effective_strategy(self.settings, self.session)
        if strat is None:
            return StepDetail(st, base, base, None)
        counter = session_counter(self.session, self.settings.counter)
        res = strat.apply(base, strategy_settings(self.settings), st._state, st._call, counter)
        return StepDetail(st, base, tuple(res.messages), res)

    def sent_contexts(
        self, steps: Iterable[int] | None = None
    ) -> Iterator[tuple[int, tuple[ContextMessage, ...]]]:
        """(step, the context sent at it) for ``steps`` (default: every step), in step order: what
        :meth:`step_detail` gives as ``after``, for many steps at once. The strategy's incremental
        runner is run again over the replay's contexts, so each step costs what changed since the
        one before and the messages sent, not ``apply`` over its whole context (a context that
        only grows — a DCP session never compacts — made that quadratic)."""
        from .counters import session_counter
        from .strategies import effective_strategy, strategy_settings

        ks = range(len(self.steps)) if steps is None else sorted(set(steps))
        strat = effective_strategy(self.settings, self.session)
        if strat is None:
            for k in ks:
                st = self.steps[k]
                yield k, tuple(st._segment[: st._length])
            return
        counter = session_counter(self.session, self.settings.counter)
        runner = strat.runner(strategy_settings(self.settings), counter)
        if not hasattr(runner, "sent_messages"):  # no incremental runner: apply at each step
            for k in ks:
                yield k, self.step_detail(k).after
            return
        views: dict[int, _Prefix] = {}
        for k in ks:
            st = self.steps[k]
            view = views.get(id(st._segment))
            if view is None or view.items is not st._segment:
                view = views[id(st._segment)] = _Prefix(st._segment)
            view.n = st._length
            runner.call(view, st._state, st._call)
            yield k, runner.sent_messages(view)

    def event_steps(self) -> list[int]:
        return [s.step for s in self.steps if s.events]

    def relabel(self, settings: ReplaySettings) -> Replay:
        """This replay under ``settings``, which must have the same :func:`effective_settings`
        (the same steps, events and summaries; only the settings it reports differ)."""
        if effective_settings(settings) != effective_settings(self.settings):
            raise ValueError("these settings can change the replay: replay them")
        return replace(self, settings=settings)

    def as_dict(self, lazy: bool = False) -> dict[str, Any]:
        """The replay as JSON; ``lazy``: its steps as an iterator, each made when it is read (a
        writer that streams them holds one at a time: ``inspector replay --json``)."""
        steps = (s.as_dict() for s in self.steps)
        return {
            "settings": self.settings.model_dump(mode="json"),
            "metrics": self.metrics.model_dump(mode="json"),
            "steps": steps if lazy else list(steps),
        }


@dataclass(frozen=True)
class StepDetail:
    step: Step
    before: tuple[ContextMessage, ...]
    after: tuple[ContextMessage, ...]
    prune: Any  # PruneResult | None


class _Prefix(Sequence[ContextMessage]):
    """The first :attr:`n` items of a list that may have grown since (a replay's context at one of
    its steps), one object per list, so that a runner fed it call after call sees the same
    context grow (:meth:`Replay.sent_contexts`)."""

    def __init__(self, items: list[ContextMessage]) -> None:
        self.items = items
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return self.items[: self.n][i]
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return self.items[i if i >= 0 else self.n + i]

    def __iter__(self) -> Iterator[ContextMessage]:
        return iter(self.items[: self.n])
