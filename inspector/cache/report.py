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

The provider family's rule (:mod:`.anthropic`, :mod:`.openai`, or no cache model) turns that into
read / write / uncached; :mod:`.prices` prices them. The compactions' summarisation requests are
calls of their own, priced apart (:mod:`.summaries`) and added to the billed cost; they do not
change what the next call reads.
"""

from __future__ import annotations

import statistics
import weakref
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache, cached_property, partial
from itertools import accumulate, chain, compress, islice, repeat
from operator import add, attrgetter, itemgetter, mul, truediv
from typing import Any, NamedTuple

from ..gcpause import gc_paused
from ..importers.opencode import summary_usage
from ..numbers import MAX_TOKENS, finite_ms
from ..pruning.recorded import records_pruning
from ..recon.flags import fewer_words, sent_fewer, threshold
from ..replay.results import Pruned
from ..session.answers import Answers, answers, read_answers
from ..session.models import (
    AssistantMessage,
    CompactionEntry,
    CustomMessageEntry,
    ImageContent,
    MessageEntry,
    OpaqueBlock,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ..session.tree import Session, iso_to_ms
from .anthropic import rule as anthropic_rule
from .openai import IDLE_SECONDS as OPENAI_IDLE_SECONDS
from .openai import REASONING_SOURCE, drops_earlier_reasoning
from .openai import rule as openai_rule
from .prices import LONG, Rates, RateSums, long_context, openai_read_multiplier, rates_for
from .recorded import recorded_context_tokens
from .rule import NO_CACHE, CacheRule, splitter
from .sizes import UNFITTED, SizeFit, fit_columns, tails_of
from .summaries import SOURCE as SUMMARY_SOURCE
from .summaries import SummaryCall, summary_calls

MODELS = ("auto", "anthropic", "openai", "none")
RETENTIONS = ("auto", "short", "long", "none")
#: a call's predicted and recorded cache reads disagree when they differ by more than this share of
#: its prompt (and at least DISAGREE_MIN tokens)
DISAGREE_SHARE = 0.05
DISAGREE_MIN = 1024


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


# ---------------------------------------------------------------------------------------------
# Which rule a call follows
# ---------------------------------------------------------------------------------------------


def family_of(m: Any) -> str:
    """The cache family of the provider that answered ``m``: by provider, API and model name."""
    if not isinstance(m, AssistantMessage):
        return "none"
    return _family(m.provider, m.api, m.model)


def _family(provider: Any, api: Any, name: Any) -> str:
    """:func:`family_of` an answer by its provider, API and model name."""
    text = " ".join(x.lower() for x in (provider, api, name) if isinstance(x, str))
    if "anthropic" in text or "claude" in text:
        return "anthropic"
    model = (name or "").lower()
    if "openai" in text or "codex" in text or model.startswith(("gpt", "o1", "o3", "o4")):
        return "openai"
    return "none"


def rule_for(m: Any, model: str, retention: str, long: frozenset[str] = frozenset()) -> CacheRule:
    fam = family_of(m) if model == "auto" else model
    if retention == "auto":
        retention = "long" if fam in long else "short"
    name = getattr(m, "model", None)
    if fam == "anthropic":
        return anthropic_rule(name, retention)
    if fam == "openai":
        rule = openai_rule(openai_read_multiplier(name), retention, name)
        if drops_earlier_reasoning(name, getattr(m, "api", None)):  # REASONING: said in the rule's source
            rule = replace(rule, source=f"{rule.source}; at a new turn: {REASONING_SOURCE}")
        return rule
    return NO_CACHE


# ---------------------------------------------------------------------------------------------
# Sizes
# ---------------------------------------------------------------------------------------------

_FITS: weakref.WeakKeyDictionary[Session, dict[tuple[str, int | None], tuple[SizeFit, frozenset[str]]]] = (
    weakref.WeakKeyDictionary()
)
_BASES: weakref.WeakKeyDictionary[Session, dict[tuple[str, int | None], dict[int, int]]] = (
    weakref.WeakKeyDictionary()
)
"""Per session, branch and counter: each call's (entry index →) as-recorded context in replayed
tokens, the context its recorded prompt was measured on (made with the fit: :func:`base_tokens`)."""


def as_recorded(replay: Any) -> bool:
    s = replay.settings
    return s.compaction == "recorded" and s.strategy in ("none", "recorded")


def session_fit(
    replay: Any, picked: tuple[Sequence[Any], ...] | None = None
) -> tuple[SizeFit, frozenset[str]]:
    """The session's size fit (with each family's tail), on the context each recorded prompt was
    measured on: this replay's when its compactions are the recorded ones and its pruning is the
    agent's own (or there is none: its context before pruning), else the as-recorded context of
    the same branch and counter (walked once per session, with the agent's own pruning when the
    file records some, :func:`agent_pruned`:
    :func:`~inspector.cache.recorded.recorded_context_tokens`; replayed for the "usage" counter);
    and the families whose recorded reads show the long retention (see :func:`long_retention`).
    ``picked``: the facts of this replay's calls (:meth:`_Facts.picked`), when the caller has them."""
    from ..replay import ReplaySettings
    from ..replay import replay as run

    key = (replay.settings.counter, replay.settings.leaf)
    memo = _FITS.setdefault(replay.session, {})
    if key not in memo:
        base = replay.steps
        recorded = [s.recorded_input for s in base]
        settings = replay.settings
        pruned = agent_pruned(replay.session)
        if settings.compaction == "recorded" and (settings.strategy == "recorded" or not pruned):
            # what was sent: the agent's own pruning, or none (then: before this replay's pruning)
            tokens = [s.tokens if settings.strategy == "recorded" else s.tokens_before_pruning for s in base]
        else:
            walked = recorded_context_tokens(replay.session, settings.counter, settings.leaf, pruned)
            if walked is not None and walked[0] == [s.entry_index for s in base]:
                tokens = walked[1]
            else:  # the usage counter: the as-recorded replay itself
                base = run(
                    replay.session,
                    ReplaySettings(strategy="recorded", counter=settings.counter, leaf=settings.leaf),
                ).steps
                recorded = [s.recorded_input for s in base]
                tokens = [s.tokens for s in base]
        fit = fit_columns(tokens, recorded)
        _BASES.setdefault(replay.session, {})[key] = dict(
            zip([s.entry_index for s in base], tokens, strict=True)
        )
        if picked is None or base is not replay.steps:
            picked = session_facts(replay.session).picked([s.entry_index for s in base])
        fams, reads, _, inputs, _, starts, ends, _ = picked
        prompts = [int(rin or 0) for rin in recorded]
        hidden = partial_reads(prompts, reads)
        fit = replace(
            fit,
            tail=tails_of(fams, prompts, reads, inputs),
            hidden=hidden if hidden is not None else fit.hidden,
        )
        memo[key] = (fit, _long_retention(fams, prompts, reads, _milliseconds(starts), _milliseconds(ends)))
    return memo[key]


_PRUNED: weakref.WeakKeyDictionary[Session, bool] = weakref.WeakKeyDictionary()


def agent_pruned(session: Session) -> bool:
    """Does the file record pruning the agent did itself (OpenCode's cleared outputs, Claude Code's
    microcompact, DCP's compress: :func:`inspector.pruning.recorded.records_pruning`)? Then the
    recorded prompts were measured on the context after that pruning (looked for once per session,
    in the files of the agents that write it down: pi records none, and reaching every tool result
    of a long pi file costs a sixth of the cache model)."""
    if session.format not in ("opencode", "claude-code"):
        return False
    got = _PRUNED.get(session)
    if got is None:
        got = _PRUNED[session] = any(
            records_pruning(m)
            for e in session.entries
            if type(m := getattr(e, "message", None)) is ToolResultMessage and m.details is not None
        )
    return got


def base_tokens(replay: Any) -> dict[int, int]:
    """Each call's as-recorded context in replayed tokens, by entry index, on ``replay``'s branch
    and counter (what :func:`session_fit` fitted the sizes on)."""
    key = (replay.settings.counter, replay.settings.leaf)
    got = _BASES.get(replay.session, {}).get(key)
    if got is None:
        _FITS.get(replay.session, {}).pop(key, None)
        session_fit(replay)
        got = _BASES[replay.session][key]
    return got


def partial_reads(prompts: Sequence[int], reads: Sequence[int | None]) -> int | None:
    """The hidden prefix as the session's own cache saw it: the median of the recorded reads that
    stopped well short of the previous prompt (a compaction or a change kept only the system prompt
    and tools cached), when at least two calls show one; else None (the size fit's estimate). The
    calls' prompts and recorded reads, in order."""
    got = [
        r for p0, r in zip(prompts, reads[1:], strict=False) if r is not None and p0 and 1024 <= r < 0.6 * p0
    ]
    return int(statistics.median(got)) if len(got) >= 2 else None


def long_retention(calls: Sequence[tuple[Any, ...]]) -> frozenset[str]:
    """Families whose recorded calls, after more idle time than the short retention allows, mostly
    still read most of the previous prompt: the session ran with the long retention (Claude Code's
    1-hour cache, pi's ``PI_CACHE_RETENTION=long``). The evidence is the session's own usage. Each
    call is (family, prompt, read, input, start ms[, end ms]); the idle time runs from the previous
    answer's end (its start when no end is known) to the next request (see :func:`idle_between`)."""
    return _long_retention(
        [c[0] for c in calls],
        [c[1] for c in calls],
        [c[2] for c in calls],
        [c[4] for c in calls],
        [c[5] if len(c) > 5 else None for c in calls],
    )


def _long_retention(
    families: Sequence[str],
    prompts: Sequence[int],
    reads: Sequence[int | None],
    starts: Sequence[float | None],
    ends: Sequence[float | None],
) -> frozenset[str]:
    """:func:`long_retention` over the calls' columns."""
    shorts = {"anthropic": anthropic_rule(None).ttl_seconds, "openai": OPENAI_IDLE_SECONDS}
    used = [e if e is not None else t for t, e in zip(starts, ends, strict=True)]
    found = [
        (fam, read >= 0.5 * p0)
        for fam, read, t1, p0, t0 in zip(families[1:], reads[1:], starts[1:], prompts, used, strict=False)
        if (short := shorts.get(fam))
        and t0 is not None
        and t1 is not None
        and (t1 - t0) / 1000 > short
        and read is not None
        and p0
    ]
    votes: dict[str, list[bool]] = {}
    for fam, vote in found:
        votes.setdefault(fam, []).append(vote)
    return frozenset(f for f, v in votes.items() if sum(v) * 2 > len(v))


def _milliseconds(col: Sequence[float | None]) -> list[float | None]:
    """Times in s as ms (None stays None)."""
    if None in col:
        return [None if t is None else t * 1000 for t in col]
    return list(map(mul, col, repeat(1000)))


def idle_between(prev_used: float, start: float) -> float:
    """How long a cached prefix sat unused before a request: from when the previous request used
    it (:func:`used_at`) to this request's start, never negative."""
    return max(0.0, start - prev_used)


def output_rate(timings: Iterable[tuple[float | None, float | None, float]]) -> float | None:
    """The session's own output speed (tokens per second): the median over its answers of output
    tokens ÷ (answer complete − request start), from (start ms, end ms, output tokens); None
    when no answer has both times apart (other agents stamp one time per message)."""
    rates = [o * 1000 / (e - t) for t, e, o in timings if t is not None and e is not None and e > t and o > 0]
    return statistics.median(rates) if rates else None


def used_at(start: float | None, end: float | None, output: float, rate: float | None) -> float | None:
    """When a request read and refreshed the cache (ms): when the provider processed its prompt,
    just before it began to answer — the answer's end less the time its output took at the
    session's own rate (:func:`output_rate`), kept between the request's start and end.

    Sources: Anthropic refreshes an entry "each time the cached content is used" and OpenAI keeps a
    prefix for 5–10 minutes of "inactivity" (prompt-caching docs): the clock restarts when the
    prompt is processed, not when the request was sent nor when its answer ends. pi stamps each
    answer when its request begins (``message.timestamp``) and its entry when the answer is
    complete, so a request that waited minutes before answering (a queue, a stall) used the cache
    late. In the shared pi transcript 48d3…, a request whose 789-token answer took 9.2 minutes is
    followed by a full read of its prompt under the 5-minute cache, while a 13-second answer
    followed by 5 minutes of a running tool (5.1 minutes from its use to the next request) is
    followed by a full write. Without two distinct times (or a rate), the start."""
    if start is None or end is None or end <= start or rate is None or rate <= 0:
        return start
    return max(start, end - output * 1000 / rate)


def used_times(
    starts: list[float | None], ends: list[float | None], outputs: list[float], rate: float | None
) -> list[float | None]:
    """:func:`used_at` of each answer (the same arithmetic, a column at a time)."""
    if rate is None or rate <= 0:
        return list(starts)
    return [
        s if s is None or e is None or e <= s else max(s, e - o * 1000 / rate)
        for s, e, o in zip(starts, ends, outputs, strict=True)
    ]


# ---------------------------------------------------------------------------------------------
# What each call shares with the previous one
# ---------------------------------------------------------------------------------------------


def _first_change(prev: Sequence[Any], cur: Sequence[Any]) -> int:
    for i, (a, b) in enumerate(zip(prev, cur, strict=False)):
        if a is b or a.message is b.message:
            continue
        if a.entry_index != b.entry_index or a.message != b.message:
            return i
    return min(len(prev), len(cur))


_TYPE = attrgetter("type")
_PRUNES = ("pruned", "unpruned")


def _compared(steps: Sequence[Any]) -> list[int]:
    """The steps :meth:`_Shared.at` compares context by context: each step that undoes a prune in
    the same context as the step before, and that step."""
    out: set[int] = set()
    for k in range(1, len(steps)):
        cur = steps[k]
        if cur.events and cur._segment is steps[k - 1]._segment and "unpruned" in map(_TYPE, cur.events):
            out.update((k - 1, k))
    return sorted(out)


class _Shared:
    """Replayed tokens each call shares with the previous call's sent context, and the entry
    where they part (None: nothing changed)."""

    def __init__(self, replay: Any) -> None:
        from ..replay import session_counter

        self.replay = replay
        name = replay.settings.counter if replay.settings.counter != "usage" else "pi"
        self.counter = session_counter(replay.session, name)
        self._detail: dict[int, Any] = {}
        self._compactions = {s["step"]: s for s in replay.summaries}
        self._index: dict[int, tuple[list[Any], dict[int | None, int]]] = {}
        self._cum: dict[int, tuple[list[Any], list[int]]] = {}
        self._stream: Iterator[tuple[int, Sequence[Any]]] | None = None
        self._streamed: frozenset[int] = frozenset()
        self._last = -1  # the last step the stream gave

    def sent(self, k: int) -> Sequence[Any]:
        """The context sent at step ``k``. The steps :meth:`at` compares context by context (a
        prune undone in the same context, and the step before) come from one run of the replay's
        incremental runner over just those steps (:meth:`Replay.sent_contexts`: each costs what
        changed since the one before), taken in step order as the pricing loop asks; any other
        step from :meth:`Replay.step_detail` (``apply`` over its whole context)."""
        if k not in self._detail:
            if len(self._detail) > 2:
                self._detail.pop(min(self._detail))
            if self._stream is None:
                wanted = _compared(self.replay.steps)
                self._streamed = frozenset(wanted)
                self._stream = self.replay.sent_contexts(wanted)
            got = None
            if k in self._streamed and k > self._last:
                for j, ctx in self._stream:
                    self._last = j
                    if j == k:
                        got = ctx
                        break
            self._detail[k] = got if got is not None else self.replay.step_detail(k).after
        return self._detail[k]

    def at(self, k: int, exact: bool = False) -> tuple[str | None, int | None, int]:
        """(cause, entry index of the first changed message, shared replayed tokens); ``exact``
        compares the two sent contexts message by message even for a plain prune (tests)."""
        steps = self.replay.steps
        cur, prev = steps[k], steps[k - 1]
        if cur._segment is not prev._segment:
            rec = self._compactions.get(k) or {}
            first = cur._segment[0].entry_index if cur._length else None
            return "compaction", rec.get("entryIndex", first), 0
        if not cur.events:
            return None, None, prev.tokens
        kinds = set(map(_TYPE, cur.events))
        if kinds.isdisjoint(_PRUNES):
            return None, None, prev.tokens
        if "unpruned" not in kinds and not exact:
            return self._pruned(cur, prev)
        a, b = self.sent(k - 1), self.sent(k)
        i = _first_change(a, b)
        if i >= len(a):
            return None, None, prev.tokens
        shared = sum(self.counter.counts([c.message for c in b[:i]]))
        kind = "prune" if "pruned" in kinds else "unprune"
        return kind, b[i].entry_index if i < len(b) else None, shared

    def _pruned(self, cur: Any, prev: Any) -> tuple[str | None, int | None, int]:
        """A prune without an undo: the context is unchanged before the oldest newly pruned message,
        and the outputs pruned before it were pruned at the previous call already (strategies prune
        oldest first), so the shared part is the messages before it less what pruning saved then."""
        first = min(
            (min(ev.entry_indexes) for ev in cur.events if isinstance(ev, Pruned) and ev.entry_indexes),
            default=None,
        )
        pos = self._position(cur._segment, first) if first is not None else None
        if pos is None or pos >= prev._length:
            return None, None, prev.tokens
        saved = prev.tokens_before_pruning - prev.tokens
        return "prune", first, max(0, min(prev.tokens, self._cumulative(cur._segment, pos) - saved))

    def _position(self, seg: list[Any], entry: int) -> int | None:
        idx = self._index.get(id(seg))
        if idx is None or idx[0] is not seg or len(idx[1]) < len(seg):
            idx = (seg, {c.entry_index: i for i, c in reversed(list(enumerate(seg)))})
            self._index[id(seg)] = idx
        return idx[1].get(entry)

    def _cumulative(self, seg: list[Any], pos: int) -> int:
        """Replayed tokens of ``seg[:pos]`` (a running sum kept per context list)."""
        hit = self._cum.get(id(seg))
        if hit is None or hit[0] is not seg:
            hit = (seg, [0])
            self._cum[id(seg)] = hit
        cum = hit[1]
        if len(cum) <= pos:
            counts = self.counter.counts([c.message for c in seg[len(cum) - 1 : pos]])
            cum += islice(accumulate(counts, initial=cum[-1]), 1, None)
        return cum[pos]


# ---------------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Facts:
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
        return _called(self.content, (TOOL_SEARCH, "compress"))

    @cached_property
    def dcp(self) -> bool:
        """The session ran the DCP plugin (an answer calls its ``compress`` tool)."""
        return bool(self._called["compress"])

    @cached_property
    def tool_search(self) -> frozenset[int]:
        """Answers whose previous answer called Claude Code's ``ToolSearch`` (a deferred tool loaded:
        see :data:`TOOL_SEARCH_NOTE`)."""
        idx = list(self.models)
        return frozenset(idx[k + 1] for k in self._called[TOOL_SEARCH] if k + 1 < len(idx))

    @cached_property
    def interrupted(self) -> frozenset[int]:
        """Answers preceded (since the previous answer) by an agent's interruption marker: a request
        was sent and cut off there, with no usage recorded (see :data:`INTERRUPTED`)."""
        idx = list(self.models)
        return frozenset(idx[k] for k in (bisect_right(idx, i) for i in _given(self.marks)) if k < len(idx))

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


_FACTS: weakref.WeakKeyDictionary[Session, _Facts] = weakref.WeakKeyDictionary()


def session_facts(session: Session) -> _Facts:
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
        marks, _ByEntry(array("q", got.index), got.messages.__getitem__), contents, asked=got.asked
    )
    if session.format == "claude-code":
        facts = replace(facts, tool_loads=tool_loads(entries, got.index), warm_start=True)
    _FACTS[session] = facts
    return facts


def remember_facts(session: Session, facts: _Facts) -> None:
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
        self.starts += _start_times(started)
        self.ends += _iso_times(stamps)
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
    ) -> _Facts:
        """The facts of every answer added (``marks``: the interruption markers' entry indexes, or
        what finds them;
        ``compact``: :attr:`_Facts.calls` as columns, for a file too large to hold a tuple per answer)."""
        starts, outputs, idx = self.starts, self.outputs, self.idx
        ends = [
            t if t is not None and (e is None or e < t) else e for t, e in zip(starts, self.ends, strict=True)
        ]
        rate = output_rate(zip(starts, ends, outputs, strict=True))
        used = used_times(starts, ends, outputs, rate)
        floats = (self.costs, _seconds(starts), _seconds(used))
        calls: Mapping[int, Any] = {}
        if compact:
            calls, columns = _calls(array("q", idx), self.families, self.ints, floats, self.names), None
        else:
            columns = (idx, self.families, *self.ints, *floats, self.names)
        return _Facts(
            calls,
            models,
            self.sums.rates(),
            marks,
            frozenset(self.switches),
            content,
            called,
            columns,
            asked=asked,
        )


class FactsReader:
    """:func:`session_facts` from the entries given one at a time in file order (a streamed replay:
    :mod:`inspector.replay.streamed`), the answers turned into columns a chunk at a time. No answer
    is kept: in :attr:`_Facts.models` a shared stand-in with its provider, API and model, and
    content or none, is all the cache loop reads; what their tool calls say is read as they pass."""

    def __init__(self, chunk: int = 2_000) -> None:
        self.chunk = chunk
        self.cols = _Columns(agents=False)  # a pi file: its answers name no agent
        self.marks: list[int] = []
        self.asked: list[int] = []
        self.called: dict[str, list[int]] = {TOOL_SEARCH: [], "compress": []}
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

    def facts(self) -> _Facts:
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
    """:attr:`_Facts.calls` as columns (:class:`_ByEntry`): each answer's tuple made again when
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
        by_model = {m: _family(p, a, m) for m in dict.fromkeys(models)}
        return list(map(by_model.__getitem__, models))
    rows = list(zip(*who, strict=True))
    memo = {w: _family(*w) for w in dict.fromkeys(rows)}
    return list(map(memo.__getitem__, rows))


def _summed(cols: tuple[list[float], list[float], list[float]], paid: list[bool]) -> list[float | None]:
    """Each answer's recorded input cost (the sum of its three dollar values; None where unpaid)."""
    if all(paid):
        return list(map(add, map(add, *cols[:2]), cols[2]))
    return [d0 + d1 + d2 if p else None for d0, d1, d2, p in zip(*cols, paid, strict=True)]


def _seconds(col: list[float | None]) -> list[float | None]:
    """Times in ms as seconds (None stays None)."""
    if None in col:
        return [t / 1000 if t is not None else None for t in col]
    return list(map(truediv, col, repeat(1000)))


def _start_times(col: list[Any]) -> list[float | None]:
    """Request start times (ms, :func:`~inspector.numbers.finite_ms`): plain ints in range convert
    as a column."""
    if col and set(map(type, col)) == {int} and -MAX_TOKENS <= min(col) and max(col) <= MAX_TOKENS:
        return list(map(float, col))
    return [finite_ms(v) for v in col]


def _iso_times(col: list[Any]) -> list[float | None]:
    """Entry stamps in ms (:func:`_iso_ms` each); a column of UTC stamps (``…Z``) parses in one
    C-level pass, anything else stamp by stamp."""
    if col and set(map(type, col)) == {str} and all(map(str.endswith, col, repeat("Z"))):
        try:
            return list(map(mul, map(datetime.timestamp, map(datetime.fromisoformat, col)), repeat(1000.0)))
        except ValueError:
            pass
    return list(map(_iso_ms, col))


_PLAIN_BLOCKS = frozenset({TextContent, ThinkingContent, ImageContent, ToolCall})


def _called(contents: Sequence[Any], names: tuple[str, ...]) -> dict[str, list[int]]:
    """Per tool name, the positions (in ``contents``, each answer's content) of the answers that
    call it (:func:`calls_tool`), each answer once, in order."""
    out: dict[str, list[int]] = {n: [] for n in names}
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


def _iso_ms(ts: Any) -> float | None:
    """:func:`~inspector.session.tree.iso_to_ms` with a short path for the usual UTC stamp
    (``…Z``: ``datetime.fromisoformat`` reads the "Z" itself since Python 3.11, as UTC, the offset
    ``iso_to_ms`` puts in its place); anything else goes through ``iso_to_ms``."""
    if type(ts) is str and ts.endswith("Z"):
        try:
            return datetime.fromisoformat(ts).timestamp() * 1000.0
        except ValueError:
            pass
    return iso_to_ms(ts)


def not_billed(st: Any, read: int | None, write: int | None, inp: int | None) -> bool:
    """A failed or aborted call whose usage is all zero never reached the model: no cache read or
    write, nothing billed, and the next call follows the last one that did. So does an answer with
    neither content nor usage (the cache loop tests it beside this): OpenCode exports the message that
    closes a run of steps as an empty assistant message with no tokens, stamped like the step
    before it — no request of its own."""
    return st.stop_reason in ("error", "aborted") and read == 0 and write == 0 and inp == 0


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


def uses_dcp(messages: Sequence[Any]) -> bool:
    """Whether the session ran the DCP plugin (its ``compress`` tool was called)."""
    return any(isinstance(m, AssistantMessage) and calls_compress(m) for m in messages)


def calls_compress(m: AssistantMessage) -> bool:
    return calls_tool(m, "compress")


AGENT_SWITCH = "agent"
"""The cause of an invalidation when OpenCode's agent changes between two calls (``plan`` ↔
``build``, the message's ``agent`` field). Source: OpenCode ``session/llm.ts`` (``resolveTools``):
the tools a request offers are the agent's, less those its permissions deny
(``PermissionNext.disabled``; the plan agent denies editing), so the prompt differs right after the
prefix all agents share, and the call reads only that (the session's hidden prefix). In the shared
OpenCode export each of the five calls after a switch read exactly its 20,992-token shared prefix."""

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
the model (:func:`_disagreement` says so)."""


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


def _invalidation(
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
    why = cause if warm else "ttl"
    extra = (rate.write if rule.writes else rate.input) - rate.read
    return {
        "cause": why,
        "brokenAtEntryIndex": broke if why != "ttl" else None,
        "tokensRewritten": lost,
        "premiumUsd": round(lost * extra, 6),
        "idleSeconds": None if idle is None else round(idle, 1),
    }


def _disagreement(
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
        if previous is not None and rec > previous and _given(interrupted):
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
            + (DCP_LARGER if _given(dcp) else "")
        )
    if rec == 0 and _given(never_read):
        return NO_READS
    if idle is not None and idle > 240:
        return f"the cache had expired sooner than modelled ({mins})"
    floor = bool(hidden) and abs(rec - hidden) <= 128  # only the prefix every request shares was read
    if (short := _given(fewer)) is not None:
        return (_floor_read(hidden) + ": " if floor else "") + fewer_words(*short)
    if floor:
        return (
            f"{_floor_read(hidden, ', cached apart')}: {ENTRY_GONE} (evicted, or the request went to another "
            "cache server)" + (TOOL_SEARCH_NOTE if _given(tool_search) else "")
        )
    back = older_prefix(rec, earlier)
    if back is not None:
        return (
            f"the provider read the prefix the prompt of {back} calls back left: {OLDER_COPY} (OpenAI "
            "routes requests across cache servers by the prompt's prefix; its cache is best-effort)"
        )
    if _given(dcp):
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


def _given(v: Any) -> Any:
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


def _alive(earlier: Sequence[tuple[int, float | None]], t: float | None, ttl: float) -> list[int]:
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
    for back, p in enumerate(_given(earlier), start=2):
        if 0 <= p - rec < OLDER_SLACK:
            return back
    return None


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
        self.anchored = as_recorded(replay)
        self.base = base_tokens(replay) if replay.steps and not self.anchored and self.fit.fitted else {}
        """A what-if's calls: their as-recorded context (:func:`base_tokens`), which their recorded
        prompts measure (:meth:`changed`); on Anthropic their recorded input is then the tail, as
        in the as-recorded replay."""
        self.departs = departure(replay.steps, self.base)
        self.judged = len(replay.steps) if self.departs is None else self.departs
        """The calls a disagreement is looked for at: while the replay sends the session's own contexts."""
        self.shared = _Shared(replay)
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
        input cost, request start, cache use and model name (:attr:`_Facts.calls`)."""
        return zip(steps, self.entries, *self.picked[1:], strict=True)

    def changed(self, entry: int, recorded: int, tokens: int) -> int:
        """A what-if's prompt at the call answered at ``entry``: what was sent (``recorded``), changed
        by the fitted size of what the what-if changed in its context (``tokens`` replayed against
        the as-recorded :attr:`base`); no less than the prefix every request sends (or the recorded
        prompt, when that is smaller). A call with no as-recorded context gets the fitted size."""
        was = self.base.get(entry)
        fit = self.fit
        if was is None:
            return fit.size(tokens)
        prompt = int(recorded) + round(fit.scale * (tokens - was))
        return prompt if prompt >= fit.hidden or prompt >= recorded else min(fit.hidden, int(recorded))

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


def _break(k: int, st: Any, prev_st: Any, facts: Any, shared: _Shared) -> tuple[str | None, int | None, int]:
    """(cause, entry that broke the cache, tokens shared with the previous call) for step ``k``."""
    if k == 0:
        return "start", None, 0
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
    """:func:`_disagreement` of call ``k`` (step ``st``, requested at ``t``) in cache replay ``p``,
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
    why = _disagreement(
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
        partial(_alive, earlier, t, ttl) if short else (),
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

    def recorded(rec: dict[str, Any]) -> dict[str, Any] | None:
        ei = rec.get("entryIndex")
        e = entries[ei] if isinstance(ei, int) and 0 <= ei < len(entries) else None
        return summary_usage(getattr(e, "details", None)) if isinstance(e, CompactionEntry) else None

    agent = getattr(replay.session, "format", "pi")
    return summary_calls(replay.summaries, p.shared.counter, p.fit, terms_at, agent, last_call, recorded)


_NO_NAME = object()
"""No model yet (:func:`_priced` looks a model's terms up when the model changes)."""


def _priced(replay: Any, p: _Pricing) -> tuple[CacheStep, ...]:
    """Each call of ``replay`` split and priced, in order (the running state below, call to call)."""
    facts, shared, anchored, terms = p.facts, p.shared, p.anchored, p.terms
    answers, switched = facts.models, facts.agent_switch | facts.tool_loads.keys()
    hidden, size, changed = p.fit.hidden, p.fit.size, p.changed
    warm_start = facts.warm_start and hidden > 0
    dis_min, dis_share = DISAGREE_MIN, DISAGREE_SHARE
    out: list[tuple[Any, ...]] = []  # each call's CacheStep fields
    prev_prompt = prev_tail = prev_sent = 0
    earlier: list[tuple[int, float | None]] = []  # (prompt, when its cache was last used), oldest first
    last_t: float | None = None
    prev_st: Any = None
    last_name: Any = _NO_NAME
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
        if not (recorded := st.recorded_input):
            prompt = size(st.tokens)
        elif anchored:
            prompt = int(recorded)
        else:  # a what-if: what was sent, changed by what it changed
            prompt = changed(ei, recorded, st.tokens)
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
        if cap is not None:  # read up to where the previous turn's reasoning began (REASONING)
            reuse, cause, broke = _cut(rule, reuse, reach, hidden, cap[0], REASONING, cap[1], cause, broke)
            cap = None
        if warm_start and not prev_prompt:  # the first billed call: what other sessions cached (WARM_START)
            reuse, warm = hidden, True
        read, write, uncached = split(prompt, reuse, warm, tail)
        inv = None
        if k > 0 and enabled and (cause is not None or not warm):
            lost = split(prompt, reach, True, tail)[0] - read
            inv = _invalidation(rule, rate, lost, cause, warm, broke, idle)
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
