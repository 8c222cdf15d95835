"""The compaction-policy interface every policy implements, and the state a replay hands it.

A policy answers two questions at every model call of a replay, the way its source system does:
*does it compact now?* (:meth:`CompactionPolicy.after_answer`, :meth:`CompactionPolicy.threshold`)
and *what does the context look like afterwards?* (:meth:`CompactionPolicy.compact`: what it keeps
and what it writes). Each policy owns its settings model (:attr:`CompactionPolicy.Settings`); the
flat :class:`~inspector.policies.PolicySettings` that replays, URLs and the CLI carry is generated
from them (each field under the policy's :attr:`~CompactionPolicy.prefix`).

Token figures are the replay's own (the chosen counter over the replayed context plus the answer),
not the recorded usage: once a setting changes the context, the recorded usage no longer describes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ..compaction import CompactionPreparation, CompactionSettings, CutPoint, FileOps, extract_file_ops
from ..context import ContextMessage, compaction_context
from ..session.models import AnyEntry, AssistantMessage, TextContent, UserMessage
from ..session.tree import Session


@dataclass(frozen=True)
class PolicyInfo:
    name: str
    title: str
    source: str
    description: str
    beyond_source: bool = False
    unverified: str = ""
    """Why the source cannot be checked (empty when it can)."""


class NoSettings(BaseModel):
    """A policy without settings of its own."""

    model_config = ConfigDict(frozen=True)


@dataclass
class TriggerState:
    """Mutable per-replay trigger state (the early policy's latch)."""

    latched: bool = False

    def compacted(self) -> None:
        """The design clears the latch after a successful compaction (and when pressure falls)."""
        self.latched = False


class RunningContext:
    """The replay's running context: a list only appended to (a new list after each compaction),
    the entry indexes in it and its tokens by the replay's counter."""

    def __init__(self, counter: Any) -> None:
        self.counter = counter
        self.msgs: list[ContextMessage] = []
        self.entries: set[int] = set()
        self.total = 0

    def reset(self, msgs: Iterable[ContextMessage]) -> None:
        self.msgs = list(msgs)
        self.entries = {m.entry_index for m in self.msgs if m.entry_index is not None}
        self.total = sum(self.counter.count_many([m.message for m in self.msgs]))

    def add(self, cm: ContextMessage) -> None:
        self.msgs.append(cm)
        if cm.entry_index is not None:
            self.entries.add(cm.entry_index)
        self.total += self.counter.count(cm.message)


@dataclass
class SimulatedPath:
    """The branch as pi would see it: the session's entries with simulated compaction entries
    in place (``indexes``: each one's entry index in the file, None for a simulated one)."""

    entries: list[AnyEntry] = field(default_factory=list)
    indexes: list[int | None] = field(default_factory=list)
    simulated: int = 0
    """How many simulated entries (index None) the path holds."""
    _positions: dict[str, int] = field(default_factory=dict, repr=False)
    _indexed: int = 0

    @property
    def positions(self) -> dict[str, int]:
        """First position of each id on the path: indexed when first asked for (at a compaction),
        then kept up to date from where it was (a path that never compacts never holds it: a
        2,000,000-entry flood's would take ~70 bytes an entry)."""
        entries, first = self.entries, self._positions
        for k in range(self._indexed, len(entries)):
            eid = entries[k].id
            if isinstance(eid, str):
                first.setdefault(eid, k)
        self._indexed = len(entries)
        return first

    def append(self, entry: AnyEntry, index: int | None) -> None:
        self.entries.append(entry)
        self.indexes.append(index)
        self.simulated += index is None

    def context_after_last(self) -> list[ContextMessage]:
        """The context after the compaction entry at the end of the path (pi's ``buildSessionContext``)."""
        comp = self.entries[-1]
        kept_id = getattr(comp, "firstKeptEntryId", None)
        fk = self.positions.get(kept_id) if isinstance(kept_id, str) else None
        return compaction_context(self.entries, self.indexes, len(self.entries) - 1, fk)


SummaryFn = Callable[[CompactionPreparation], dict[str, Any]]


@dataclass
class CompactionRequest:
    """What a policy gets to compact with: the running context (which it resets), the simulated
    path (which pi's policies extend), and the summarizer."""

    context: RunningContext
    path: SimulatedPath
    session: Session
    summarize: SummaryFn
    """Summarise a preparation (cached; the replay's summarizer and prompt style)."""
    compaction: CompactionSettings
    """pi's reserveTokens and keepRecentTokens."""
    pi_version: str
    estimate: Callable[[Any], int]
    """pi's own per-message token estimate."""
    window: int
    settings: BaseModel
    """The policy's own settings."""


@dataclass(frozen=True)
class Compacted:
    """What a compaction did: the summary record (text, label, usage, ``story``), the first kept
    entry, the entry indexes summarised (None for messages made in memory) and the story."""

    summary: dict[str, Any]
    first_kept: int | None
    summarized: list[int | None]
    story: list[str]


class CompactionPolicy:
    """Base class: subclasses set :attr:`info` and the class attributes, and implement the rules."""

    info: ClassVar[PolicyInfo]
    Settings: ClassVar[type[BaseModel]] = NoSettings
    prefix: ClassVar[str] = ""
    """Its settings' prefix in the flat :class:`~inspector.policies.PolicySettings` (``codex_``)."""
    simulated: ClassVar[bool] = True
    """False when the policy never writes a compaction (as recorded, never)."""
    as_recorded: ClassVar[bool] = False
    """True for the policy that keeps the session's own compactions."""
    pi_cut: ClassVar[bool] = False
    """True when it compacts with pi's cut (reads keepRecentTokens and pi's version)."""
    summary_style: ClassVar[str] = "pi"
    """The prompt style its summaries are asked in (:data:`inspector.summarize.prompts.STYLES`)."""
    checks_failed: ClassVar[bool] = True
    """False when the agent makes no compaction check after an answer that failed or was aborted
    (:meth:`after_answer` is then not asked)."""

    # -- info (the old PolicyInfo's fields, read by the UI and the CLI) ---------------------------
    @property
    def name(self) -> str:
        return self.info.name

    @property
    def title(self) -> str:
        return self.info.title

    @property
    def source(self) -> str:
        return self.info.source

    @property
    def description(self) -> str:
        return self.info.description

    @property
    def beyond_source(self) -> bool:
        return self.info.beyond_source

    @property
    def unverified(self) -> str:
        return self.info.unverified

    def describe(self) -> dict[str, Any]:
        i = self.info
        return {
            "name": i.name,
            "title": i.title,
            "source": i.source,
            "description": i.description,
            "beyondSource": i.beyond_source,
            "unverified": i.unverified,
        }

    # -- settings ----------------------------------------------------------------------------------
    def own_settings(self, flat: BaseModel) -> BaseModel:
        """This policy's settings, read from the flat :class:`~inspector.policies.PolicySettings`."""
        if not self.prefix:
            return self.Settings()
        n = len(self.prefix)
        return self.Settings(**{k[n:]: v for k, v in flat.model_dump().items() if k.startswith(self.prefix)})

    # -- when -----------------------------------------------------------------------------------------
    def threshold(self, window: int, settings: Any, reserve: int) -> int | None:
        """The context size at which it compacts for this window (None: it never does on its own)."""
        return None

    def threshold_label(self, settings: Any) -> str:
        """What :meth:`threshold` is, in a few words (a figure's line label)."""
        return self.name

    def after_answer(
        self,
        trigger: TriggerState,
        tokens: int,
        window: int,
        reserve: int,
        settings: Any,
        *,
        aborted: bool,
        needs_follow_up: bool,
    ) -> tuple[bool, str]:
        """Does it compact after this answer? (decision, plain-words reason)."""
        return False, ""

    # -- what -----------------------------------------------------------------------------------------
    def compact(self, req: CompactionRequest) -> Compacted | None:
        """Compact the running context in place; None when there is nothing to compact."""
        return None


# -- helpers the non-pi policies share ----------------------------------------------------------------


def prep_for(
    messages: Sequence[ContextMessage], comp: CompactionSettings, previous: str | None
) -> CompactionPreparation:
    """A preparation over plain context messages, for summarizers (non-pi policies)."""
    ops = FileOps()
    for cm in messages:
        extract_file_ops(cm.message, ops)
    return CompactionPreparation(
        firstKeptEntryId="",
        first_kept_path_index=-1,
        messagesToSummarize=tuple(messages),
        turnPrefixMessages=(),
        isSplitTurn=False,
        tokensBefore=0,
        previousSummary=previous,
        fileOps=ops,
        settings=comp,
        cut=CutPoint(0, -1, False),
        boundary_start=0,
        prev_compaction_path_index=-1,
        pi_version="0.73",
    )


def synthetic_text(text: str, role: str = "user") -> Any:
    """A message made in memory (a summary, a question, a truncated user message)."""
    if role == "assistant":
        return AssistantMessage(content=[TextContent(text=text)], stopReason="stop")
    return UserMessage(content=[TextContent(text=text)])


def text_of(m: Any) -> str:
    c = getattr(m, "content", "")
    return c if isinstance(c, str) else "".join(b.text for b in c if isinstance(b, TextContent))
