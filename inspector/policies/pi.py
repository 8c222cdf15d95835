"""pi's compaction policy, and ``early`` (pi's compaction requested sooner; beyond pi).

``pi`` (pi-coding-agent ``agent-session.ts``; code reading, the oracle checks the pieces)
    When the agent run ends (``agent_end``: an answer that calls no tool; pi's ``_checkCompaction``,
    "called after agent_end and before prompt submission", in 0.73.1 as in 0.58.3), not between the
    tool calls of a run: ``contextTokens > contextWindow - reserveTokens`` (strict);
    ``contextTokens`` is ``calculateContextTokens`` of the answer's usage (the replay gives the
    recorded usage, plus what a what-if changed in the context:
    :meth:`inspector.replay.run.ReplayRun.provider_size`). An aborted run is skipped at its end and
    checked before the next prompt (``skipAbortedCheck`` false), on the aborted answer's own usage:
    a compaction at the same place, none when that usage is 0. A context already over the window
    before a call is pi's overflow path: compact, then retry the call (the replay's run does that
    for every policy).
    The compaction itself is pi's ``prepareCompaction`` + summary + ``buildSessionContext``, run by
    :mod:`inspector.compaction`: a compaction entry is appended to the simulated path and the
    context is rebuilt from it.
``early`` (the context-manager design in ``../shared/seeds``; **beyond pi**)
    The same pi compaction, requested as soon as the context reaches the red zone
    (``red_fraction`` of the window, ``>=``), through a latch: one request per pressure
    episode, re-armed when the context falls back below the red zone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, Field

from ..compaction import make_compaction_entry, prepare_compaction
from ..cut_story import cut_story
from .base import Compacted, CompactionPolicy, CompactionRequest, PolicyInfo, TriggerState


class PiPolicy(CompactionPolicy):
    info = PolicyInfo(
        "pi",
        "pi",
        "pi-coding-agent core/agent-session.ts, core/compaction/compaction.ts",
        "Compact when an agent run ends with context > window − reserveTokens; overflow: compact and retry.",
    )
    pi_cut = True

    def threshold(self, window: int, settings: Any, reserve: int) -> int | None:
        return window - reserve

    def threshold_label(self, settings: Any) -> str:
        return "window − reserveTokens (pi compacts above)"

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
        if needs_follow_up:  # the run goes on with the tool results: pi checks at its end
            return False, ""
        limit = window - reserve
        if tokens > limit:
            when = " before the next prompt, the run aborted" if aborted else ""
            return True, f"context {tokens:,} > window − reserve = {limit:,} (pi's shouldCompact{when})"
        return False, ""

    def compact(self, req: CompactionRequest) -> Compacted | None:
        """pi's ``prepareCompaction`` on the simulated path, a compaction entry with the summary,
        and the context pi builds after it."""
        path, ctx = req.path, req.context
        est = req.estimate
        prep = prepare_compaction(
            path.entries,
            req.compaction,
            path_indexes=path.indexes,
            pi_version=req.pi_version,
            context=[c.message for c in ctx.msgs],
            positions=path.positions,
            tokens=lambda i: est(path.entries[i].message),  # type: ignore[union-attr]
        )
        if prep is None or (not prep.messagesToSummarize and not prep.turnPrefixMessages):
            return None
        s = req.summarize(prep)
        n_sim = path.simulated + 1
        entry = make_compaction_entry(
            prep,
            s["text"],
            parent_id=path.entries[-1].id if path.entries else None,
            entry_id=f"__sim_compaction_{n_sim}__",
        )
        path.append(entry, None)
        ctx.reset(path.context_after_last())
        summarized = [m.entry_index for m in (*prep.messagesToSummarize, *prep.turnPrefixMessages)]
        story = cut_story(
            req.session,
            _FileIndexes(path.indexes, len(path.indexes) - 1),
            path.entries[:-1],
            prep,
            req.compaction.keepRecentTokens,
        )
        return Compacted(s, req.session.index_of(prep.firstKeptEntryId), summarized, story)


class _FileIndexes(Sequence[int]):
    """The first ``n`` path positions' entry indexes, -1 for a simulated entry: what
    :func:`cut_story` reads a few of, without copying a long path at every compaction."""

    def __init__(self, indexes: list[int | None], n: int) -> None:
        self.indexes, self.n = indexes, n

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, p: int) -> int: ...
    @overload
    def __getitem__(self, p: slice) -> Sequence[int]: ...
    def __getitem__(self, p: int | slice) -> int | Sequence[int]:
        if isinstance(p, slice):
            return [self[i] for i in range(*p.indices(self.n))]
        if not -self.n <= p < self.n:
            raise IndexError(p)
        i = self.indexes[p if p >= 0 else self.n + p]
        return -1 if i is None else i


class EarlySettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    red_fraction: float = Field(
        0.70,
        gt=0,
        le=1.5,
        description="request compaction when context ≥ this fraction of the window (turn-aware red).",
    )


class EarlyPolicy(PiPolicy):
    info = PolicyInfo(
        "early",
        "Early (turn-aware red zone)",
        "context-manager design (seeds/context-manager-design.md)",
        "pi's compaction, requested once per pressure episode when the context reaches the red zone.",
        beyond_source=True,
    )
    Settings = EarlySettings
    prefix = "early_"

    def threshold(self, window: int, settings: Any, reserve: int) -> int | None:
        return int(settings.red_fraction * window)

    def threshold_label(self, settings: Any) -> str:
        return f"red zone ({settings.red_fraction:.0%})"

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
        red = int(settings.red_fraction * window)
        if tokens < red:
            if trigger.latched:
                trigger.latched = False  # pressure fell: re-arm
            return False, ""
        if trigger.latched:
            return False, "red zone, but a request was already made in this pressure episode"
        trigger.latched = True
        return True, f"context {tokens:,} ≥ red zone {red:,} ({settings.red_fraction:.0%} of the window)"
