"""The check itself: replay as recorded, count each call's context as sent, fit, flag, summarise.

Figures (see the package docstring for the method):

* ``offset`` of a call = recorded prompt − calibrated rebuilt context − the departure carried to
  it. Its median is the constant no file stores (system prompt + tool definitions); p10/p90 its
  spread over all compared calls; ``spreadExcludingFlagged`` = p90 − p10 over unflagged calls.
* ``drift``: how far the offset moved over the session, the median of the last fifth of the
  unflagged calls minus that of the first fifth (a tokenizer ratio off for part of the text).
* Percentiles interpolate linearly between order statistics (numpy's default).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..calibration import Calibration, recorded_prompt, session_calibration
from ..numbers import clamp
from ..pruning.recorded import dcp_blocks
from ..replay import Event, Replay, ReplaySettings, replay, session_counter
from ..sent import REINJECTED, SentCounter, rules_for
from ..session.models import AssistantMessage
from ..session.tree import Session
from .flags import END_BREAKPOINT, Flag, Observed, flag_calls, threshold
from .regimes import NOTE, reasoning_dropped

INTERACTIVE_MAX_CALLS = 3_000
"""Beyond this many model calls the views (the app's pages, the notebook inspector, the HTML
report) leave the check to ``inspector check``, which checks any session."""


def view_check(session: Session, leaf: int | None, calls: int) -> ReconCheck | None:
    """The check a view draws for a branch of ``calls`` model calls: None where there are none,
    more than :data:`INTERACTIVE_MAX_CALLS`, or no call records its prompt."""
    if not 0 < calls <= INTERACTIVE_MAX_CALLS:
        return None
    c = check(session, leaf=leaf)
    return c if c.calls else None


@dataclass(frozen=True)
class Call:
    step: int
    entry_index: int
    recorded: int
    sent: int
    """The rebuilt context as sent, in tiktoken tokens."""
    calibrated: int
    """``sent`` as the provider counts it, by the session's calibration (ratio and per-message cost)."""
    departure: int
    """Flagged jumps carried to this call (measured, not rebuilt)."""
    unexplained: int
    """The part of ``departure`` no entry explains: where it is not 0, what the agent sent is the
    recorded figure, not the context rebuilt from the file."""
    offset: int
    parts: dict[str, int] = field(default_factory=dict)
    """What the sending rules added or left out, by rule (tiktoken tokens)."""
    flag: Flag | None = None

    @property
    def expected(self) -> int:
        """The prompt we expect the provider counted, but for the constant no file stores."""
        return self.calibrated + self.departure


@dataclass(frozen=True)
class ReconCheck:
    calls: tuple[Call, ...]
    calibration: Calibration
    threshold: int
    max_recorded: int
    offset_median: int
    offset_p10: int
    offset_p90: int
    spread_excluding_flagged: int
    drift: int
    mid_session: bool
    replay: Replay | None = field(default=None, repr=False, compare=False)

    @property
    def flags(self) -> tuple[Flag, ...]:
        return tuple(c.flag for c in self.calls if c.flag is not None)

    def call_at(self, step: int) -> Call | None:
        return next((c for c in self.calls if c.step == step), None)

    def as_json(self) -> dict[str, Any]:
        """The interface ``inspector check --json`` prints (kept exactly)."""
        return {
            "calls": len(self.calls),
            "maxRecorded": self.max_recorded,
            "offset": {"median": self.offset_median, "p10": self.offset_p10, "p90": self.offset_p90},
            "spreadExcludingFlagged": self.spread_excluding_flagged,
            "flagged": [f.as_json() for f in self.flags],
        }


def quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def continues_earlier(session: Session, path: Sequence[int]) -> bool:
    """Does the branch start mid-way: the importer says the file continues an earlier one
    (``continuesFrom``), or its first entry's parent is not in the file?"""
    extra = (session.header.__pydantic_extra__ or {}) if session.header is not None else {}
    if extra.get("continuesFrom"):
        return True
    if not path:
        return False
    parent = getattr(session.entries[path[0]], "parentId", None)
    return isinstance(parent, str) and bool(parent) and session.index_of(parent) is None


def _observe(
    session: Session, r: Replay, cal: Calibration, providers: bool
) -> tuple[list[Observed], list[dict[str, int]]]:
    counter = session_counter(session, "tiktoken")
    sent = SentCounter(session, counter, rules_for(session, providers))
    observed: list[Observed] = []
    parts: list[dict[str, int]] = []
    events: list[Event] = []
    previous = None
    compresses: set[int] = set()  # DCP compress results met in a context so far
    excess: dict[int, int | None] = {}  # DCP block id -> its notified less recorded summary tokens
    dcp = bool((session.header.model_extra or {}).get("dcp")) if session.header is not None else False
    compress_at = (  # the entries holding a compress result
        {i for i, e in enumerate(session.entries) if dcp_blocks(getattr(e, "message", None))}
        if dcp
        else set()
    )
    answers = [session.entries[st.entry_index].message for st in r.steps]  # type: ignore[union-attr]
    compared = {  # the calls whose recorded prompt is compared (a recorded prompt has usage)
        k: rec
        for k, m in enumerate(answers)
        if isinstance(m, AssistantMessage) and m.usage is not None and (rec := recorded_prompt(m)) is not None
    }
    contexts = r.sent_contexts(compared)  # each context as sent, one after the other
    for k, st in enumerate(r.steps):
        m = answers[k]
        events.extend(st.events)
        rec = compared.get(k)
        if rec is not None and isinstance(m, AssistantMessage) and m.usage is not None:
            at, after = next(contexts)
            assert at == k
            count = sent.count(after, m)
            observed.append(
                Observed(
                    st.step,
                    st.entry_index,
                    rec,
                    count.tokens,
                    cal.tokens(count.tokens, count.items),
                    tuple(events),
                    previous,
                    float(clamp(m.usage.cacheRead)),  # a damaged file's value may be any number
                    count.parts.get(REINJECTED, 0),
                    m,
                    _dcp_told(after, compresses, excess, counter, compress_at)
                    if dcp and any(e.type == "pruned" for e in events)
                    else (),
                )
            )
            parts.append(dict(count.parts))
            events = []
        previous = m
    return observed, parts


def _dcp_told(
    context: Sequence[Any],
    seen: set[int],
    excess: dict[int, int | None],
    counter: Any,
    compress_at: set[int],
) -> tuple[tuple[int, int, int | None], ...]:
    """(DCP's notified summary tokens, the tokens of the summaries the export records, the excess of
    the blocks they replaced or None when unknown) of each DCP compress that takes effect at this
    call (its result first in a context), when the export holds its notification
    (``details["dcp"]["notified"]``: :func:`inspector.importers.opencode_dcp.notified`).
    ``excess``: block id → notified less recorded tokens, of the blocks met so far;
    ``compress_at``: the entries that hold a compress result."""
    out = []
    for cm in context:
        ei = cm.entry_index
        if ei is None or ei in seen or ei not in compress_at:
            continue
        blocks = dcp_blocks(cm.message)
        if not blocks:
            continue
        seen.add(cm.entry_index)
        told = cm.message.details["dcp"].get("notified")
        tokens = told.get("summaryTokens") if isinstance(told, dict) else None
        if type(tokens) is not int:
            excess.update(dict.fromkeys((b["block"] for b in blocks), None))
            continue
        held = sum(counter.count_text(str(b.get("summary", ""))) for b in blocks)
        gone = [excess.get(c) for b in blocks for c in b.get("consumes", []) if isinstance(c, int)]
        replaced = None if None in gone else sum(gone)  # type: ignore[arg-type]
        excess.update({b["block"]: (tokens - held if len(blocks) == 1 else None) for b in blocks})
        out.append((tokens, held, replaced))
    return tuple(out)


def check(session: Session, *, leaf: int | None = None, send_rules: bool = True) -> ReconCheck:
    """Compare every recorded prompt on the branch ending at ``leaf`` with the rebuilt context
    (``send_rules=False``: counted as pi holds it, without :mod:`inspector.sent`'s rules)."""
    r = replay(
        session, ReplaySettings(compaction="recorded", strategy="recorded", counter="tiktoken", leaf=leaf)
    )
    cal = session_calibration(session, send_rules, session_counter(session, "tiktoken"))  # the replay's
    observed, parts = _observe(session, r, cal, send_rules)
    max_rec = max((o.recorded for o in observed), default=0)
    limit = threshold(max_rec)
    mid = continues_earlier(session, r.path)
    ends = session.format in END_BREAKPOINT
    flags, carried, odd = flag_calls(observed, limit, mid, ends)
    dropped, stops = reasoning_dropped(observed, parts, flags, cal.ratio, limit)
    if any(dropped):
        observed, parts, flags, carried, odd = _without_reasoning(
            observed, parts, dropped, stops, cal, limit, mid, ends
        )
    calls = tuple(
        Call(
            o.step,
            o.entry_index,
            round(o.recorded),
            o.sent,
            round(o.calibrated),
            round(d),
            round(u),
            round(o.recorded - o.calibrated - d),
            p,
            f,
        )
        for o, p, f, d, u in zip(observed, parts, flags, carried, odd, strict=True)
    )
    return _summarise(calls, cal, limit, round(max_rec), mid, r)


def _without_reasoning(
    observed: list[Observed],
    parts: list[dict[str, int]],
    dropped: list[int],
    stops: list[int],
    cal: Calibration,
    limit: int,
    mid: bool,
    ends: bool,
) -> tuple[list[Observed], list[dict[str, int]], list[Flag | None], list[float], list[float]]:
    """The calls again, the reasoning the provider stopped counting left out (:mod:`.regimes`)."""
    observed = [
        replace(o, sent=o.sent - d, calibrated=o.calibrated - cal.ratio * d)
        for o, d in zip(observed, dropped, strict=True)
    ]
    parts = [
        {**p, "reasoning no longer sent back": -d} if d else p for p, d in zip(parts, dropped, strict=True)
    ]
    flags, carried, odd = flag_calls(observed, limit, mid, ends)
    for i in stops:
        f = flags[i]
        if f is not None:
            flags[i] = replace(f, detail=f.detail + NOTE)
    return observed, parts, flags, carried, odd


def _summarise(
    calls: tuple[Call, ...], cal: Calibration, limit: int, max_rec: int, mid: bool, r: Replay
) -> ReconCheck:
    offsets = [c.offset for c in calls]
    clean = [c.offset for c in calls if c.flag is None]
    fifth = max(1, len(clean) // 5)
    drift = round(quantile(clean[-fifth:], 0.5) - quantile(clean[:fifth], 0.5)) if len(clean) >= 5 else 0
    return ReconCheck(
        calls=calls,
        calibration=cal,
        threshold=limit,
        max_recorded=max_rec,
        offset_median=round(quantile(offsets, 0.5)),
        offset_p10=round(quantile(offsets, 0.1)),
        offset_p90=round(quantile(offsets, 0.9)),
        spread_excluding_flagged=round(quantile(clean, 0.9) - quantile(clean, 0.1)),
        drift=drift,
        mid_session=mid,
        replay=r,
    )
