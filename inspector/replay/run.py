"""The replay engine: one run object walks the branch, and its methods are the steps of one model call.

For each entry on the branch (:meth:`ReplayRun.entry`): a compaction entry is applied as recorded or
set aside; any other entry joins the simulated path; a message joins the context. At an assistant
message, one model call (:meth:`ReplayRun.model_call`):

1. :meth:`~ReplayRun.prune` — the pruning runner prunes the current context for this call;
2. :meth:`~ReplayRun.overflow_before` — over the window, a simulated policy compacts and retries
   (the prompt sized as the provider counts it: :meth:`~ReplayRun.provider_size`);
3. :meth:`~ReplayRun.pruning_events` and :meth:`~ReplayRun.overflow_after` — what pruning changed,
   and an overflow the call still has (every replay's, on the prompt as the provider counts it);
4. the re-read tracker (:mod:`.rereads`) checks the answer's reads;
5. :meth:`~ReplayRun.record_step` — the step, with the context list it saw pinned by its length;
6. :meth:`~ReplayRun.after_answer` — the answer joins the context; the policy may compact,
   comparing the usage the provider reports (:meth:`~ReplayRun.provider_size`: the recorded usage,
   plus what the what-if changed in the context, in the provider's tokens by the session's fit).

Compactions go through the policy object (:meth:`ReplayRun.compact`,
:meth:`inspector.policies.CompactionPolicy.compact`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import inspector.replay.settings as switches  # its switches are read at run time (benchmarks flip them)

from ..compaction import CompactionPreparation, CompactionSettings
from ..context import ContextMessage, _context_message
from ..gcpause import gc_paused
from ..numbers import clamp, clamp_int, finite_ms
from ..policies import CompactionRequest, RunningContext, SimulatedPath, Trigger, get_policy
from ..pricing import input_price_per_token
from ..pruning.base import CallInfo
from ..session.models import (
    AnyEntry,
    AssistantMessage,
    BranchSummaryEntry,
    CompactionEntry,
    CompactionSummaryMessage,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ..session.tree import Session
from ..tokens import calculate_context_tokens, estimate_context_tokens
from ..window import model_key
from .as_sent import agent_pruned, sent_as_recorded, sent_fit
from .counters import session_counter
from .rereads import RereadTracker
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
    SimulatedCompaction,
    Step,
    StrategyEvent,
    Unpruned,
)
from .settings import ReplaySettings
from .sizes import SizeFit, changed_size
from .strategies import effective_strategy, make_runner, strategy_settings
from .summaries import SummaryCache, SummaryFn


def tool_calls(m: Any) -> list[ToolCall]:
    return [b for b in m.content if isinstance(b, ToolCall)] if isinstance(m, AssistantMessage) else []


def recorded_usage(m: AssistantMessage) -> tuple[int | float | None, int | float | None]:
    """(recorded prompt: input + cacheRead + cacheWrite, pi's calculateContextTokens) of an answer."""
    u = m.usage
    if u is None:
        return None, None
    return clamp(clamp(u.input) + clamp(u.cacheRead) + clamp(u.cacheWrite)), clamp(
        calculate_context_tokens(u)
    )


def _change(added: int, diff: int, fit: SizeFit) -> str:
    """How a what-if's change of ``diff`` counted tokens to a call's context was sized, ``added``
    provider tokens (:meth:`ReplayRun.provider_size`)."""
    how = f"{diff:+,} counted"
    if fit.scale != 1.0:
        how += f" × {fit.scale:.2f} provider tokens per counted token, fitted on the session's calls"
    if round(fit.scale * diff) != added:
        how += f"; no less than the {fit.hidden:,}-token prefix every request sends"
    return f"{'+' if added >= 0 else '−'} {abs(added):,} for what the what-if changed: {how}"


def sends_what_was_sent(session: Session, settings: ReplaySettings) -> bool:
    """Does a replay of ``session`` under ``settings`` send what the agent sent? Its policy is as
    recorded, and its pruning the agent's own ("recorded") or, in a file that records none, none:
    its contexts are the as-recorded ones :func:`~.as_sent.sent_as_recorded` walks
    (``tests/test_cache.py`` checks them equal), which the recorded prompts measured."""
    return get_policy(settings.compaction).as_recorded and (
        settings.strategy == "recorded"
        or (effective_strategy(settings, session) is None and not agent_pruned(session))
    )


class ReplayRun:
    """One replay of ``session`` under ``settings``: the state carried from call to call."""

    def __init__(
        self,
        session: Session,
        settings: ReplaySettings,
        *,
        summarize: SummaryFn | None = None,
        summaries: SummaryCache | None = None,
        incremental: bool | None = None,
        progress: Callable[[float], None] | None = None,
    ) -> None:
        self.t0 = time.perf_counter()
        self.session, self.settings, self.progress = session, settings, progress
        self.policy = get_policy(settings.compaction)
        self.own = self.policy.own_settings(settings.policy)
        self.summarize = summarize or self._default_summarize(
            summaries if summaries is not None else SummaryCache()
        )
        self.usage_mode = settings.counter == "usage"
        self.counter = self._counter()
        self.strategy = effective_strategy(settings, session)
        self.runner = make_runner(
            self.strategy,
            strategy_settings(settings),
            self.counter,
            self.usage_mode,
            switches.INCREMENTAL if incremental is None else incremental,
        )
        self.compaction = CompactionSettings(
            enabled=True, reserveTokens=settings.reserve_tokens, keepRecentTokens=settings.keep_recent_tokens
        )
        self.window = settings.context_window
        # pi checks each call against the window of the model that answered it (model_windows)
        self.windows = {(p, m): w for p, m, w in settings.model_windows}
        self.path = session.path(settings.leaf)
        self.price = self._price()
        self.ctx = self._context()
        self.sim = SimulatedPath()  # the path as pi would see it (what-if: simulated compactions)
        self.trigger = Trigger()
        self.as_sent = sends_what_was_sent(session, settings)
        """:func:`sends_what_was_sent`: then :meth:`provider_size` need not walk the as-recorded contexts."""
        self.sent: dict[int, int] | None = None  # each call's as-recorded context (provider_size)
        self.fit: SizeFit | None = None  # the session's size fit on it (provider_size)
        # (size, counted, step) of the last answer sized from its usage since the last compaction
        self.anchor: tuple[int, int, int] | None = None
        self.triggers: list[int | None] = []  # per step, what the policy compared (Replay.triggers)
        self.rereads = RereadTracker()
        self.prune_state: Any = None
        self.pending: list[Event] = []
        self.new_prompt = True
        self.steps: list[Step] = []
        # each answer's recorded usage.cost.total (the answers that record a cost)
        self.recorded_costs: list[Any] = []
        self.summaries: list[CompactionRecord] = []
        self.overflows = self.compactions = self.summary_tokens = 0
        self._stop_reasons: dict[Any, Any] = {}  # one string object per stop reason, for the steps

    # -- where counts, prices and the context come from (a streamed replay gives its own: .streamed) --
    def _counter(self) -> Any:
        return session_counter(self.session, self.settings.counter)

    def _price(self) -> Callable[[Any], float]:
        return input_price_per_token(self.session)

    def _context(self) -> RunningContext:
        return RunningContext(self.counter)

    def _default_summarize(self, cache: SummaryCache) -> SummaryFn:
        style = self.policy.summary_style  # each agent's policy asks for its summary the way that agent does

        def summarize(prep: CompactionPreparation, st: ReplaySettings) -> dict[str, Any]:
            return cache.summary(prep, st, style, self.session)

        return summarize

    # -- the walk -------------------------------------------------------------------------------------
    def run(self) -> Replay:
        entries, n_path = self.session.entries, len(self.path)
        for pos, ei in enumerate(self.path):
            if self.progress is not None and pos % 500 == 0:
                self.progress(pos / max(1, n_path))
            self.entry(entries[ei], ei)
        return self.result()

    def result(self) -> Replay:
        """The replay, once the walk is done."""
        if self.progress is not None:
            self.progress(1.0)
        return Replay(
            self.settings,
            tuple(self.steps),
            self.metrics(),
            tuple(self.path),
            tuple(self.summaries),
            self.session,
            time.perf_counter() - self.t0,
            tuple(self.triggers),
        )

    def entry(self, e: AnyEntry, ei: int, whole: AnyEntry | None = None) -> None:
        """Entry ``ei`` of the path joins the replay. ``whole``: the same entry with its message,
        when ``e`` is a skeleton's (:mod:`.streamed`): the replay reads the message from it and
        keeps ``e``."""
        w = e if whole is None else whole
        if isinstance(e, CompactionEntry):
            if self.policy.as_recorded:
                self.recorded_compaction(e, ei)
            else:
                self.pending.append(RecordedCompactionSetAside(ei))
            return
        if isinstance(w, MessageEntry) and isinstance(w.message, AssistantMessage):
            kept = e.message if whole is not None and isinstance(e, MessageEntry) else None
            self.model_call(w.message, ei, e, kept)  # the answer joins the path once its call is made
            return
        self.sim.append(e, ei)
        if isinstance(e, BranchSummaryEntry) and e.summary:
            self.pending.append(BranchSummary(ei, self.counter.count_text(e.summary)))
        cm = _context_message(e)
        if cm is not None:
            self.ctx.add(ContextMessage(cm, ei))
            if isinstance(cm, UserMessage):
                self.new_prompt = True
            if isinstance(cm, ToolResultMessage):
                result = cm if whole is None else _context_message(whole)
                if isinstance(result, ToolResultMessage):
                    self.rereads.result(result, ei)

    def recorded_compaction(self, e: CompactionEntry, ei: int) -> None:
        """As recorded: the context becomes pi's ``buildSessionContext`` after the compaction entry."""
        before = (self.ctx.msgs, len(self.ctx.msgs))
        total = self.ctx.total
        self.sim.append(e, ei)
        self.ctx.reset(self.sim.context_after_last())
        self.compactions += 1
        self.anchor = None  # pi reads no usage from before the latest compaction
        ev = RecordedCompaction(
            ei,
            self.session.index_of(e.firstKeptEntryId),
            self.counter.count_text(e.summary),
            self.ctx.total,
            clamp(e.tokensBefore),
        )
        self.pending.append(ev)
        self.summaries.append(
            CompactionRecord(
                ev,
                len(self.steps),
                e.summary,
                (),
                before,
                (self.ctx.msgs, len(self.ctx.msgs)),
                self._lost(total),
                total,
            )
        )

    # -- one model call -------------------------------------------------------------------------------
    def model_call(self, m: AssistantMessage, ei: int, e: AnyEntry, kept: Any = None) -> None:
        """The call answered by ``m`` (entry ``e``, which joins the simulated path after the call:
        a compaction before it, on an overflow, must not see its answer; ``kept``: what the context
        keeps in its place, if not ``m``)."""
        k = len(self.steps)
        if self.windows:
            self.window = self.windows.get(model_key(m), self.settings.context_window)
        state_before = self.prune_state
        usage = recorded_usage(m)  # read once: the sizes below and the step take it
        call, res, tokens = self.prune(k, state_before, m.timestamp)
        # the prompt as the provider counts it (overflows read it)
        size, how = self.provider_prompt(m, ei, tokens, usage)
        if self.policy.simulated and size > self.window:
            call, res, tokens = self.overflow_before(
                k, state_before, m.timestamp, (call, res, tokens), size, how
            )
            size = self.provider_prompt(m, ei, tokens, usage)[0]
        before = self.ctx.total
        seg, length = self.ctx.msgs, len(self.ctx.msgs)
        pruned_items = self.pruning_events(res, before, tokens)
        if self.usage_mode:  # pi's usage-based size: pi's own view of the provider's count
            tokens = size = self.usage_tokens(seg, length)
        self.overflow_after(size)
        pruned = res is not None and self.runner is not None
        self.pending += self.rereads.calls(
            tool_calls(m), lambda i: i in self.ctx.entries and not (pruned and self.runner.is_pruned(i))
        )
        self.record_step(
            m, ei, k, (tokens, size), usage, before, pruned_items, (seg, length, state_before, call)
        )
        self.sim.append(e, ei)
        self.after_answer(m, ei, k, tokens, kept, usage)

    def prune(self, k: int, state: Any, time_ms: Any = None) -> tuple[Any, Any, int]:
        """Prune the current context for call ``k``: (call info, outcome or None, tokens)."""
        if self.strategy is None:
            if self.runner is not None:
                self.runner.call(self.ctx.msgs, None, None)
            return None, None, self.ctx.total
        ci = CallInfo(k, self.new_prompt, self.window, self.ctx.total, time_ms=finite_ms(time_ms))
        out = self.runner.call(self.ctx.msgs, state, ci)
        return ci, out, out.tokens

    def overflow_before(
        self, k: int, state: Any, time_ms: Any, first: tuple[Any, Any, int], size: int, how: str = ""
    ) -> tuple[Any, Any, int]:
        """The request (``size`` tokens as the provider counts them, found ``how``) would fail with
        a context overflow: compact, then retry the call."""
        self.pending.append(Overflow(size, self.window, "compaction"))
        reason = f"context {size:,} > window {self.window:,}: overflow, compact and retry"
        if self.compact(k, f"{reason} ({how})" if how else reason, "overflow"):
            return self.prune(k, state, time_ms)
        return first

    def pruning_events(self, res: Any, before: int, tokens: int) -> int:
        """What pruning changed at this call, as events; returns the items it keeps pruned."""
        if res is None:
            return 0
        self.prune_state = res.state
        newly, restored = self.runner.take_changes()
        if newly:
            self.pending.append(Pruned(len(newly), before - tokens, tuple(sorted(newly)[:50])))
        if restored and not restored.isdisjoint(self.ctx.entries):
            self.pending.append(Unpruned(len(restored)))
        self.pending += [StrategyEvent(dict(ev)) for ev in res.events]
        return res.items

    def overflow_after(self, tokens: int) -> None:
        if tokens > self.window:
            self.overflows += 1
            self.pending.append(Overflow(tokens, self.window))

    def usage_tokens(self, seg: list[ContextMessage], length: int) -> int:
        """pi's own view: the last trusted recorded usage in the context + estimates after it."""
        if self.runner is not None:
            return clamp_int(self.runner.usage_tokens(self.ctx.msgs))
        return clamp_int(estimate_context_tokens([c.message for c in seg[:length]]).tokens)

    def record_step(
        self,
        m: AssistantMessage,
        ei: int,
        k: int,
        sizes: tuple[int, int],
        usage: tuple[int | float | None, int | float | None],
        before: int,
        pruned_items: int,
        pinned: tuple[list[ContextMessage], int, Any, Any],
    ) -> None:
        """The step of call ``k``: ``sizes``, its tokens by the counter and as the provider counts
        them; ``usage``, :func:`recorded_usage` of its answer ``m``."""
        tokens, size = sizes
        seg, length, state, call = pinned
        rin, rtot = usage
        if size == tokens:  # one int object for both (a long replay keeps hundreds of thousands of steps)
            size = tokens
        elif type(rin) is int and size == rin:
            size = rin
        if m.usage is not None and isinstance(m.usage.cost, dict):  # other agents' files record no cost
            self.recorded_costs.append(clamp(m.usage.cost.get("total", 0) or 0))
        self.steps.append(
            Step(
                step=k,
                entry_index=ei,
                stop_reason=self._stop_reasons.setdefault(m.stopReason, m.stopReason)
                if isinstance(m.stopReason, str)
                else m.stopReason,
                tokens=tokens,
                tokens_before_pruning=before,
                recorded_input=rin,
                recorded_total=rtot,
                messages=length,
                pruned_items=pruned_items,
                pruned_tokens=before - tokens,
                events=tuple(self.pending),
                cost=tokens * self.price(m),
                window=self.window,
                provider_tokens=size,
                _segment=seg,
                _length=length,
                _state=state,
                _call=call,
            )
        )
        self.pending = []
        self.new_prompt = False

    def after_answer(
        self, m: AssistantMessage, ei: int, k: int, tokens: int, kept: Any = None, usage: Any = None
    ) -> None:
        """The answer joins the context; a simulated policy may compact now (``usage``:
        :func:`recorded_usage` of ``m``, when read already)."""
        before = self.ctx.total
        self.ctx.add(ContextMessage(m if kept is None else kept, ei))
        added = self.ctx.total - before  # the answer as the context counted it (a streamed one: not again)
        if not self.policy.simulated:
            self.triggers.append(None)
            self.provider_size(m, ei, tokens, True, added, usage)  # what a call without usage is sized from
            return
        checked, how = self.provider_size(m, ei, tokens, True, added, usage)
        if not self.policy.checks_failed and m.stopReason in ("aborted", "error"):
            checked = None  # this agent makes no check after a failed answer
        self.triggers.append(checked)
        if checked is None:
            return
        do, reason = self.policy.after_answer(
            self.trigger,
            checked,
            self.window,
            self.settings.reserve_tokens,
            self.own,
            aborted=m.stopReason == "aborted",
            needs_follow_up=bool(tool_calls(m)) and m.stopReason not in ("aborted", "error"),
        )
        if do:
            self.compact(k + 1, f"{reason} ({how})" if how else reason, "threshold")

    def provider_prompt(
        self, m: AssistantMessage, ei: int, tokens: int, usage: Any = None
    ) -> tuple[int, str]:
        """:meth:`provider_size` of the prompt answered by ``m``."""
        size, how = self.provider_size(m, ei, tokens, False, None, usage)
        return (tokens, "") if size is None else (size, how)

    def provider_size(
        self,
        m: AssistantMessage,
        ei: int,
        tokens: int,
        answered: bool,
        answer: int | None = None,
        usage: tuple[int | float | None, int | float | None] | None = None,
    ) -> tuple[int | None, str]:
        """The size of the call answered by ``m`` (which this replay sends with ``tokens``) as the
        provider would report it, which a simulated policy compares and every replay's overflow
        check reads, and how it was found (said for a simulated policy's reasons only).
        ``answered``: after the answer, its output included, as each agent's trigger reads the
        usage; else the prompt alone, whose excess over the window fails the request. ``answer``:
        the answer's tokens by the counter, when the context has counted them; ``usage``:
        :func:`recorded_usage` of ``m``, when read already.

        The session records the provider's usage for the context it really sent; this replay sent
        ``tokens`` where that context held ``base`` (:func:`~.as_sent.sent_as_recorded`), so the
        size is the recorded one plus the difference in the provider's tokens (the session's size
        fit, :func:`~.as_sent.sent_fit`, as the cache model prices it: :func:`~.sizes.changed_size`):
        exactly the recorded usage until the what-if first changes the context, then an estimate
        of the change alone. An aborted answer is sized
        by its own usage, 0 when it records none (pi checks it before the next prompt: nothing to
        compare). An answer without a usable record (none or zero, failed) is sized as pi's
        ``estimateContextTokens`` does:
        the last usable answer's size since the last compaction, plus what was counted after it;
        None after a failed answer when there is none (pi then skips the check: a kept answer's
        usage is stale). A file that records no usage, or the "usage" counter (already pi's own
        estimate), is counted: the context and the answer by the counter."""
        if answered:
            counted = tokens + (self.counter.count(m) if answer is None else answer)
        else:
            counted = tokens
        if self.usage_mode:
            return counted, ""
        rin, rtot = recorded_usage(m) if usage is None else usage
        aborted = m.stopReason == "aborted"
        if rin is not None and m.stopReason != "error":
            rec = clamp_int(rtot if answered else rin)
            if self.as_sent:  # this replay sends what was sent: its own context is the as-recorded one
                base: int | None = tokens
            else:
                if self.sent is None:
                    self.sent = (
                        sent_as_recorded(self.session, self.settings.counter, self.settings.leaf) or {}
                    )
                base = self.sent.get(ei)
            if rec > 0 and base is not None:
                diff = tokens - base
                how = "the answer's recorded usage" if answered else "the recorded prompt"
                size = rec
                if diff:
                    if self.fit is None:
                        self.fit = sent_fit(self.session, self.settings.counter, self.settings.leaf)
                    size = changed_size(rec, diff, self.fit)
                    if self.policy.simulated:  # only a simulated policy's reasons say how
                        how = f"{how} {rec:,}, {_change(size - rec, diff, self.fit)}"
                if answered and not aborted:  # pi's estimate reads no usage from an aborted answer
                    self.anchor = (size, counted, len(self.steps) - 1)
                return size, how
            if answered and aborted and rec <= 0:  # pi compares the aborted answer's usage: nothing
                return 0, "the aborted answer's recorded usage: none"
        if self.anchor is not None:
            size, then, step = self.anchor
            return max(
                0, size + counted - then
            ), f"call {step}'s usage {size:,} and {counted - then:+,} counted since"
        if answered and m.stopReason == "error" and self.sent:
            return None, ""
        return counted, ""

    # -- compaction -----------------------------------------------------------------------------------
    def _lost(self, before: int) -> int | None:
        """Tokens of the context before a compaction (``before``) that the context after it does
        not keep: the total less what survives (the context after, less its summary message);
        None when the context after does not start with a summary."""
        msgs = self.ctx.msgs
        if not msgs or not isinstance(msgs[0].message, CompactionSummaryMessage):
            return None
        return max(0, before - (self.ctx.total - self.counter.count(msgs[0].message)))

    def compact(self, step_no: int, reason: str, kind: str) -> bool:
        """The policy compacts the running context; its event and summary record are kept."""
        before = (self.ctx.msgs, len(self.ctx.msgs))  # pinned: the list is replaced, never changed
        total = self.ctx.total
        preps: list[CompactionPreparation] = []

        def summarize_seen(p: CompactionPreparation) -> dict[str, Any]:
            preps.append(p)
            return self.summarize(p, self.settings)

        pi_counter = self.counter if self.counter.name == "pi" else session_counter(self.session, "pi")
        done = self.policy.compact(
            CompactionRequest(
                self.ctx,
                self.sim,
                self.session,
                summarize_seen,
                self.compaction,
                self.settings.pi_version,
                pi_counter.count,
                self.window,
                self.own,
            )
        )
        if done is None:
            self.pending.append(CompactionSkipped("nothing to compact", reason))
            return False
        s = done.summary
        self.compactions += 1
        self.summary_tokens += int(s.get("input_tokens", 0)) + int(s.get("output_tokens", 0))
        self.trigger.compacted()
        self.anchor = None  # pi reads no usage from before the latest compaction
        ev = SimulatedCompaction(
            self.settings.compaction,
            kind,
            reason,
            done.first_kept,
            len(done.summarized),
            self.counter.count_text(s["text"]),
            s.get("label"),
            bool(s.get("fell_back")),
            s.get("error"),
            self.ctx.total,
        )
        self.pending.append(ev)
        self.summaries.append(
            CompactionRecord(
                ev,
                step_no,
                s["text"],
                tuple(done.summarized),
                before,
                (self.ctx.msgs, len(self.ctx.msgs)),
                self._lost(total),
                total,
                tuple(done.story),
                preps[-1] if preps else None,
            )
        )
        return True

    # -- the totals -----------------------------------------------------------------------------------
    def metrics(self) -> Metrics:
        steps, rec_costs = self.steps, self.recorded_costs
        n = len(steps)
        totals = [s.tokens for s in steps]
        rec_inputs = [s.recorded_input for s in steps if s.recorded_input is not None]
        return Metrics(
            steps=n,
            total_input_tokens=sum(totals),
            cost_usd=round(sum(s.cost for s in steps), 6),
            recorded_cost_usd=round(sum(rec_costs), 6) if rec_costs else None,
            peak_context=max(totals, default=0),
            mean_context=(sum(totals) / n) if n else 0.0,
            compactions=self.compactions,
            summary_tokens=self.summary_tokens,
            tokens_pruned=sum(s.pruned_tokens for s in steps),
            overflows=self.overflows,
            rereads=self.rereads.count,
            recorded_total_input=int(sum(rec_inputs)) if rec_inputs else None,
        )


def replay(
    session: Session,
    settings: ReplaySettings | None = None,
    *,
    progress: Callable[[float], None] | None = None,
    summarize: SummaryFn | None = None,
    incremental: bool | None = None,
    summaries: SummaryCache | None = None,
) -> Replay:
    """Replay ``session`` under ``settings`` (see :mod:`inspector.replay`). Summaries come from
    ``summarize``, else the policy's style through ``summaries`` (the caller's cache; without one,
    a cache for this replay). ``incremental=False`` applies the pruning strategy to the whole
    context at every call (the reference the incremental runners are tested against; default
    :data:`~inspector.replay.settings.INCREMENTAL`)."""
    with gc_paused():
        return ReplayRun(
            session,
            settings or ReplaySettings(),
            summarize=summarize,
            summaries=summaries,
            incremental=incremental,
            progress=progress,
        ).run()
