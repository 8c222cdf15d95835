"""Retention: what a compaction forgot that the session needed later (issue 21).

No agent scores its own summaries; these are our heuristics, deterministic and offline, each
documented with what it can miss in ``docs/retention.md``. They read a finished
:class:`inspector.replay.Replay` — every compaction in it, recorded or simulated — and never
change the replay loop: its summaries pin the context before and after each compaction.

* :func:`retention` — every compaction of a replay: needed items per category, where each
  survives, recall, the forgotten list (introducedAt / neededAt entry indexes, evidence), the work
  redone after the cut, and the first call that needed something the compaction dropped.
* :func:`compare_summaries` — one compaction scored under other summaries of the same span: the
  recorded one, the offline summarizer's, and an LLM summarizer's in each prompt style (cached).
* :mod:`inspector.retention.probe` — the optional LLM probe mode (Factory's four probes).

Interface (``inspector retention SESSION --json``): ``{"compactions": [{"entryIndex", "source",
"recall": {files, identifiers, errors, instructions}, "needed", "forgotten": [{kind, item,
introducedAt, neededAt}]}]}``. A simulated compaction's ``entryIndex`` is the branch entry right
before it (the parent pi would give its compaction entry).
"""

from __future__ import annotations

import bisect
import hashlib
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..gcpause import gc_paused
from ..importers.claude_code import reinjected
from ..importers.codex import put_back_count
from ..replay.results import CompactionRecord, Reread, SimulatedCompaction
from .extract import facts_for
from .score import (
    CATEGORIES,
    KINDS,
    CompactionRetention,
    Needed,
    Redo,
    Span,
    continuation,
    judge,
    needed_items,
    redo,
)

__all__ = [
    "CATEGORIES",
    "KINDS",
    "CompactionRetention",
    "Needed",
    "Redo",
    "SWEEP_KEYS",
    "RetentionReport",
    "Span",
    "compare_summaries",
    "first_need_step",
    "forget_scores",
    "retention",
    "retention_metrics",
    "score_text",
    "spans",
]


@dataclass(frozen=True)
class RetentionReport:
    compactions: tuple[CompactionRetention, ...]
    first_need_steps: tuple[int | None, ...]
    """Per compaction: the first model call that used a file, identifier or error it forgot
    (:func:`first_need_step`; None: none did)."""

    def totals(self) -> dict[str, Any]:
        """Over every compaction: the items needed later, those forgotten, and the share kept
        (``retention``: kept ÷ needed; None when nothing was needed) — retention as one number, the
        objective a sweep ranks settings by."""
        needed = sum(len(c.needed) for c in self.compactions)
        forgotten = sum(len(c.forgotten) for c in self.compactions)
        return {
            "needed": needed,
            "forgotten": forgotten,
            "retention": (needed - forgotten) / needed if needed else None,
        }

    def as_dict(self, details: bool = False) -> dict[str, Any]:
        out = []
        for c, k in zip(self.compactions, self.first_need_steps, strict=True):
            d = c.as_dict(details)
            if details:
                d["firstNeedStep"] = k
            out.append(d)
        return {"compactions": out}


def _is_summary(cm: Any) -> bool:
    return cm.entry_index is None or cm.role in ("compactionSummary", "branchSummary")


def _file_lists(session: Any, ei: int | None) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    details = getattr(session.entries[ei], "details", None) if ei is not None else None
    if not isinstance(details, dict):
        return None
    rf, mf = details.get("readFiles"), details.get("modifiedFiles")
    if not isinstance(rf, list) and not isinstance(mf, list):
        return None
    return _names(rf), _names(mf)


def _unread(session: Any, ei: int | None) -> str | None:
    """Why a recorded compaction's summary cannot be read from the file (None: it can): a Codex
    remote compaction records an empty message, a server-side one an encrypted item."""
    if ei is None:
        return None
    e = session.entries[ei]
    details = getattr(e, "details", None)
    if isinstance(details, dict) and details.get("encrypted"):
        return "its summary was made on the server and stored encrypted"
    if not str(getattr(e, "summary", "") or "").strip():
        return "the file records no text of its summary"
    return None


def _names(v: Any) -> tuple[str, ...]:
    """The file names a ``details`` list holds (anything else in it, or a value that is not a list, names none)."""
    return tuple(str(x) for x in v if isinstance(x, str)) if isinstance(v, list) else ()


def spans(replay: Any) -> list[Span]:
    """Every compaction of ``replay`` as a :class:`Span` (see :mod:`inspector.retention.score`)."""
    path = replay.path
    pos = {ei: p for p, ei in enumerate(path)}
    facts = facts_for(replay.session, path)  # one pass over the branch (memoised per session)
    starts = []
    for rec in replay.summaries:
        if rec.entry_index in pos:  # a recorded compaction's entry on the branch
            starts.append(pos[rec.entry_index] + 1)
        else:
            seen = [pos[m.entry_index] for m in rec.before() if m.entry_index in pos]
            starts.append(max(seen) + 1 if seen else 0)
    out = []
    for k, rec in enumerate(replay.summaries):
        start = starts[k]
        end = starts[k + 1] if k + 1 < len(starts) else len(path)
        kept = tuple(m.entry_index for m in rec.after() if not _is_summary(m))
        first = start  # the horizon's first entry: after what the agent put back itself, if it did
        recorded = not rec.simulated
        if recorded:
            first += put_back_count(replay.session.entries, path, start, end)
            kept += tuple(path[start:first])
        kept_set = set(kept)
        summarised = tuple(
            m.entry_index for m in rec.before() if not _is_summary(m) and m.entry_index not in kept_set
        )
        again: list[int] = []
        attached: tuple[str, ...] = ()
        if recorded:  # the reads Claude Code attaches again after its compaction (an estimate)
            again, attached = _reattached(replay.session, rec.entry_index, summarised)
            kept += tuple(i for i in again if i not in kept_set)
        ei = rec.entry_index if recorded else (path[start - 1] if start > 0 else -1)
        last_user = next(
            (
                path[p]
                for p in range(start - 1, -1, -1)
                if facts[path[p]].role == "user" and not continuation(facts[path[p]].text)
            ),
            None,
        )
        out.append(
            Span(
                k,
                int(ei if ei is not None else -1),
                "recorded" if recorded else "simulated",
                rec.step,
                summarised,
                kept,
                tuple(path[first:end]),
                last_user,
                _file_lists(replay.session, rec.entry_index) if recorded else None,
                attached,
                _unread(replay.session, rec.entry_index) if recorded else None,
            )
        )
    return out


def _reattached(session: Any, ei: Any, summarised: Sequence[int]) -> tuple[list[int], tuple[str, ...]]:
    """The reads of the span a recorded Claude Code compaction attaches again after it, and their
    files: the last read of each file Claude Code re-reads then (the importer's estimate:
    :func:`inspector.importers.claude_code.reinjected`). The model has their content after the cut
    (Claude Code reads the file from disk again; the last read stands for it), so they are kept
    messages — and still part of the span, where what they show was introduced."""
    span = set(summarised)
    pairs = [(i, f) for i, f in reinjected(session.entries[ei]) if i in span] if isinstance(ei, int) else []
    return sorted(i for i, _ in pairs), tuple(f for _, f in pairs if f is not None)


def _step_positions(replay: Any) -> list[int]:
    pos = {ei: p for p, ei in enumerate(replay.path)}
    return [pos.get(s.entry_index, -1) for s in replay.steps]


def first_need_step(
    replay: Any,
    c: CompactionRetention,
    step_pos: Sequence[int] | None = None,
    pos: dict[int, int] | None = None,
) -> int | None:
    """The first model call at or after the first use of a file, identifier or error ``c`` forgot
    (None: none). Instructions and the open task are left out: they stand from the first call on."""
    used = [n for n in c.forgotten if n.kind in USED_KINDS]
    if not used:
        return None
    pos = pos if pos is not None else _positions(replay)
    first = min(pos.get(n.needed_at, 1 << 60) for n in used)
    sp = list(step_pos) if step_pos is not None else _step_positions(replay)
    k = bisect.bisect_left(sp, first)
    return k if k < len(sp) else None


def _positions(replay: Any) -> dict[int, int]:
    return {ei: p for p, ei in enumerate(replay.path)}


def _rereads(
    replay: Any, span: Span, step_pos: Sequence[int], pos: dict[int, int] | None = None
) -> list[tuple[int, Reread]]:
    if not span.horizon:
        return []
    pos = pos if pos is not None else _positions(replay)
    a, b = pos[span.horizon[0]], pos[span.horizon[-1]]
    lo, hi = bisect.bisect_left(step_pos, a), bisect.bisect_right(step_pos, b)
    return [
        (replay.steps[k].entry_index, ev)
        for k in range(lo, hi)
        for ev in replay.steps[k].events
        if isinstance(ev, Reread)
    ]


def _label(rec: CompactionRecord) -> str:
    if isinstance(rec.event, SimulatedCompaction):
        return f"{rec.event.summarizer or 'summary'} (this replay)"
    return "recorded"


def score_text(
    replay: Any,
    span: Span,
    text: str,
    label: str,
    use_details: bool = True,
    items: Any = None,
    rd: Redo | None = None,
) -> CompactionRetention:
    """Score one summary ``text`` of ``span`` (``use_details``: the recorded compaction's file lists
    stand for the text's own blocks). What is needed and where it survives depend only on the
    session, the span's entries and the text: they are memoised per session (:func:`_judged`), so
    another replay with the same compactions — another pruning setting, a sweep's next cell —
    only counts its own redone work."""
    if rd is None:
        rd = redo(replay.session, span, _rereads(replay, span, _step_positions(replay)))
    sp = (
        span
        if use_details
        else Span(
            span.index,
            span.entry_index,
            span.source,
            span.step,
            span.summarised,
            span.kept,
            span.horizon,
            span.last_user,
            None,
        )
    )
    needed, files = _judged(replay.session, sp, text, items)
    return CompactionRetention(sp, label, needed, rd, files)


_JUDGED: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], tuple[Any, Any]]] = weakref.WeakKeyDictionary()
JUDGED_MEMO = 1024
"""Spans scored per session remembered (emptied beyond that)."""


def forget_scores(session: Any) -> None:
    """Forget the spans of ``session`` scored so far (:func:`_judged`): benchmarks and tests score
    it again from its facts."""
    with _LOCK:
        _JUDGED.pop(session, None)


def _judged(
    session: Any, sp: Span, text: str, items: Any
) -> tuple[tuple[Needed, ...], tuple[dict[str, Any], ...]]:
    """The needed items of ``sp`` with where each survives under ``text``, and its files (memoised
    per session, keyed by everything of the span they read: its entries, the last user message,
    the file lists, the files attached again, and the text by its BLAKE2 digest — a summary can
    be tens of kilobytes, and the memo need not keep it)."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    key = (sp.summarised, sp.kept, sp.horizon, sp.last_user, sp.file_lists, sp.attached, digest)
    with _LOCK:
        memo = _JUDGED.setdefault(session, {})
        hit = memo.get(key)
    if hit is not None:
        return hit
    if items is None:
        items = needed_items(session, sp)
    c = judge(session, sp, items, text, "", Redo(0, 0, 0))
    with _LOCK:
        if len(memo) >= JUDGED_MEMO:
            memo.clear()
        memo[key] = (c.needed, c.files)
    return c.needed, c.files


USED_KINDS = ("files", "identifiers", "errors")
"""The kinds whose need is a concrete use (the Replay marker's first need)."""
_CACHE: dict[int, tuple[Any, RetentionReport]] = {}
_LOCK = threading.Lock()


def retention(replay: Any) -> RetentionReport:
    """Score every compaction of ``replay`` under its own summary (memoised per replay object), with
    the cyclic garbage collector paused as the replay is built (:mod:`inspector.gcpause`: scoring
    builds many small acyclic objects; measured on the 10k-call bench session, automatic
    collections took about 15 % of the scoring's time)."""
    with _LOCK:
        hit = _CACHE.get(id(replay))
        if hit is not None and hit[0]() is replay:
            return hit[1]
    with gc_paused():
        report = _score_all(replay)
    with _LOCK:
        if len(_CACHE) > 64:
            _CACHE.clear()
        _CACHE[id(replay)] = (weakref.ref(replay), report)
    return report


def _score_all(replay: Any) -> RetentionReport:
    step_pos = _step_positions(replay)
    pos = _positions(replay)
    comps, firsts = [], []
    for span, rec in zip(spans(replay), replay.summaries, strict=True):
        rd = redo(replay.session, span, _rereads(replay, span, step_pos, pos))
        c = score_text(replay, span, rec.text, _label(rec), rd=rd)
        comps.append(c)
        firsts.append(first_need_step(replay, c, step_pos, pos))
    return RetentionReport(tuple(comps), tuple(firsts))


SWEEP_KEYS = ("retention", "needed", "forgotten")
"""The keys :func:`retention_metrics` gives a sweep's cell (:meth:`RetentionReport.totals`)."""


def retention_metrics(session: Any, settings: Any) -> dict[str, Any]:
    """Retention as an objective of a sweep (which keeps only each cell's replay metrics): the
    session replayed again under ``settings`` and every compaction scored — items needed later,
    items forgotten, and the share kept (:meth:`RetentionReport.totals`)."""
    from ..replay import replay as run

    return retention(run(session, settings)).totals()


def _prep_of(replay: Any, index: int) -> Any:
    prep = replay.summaries[index].prep
    if prep is not None:
        return prep
    from ..compaction_view import compaction_view

    return compaction_view(replay, index).prep


def compare_summaries(
    replay: Any, index: int, llm: Any = None, styles: Sequence[str] | None = None, summaries: Any = None
) -> list[CompactionRetention]:
    """Compaction ``index`` of ``replay`` scored under each summary of the same span: its own
    (recorded, or this replay's), the offline summarizer's, and — when ``llm`` is
    :class:`inspector.replay.ReplaySettings` naming an LLM summarizer — that summarizer's in each
    prompt style (through :func:`inspector.replay.default_summary`: cached on disk, and in memory
    in ``summaries``, the caller's :class:`inspector.replay.SummaryCache`)."""
    span = spans(replay)[index]
    rec = replay.summaries[index]
    items = needed_items(replay.session, span)
    rd = redo(replay.session, span, _rereads(replay, span, _step_positions(replay)))
    out = [score_text(replay, span, rec.text, _label(rec), items=items, rd=rd)]
    prep = _prep_of(replay, index)
    if prep is None:
        return out
    from ..summarize import get_summarizer, summarize_compaction

    offline = summarize_compaction(prep, get_summarizer("offline")).text
    out.append(score_text(replay, span, offline, "offline", use_details=False, items=items, rd=rd))
    if llm is not None and llm.summarizer != "offline":
        from ..replay import default_summary
        from ..summarize.prompts import STYLES

        for style in styles or STYLES:
            s = default_summary(prep, llm, style, session=replay.session, cache=summaries)
            label = f"{llm.summarizer} · {style}" + (" (fell back to offline)" if s.get("fell_back") else "")
            out.append(score_text(replay, span, s["text"], label, use_details=False, items=items, rd=rd))
    return out
