"""A finished replay priced with each provider's prompt cache: per call, the prompt split into
cache read, cache write and uncached input; the calls whose cached prefix shrank and what broke it;
the billed cost; and how far the model agrees with the cache usage the session recorded.

Computed from a :class:`~inspector.replay.Replay` after the fact (the replay loop is untouched):
its steps hold the context sent at each call (the same list object until a compaction replaces it;
pruning changes recorded as events, the exact sent context rebuilt by ``step_detail``), and the
answers' timestamps give the idle time between calls. What a call shares with the previous one:

* the whole previous prompt when the context only grew since (the usual agent loop);
* the system prompt and tools only after a compaction (the history is replaced from its start);
* the messages before the first one that changed, after a prune or an undone prune (found by
  comparing the two sent contexts message by message).

The provider family's rule (:mod:`.family`: :mod:`.anthropic`, :mod:`.openai`, or no cache model)
turns that into read / write / uncached; :mod:`.prices` prices them. The compactions'
summarisation requests are calls of their own, priced apart (:mod:`.summaries`) and added to the
billed cost; they do not change what the next call reads.

This module is the pricing loop and its report; what it reads lives beside it: each answer's
recorded facts (:mod:`.facts`), the session's size fit (:mod:`.fit`, :mod:`.sizes`), when the
cache was used and how long it idled (:mod:`.timing`), what a call shares with the previous one
(:mod:`.shared`) and why a call read what it read (:mod:`.causes`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from itertools import repeat
from typing import TYPE_CHECKING, Any, NamedTuple

from ..gcpause import gc_paused
from ..importers.opencode import summary_usage
from ..recon.flags import sent_fewer, threshold
from ..replay.run import sends_what_was_sent
from ..replay.sizes import UNFITTED, SizeFit, changed_size
from ..session.models import CompactionEntry
from ..session.tree import Session
from .causes import (
    AGENT_SWITCH,
    DISAGREE_MIN,
    DISAGREE_SHARE,
    ENTRY_GONE,
    LOOKBACK,
    MODEL_SWITCH,
    OPENAI_ROUTING_NOTE,
    REASONING,
    START,
    THINKING,
    TOOL_LOAD,
    WARM_START,
    alive,
    blocks_appended,
    disagreement,
    invalidation,
    server_side,
)
from .facts import reasoned, session_facts, thinking_changes
from .family import rule_for
from .fit import base_tokens, session_fit
from .openai import drops_earlier_reasoning
from .prices import LONG, Rates, long_context, rates_for
from .rule import CacheRule, splitter
from .shared import Shared
from .summaries import SOURCE as SUMMARY_SOURCE
from .summaries import SummaryCall, summary_calls

if TYPE_CHECKING:
    from ..replay.results import CompactionRecord

MODELS = ("auto", "anthropic", "openai", "none")
RETENTIONS = ("auto", "short", "long", "none")


_new = tuple.__new__  # a CacheStep from its fields' tuple, without NamedTuple's Python-level __new__


class CacheStep(NamedTuple):
    """One call's prompt as the cache model splits it, beside what the provider recorded."""

    step: int
    entry_index: int
    family: str
    prompt: int
    read: int
    write: int
    uncached: int
    recorded_read: int | None
    recorded_write: int | None
    recorded_input: int | None
    cost: float
    recorded_cost: float | None
    idle_seconds: float | None
    invalidation: dict[str, Any] | None = None
    disagreement: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "cache": {"read": self.read, "write": self.write, "uncached": self.uncached},
            "recordedCache": {"read": self.recorded_read, "write": self.recorded_write},
            "billedCost": round(self.cost, 6),
        }


_NOTHING = (None, None, None, None)
"""A call that was never billed: no recorded cost, idle time, invalidation or disagreement."""


@dataclass(frozen=True)
class CacheReport:
    model: str
    retention: str
    steps: tuple[CacheStep, ...]
    sizes: str
    """"recorded" (each call's recorded prompt: the as-recorded replay), "recorded + fitted change"
    (a what-if: each call's recorded prompt plus ``scale ×`` what the what-if changed in its
    context, in replayed tokens), "fitted" (hidden + scale × replayed tokens, for calls with no
    recorded prompt) or "counted" (the replayed tokens: no recorded usage to fit a hidden prefix to)."""
    fit: SizeFit
    rules: dict[str, CacheRule] = field(default_factory=dict)
    rates: dict[str, Rates] = field(default_factory=dict)
    summaries: tuple[SummaryCall, ...] = ()
    """The compactions' summarisation requests, priced (:mod:`.summaries`)."""
    start: str | None = None
    """How the first call's read is modelled when not as a cold start (:data:`WARM_START`), else None."""
    departs: int | None = None
    """A what-if's first call (step) whose context is not the one the session sent (None: as
    recorded, or the same contexts throughout: :func:`departure`). From there on the recorded reads
    are of the session's own contexts: they differ from the predicted ones by design, and no
    disagreement is looked for (its causes speak of the provider, not of the what-if)."""

    @property
    def departed(self) -> str:
        """Said after a figure compared with the recorded usage: a what-if is compared with what the
        session sent, which it differs from by design from :attr:`departs` on ("" as recorded)."""
        return (
            "" if self.departs is None else f" (a what-if from call {self.departs}: differs by design there)"
        )

    # -- metrics ----------------------------------------------------------------------------
    @property
    def billed_cost(self) -> float:
        """Every call's billed prompt, and the compactions' summarisation requests."""
        return sum(s.cost for s in self.steps) + self.summary_cost

    @property
    def summary_cost(self) -> float:
        return sum(c.cost for c in self.summaries)

    @property
    def hit_rate(self) -> float | None:
        total = sum(s.prompt for s in self.steps)
        return sum(s.read for s in self.steps) / total if total else None

    @property
    def invalidations(self) -> list[CacheStep]:
        return [s for s in self.steps if s.invalidation is not None]

    def _recorded(self) -> list[CacheStep]:
        """The calls that record a cache read, under a cache model (a provider with none has
        nothing to check)."""
        return [s for s in self.steps if s.recorded_read is not None and s.family != "none"]

    @property
    def read_error(self) -> float | None:
        """Σ|predicted − recorded| / Σ recorded cache reads; None when nothing is recorded."""
        rec = self._recorded()
        total = sum(s.recorded_read or 0 for s in rec)
        return sum(abs(s.read - (s.recorded_read or 0)) for s in rec) / total if total else None

    @property
    def read_total_error(self) -> float | None:
        """(Σ predicted − Σ recorded) / Σ recorded cache reads, over the calls that recorded them."""
        rec = self._recorded()
        total = sum(s.recorded_read or 0 for s in rec)
        return (sum(s.read for s in rec) - total) / total if total else None

    def server_side_share(self) -> tuple[float | None, int]:
        """The part of :attr:`read_total_error` at the calls whose read the provider's cache servers
        decided (:func:`server_side`): Σ (predicted − recorded) over them / Σ recorded cache reads
        (None when nothing is recorded), and how many such calls."""
        rec = self._recorded()
        total = sum(s.recorded_read or 0 for s in rec)
        side = [s.read - (s.recorded_read or 0) for s in rec if server_side(s.disagreement)]
        return (sum(side) / total if total else None), len(side)

    @property
    def recorded_cost(self) -> float | None:
        costs = [s.recorded_cost for s in self.steps if s.recorded_cost is not None]
        return sum(costs) if costs else None

    @property
    def cost_error(self) -> float | None:
        """(predicted − recorded) / recorded billed input cost, over the calls that recorded usage."""
        rec = self.recorded_cost
        if not rec:
            return None
        return (sum(s.cost for s in self.steps if s.recorded_cost is not None) - rec) / rec

    def metrics(self) -> dict[str, Any]:
        inv = self.invalidations
        err, tot, cerr = self.read_error, self.read_total_error, self.cost_error
        side, side_calls = self.server_side_share()
        return {
            "billedCostUsd": round(self.billed_cost, 6),
            "summarisationCostUsd": round(self.summary_cost, 6),
            "summarisationRequests": sum(c.requests for c in self.summaries),
            "cacheHitRate": None if self.hit_rate is None else round(self.hit_rate, 4),
            "invalidations": len(inv),
            "invalidationPremiumUsd": round(
                sum(s.invalidation["premiumUsd"] for s in inv if s.invalidation), 6
            ),
            "tokensRewritten": sum(s.invalidation["tokensRewritten"] for s in inv if s.invalidation),
            "cacheReadError": None if err is None else round(err, 4),
            "cacheReadTotalError": None if tot is None else round(tot, 4),
            "cacheReadServerSideError": None if side is None else round(side, 4),
            "serverSideCalls": side_calls,
            "recordedBilledCostUsd": None if self.recorded_cost is None else round(self.recorded_cost, 6),
            "billedCostError": None if cerr is None else round(cerr, 4),
            "cacheModel": self.model,
            "cacheSizes": self.sizes,
        }

    def describe(self) -> dict[str, Any]:
        """The model's assumptions: per model name its rule, source and rates; the size fit."""
        return {
            "model": self.model,
            "retention": self.retention,
            "sizes": self.sizes,
            "hiddenPrefix": self.fit.hidden,
            "whatIfDepartsAtStep": self.departs,
            "scale": round(self.fit.scale, 4),
            "tails": dict(self.fit.tail),
            "rules": {
                name: {
                    "family": r.family,
                    "source": r.source,
                    "minTokens": r.min_tokens,
                    "ttlSeconds": r.ttl_seconds,
                    "readMultiplier": r.read_multiplier,
                    "writeMultiplier": r.write_multiplier if r.writes else None,
                }
                for name, r in self.rules.items()
            },
            "rates": {
                name: {"input": r.input, "cacheRead": r.read, "cacheWrite": r.write, "source": r.source}
                for name, r in self.rates.items()
            },
        }

    def annotate(self, replay_dict: dict[str, Any]) -> dict[str, Any]:
        """A replay's ``as_dict()`` with this report's fields: each step's ``cache`` and
        ``recordedCache`` (and ``billedCost``), the metrics, and a ``cache`` section (the model,
        the invalidations, the calls where the model and the recorded usage disagree). Steps given
        as an iterator (``Replay.as_dict(lazy=True)``) stay one: each annotated when it is read."""
        given = replay_dict["steps"]
        steps = ({**d, **c.as_dict()} for d, c in zip(given, self.steps, strict=True))
        return {
            **replay_dict,
            "metrics": {**replay_dict["metrics"], **self.metrics()},
            "steps": list(steps) if isinstance(given, list) else steps,
            "cache": {
                **self.describe(),
                "invalidations": self.invalidation_rows(),
                "disagreements": self.disagreements(),
                "summarisation": {"source": SUMMARY_SOURCE, "calls": [c.as_dict() for c in self.summaries]},
            },
        }

    def invalidation_rows(self) -> list[dict[str, Any]]:
        return [
            {"step": s.step, "entryIndex": s.entry_index, **(s.invalidation or {})}
            for s in self.invalidations
        ]

    def disagreements(self) -> list[dict[str, Any]]:
        return [
            {
                "step": s.step,
                "entryIndex": s.entry_index,
                "predictedRead": s.read,
                "recordedRead": s.recorded_read,
                "cause": s.disagreement,
            }
            for s in self.steps
            if s.disagreement
        ]


def not_billed(st: Any, read: int | None, write: int | None, inp: int | None) -> bool:
    """A failed or aborted call whose usage is all zero never reached the model: no cache read or
    write, nothing billed, and the next call follows the last one that did. So does an answer with
    neither content nor usage (the cache loop tests it beside this): nothing shows a request was
    made. (The OpenCode importer once made such answers of the ``patch`` part OpenCode writes after
    a step's ``step-finish``; it now keeps that part with its step.)"""
    return st.stop_reason in ("error", "aborted") and read == 0 and write == 0 and inp == 0


def cache_replay(
    replay: Any, session: Session | None = None, *, model: str = "auto", retention: str = "auto"
) -> CacheReport:
    """Price ``replay`` with the prompt cache (see the module docstring). ``model``: "auto" (each
    call by the provider that answered it), "anthropic", "openai" or "none"; ``retention``: pi's
    ``cacheRetention`` ("short": 5 min Anthropic / 10 min OpenAI, "long": 1 h / 24 h, "none"), or
    "auto": long for a family whose recorded reads show it, else short."""
    with gc_paused():
        return _cache_replay(replay, session, model, retention)


class _Terms(NamedTuple):
    """How one answering model's calls are priced (looked up once per model a replay meets)."""

    rule: CacheRule
    rate: Rates
    tail: int
    """The fitted uncached tail of the rule's family."""
    tiered: tuple[int, float] | None
    """The model's long-context threshold and multiplier (:func:`long_context`)."""
    ttl: float
    family: str
    enabled: bool
    writes: bool
    split: Callable[..., tuple[int, int, int]]
    """:func:`splitter` of the rule."""
    drops: bool = False
    """The model drops earlier turns' reasoning (:data:`REASONING`)."""
    lookback: int = 0
    """:attr:`CacheRule.lookback_blocks` (:data:`LOOKBACK`)."""


class _Pricing:
    """What pricing one replay reads once: the session's facts and size fit, the rules and rates
    (:attr:`rules` and :attr:`rates`, as the report lists them) and the terms of each answering
    model, made when the replay first meets it."""

    def __init__(self, replay: Any, session: Session, model: str, retention: str) -> None:
        if model not in MODELS:
            raise ValueError(f"unknown cache model {model!r}; choose one of {', '.join(MODELS)}")
        if retention not in RETENTIONS:
            raise ValueError(f"unknown cache retention {retention!r}; choose one of {', '.join(RETENTIONS)}")
        self.model, self.retention = model, retention
        self.facts = session_facts(session)
        self.entries = [st.entry_index for st in replay.steps]
        self.picked = self.facts.picked(self.entries)
        own = self.picked if session is replay.session else None  # the fit's too, when it fits these steps
        self.fit, self.long = session_fit(replay, own) if replay.steps else (UNFITTED, frozenset[str]())
        self.anchored = sends_what_was_sent(replay.session, replay.settings)
        """Each call's prompt is the recorded one (the replay sends what was sent); else the recorded
        prompt changed by what the replay changed (:meth:`changed`): the size its overflow check reads."""
        self.base = base_tokens(replay) if replay.steps and not self.anchored and self.fit.fitted else {}
        """A what-if's calls: their as-recorded context (:func:`base_tokens`), which their recorded
        prompts measure (:meth:`changed`); on Anthropic their recorded input is then the tail, as
        in the as-recorded replay."""
        self.departs = departure(replay.steps, self.base)
        self.judged = len(replay.steps) if self.departs is None else self.departs
        """The calls a disagreement is looked for at: while the replay sends the session's own contexts."""
        self.shared = Shared(replay)
        self.thinking = thinking_changes(session, replay.path, self.entries)
        """Answer → the thinking level change since the previous answer (:data:`THINKING`)."""
        self.limit = _limit(replay.steps)
        self.never_read = _never_read(self.picked[1])
        self.rules: dict[str, CacheRule] = {}
        self.rates: dict[str, Rates] = {}
        self.terms: dict[str, _Terms] = {}

    def terms_of(self, name: str, answer: Any) -> _Terms:
        """The terms of model ``name`` (``answer``: a message it gave), made and kept."""
        rule = self.rules[name] = rule_for(answer, self.model, self.retention, self.long)
        rate = self.rates[name] = rates_for(
            name, rule.family, rule.read_multiplier, rule.write_multiplier, self.facts.rates.get(name)
        )
        got = self.terms[name] = _Terms(
            rule,
            rate,
            self.fit.tail_of(rule.family),
            long_context(name),
            rule.ttl_seconds,
            rule.family,
            rule.enabled,
            rule.writes,
            splitter(rule),
            rule.enabled
            and rule.family == "openai"
            and drops_earlier_reasoning(name, getattr(answer, "api", None)),
            rule.lookback_blocks if rule.enabled else 0,
        )
        return got

    def long_rates(self, name: str, threshold: int) -> Rates:
        """Model ``name``'s long-context rates (made once, kept in :attr:`rates` under their own name)."""
        key = f"{name} (prompts over {threshold:,})"
        got = self.rates.get(key)
        if got is None:
            rule, rate = self.terms[name][:2]
            recorded = self.facts.rates.get((name, LONG))
            got = self.rates[key] = rates_for(
                name, rule.family, rule.read_multiplier, rule.write_multiplier, recorded, LONG, rate
            )
        return got

    def calls(self, steps: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        """Each of the replay's steps, its entry index and its answer's recorded read, write, input,
        input cost, request start, cache use and model name (:attr:`Facts.calls`)."""
        return zip(steps, self.entries, *self.picked[1:], strict=True)

    def prompt(self, entry: int, st: Any) -> int:
        """The prompt priced at the call answered at ``entry`` (step ``st``): the recorded one when the
        replay sends what was sent, a what-if's recorded one changed by what it changed
        (:meth:`changed`), or the fitted size of the replayed context when none was recorded."""
        if not (recorded := st.recorded_input):
            return self.fit.size(st.tokens)
        return int(recorded) if self.anchored else self.changed(entry, recorded, st.tokens)

    def changed(self, entry: int, recorded: int, tokens: int) -> int:
        """A what-if's prompt at the call answered at ``entry``: what was sent (``recorded``), changed
        by the fitted size of what the what-if changed in its context (``tokens`` replayed against
        the as-recorded :attr:`base`); no less than the prefix every request sends (or the recorded
        prompt, when that is smaller). A call with no as-recorded context gets the fitted size."""
        was = self.base.get(entry)
        if was is None:
            return self.fit.size(tokens)
        return changed_size(int(recorded), tokens - was, self.fit)

    def sizes(self, replay: Any) -> str:
        """Where the prompts' sizes came from (:attr:`CacheReport.sizes`)."""
        if any(st.recorded_input for st in replay.steps):
            if self.anchored:
                return "recorded"
            if self.base:
                return "recorded + fitted change"
        return "fitted" if self.fit.fitted else "counted"


def _too_wide(st: Any, prev_st: Any, lookback: int) -> int | None:
    """The first message call ``st`` appended (its entry index) when it appended more content blocks
    than the provider looks back from a breakpoint (:data:`LOOKBACK`), else None. Counted only where
    it appended three messages or more (a tool call's result is a message of its own): an answer
    and one message are taken to be within reach, as counting every call's blocks would cost a
    fifth of the cache model's time."""
    start, end = prev_st._length, st._length
    if end - start > 2 and blocks_appended(st._segment, start, end) > lookback:
        return st._segment[start].entry_index
    return None


def _cut(
    rule: CacheRule,
    reuse: int,
    reach: int,
    hidden: int,
    limit: int,
    why: str,
    at: int,
    cause: str | None = None,
    broke: int | None = None,
) -> tuple[int, str | None, int | None]:
    """(reuse, cause, entry that broke the cache) of a call that can read no further than ``limit``
    (:data:`LOOKBACK`, :data:`REASONING`): ``why`` at entry ``at`` when that is less than it would
    read, and no other cause was found."""
    if limit >= reuse:
        return reuse, cause, broke
    return rule.reusable(limit, reach, hidden), cause or why, broke if cause else at


def _break(k: int, st: Any, prev_st: Any, facts: Any, shared: Shared) -> tuple[str | None, int | None, int]:
    """(cause, entry that broke the cache, tokens shared with the previous call) for step ``k``."""
    if k == 0:
        return START, None, 0
    if st.entry_index in facts.agent_switch:
        return AGENT_SWITCH, st.entry_index, 0
    if (result := facts.tool_loads.get(st.entry_index)) is not None:
        return TOOL_LOAD, result, 0
    if not st.events and prev_st is not None and st._segment is prev_st._segment:
        return None, None, 0  # the context only grew: nothing to compare
    return shared.at(k)


def _disagrees(
    p: _Pricing,
    k: int,
    read: int,
    rec_read: int,
    prompt: int,
    warm: bool,
    idle: float | None,
    prev_prompt: int,
    earlier: list[tuple[int, float | None]],
    t: float | None,
    ttl: float,
    family: str,
    st: Any,
    prev_sent: int,
) -> str | None:
    """:func:`disagreement` of call ``k`` (step ``st``, requested at ``t``) in cache replay ``p``,
    with OpenAI's routing note where the conversation's entry was gone. The prompts before the
    previous one (``earlier``), whether the previous answer called ToolSearch, whether the recorded
    prompt fell short of the file (its growth since the previous call against the file's, ``st``'s
    replayed tokens against ``prev_sent``, for a call as recorded that has a previous one:
    :func:`_fewer`) and whether the replay ever recorded a read are looked up only when less was
    read than predicted."""
    short = rec_read < read
    facts, size = p.facts, p.fit.size
    grew = (
        (prompt - prev_prompt, size(st.tokens) - size(prev_sent))
        if p.anchored and k and prev_prompt
        else None
    )
    why = disagreement(
        k,
        read,
        rec_read,
        prompt,
        warm,
        idle,
        facts.uses_dcp,
        prev_prompt,
        p.fit.hidden,
        partial(facts.follows_interruption, st.entry_index),
        partial(alive, earlier, t, ttl) if short else (),
        partial(facts.follows_tool_search, st.entry_index) if short else False,
        partial(_fewer, *grew, p.limit) if short and grew is not None else None,
        p.never_read if short else False,
    )
    if family == "openai" and why is not None and ENTRY_GONE in why:
        why += OPENAI_ROUTING_NOTE
    return why


def _fewer(
    recorded_growth: float, file_growth: float, limit: Callable[[], int]
) -> tuple[int, float, float] | None:
    """(shortfall, recorded growth, the file's growth) when a call's recorded prompt fell short of
    what the file explains since the previous call (:func:`inspector.recon.flags.sent_fewer`, at
    ``limit()``: the check's threshold for the largest recorded prompt)."""
    short = sent_fewer(recorded_growth, file_growth, limit())
    return (short, recorded_growth, file_growth) if short else None


def _never_read(reads: Sequence[int | None]) -> Callable[[], bool]:
    """Whether none of ``reads`` (the calls' recorded cache reads) read anything, found the first
    time it is asked."""

    @cache
    def never() -> bool:
        return not any(reads)

    return never


def _limit(steps: Sequence[Any]) -> Callable[[], int]:
    """The check's threshold (:func:`inspector.recon.flags.threshold`) for the largest prompt
    ``steps`` record, found the first time it is asked."""

    @cache
    def limit() -> int:
        return threshold(max((x for st in steps if (x := st.recorded_input) is not None), default=0))

    return limit


def _cache_replay(replay: Any, session: Session | None, model: str, retention: str) -> CacheReport:
    p = _Pricing(replay, session or replay.session, model, retention)
    steps = _priced(replay, p)
    calls = _summary_calls(replay, p, steps)
    start = WARM_START if p.facts.warm_start and p.fit.hidden > 0 else None
    return CacheReport(
        model, retention, steps, p.sizes(replay), p.fit, p.rules, p.rates, calls, start, p.departs
    )


def departure(steps: Sequence[Any], base: Mapping[int, int]) -> int | None:
    """The first of a what-if's ``steps`` whose replayed context differs from the as-recorded one
    at the same call (``base``: :func:`base_tokens`; a call it lacks differs), or None."""
    if not base:
        return None
    return next((k for k, st in enumerate(steps) if base.get(st.entry_index) != st.tokens), None)


def _summary_calls(replay: Any, p: _Pricing, steps: Sequence[CacheStep]) -> tuple[SummaryCall, ...]:
    """The replay's compactions' summarisation requests, each priced by the terms of the call it
    came before (the last call's when none follows); ``steps``: the calls priced."""
    if not replay.summaries or not replay.steps:
        return ()
    names, answers, last = p.picked[-1], p.facts.models, len(replay.steps) - 1

    def terms_at(k: int) -> tuple[CacheRule, Rates]:
        k = min(max(k, 0), last)
        name = names[k]
        t = p.terms.get(name) or p.terms_of(name, answers[p.entries[k]])
        return t.rule, t.rate

    def last_call(k: int) -> tuple[int, int, bool]:
        """The last billed call before call ``k``: its prompt, its replayed context, and whether
        the cache it left was alive at call ``k`` (not when call ``k`` came after its lifetime:
        the compaction between may have too)."""
        j = next((j for j in range(min(k, len(steps)) - 1, -1, -1) if steps[j].prompt), None)
        if j is None:
            return 0, 0, False
        idle = steps[k].idle_seconds if k < len(steps) else None
        return steps[j].prompt, replay.steps[j].tokens, idle is None or idle <= terms_at(k)[0].ttl_seconds

    entries = replay.session.entries

    def recorded(rec: CompactionRecord) -> dict[str, Any] | None:
        ei = rec.entry_index
        e = entries[ei] if isinstance(ei, int) and 0 <= ei < len(entries) else None
        return summary_usage(getattr(e, "details", None)) if isinstance(e, CompactionEntry) else None

    agent = getattr(replay.session, "format", "pi")
    return summary_calls(replay.summaries, p.shared.counter, p.fit, terms_at, agent, last_call, recorded)


_NO_NAME = object()
"""No model yet (:func:`_priced` looks a model's terms up when the model changes)."""


class _OwnCaches:
    """What the model and the thinking level let a call read: the model of the previous billed call,
    each model's last call before a switch away from it (:data:`MODEL_SWITCH`: prompt, tail, when
    its cache was last used, the context's changes then), the changes so far (calls where the
    context did more than grow), and the answers after a change of thinking level (:data:`THINKING`:
    answer → the change's entry)."""

    __slots__ = ("changes", "hidden", "last", "name", "thinking")

    def __init__(self, thinking: Mapping[int, int], hidden: int) -> None:
        self.name: Any = _NO_NAME
        self.last: dict[Any, tuple[int, int, float | None, int]] = {}
        self.changes = 0
        self.thinking = thinking
        self.hidden = hidden
        """The session's hidden prefix: the system prompt and tools."""

    def at(
        self,
        name: Any,
        ei: int,
        terms: _Terms,
        t: float | None,
        reach: int,
        prev: tuple[int, int, float | None],
        now: tuple[int, bool, str | None, int | None],
    ) -> tuple[int, bool, str | None, int | None]:
        """The call answered at ``ei`` by model ``name`` (its ``terms``), asked at ``t``, whose
        context alone lets it read ``now`` (reuse, warm, cause, the entry that broke the cache);
        ``prev``: the previous billed call's prompt, tail and cache use, ``reach``: what it left
        cached. Returns the same for the model and the thinking level: another model than the
        previous call's reads only what it cached itself (its lifetime counted in what it reads:
        the call is then warm, so a loss is the switch's), and after a change of thinking level on
        Anthropic the call reads only the system prompt and tools; a change the file records at
        this call stays its cause."""
        reuse, warm, cause, broke = now
        rule, hidden = terms.rule, self.hidden
        thinks = ei in self.thinking and terms.family == "anthropic"
        switch = self.name is not _NO_NAME and name != self.name
        if switch:  # what the previous model leaves in its own cache
            self.last[self.name] = (*prev, self.changes)
        self.name = name
        if cause is not None or thinks:
            self.changes += 1
        if switch:
            reuse, alive = _own_cache(self.last.get(name), self.changes, t, terms.ttl, hidden, rule)
            reuse, warm = (reuse if alive else 0), True
            cause, broke = (MODEL_SWITCH, None) if cause is None else (cause, broke)
        if thinks:
            reuse = min(reuse, rule.reusable(hidden, reach, hidden))
            cause, broke = (THINKING, self.thinking[ei]) if cause is None else (cause, broke)
        return reuse, warm, cause, broke


def _own_cache(
    last: tuple[int, int, float | None, int] | None,
    changes: int,
    t: float | None,
    ttl: float,
    hidden: int,
    rule: CacheRule,
) -> tuple[int, bool]:
    """(what a call can read, whether that cache is warm) when its model differs from the previous
    call's (:data:`MODEL_SWITCH`): ``last``, that model's own last call (prompt, tail, when its cache
    was last used, the context's changes then) or None; ``changes``, the changes so far."""
    if last is None:
        return 0, True
    prompt, tail, used, then = last
    warm = t is None or used is None or t - used <= ttl
    reach = prompt - tail if prompt > tail else 0
    if then == changes:  # the context only grew since that call: its whole prefix
        return reach, warm
    return rule.reusable(hidden, reach, hidden), warm


def _priced(replay: Any, p: _Pricing) -> tuple[CacheStep, ...]:
    """Each call of ``replay`` split and priced, in order (the running state below, call to call)."""
    facts, shared, anchored, terms = p.facts, p.shared, p.anchored, p.terms
    answers, switched = facts.models, facts.agent_switch | facts.tool_loads.keys()
    hidden, size = p.fit.hidden, p.fit.size
    warm_start = facts.warm_start and hidden > 0
    dis_min, dis_share = DISAGREE_MIN, DISAGREE_SHARE
    out: list[tuple[Any, ...]] = []  # each call's CacheStep fields
    prev_prompt = prev_tail = prev_sent = 0
    earlier: list[tuple[int, float | None]] = []  # (prompt, when its cache was last used), oldest first
    last_t: float | None = None
    prev_st: Any = None
    last_name: Any = _NO_NAME
    own, thinking = _OwnCaches(p.thinking, hidden), p.thinking
    # REASONING: (prompt, answer) of this turn's first call that reasoned; the last turn's
    turn_cap = cap = None
    for k, (st, ei, rec_read, rec_write, rec_in, rec_cost, t, end, name) in enumerate(p.calls(replay.steps)):
        if name is not last_name:  # another model than the previous call's: its terms
            got = terms.get(name) or p.terms_of(name, answers[ei])
            rule, model_rate, fitted_tail, tiered, ttl, family, enabled, writes, split, drops, lookback = got
            recorded_tail = family == "anthropic" and (anchored or bool(p.base))  # input: the tail
            last_name = name
        if drops and ei in facts.turn_starts:  # a new turn: the previous one's reasoning is dropped
            cap, turn_cap = turn_cap, None
        if (rec_in == 0 and not_billed(st, rec_read, rec_write, rec_in)) or (
            rec_in is None and not answers[ei].content
        ):
            out.append((k, ei, family, 0, 0, 0, 0, None, None, None, 0.0) + _NOTHING)
            prev_st = st
            continue
        prompt = p.prompt(ei, st)
        rate = p.long_rates(name, tiered[0]) if tiered is not None and prompt > tiered[0] else model_rate
        # idle: from when the previous request used the cache (:func:`idle_between`), never below 0
        idle = None if t is None or last_t is None else (d if (d := t - last_t) > 0.0 else 0.0)
        warm = k > 0 and (idle is None or idle <= ttl)
        tail = rec_in if recorded_tail and rec_in is not None else fitted_tail
        reach = d if (d := prev_prompt - prev_tail) > 0 else 0  # what the previous call left in the cache
        if k and not st.events and st._segment is prev_st._segment and ei not in switched:
            cause = broke = None  # the context only grew (:func:`_break`)
            reuse = reach if enabled else rule.reusable(reach, reach, hidden)
            if lookback and (first := _too_wide(st, prev_st, lookback)) is not None:
                reuse, cause, broke = _cut(rule, reuse, reach, hidden, hidden, LOOKBACK, first)
        else:
            cause, broke, shared_tokens = _break(k, st, prev_st, facts, shared)
            common = reach if cause is None else min(reach, size(shared_tokens) if shared_tokens else hidden)
            reuse = reach if cause is None and enabled else rule.reusable(common, reach, hidden)
        if cause is not None or name != own.name or ei in thinking:  # MODEL_SWITCH, THINKING
            now = reuse, warm, cause, broke
            reuse, warm, cause, broke = own.at(name, ei, got, t, reach, (prev_prompt, prev_tail, last_t), now)
        if cap is not None:  # read up to where the previous turn's reasoning began (REASONING)
            reuse, cause, broke = _cut(rule, reuse, reach, hidden, cap[0], REASONING, cap[1], cause, broke)
            cap = None
        if warm_start and not prev_prompt:  # the first billed call: what other sessions cached (WARM_START)
            reuse, warm = hidden, True
        read, write, uncached = split(prompt, reuse, warm, tail)
        inv = None
        if k > 0 and enabled and (cause is not None or not warm):
            lost = split(prompt, reach, True, tail)[0] - read
            inv = invalidation(rule, rate, lost, cause, warm, broke, idle)
        rc = None if rec_read is None else rec_cost
        if rc is None and rec_read is not None:
            rc = rate.cost(rec_read, rec_write or 0, rec_in or 0)
        gap = abs(read - rec_read) if rec_read is not None and enabled else 0
        dis = None
        if gap > dis_min and gap > dis_share * prompt and k < p.judged:
            dis = _disagrees(
                p, k, read, rec_read, prompt, warm, idle, prev_prompt, earlier, t, ttl, family, st, prev_sent
            )
        rw = rec_write if writes or rec_write else (0 if rec_read is not None else None)
        cost = read * rate.read + write * rate.write + uncached * rate.input
        row = (k, ei, family, prompt, read, write, uncached, rec_read, rw, rec_in, cost, rc, idle, inv, dis)
        out.append(row)
        if prev_prompt:
            earlier.append((prev_prompt, last_t))
        prev_prompt, prev_tail, prev_st, prev_sent = prompt, tail, st, st.tokens
        if drops and turn_cap is None and reasoned(answers[ei]):
            turn_cap = (prompt, ei)
        last_t = end if end is not None else last_t
    return tuple(map(_new, repeat(CacheStep), out))
