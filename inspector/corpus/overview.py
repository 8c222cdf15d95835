"""The sessions overview: one row per session of a corpus (``inspector corpus``, the Corpus page).

Each row is computed by :func:`overview_task` in a worker (one session loaded at a time) from the
session's own records and one as-recorded replay (its own compactions and recorded pruning):

* ``agent`` — the file's format (``pi``, ``claude-code``, ``codex``, ``opencode``); ``model`` —
  the model of the last model call; ``window`` — the context window the findings are checked
  against (the one given, else the session's own: :func:`inspector.window.session_window`);
  ``windowSource`` — where it comes from: ``given``, the session's ``recorded`` one, its
  ``model``'s in pi's model list, the agent's window an ``answered`` call proved, or ``assumed``
  (200,000: the session makes none known, and its peak may well exceed it); ``windowAtLeast`` —
  when a call the provider answered held more than ``window``, the smallest whole thousand that
  holds it (:meth:`inspector.window.AnsweredPeak.window_floor`: the model's window is at least
  that, and the findings' overflows are ones the provider did not see), else None;
  ``size`` — bytes of the file;
* ``calls`` — model calls (the replay's steps); ``peakContext`` — the largest prompt the file
  records (usage ``input + cacheRead + cacheWrite``), or, when no call records one, the replay's
  estimate (``peakSource`` says which);
* ``compactions`` — compactions recorded in the file, ``tokensAtCompaction`` — each one's
  ``tokensBefore``; ``prunes`` — recorded prunes (DCP, Claude Code's microcompact);
* ``recordedCost`` — the cost the file records (None when no call records one), ``cacheHitRate`` —
  cache-read tokens over all prompt tokens of the calls that record usage (None when no call
  records cache reads or writes);
* ``findings`` — ``inspector doctor`` findings by severity; ``loadIssues`` — load warnings and
  errors (the importer's informational notes left out).

A session that cannot be loaded has a row with ``error`` set and no figures.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..replay import ReplaySettings, replay
from ..session.models import AssistantMessage, CompactionEntry, MessageEntry
from ..session.tree import Session
from ..window import answered_peak, known_window, window_settings
from .items import CorpusItem, load_entries
from .sweep import baseline_settings, release_caches

COLUMNS: tuple[str, ...] = (
    "path",
    "agent",
    "model",
    "window",
    "windowSource",
    "windowAtLeast",
    "size",
    "calls",
    "peakContext",
    "peakSource",
    "compactions",
    "tokensAtCompaction",
    "prunes",
    "recordedCost",
    "cacheHitRate",
    "findings",
    "loadIssues",
    "error",
)


def overview_task(path: str, ref: str | None, window: int | None = None) -> dict[str, Any]:
    """The overview row of one session (never raises: a failure is the row's ``error``)."""
    item = CorpusItem(path, ref)
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(path=item.key, findings={}, tokensAtCompaction=[])
    try:
        row["size"] = os.stat(path).st_size
        session = load_entries(item)
        row.update(session_figures(session, window))
    except Exception as e:  # noqa: BLE001 - the row says what went wrong; the corpus goes on
        row["error"] = f"{type(e).__name__}: {e}"
    finally:
        release_caches()
    return row


def session_figures(session: Session, window: int | None = None) -> dict[str, Any]:
    """Every overview figure of a loaded session (see the module's docstring); ``window``: the one
    to check against (default: the one the session records, else its model's, else 200,000:
    :func:`inspector.window.session_window`)."""
    from ..doctor import DoctorOptions, diagnose
    from ..pruning.recorded import recorded_prune

    given = window
    windows = window_settings(session, window)
    window = windows["context_window"]
    r = replay(session, baseline_settings(ReplaySettings(**windows)))
    recorded = [s.recorded_input for s in r.steps if s.recorded_input is not None]
    msgs = [e.message for e in session.entries if isinstance(e, MessageEntry)]
    calls = [m for m in msgs if isinstance(m, AssistantMessage)]
    usages = [m.usage for m in calls if m.usage is not None]
    prompt = sum(u.input + u.cacheRead + u.cacheWrite for u in usages)
    cached = sum(u.cacheRead + u.cacheWrite for u in usages)
    comps = [e for e in session.entries if isinstance(e, CompactionEntry)]
    return {
        "agent": session.format,
        "model": next((m.model for m in reversed(calls) if m.model), None),
        "window": window,
        "windowSource": window_source(session, given),
        "windowAtLeast": window_at_least(session, window),
        "calls": r.metrics.steps,
        "peakContext": int(max(recorded)) if recorded else r.metrics.peak_context,
        "peakSource": "recorded" if recorded else "estimated",
        "compactions": len(comps),
        "tokensAtCompaction": [int(e.tokensBefore) for e in comps if e.tokensBefore],
        "prunes": sum(1 for m in msgs if recorded_prune(m) is not None),
        "recordedCost": r.metrics.recorded_cost_usd
        if any((u.cost or {}).get("total") for u in usages)
        else None,
        "cacheHitRate": round(sum(u.cacheRead for u in usages) / prompt, 4) if cached and prompt else None,
        "findings": diagnose(session, "leaf", DoctorOptions(**windows)).counts(),
        "loadIssues": sum(1 for i in session.issues if i.severity != "info"),
    }


def window_at_least(session: Session, window: int) -> int | None:
    """``windowAtLeast``: the window an answered call proves when it held more than ``window``."""
    peak = answered_peak(session)
    return peak.window_floor() if peak is not None and peak.tokens > window else None


def window_source(session: Session, given: int | None) -> str:
    """Where the window a row is checked against comes from (see ``windowSource``)."""
    if given is not None:
        return "given"
    known = known_window(session)
    return known.source if known is not None else "assumed"


def overview(
    items: Sequence[CorpusItem],
    *,
    engine: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    window: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    engine_options: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The overview rows of ``items``, in the items' order; ``progress(done, total)`` per session."""
    from .engines import run_tasks

    tasks = [(i.path, i.ref, window) for i in items]
    got: dict[str, dict[str, Any]] = {}
    if progress:
        progress(0, len(tasks))
    for row in run_tasks(
        overview_task, tasks, engine=engine, workers=workers, scheduler=scheduler, options=engine_options
    ):
        got[row["path"]] = row
        if progress:
            progress(len(got), len(tasks))
    return [got[i.key] for i in items]


def totals(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Corpus totals: sessions (and failed), calls, compactions, prunes, recorded cost, findings
    by severity, sessions by agent, and the median peak context."""
    ok = [r for r in rows if not r.get("error")]
    peaks = sorted(r["peakContext"] for r in ok if r["peakContext"] is not None)
    findings: dict[str, int] = {}
    agents: dict[str, int] = {}
    for r in ok:
        for k, v in (r["findings"] or {}).items():
            findings[k] = findings.get(k, 0) + v
        agents[r["agent"]] = agents.get(r["agent"], 0) + 1
    return {
        "sessions": len(rows),
        "failed": len(rows) - len(ok),
        "agents": agents,
        "calls": sum(r["calls"] or 0 for r in ok),
        "compactions": sum(r["compactions"] or 0 for r in ok),
        "prunes": sum(r["prunes"] or 0 for r in ok),
        "recordedCost": round(sum(r["recordedCost"] or 0 for r in ok), 4),
        "medianPeakContext": int(statistics.median(peaks)) if peaks else None,
        "findings": findings,
    }
