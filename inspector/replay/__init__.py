"""Replay a session's context management one model call at a time.

A *step* is one model call on the chosen branch: one assistant message (aborted and error ones
included, and marked). For each step the replay knows the context the model would receive
under the chosen settings, its tokens by the chosen counter, the recorded usage, and what
happened since the previous step.

Modes
  * **As recorded** (``compaction="recorded"``): the session's own compaction and branch-summary
    entries stand; only pruning is applied on top. With pruning ``none`` the context of every
    step is exactly pi's ``buildSessionContext`` at the entry before that assistant message.
  * **What-if** (any other policy, see :mod:`inspector.policies`): recorded compactions are set
    aside and compaction is simulated; summaries come from the selected summarizer (offline by
    default) and are cached by their input.

Incremental: the context is carried from step to step (appending the entries in between) and
rebuilt only where a compaction changes its shape; per-message token counts are computed once.
The pruning strategy runs incrementally too (:mod:`inspector.pruning.runner`: each strategy
carries what its rule needs from call to call; ``incremental=False`` applies it to the whole
context at every call, the reference the tests compare against).
Each step keeps a reference to the context list it saw (lists are only ever appended to, so a
prefix length pins it) and the pruning state it started from, so :meth:`Replay.step_detail`
rebuilds any step's exact pruned context on demand.

Reuse between replays: token counts per session (:func:`session_counter`), summaries per
preparation (a :class:`SummaryCache` the caller passes), and whole replays for settings that
cannot change them (:func:`effective_settings`, :meth:`Replay.relabel`).

The package, in the order a replay uses it: :mod:`.settings` (what a replay depends on),
:mod:`.counters` (token counts per session, warming), :mod:`.as_sent` (each call's as-recorded
context: where a what-if's trigger starts from the usage the session recorded), :mod:`.strategies` (the pruning applied),
:mod:`.summaries` (summaries and their cache), :mod:`.rereads` (the re-read tracker),
:mod:`.run` (the engine: one run object, one method per step of a model call), :mod:`.results`
(steps, typed events, metrics, the replay), :mod:`.sweep` (grids, agents side by side),
:mod:`.query` (pruning at one point of a session), :mod:`.streamed` (the as-recorded replay of a large
pi file from its skeleton and a second read, without holding its messages).
"""

from __future__ import annotations

from .counters import CachedCounter, session_counter, warm_session
from .query import prune_at
from .rereads import READ_TOOLS, RereadTracker
from .results import (
    BranchSummary,
    CompactionRecord,
    CompactionSkipped,
    Event,
    Metrics,
    Overflow,
    Pruned,
    RecordedCompaction,
    RecordedCompactionSetAside,
    Replay,
    Reread,
    SimulatedCompaction,
    Step,
    StepDetail,
    StrategyEvent,
    Unpruned,
)
from .run import ReplayRun, replay, sends_what_was_sent
from .settings import INCREMENTAL, REUSE, PolicyName, ReplaySettings, default_strategy, effective_settings
from .summaries import SummaryCache, SummaryFn, default_summary
from .sweep import COMPARED, SweepCell, agent_config, compare_agents, parse_grid, sweep

__all__ = [
    "COMPARED",
    "INCREMENTAL",
    "READ_TOOLS",
    "REUSE",
    "BranchSummary",
    "CachedCounter",
    "CompactionRecord",
    "CompactionSkipped",
    "Event",
    "Metrics",
    "Overflow",
    "PolicyName",
    "Pruned",
    "RecordedCompaction",
    "RecordedCompactionSetAside",
    "Replay",
    "ReplayRun",
    "ReplaySettings",
    "Reread",
    "RereadTracker",
    "SimulatedCompaction",
    "Step",
    "StepDetail",
    "StrategyEvent",
    "SummaryCache",
    "SummaryFn",
    "SweepCell",
    "Unpruned",
    "agent_config",
    "compare_agents",
    "default_strategy",
    "default_summary",
    "effective_settings",
    "parse_grid",
    "prune_at",
    "replay",
    "sends_what_was_sent",
    "session_counter",
    "sweep",
    "warm_session",
]
