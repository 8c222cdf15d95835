"""A session's own tokenizer calibration: provider tokens per tiktoken (cl100k) token, plus a
fixed cost per message.

cl100k is not the provider's tokenizer: it counts Claude's tokens 15–30 % low on tool-heavy text,
and newer tokenizers further apart still; and every message the provider receives carries
framing (its role, a tool call's id, the JSON of an item) no message text shows. Both are fitted
per session from **step-to-step deltas**: between two consecutive model calls the recorded
prompt grows by what was appended (the previous answer, tool results, prompts), so over calls
where nothing else changed ``Δrecorded ≈ ratio × Δsent + overhead × Δmessages``. The system prompt
and tool definitions, which no file stores, cancel out of every delta.

A delta counts only when nothing else changed the context in between: no compaction or branch
summary, no recorded pruning taking effect (OpenCode's ``time.compacted``, Claude Code's
microcompact, a DCP compress), the previous answer neither failed nor aborted, both calls
recorded a prompt, and — where thinking or reasoning is kept only for the current turn — no new
prompt started a turn. The fit is least squares, refitted without the deltas that lie more than
four median absolute deviations out (those something outside the file changed), over deltas of
at least :data:`MIN_DELTA` tokens. The overhead is kept within 0–:data:`MAX_OVERHEAD` tokens.

The ``calibrated`` counter is ``ratio × tiktoken + overhead`` per message: **fitted to the
session's own recorded usage**, not a published tokenizer, and labelled so wherever it is
offered.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .context import ContextMessage, _context_message
from .numbers import clamp, finite_ms
from .sent import SendRules, SentCounter, rules_for, thinking_rule
from .session.models import AssistantMessage, BranchSummaryEntry, CompactionEntry, UserMessage
from .session.tree import Session
from .tokens import TiktokenCounter

MIN_DELTA = 100
"""Deltas smaller than this (tiktoken tokens) are too noisy to fit on."""
MIN_PAIRS = 3
MAX_OVERHEAD = 200


@dataclass(frozen=True)
class Calibration:
    ratio: float
    """Provider tokens per tiktoken token (1.0 when there is nothing to fit on)."""
    overhead: float
    """Provider tokens per message beyond its text (framing)."""
    pairs: int
    """Deltas the fit kept."""
    fitted: bool

    @property
    def label(self) -> str:
        if not self.fitted:
            return "calibrated: tiktoken × 1.00 (not enough recorded usage to fit on)"
        return (
            f"calibrated: tiktoken × {self.ratio:.3f} + {self.overhead:.0f} per message, fitted to this "
            f"session's recorded usage ({self.pairs} deltas)"
        )

    def tokens(self, tiktoken: float, messages: int) -> float:
        return self.ratio * tiktoken + self.overhead * messages


def recorded_prompt(m: AssistantMessage) -> float | None:
    """The prompt a call recorded: input + cache read + cache write (None or 0: not recorded)."""
    u = m.usage
    if u is None:
        return None
    n = clamp(u.input) + clamp(u.cacheRead) + clamp(u.cacheWrite)
    return n if n > 0 else None


def _least_squares(rows: Sequence[tuple[float, float, float]]) -> tuple[float, float] | None:
    """``(ratio, overhead)`` minimising Σ(ΔR − ratio·ΔS − overhead·ΔN)², the overhead kept in range."""
    sxx = sum(ds * ds for _, ds, _ in rows)
    sxn = sum(ds * dn for _, ds, dn in rows)
    snn = sum(dn * dn for _, _, dn in rows)
    sxy = sum(ds * dr for dr, ds, _ in rows)
    sny = sum(dn * dr for dr, _, dn in rows)
    det = sxx * snn - sxn * sxn
    if sxx <= 0:
        return None
    if det > 1e-9 * sxx * max(snn, 1):
        b, c = (sxy * snn - sny * sxn) / det, (sxx * sny - sxn * sxy) / det
        if 0 <= c <= MAX_OVERHEAD:
            return b, c
        c = min(max(c, 0.0), MAX_OVERHEAD)
        return (sxy - c * sxn) / sxx, c
    return sxy / sxx, 0.0


def fit(deltas: Iterable[tuple[float, float, float]]) -> Calibration:
    """The calibration from ``(Δrecorded, Δsent, Δmessages)`` deltas (see the module docstring)."""
    rows = [d for d in deltas if d[1] >= MIN_DELTA and d[0] > 0]
    bc = (1.0, 0.0)
    for _ in range(6):
        if len(rows) < MIN_PAIRS:
            return Calibration(1.0, 0.0, len(rows), False)
        fitted = _least_squares(rows)
        if fitted is None:
            return Calibration(1.0, 0.0, len(rows), False)
        bc = fitted
        res = [dr - bc[0] * ds - bc[1] * dn for dr, ds, dn in rows]
        med = sorted(res)[len(res) // 2]
        mad = sorted(abs(x - med) for x in res)[len(res) // 2]
        kept = [r for r, x in zip(rows, res, strict=True) if abs(x - med) <= 4 * mad + 1]
        if len(kept) == len(rows):
            break
        rows = kept
    return Calibration(bc[0], bc[1], len(rows), True)


def _prune_times(session: Session) -> list[float]:
    from .pruning.recorded import recorded_prune

    return sorted(
        p.at for e in session.entries if (p := recorded_prune(getattr(e, "message", None))) is not None
    )


def _changes_context(e: Any) -> bool:
    if isinstance(e, (CompactionEntry, BranchSummaryEntry)):
        return True
    d = getattr(getattr(e, "message", None), "details", None)
    return isinstance(d, dict) and "dcp" in d  # a DCP compress takes effect at the next call


def session_deltas(
    session: Session, counter: Any | None = None, rules: SendRules | None = None
) -> list[tuple[float, float, float]]:
    """``(Δrecorded, Δsent, Δmessages)`` for every clean pair of consecutive calls on the default
    branch."""
    counter = counter or TiktokenCounter()
    rules = rules or rules_for(session)
    sent = SentCounter(session, counter, rules)
    times = _prune_times(session)
    out: list[tuple[float, float, float]] = []
    prev: tuple[float, float | None] | None = None  # (recorded prompt, time) of the previous call
    added: list[ContextMessage] = []
    dirty = False
    for ei in session.path():
        e = session.entries[ei]
        dirty = dirty or _changes_context(e)
        m = _context_message(e)
        if m is None:
            continue
        if not isinstance(m, AssistantMessage):
            dirty = dirty or (isinstance(m, UserMessage) and _turn_scoped(rules, added, m))
            added.append(ContextMessage(m, ei))
            continue
        r, t = recorded_prompt(m), finite_ms(m.timestamp)
        if prev is not None and r is not None and not dirty and not _pruned_between(times, prev[1], t):
            n = sent.count(added, m)
            out.append((r - prev[0], n.tokens, n.items))
        failed = m.stopReason in ("error", "aborted")
        prev = (r, t) if r is not None and not failed else None
        added, dirty = [ContextMessage(m, ei)], False
    return out


def _turn_scoped(rules: SendRules, added: Sequence[ContextMessage], prompt: UserMessage) -> bool:
    """A new prompt changes what was sent before it when the previous answer's thinking is
    turn-scoped (it stops being sent)."""
    answer = next((cm.message for cm in added if isinstance(cm.message, AssistantMessage)), None)
    return answer is not None and thinking_rule(rules, answer, None) == "turn"


def _pruned_between(times: Sequence[float], a: float | None, b: float | None) -> bool:
    if not times:
        return False
    if a is None or b is None:
        return True
    from bisect import bisect_right

    return bisect_right(times, b) > bisect_right(times, a)


_CACHE: dict[tuple[int, bool], tuple[Session, Calibration]] = {}


def session_calibration(session: Session, providers: bool = True, counter: Any | None = None) -> Calibration:
    """The session's fitted ratio (computed once per loaded session); ``providers=False`` fits
    on the context as pi holds it (no sending rules). ``counter``: a tiktoken counter that already
    knows the session's messages (the replay's :func:`inspector.replay.session_counter`), so they
    are not encoded again; the counts, and so the fit, are the same either way."""
    key = (id(session), providers)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is session:
        return hit[1]
    cal = fit(session_deltas(session, counter, rules=rules_for(session, providers)))
    if len(_CACHE) > 16:
        _CACHE.clear()
    _CACHE[key] = (session, cal)
    return cal
