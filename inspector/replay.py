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
preparation (:func:`default_summary`), and whole replays for settings that cannot change them
(:func:`effective_settings`, :meth:`Replay.relabel`).
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from .agents import AGENTS
from .compaction import (
    CompactionPreparation,
    CompactionSettings,
)
from .context import ContextMessage, _context_message
from .gcpause import gc_paused
from .jsjson import js_stringify
from .numbers import clamp, clamp_int, finite_ms
from .policies import (
    CompactionRequest,
    PolicySettings,
    RunningContext,
    SimulatedPath,
    Trigger,
    get_policy,
)
from .pricing import input_price_per_token
from .session.models import (
    AssistantMessage,
    BranchSummaryEntry,
    CompactionEntry,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .session.tree import Session
from .tokens import TokenCounter, calculate_context_tokens, estimate_context_tokens, get_counter

#: Replays prune incrementally (see :mod:`inspector.pruning.runner`); False: ``apply`` at every call.
INCREMENTAL = True
#: Callers that cache replays may serve settings with the same :func:`effective_settings` from one
#: replay (the app does); False: every distinct settings object is replayed (for benchmarks).
REUSE = True

CompactionPolicy = Literal["recorded", "pi", "early", "opencode", "codex", "claude-code", "never"]
READ_TOOLS = frozenset({"read"})


class ReplaySettings(BaseModel):
    """Everything a replay depends on. Frozen and hashable, so replays can be cached on it."""

    model_config = ConfigDict(frozen=True)

    compaction: CompactionPolicy = Field("recorded", description="recorded, or a what-if compaction policy.")
    strategy: str = Field("none", description="Pruning strategy applied before every model call.")
    strategy_settings: tuple[tuple[str, Any], ...] = Field((), description="Strategy settings (key, value) pairs.")
    context_window: int = Field(200000, ge=1000, description="The model's context window in tokens.")
    reserve_tokens: int = Field(16384, ge=0, description="pi reserveTokens: compact when context > window − reserve.")
    keep_recent_tokens: int = Field(20000, ge=0, description="pi keepRecentTokens: recent tokens kept verbatim.")
    counter: str = Field("pi", description="Token counter: pi (chars/4 estimate), tiktoken, calibrated (tiktoken × "
                                           "the session's own fitted ratio) or usage (pi's usage-based context size: "
                                           "last recorded usage + estimates after it).")
    summarizer: str = Field("offline", description="Summarizer for simulated compactions.")
    summarizer_model: str | None = Field(None, description="LLM summarizers: the model (default: the summarizer's).")
    summarizer_base_url: str | None = Field(None, description="OpenAI-compatible summarizer: the endpoint's base URL.")
    summarizer_api_key: SecretStr | None = Field(
        None, exclude=True, repr=False,
        description="A key for the summarizer's base URL itself (typed in the app, or the CLI's environment); "
                    "held in memory only, never dumped.")
    summarizer_redact: bool = Field(True, description="Redact secrets from the text sent to an LLM summarizer.")
    pi_version: str = Field("0.73", description="pi's prepareCompaction rule: 0.73 or 0.58.")
    policy: PolicySettings = Field(default_factory=PolicySettings)
    leaf: int | None = Field(None, description="Entry index of the branch's leaf (None: pi's default leaf).")

    def strategy_dict(self) -> dict[str, Any]:
        return dict(self.strategy_settings)

    def with_strategy_settings(self, values: dict[str, Any]) -> ReplaySettings:
        return self.model_copy(update={"strategy_settings": tuple(sorted(values.items()))})


_SETTINGS_DEFAULTS = ReplaySettings()


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
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
    events: tuple[dict[str, Any], ...]
    cost: float
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
            "messages": self.messages,
            "prunedItems": self.pruned_items,
            "prunedTokens": self.pruned_tokens,
            "cost": round(self.cost, 6),
            "events": list(self.events),
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
    rereads: int
    """Later reads of a path whose earlier output was pruned or summarised away at that time."""
    recorded_total_input: int | None


@dataclass(frozen=True)
class Replay:
    settings: ReplaySettings
    steps: tuple[Step, ...]
    metrics: Metrics
    path: tuple[int, ...]
    summaries: tuple[dict[str, Any], ...]
    """One record per compaction in the replay (recorded or simulated): step, text, usage, prep.
    Private keys pin what :mod:`inspector.compaction_view` shows: ``_before`` / ``_after`` (the
    context list and its length just before and just after the compaction) and ``_prep`` (the
    preparation the summarizer got; simulated compactions only)."""
    session: Session = field(repr=False)
    seconds: float = 0.0

    def step_detail(self, k: int) -> StepDetail:
        """The exact context of step ``k``: before pruning, after pruning, and the decisions."""
        st = self.steps[k]
        base = tuple(st._segment[: st._length])
        strat = _effective_strategy(self.settings, self.session)
        if strat is None:
            return StepDetail(st, base, base, None)
        counter = session_counter(self.session, self.settings.counter)
        res = strat.apply(base, _strategy_settings(self.settings), st._state, st._call, counter)
        return StepDetail(st, base, tuple(res.messages), res)

    def event_steps(self) -> list[int]:
        return [s.step for s in self.steps if s.events]

    def relabel(self, settings: ReplaySettings) -> Replay:
        """This replay under ``settings``, which must have the same :func:`effective_settings`
        (the same steps, events and summaries; only the settings it reports differ)."""
        if effective_settings(settings) != effective_settings(self.settings):
            raise ValueError("these settings can change the replay: replay them")
        return replace(self, settings=settings)

    def as_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings.model_dump(mode="json"),
            "metrics": self.metrics.model_dump(mode="json"),
            "steps": [s.as_dict() for s in self.steps],
        }


@dataclass(frozen=True)
class StepDetail:
    step: Step
    before: tuple[ContextMessage, ...]
    after: tuple[ContextMessage, ...]
    prune: Any  # PruneResult | None


# ---------------------------------------------------------------------------------------------
# What a replay depends on
# ---------------------------------------------------------------------------------------------

def effective_settings(settings: ReplaySettings) -> ReplaySettings:
    """``settings`` with every field the replay cannot depend on set to its default, so two
    settings with the same effective settings replay to the same steps, events and summaries
    (tests check it on every sample), and one replay serves both (:meth:`Replay.relabel`).

    Without simulated compactions (as recorded, never) keepRecentTokens, reserveTokens, pi's
    version, the summarizer and the policies' own settings are never read; a what-if policy reads
    only its own policy settings, keepRecentTokens and pi's version only for pi's cut (pi, early);
    the offline summarizer has no model or endpoint; strategy ``none`` has no settings."""
    d = _SETTINGS_DEFAULTS
    update: dict[str, Any] = {}
    policy = get_policy(settings.compaction)
    if not policy.simulated:
        update.update(keep_recent_tokens=d.keep_recent_tokens, reserve_tokens=d.reserve_tokens,
                      pi_version=d.pi_version, summarizer=d.summarizer)
    elif not policy.pi_cut:
        update.update(keep_recent_tokens=d.keep_recent_tokens, pi_version=d.pi_version)
    if update.get("summarizer", settings.summarizer) == "offline":
        update.update(summarizer_model=None, summarizer_base_url=None)
    prefix = policy.prefix
    read = {k: v for k, v in settings.policy.model_dump().items() if prefix and k.startswith(prefix)}
    update["policy"] = PolicySettings(**read)
    if settings.strategy in ("none", ""):
        update["strategy_settings"] = ()
    return settings.model_copy(update=update)


# ---------------------------------------------------------------------------------------------
# Token caches
# ---------------------------------------------------------------------------------------------


class CachedCounter:
    """A counter that remembers each message object's count (messages are immutable)."""

    def __init__(self, base: TokenCounter) -> None:
        self.base = base
        self.name = base.name
        self.label = base.label
        self._cache: dict[int, tuple[Any, int]] = {}
        self._lock = threading.Lock()
        self._primed: Session | None = None

    def count(self, message: Any) -> int:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        n = self.base.count(message)
        self._cache[id(message)] = (message, n)
        return n

    def count_many(self, messages: Sequence[Any]) -> list[int]:
        missing = [m for m in messages if id(m) not in self._cache]
        if missing:
            for m, n in zip(missing, self.base.count_many(missing), strict=True):
                self._cache[id(m)] = (m, n)
        return [self.count(m) for m in messages]

    def count_text(self, text: str) -> int:
        return self.base.count_text(text)

    def prime(self, messages: Iterable[Any]) -> None:
        self.count_many(list(messages))

    def prime_session(self, session: Session) -> None:
        """Count every message of ``session`` in one batch, once (a second caller, in another
        thread, waits for the first)."""
        with self._lock:
            if self._primed is not session:
                self.prime(e.message for e in session.entries if isinstance(e, MessageEntry))
                self._primed = session


_COUNTER_CACHE: dict[tuple[int, str], tuple[Session, CachedCounter]] = {}
_COUNTER_LOCK = threading.Lock()


def session_counter(session: Session, name: str) -> CachedCounter:
    """One cached counter per (session, counter name), primed with every message in one batch.
    ``usage`` (a per-call figure, not a per-message one) counts messages with pi's estimate."""
    name = "pi" if name == "usage" else name
    key = (id(session), name)
    with _COUNTER_LOCK:
        hit = _COUNTER_CACHE.get(key)
        if hit is not None and hit[0] is session:
            c = hit[1]
        else:
            c = CachedCounter(_session_counter_base(session, name))
            if len(_COUNTER_CACHE) > 16:
                _COUNTER_CACHE.clear()
            _COUNTER_CACHE[key] = (session, c)
    c.prime_session(session)
    return c


_WARMING: dict[tuple[int, str], weakref.ref[Session]] = {}  # weak: a warmed session is not kept alive


def warm_session(session: Session, what: Sequence[str] = ("facts", "tiktoken"), delay: float = 1.0
                 ) -> threading.Thread | None:
    """Fill the per-message caches later replays of ``session`` read, in a background thread,
    once per session, starting after ``delay`` seconds (the page being drawn keeps the CPU):
    ``facts``, what the offline summarizer extracts from each message (a first what-if policy
    then only writes its summaries), and a counter's name (``tiktoken``: a switch of the counter
    finds the counts ready; its BPE runs outside the GIL). Asked for sooner, a replay computes
    what it needs and the thread finds it done. Failures are left to show where the cache is
    used. The app calls this after a session's first replay. Returns the thread, or None when
    there is nothing left to do."""
    with _COUNTER_LOCK:
        todo = [n for n in what if (ref := _WARMING.get((id(session), n))) is None or ref() is not session]
        if len(_WARMING) > 64:
            _WARMING.clear()
        for n in todo:
            _WARMING[(id(session), n)] = weakref.ref(session)
    if not todo:
        return None

    def work() -> None:
        time.sleep(delay)
        for name in todo:
            try:
                if name == "facts":
                    from .summarize.offline import remember_facts

                    remember_facts(e.message for e in session.entries if isinstance(e, MessageEntry))
                else:
                    session_counter(session, name)
            except Exception:  # noqa: BLE001 - reported where the cache is used
                pass

    t = threading.Thread(target=work, name="inspector-warm-session", daemon=True)
    t.start()
    return t


def _session_counter_base(session: Session, name: str) -> TokenCounter:
    """``calibrated`` is tiktoken × the session's own fitted ratio (:mod:`inspector.calibration`)."""
    if name == "calibrated":
        from .calibration import session_calibration
        from .tokens import CalibratedCounter

        cal = session_calibration(session)
        return CalibratedCounter(cal.ratio, cal.overhead, cal.label)
    return get_counter(name)


# ---------------------------------------------------------------------------------------------
# Pruning and summaries (optional packages)
# ---------------------------------------------------------------------------------------------


def _strategy(settings: ReplaySettings) -> Any:
    if settings.strategy in ("none", ""):
        return None
    from .pruning import get_strategy

    return get_strategy(settings.strategy)


_RECORDS_PRUNING: dict[int, tuple[Session, bool]] = {}


def _effective_strategy(settings: ReplaySettings, session: Session) -> Any:
    """The strategy to apply. "recorded" on a session that records no pruning (every pi session)
    clears nothing: it is skipped — the same result without a pass over the context per call."""
    if settings.strategy == "recorded":
        hit = _RECORDS_PRUNING.get(id(session))
        if hit is None or hit[0] is not session:
            from .pruning.recorded import records_pruning

            marked = any(records_pruning(getattr(e, "message", None)) for e in session.entries)
            if len(_RECORDS_PRUNING) > 16:
                _RECORDS_PRUNING.clear()
            hit = _RECORDS_PRUNING[id(session)] = (session, marked)
        if not hit[1]:
            return None
    return _strategy(settings)


def _strategy_settings(settings: ReplaySettings) -> Any:
    strat = _strategy(settings)
    if strat is None:
        return None
    return strat.Settings(**settings.strategy_dict())


def _call_info_class() -> Any:
    from .pruning.base import CallInfo

    return CallInfo


SummaryFn = Callable[[CompactionPreparation, ReplaySettings], dict[str, Any]]
_SUMMARY_CACHE: dict[str, tuple[Any, dict[str, Any]]] = {}


def _prep_key(prep: CompactionPreparation, settings: ReplaySettings, style: str) -> str:
    """Cache key of a summary: entries are named by index (the cache is per session object, see
    :func:`default_summary`); messages built in memory (summaries of other policies) by content."""
    h = hashlib.sha256()
    key = settings.summarizer_api_key.get_secret_value() if settings.summarizer_api_key is not None else ""
    h.update(f"{settings.summarizer}|{settings.summarizer_model}|{settings.summarizer_base_url}|{style}|"
             f"{settings.summarizer_redact}|{hashlib.sha256(key.encode()).hexdigest()}|"
             f"{prep.settings.reserveTokens}|{prep.isSplitTurn}|".encode())
    h.update((prep.previousSummary or "").encode("utf-8", "surrogatepass"))
    for cm in (*prep.messagesToSummarize, b"|", *prep.turnPrefixMessages):
        if isinstance(cm, bytes):
            h.update(cm)
            continue
        if cm.entry_index is None:
            h.update(b"m:" + js_stringify(cm.message.raw()).encode("utf-8", "surrogatepass") + b";")
        else:
            h.update(f"{cm.entry_index};".encode())
    r, m = prep.fileOps.lists()
    h.update(("\n".join(r) + "|" + "\n".join(m)).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def default_summary(prep: CompactionPreparation, settings: ReplaySettings, style: str = "pi",
                    session: Session | None = None) -> dict[str, Any]:
    """Summarise a preparation with the configured summarizer (memoised per session object, so
    sweep cells that reach the same preparation share the summary)."""
    key = _prep_key(prep, settings, style)
    hit = _SUMMARY_CACHE.get(key)
    if hit is not None and hit[0] is session:
        return hit[1]
    t0 = time.perf_counter()
    try:
        from .summarize import get_summarizer, summarize_compaction

        options: dict[str, Any] = {}
        if settings.summarizer != "offline":
            if settings.summarizer_model:
                options["model"] = settings.summarizer_model
            if settings.summarizer_base_url:
                options["base_url"] = settings.summarizer_base_url
            if settings.summarizer_api_key is not None:
                options["api_key"] = settings.summarizer_api_key.get_secret_value()
            options["redact"] = settings.summarizer_redact
        summ = get_summarizer(settings.summarizer, **options)
        res = summarize_compaction(prep, summ, style=style)
        out = {
            "text": res.text,
            "label": res.summarizer if hasattr(res, "summarizer") else settings.summarizer,
            "input_tokens": res.usage.input_tokens,
            "output_tokens": res.usage.output_tokens,
            "calls": res.usage.calls,
            "cost": res.usage.cost_usd or 0.0,
            "error": res.error,
            "fell_back": res.fell_back,
        }
    except ImportError:
        from .compaction import format_file_operations

        r, m = prep.fileOps.lists()
        n = len(prep.messagesToSummarize) + len(prep.turnPrefixMessages)
        text = f"[placeholder summary of {n} messages]" + format_file_operations(r, m)
        out = {"text": text, "label": "placeholder", "input_tokens": 0, "output_tokens": 0, "calls": 0,
               "cost": 0.0, "error": None, "fell_back": False}
    out["seconds"] = time.perf_counter() - t0
    if len(_SUMMARY_CACHE) > 4096:
        _SUMMARY_CACHE.clear()
    _SUMMARY_CACHE[key] = (session, out)
    return out


# ---------------------------------------------------------------------------------------------
# The replay loop
# ---------------------------------------------------------------------------------------------


def _tool_calls(m: Any) -> list[ToolCall]:
    return [b for b in m.content if isinstance(b, ToolCall)] if isinstance(m, AssistantMessage) else []


def _recorded(m: AssistantMessage) -> tuple[int | float | None, int | float | None]:
    u = m.usage
    if u is None:
        return None, None
    return clamp(clamp(u.input) + clamp(u.cacheRead) + clamp(u.cacheWrite)), clamp(calculate_context_tokens(u))


def replay(
    session: Session,
    settings: ReplaySettings | None = None,
    *,
    progress: Callable[[float], None] | None = None,
    summarize: SummaryFn | None = None,
    incremental: bool | None = None,
) -> Replay:
    """Replay ``session`` under ``settings`` (see the module docstring). ``incremental=False``
    applies the pruning strategy to the whole context at every call (the reference the
    incremental runners are tested against; default :data:`INCREMENTAL`)."""
    with gc_paused():
        return _replay(session, settings, progress, summarize, incremental)


def _runner(strat: Any, strat_settings: Any, counter: CachedCounter, usage_mode: bool, incremental: bool) -> Any:
    """What prunes at each call (see :mod:`inspector.pruning.runner`); None when nothing does
    and no runner's bookkeeping is needed."""
    from .pruning.runner import FullRunner, PlainRunner

    if strat is None:
        return PlainRunner(None, None, counter) if usage_mode and incremental else None
    return strat.runner(strat_settings, counter) if incremental else FullRunner(strat, strat_settings, counter)


def _replay(
    session: Session,
    settings: ReplaySettings | None,
    progress: Callable[[float], None] | None,
    summarize: SummaryFn | None,
    incremental: bool | None = None,
) -> Replay:
    t0 = time.perf_counter()
    settings = settings or ReplaySettings()
    pol = get_policy(settings.compaction)
    own = pol.own_settings(settings.policy)
    if summarize is None:
        # each agent's policy writes its summary the way that agent asks for one
        style = pol.summary_style

        def summarize(prep: CompactionPreparation, st: ReplaySettings) -> dict[str, Any]:
            return default_summary(prep, st, style, session=session)
    recorded_mode = pol.as_recorded
    policy = settings.compaction
    usage_mode = settings.counter == "usage"
    counter = session_counter(session, settings.counter)
    strat = _effective_strategy(settings, session)
    strat_settings = _strategy_settings(settings)
    comp_settings = CompactionSettings(
        enabled=True, reserveTokens=settings.reserve_tokens, keepRecentTokens=settings.keep_recent_tokens
    )
    window = settings.context_window
    path = session.path(settings.leaf)
    entries = session.entries
    price = input_price_per_token(session)

    ctx = RunningContext(counter)
    sim = SimulatedPath()  # the path as pi would see it (what-if: simulated compactions)

    trigger = Trigger()
    prune_state: Any = None
    runner = _runner(strat, strat_settings, counter, usage_mode, INCREMENTAL if incremental is None else incremental)
    call_info = _call_info_class() if strat is not None else None
    pending: list[dict[str, Any]] = []
    new_prompt = True
    steps: list[Step] = []
    summaries: list[dict[str, Any]] = []
    read_calls: dict[str, str] = {}  # toolCallId -> path
    reads: dict[str, list[int]] = {}  # path -> tool result entry indexes
    rereads = 0
    overflows = 0
    compactions = 0
    summary_tokens = 0

    def compact_now(step_no: int, reason: str, kind: str) -> bool:
        nonlocal compactions, summary_tokens
        before = (ctx.msgs, len(ctx.msgs))  # pinned: the list is replaced, never changed, by a compaction
        preps: list[CompactionPreparation] = []

        def summarize_seen(p: CompactionPreparation) -> dict[str, Any]:
            preps.append(p)
            return summarize(p, settings)

        est = (counter if counter.name == "pi" else session_counter(session, "pi")).count  # pi's own estimate
        done = pol.compact(CompactionRequest(ctx, sim, session, summarize_seen, comp_settings, settings.pi_version,
                                             est, window, own))
        if done is None:
            pending.append({"type": "compaction_skipped", "reason": "nothing to compact", "trigger": reason})
            return False
        s, first_kept, summarized, story = done.summary, done.first_kept, done.summarized, done.story
        compactions += 1
        summary_tokens += int(s.get("input_tokens", 0)) + int(s.get("output_tokens", 0))
        trigger.compacted()
        rec = {
            "type": "compaction",
            "simulated": True,
            "policy": policy,
            "kind": kind,
            "reason": reason,
            "firstKeptEntryIndex": first_kept,
            "summarizedMessages": len(summarized),
            "summaryTokens": counter.count_text(s["text"]),
            "summarizer": s.get("label"),
            "fellBack": bool(s.get("fell_back")),
            "error": s.get("error"),
            "tokensAfter": ctx.total,
        }
        pending.append(rec)
        summaries.append({**rec, "step": step_no, "text": s["text"], "summarizedEntryIndexes": summarized,
                          "story": story, "_before": before, "_after": (ctx.msgs, len(ctx.msgs)),
                          "_prep": preps[-1] if preps else None})
        return True

    def call_now(k: int, new_prompt: bool, state: Any, time_ms: Any = None) -> tuple[Any, Any, int]:
        """Prune the current context for call ``k``: (call info, outcome or None, tokens)."""
        if strat is None:
            if runner is not None:
                runner.call(ctx.msgs, None, None)
            return None, None, ctx.total
        when = finite_ms(time_ms)
        ci = call_info(k, new_prompt, window, ctx.total, time_ms=when)
        out = runner.call(ctx.msgs, state, ci)
        return ci, out, out.tokens

    n_path = len(path)
    for pos, ei in enumerate(path):
        e = entries[ei]
        if progress is not None and pos % 500 == 0:
            progress(pos / max(1, n_path))
        if isinstance(e, CompactionEntry):
            if recorded_mode:
                before_ctx = (ctx.msgs, len(ctx.msgs))
                sim.append(e, ei)
                ctx.reset(sim.context_after_last())
                compactions += 1
                rec = {"type": "compaction", "simulated": False, "policy": "recorded", "entryIndex": ei,
                       "firstKeptEntryIndex": session.index_of(e.firstKeptEntryId),
                       "summaryTokens": counter.count_text(e.summary), "tokensAfter": ctx.total,
                       "tokensBefore": clamp(e.tokensBefore)}
                pending.append(rec)
                summaries.append({**rec, "step": len(steps), "text": e.summary, "summarizedEntryIndexes": [],
                                  "_before": before_ctx, "_after": (ctx.msgs, len(ctx.msgs))})
            else:
                pending.append({"type": "recorded_compaction_set_aside", "entryIndex": ei})
            continue
        sim.append(e, ei)
        if isinstance(e, BranchSummaryEntry) and e.summary:
            pending.append({"type": "branch_summary", "entryIndex": ei, "tokens": counter.count_text(e.summary)})
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage):
            m = e.message
            k = len(steps)
            # -- the call -------------------------------------------------------------------
            state_before = prune_state
            call, res, tokens = call_now(k, new_prompt, state_before, m.timestamp)
            if pol.simulated and tokens > window:
                # the request would fail with a context overflow: compact, then retry the call
                pending.append({"type": "overflow", "tokens": tokens, "window": window, "before": "compaction"})
                if compact_now(k, f"context {tokens:,} > window {window:,}: overflow, compact and retry", "overflow"):
                    call, res, tokens = call_now(k, new_prompt, state_before, m.timestamp)
            before = ctx.total
            seg, length = ctx.msgs, len(ctx.msgs)
            if res is not None:
                prune_state = res.state
                newly, restored = runner.take_changes()
                if newly:
                    pending.append({"type": "pruned", "items": len(newly), "tokens": before - tokens,
                                    "entryIndexes": sorted(newly)[:50]})
                if restored and not restored.isdisjoint(ctx.entries):
                    pending.append({"type": "unpruned", "items": len(restored)})
                for ev in res.events:
                    pending.append(dict(ev))
                pruned_items = res.items
            else:
                pruned_items = 0
            if tokens > window:
                overflows += 1
                pending.append({"type": "overflow", "tokens": tokens, "window": window})
            # -- re-reads -------------------------------------------------------------------------
            for tc in _tool_calls(m):
                if tc.name in READ_TOOLS and isinstance(tc.arguments, dict):
                    p = tc.arguments.get("path")
                    if isinstance(p, str) and p:
                        read_calls[tc.id] = p
                        earlier = reads.get(p)
                        if earlier:
                            last = earlier[-1]
                            in_ctx = last in ctx.entries and not (res is not None and runner.is_pruned(last))
                            if not in_ctx:
                                rereads += 1
                                pending.append({"type": "reread", "path": p, "earlierEntryIndex": last})
            if usage_mode:
                # pi's own view: the last trusted recorded usage in the context + estimates after it
                if runner is not None:
                    tokens = clamp_int(runner.usage_tokens(ctx.msgs))
                else:
                    tokens = clamp_int(estimate_context_tokens([c.message for c in seg[:length]]).tokens)
            rin, rtot = _recorded(m)
            cost = tokens * price(m)
            steps.append(
                Step(
                    step=k, entry_index=ei, stop_reason=m.stopReason, tokens=tokens, tokens_before_pruning=before,
                    recorded_input=rin, recorded_total=rtot, messages=length, pruned_items=pruned_items,
                    pruned_tokens=before - tokens, events=tuple(pending), cost=cost,
                    _segment=seg, _length=length, _state=state_before, _call=call,
                )
            )
            pending = []
            new_prompt = False
            ctx.add(ContextMessage(m, ei))
            # -- after the answer: does the policy compact? ----------------------------------
            if pol.simulated:
                after_tokens = tokens + counter.count(m)
                do, reason = pol.after_answer(
                    trigger, after_tokens, window, settings.reserve_tokens, own,
                    aborted=m.stopReason == "aborted", needs_follow_up=bool(_tool_calls(m)),
                )
                if do:
                    compact_now(k + 1, reason, "threshold")
            continue
        cm = _context_message(e)
        if cm is not None:
            ctx.add(ContextMessage(cm, ei))
            if isinstance(cm, UserMessage):
                new_prompt = True
            if isinstance(cm, ToolResultMessage):
                p = read_calls.get(cm.toolCallId)
                if p is not None and not cm.isError:
                    reads.setdefault(p, []).append(ei)
    if progress is not None:
        progress(1.0)

    n = len(steps)
    totals = [s.tokens for s in steps]
    rec_costs = [
        clamp((entries[s.entry_index].message.usage.cost or {}).get("total", 0) or 0)  # type: ignore[union-attr]
        for s in steps
        if entries[s.entry_index].message.usage is not None  # type: ignore[union-attr]
    ]
    rec_inputs = [s.recorded_input for s in steps if s.recorded_input is not None]
    metrics = Metrics(
        steps=n,
        total_input_tokens=sum(totals),
        cost_usd=round(sum(s.cost for s in steps), 6),
        recorded_cost_usd=round(sum(rec_costs), 6) if rec_costs else None,
        peak_context=max(totals, default=0),
        mean_context=(sum(totals) / n) if n else 0.0,
        compactions=compactions,
        summary_tokens=summary_tokens,
        tokens_pruned=sum(s.pruned_tokens for s in steps),
        overflows=overflows,
        rereads=rereads,
        recorded_total_input=int(sum(rec_inputs)) if rec_inputs else None,
    )
    return Replay(settings, tuple(steps), metrics, tuple(path), tuple(summaries), session,
                  time.perf_counter() - t0)


# ---------------------------------------------------------------------------------------------
# Sweep
# ---------------------------------------------------------------------------------------------


def _coerce(settings: ReplaySettings, key: str, value: Any) -> ReplaySettings:
    if key in ReplaySettings.model_fields and key not in ("policy", "strategy_settings"):
        return settings.model_copy(update={key: value})
    if key in PolicySettings.model_fields:
        return settings.model_copy(update={"policy": settings.policy.model_copy(update={key: value})})
    return settings.with_strategy_settings({**settings.strategy_dict(), key: value})


@dataclass(frozen=True)
class SweepCell:
    values: dict[str, Any]
    settings: ReplaySettings
    metrics: Metrics


def sweep(
    session: Session,
    base: ReplaySettings,
    grid: dict[str, Sequence[Any]],
    *,
    progress: Callable[[float], None] | None = None,
) -> list[SweepCell]:
    """Replay every combination of ``grid`` values on top of ``base``. Token counts and
    summaries are shared by all cells (per-session counter cache, summary cache)."""
    keys = list(grid)
    combos: list[dict[str, Any]] = [{}]
    for k in keys:
        combos = [{**c, k: v} for c in combos for v in grid[k]]
    out = []
    for i, combo in enumerate(combos):
        s = base
        for k, v in combo.items():
            s = _coerce(s, k, v)
        r = replay(session, s)
        out.append(SweepCell(combo, s, r.metrics))
        if progress is not None:
            progress((i + 1) / len(combos))
    return out


#: the rows of :func:`compare_agents`: the session as recorded, then each agent (:mod:`inspector.agents`)
COMPARED: tuple[str, ...] = ("recorded", "pi", "codex", "opencode", "claude-code")


def agent_config(name: str) -> tuple[str, str, str]:
    """(title, compaction policy, pruning strategy) of a row of :func:`compare_agents`. Claude Code's
    are third-party reports (unverified), as its title, the policy and the strategy say."""
    if name == "recorded":
        return "as recorded", "recorded", "recorded"
    a = AGENTS[name]
    return a.label, a.policy, a.strategy


#: transition: the old (title, policy, strategy) table, kept for ``ui/pages.py`` until the pages split
#: lands (read :func:`agent_config` and :mod:`inspector.agents`)
AGENT_CONFIGS: dict[str, tuple[str, str, str]] = {n: agent_config(n) for n in COMPARED}


def compare_agents(
    session: Session,
    base: ReplaySettings,
    agents: Sequence[str] | None = None,
    *,
    progress: Callable[[float], None] | None = None,
) -> list[SweepCell]:
    """Replay the session as each agent would run it — its compaction policy and its pruning — on
    top of ``base`` (window, counter, summarizer, pi's keep/reserve). One cell per agent, in order."""
    names = list(agents) if agents else list(COMPARED)
    unknown = [n for n in names if n not in COMPARED]
    if unknown:
        raise ValueError(f"unknown agent(s) {', '.join(unknown)}; known: {', '.join(COMPARED)}")
    out = []
    for i, name in enumerate(names):
        _, policy, strategy = agent_config(name)
        s = base.model_copy(update={"compaction": policy, "strategy": strategy, "strategy_settings": ()})
        out.append(SweepCell({"agent": name}, s, replay(session, s).metrics))
        if progress is not None:
            progress((i + 1) / len(names))
    return out


def parse_grid(spec: str) -> tuple[str, list[Any]]:
    """``key=start:stop:step`` (inclusive stop) or ``key=a,b,c``."""
    if "=" not in spec:
        raise ValueError(f"grid {spec!r}: expected KEY=START:STOP:STEP or KEY=A,B,C")
    key, _, rng = spec.partition("=")
    key = key.strip()
    if ":" in rng:
        parts = rng.split(":")
        if len(parts) != 3:
            raise ValueError(f"grid {spec!r}: expected START:STOP:STEP")
        a, b, st = (float(x) for x in parts)
        if st <= 0:
            raise ValueError(f"grid {spec!r}: STEP must be positive")
        count = int(math.floor((b - a) / st + 1e-9)) + 1
        vals: list[Any] = [a + i * st for i in range(count)]
        if all(float(v).is_integer() for v in (a, b, st)):
            vals = [int(v) for v in vals]
        return key, vals
    out: list[Any] = []
    for x in rng.split(","):
        x = x.strip()
        try:
            out.append(int(x))
        except ValueError:
            try:
                out.append(float(x))
            except ValueError:
                out.append({"true": True, "false": False}.get(x.lower(), x))
    return key, out
