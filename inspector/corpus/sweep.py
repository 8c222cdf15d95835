"""Corpus sweeps: every session replayed under every grid point, and the aggregate per setting.

The unit of work is one **session task** (:func:`session_task`): a worker loads one session,
replays it under the grid points not done yet (and once *as recorded*, the baseline), and sends
back plain rows — never the session. So a worker holds one session at a time, and memory stays
bounded by the largest session, not by the corpus. Tasks run on an engine of
:mod:`inspector.corpus.engines` (a local process pool, or Dask distributed); rows can be kept in
a DuckDB file (:mod:`inspector.corpus.store`) so an interrupted sweep resumes where it stopped.

*As recorded* is the replay with ``compaction="recorded"`` and ``strategy="recorded"`` (the
session's own compactions and recorded pruning; the same as ``sweep --agents recorded``), with
the sweep's window and counter. The window is each session's own (``own_window``: the one it
records, else its model's, else 200,000: :func:`inspector.window.session_window`) unless the sweep
gives one or sweeps it (a ``context_window`` grid). A setting makes a session **worse than
recorded** when its replay sends more input tokens, or overflows the window more often, than that
baseline.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..cache.report import cache_replay
from ..replay import ReplaySettings, replay
from ..replay.summaries import SummaryCache
from ..replay.sweep import check_grid_size, grid_point
from ..window import window_settings
from .items import CorpusItem, load_entries
from .store import METRIC_FIELDS

BASELINE = "recorded"
"""The ``values`` of the as-recorded row."""
WORST_LISTED = 25
"""Sessions listed per setting in ``worse`` (the count is of all of them)."""


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the grid's values, the first key varying slowest (the order
    :func:`inspector.replay.sweep` uses)."""
    keys = list(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(grid[k] for k in keys))]


def corpus_base(base: ReplaySettings) -> ReplaySettings:
    """``base`` for a corpus: no leaf (each session is replayed on its own default branch)."""
    return base.model_copy(update={"leaf": None})


def setting_key(base: ReplaySettings, values: Mapping[str, Any] | str, own_window: bool = False) -> str:
    """A short stable id of one setting: the base settings and the grid point (or
    :data:`BASELINE`), and whether each session has its own window. Two sweeps share a row only
    when all are equal."""
    doc_of: dict[str, Any] = {"base": base.model_dump(mode="json"), "values": values}
    if own_window:
        doc_of["window"] = "each session's own"
        doc_of["base"].pop("context_window")
    doc = json.dumps(doc_of, sort_keys=True, default=str)
    return hashlib.sha256(doc.encode()).hexdigest()[:20]


def baseline_settings(base: ReplaySettings) -> ReplaySettings:
    return base.model_copy(update={"compaction": "recorded", "strategy": "recorded", "strategy_settings": ()})


def point_settings(base: ReplaySettings, values: Mapping[str, Any] | str) -> ReplaySettings:
    """The settings of one grid point (applied the way :func:`inspector.replay.sweep` applies a
    grid), or of the as-recorded baseline."""
    if isinstance(values, str):  # BASELINE
        return baseline_settings(base)
    return grid_point(base, values)


def replay_row(session: Any, settings: ReplaySettings, summaries: SummaryCache) -> dict[str, Any]:
    """The metrics of ONE replay: the replay's own (:data:`METRIC_FIELDS`) and its billed cost
    with the prompt cache (:func:`inspector.cache.cache_replay` over the same finished replay:
    ``billed_cost_usd``, ``cache_hit_rate``, ``invalidations``)."""
    r = replay(session, settings, summaries=summaries)
    m, c = r.metrics, cache_replay(r)
    hit = c.hit_rate
    return {
        **{f: getattr(m, f) for f in METRIC_FIELDS},
        "billed_cost_usd": round(c.billed_cost, 6),
        "cache_hit_rate": None if hit is None else round(hit, 4),
        "invalidations": len(c.invalidations),
    }


# ---------------------------------------------------------------------------------------------
# the worker side
# ---------------------------------------------------------------------------------------------


def session_task(
    path: str,
    ref: str | None,
    base_json: dict[str, Any],
    points: list[tuple[str, Any]],
    own_window: bool = False,
) -> dict[str, Any]:
    """Replay one session under ``points`` — ``(setting key, grid values or "recorded")`` — and
    return ``{"session", "agent", "rows", "error", "seconds"}`` (``own_window``: against the
    session's own window, :func:`inspector.window.session_window`); a row per point with the
    :data:`METRIC_FIELDS` and the billed cost of the same replay (:func:`replay_row`: one replay
    per session × setting; the baseline comes first, so the cache model's size fit reuses it).
    Never raises: a session that cannot be loaded or replayed comes back
    with its ``error`` and no rows. Runs in a worker process (plain arguments, plain result)."""
    item = CorpusItem(path, ref)
    t0 = time.perf_counter()
    try:
        session = load_entries(item)
        base = ReplaySettings.model_validate(base_json)
        if own_window:
            base = base.model_copy(update=window_settings(session))
        summaries = SummaryCache()
        rows = [
            {
                "session": item.key,
                "setting": key,
                "values": values,
                **replay_row(session, point_settings(base, values), summaries),
            }
            for key, values in points
        ]
        return {
            "session": item.key,
            "agent": session.format,
            "rows": rows,
            "error": None,
            "seconds": time.perf_counter() - t0,
        }
    except Exception as e:  # noqa: BLE001 - a failing session is reported, the sweep goes on
        return {
            "session": item.key,
            "agent": None,
            "rows": [],
            "error": f"{type(e).__name__}: {e}",
            "seconds": time.perf_counter() - t0,
        }
    finally:
        release_caches()


def release_caches() -> None:
    """Drop the replay engine's per-session caches (token counts, recorded-pruning flags,
    summaries) once a task is done, so a worker keeps no session alive between tasks."""
    from .. import calibration
    from ..replay import counters, strategies
    from ..summarize import offline

    for cache in (counters._COUNTER_CACHE, strategies._RECORDS_PRUNING, calibration._CACHE):
        cache.clear()
    offline._MEMO.clear()  # per-message facts of the offline summarizer: it holds the messages


# ---------------------------------------------------------------------------------------------
# running a sweep
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepPlan:
    """What a corpus sweep computes: the sessions, the grid points and their setting keys."""

    items: tuple[CorpusItem, ...]
    base: ReplaySettings
    grid: dict[str, list[Any]]
    points: tuple[dict[str, Any], ...]
    keys: tuple[str, ...]
    baseline_key: str
    own_window: bool = False
    """Each session replayed against its own window (the base's is not used)."""

    @classmethod
    def make(
        cls,
        items: Iterable[CorpusItem],
        base: ReplaySettings,
        grid: Mapping[str, Sequence[Any]],
        own_window: bool = False,
    ) -> SweepPlan:
        base = corpus_base(base)
        check_grid_size(grid)
        points = grid_points(grid)
        for p in points:  # a value no session could replay with: one error now, not one per session
            point_settings(base, p)
        return cls(
            tuple(items),
            base,
            {k: list(v) for k, v in grid.items()},
            tuple(points),
            tuple(setting_key(base, p, own_window) for p in points),
            setting_key(base, BASELINE, own_window),
            own_window,
        )

    def pairs(self) -> int:
        """Session × setting pairs, the baseline included."""
        return len(self.items) * (len(self.points) + 1)

    def tasks(
        self, done: Mapping[str, set[str]]
    ) -> list[tuple[str, str | None, dict[str, Any], list[tuple[str, Any]], bool]]:
        """One task per session with pairs left (``done``: the setting keys each session has),
        the largest files first (the longest tasks start first: workers finish together)."""
        base_json = self.base.model_dump(mode="json")
        out = []
        for item in sorted(self.items, key=_size, reverse=True):
            have = done.get(item.key, set())
            todo: list[tuple[str, Any]] = [
                (k, p) for k, p in zip(self.keys, self.points, strict=True) if k not in have
            ]
            if self.baseline_key not in have:
                todo.insert(0, (self.baseline_key, BASELINE))
            if todo:
                out.append((item.path, item.ref, base_json, todo, self.own_window))
        return out


def _size(item: CorpusItem) -> int:
    import os

    try:
        return os.stat(item.path).st_size
    except OSError:
        return 0


@dataclass(frozen=True)
class SweepResult:
    plan: SweepPlan
    rows: tuple[dict[str, Any], ...]
    """Every row of the plan's pairs (computed now or found in the results file)."""
    failed: tuple[tuple[str, str], ...]
    """(session, error) of each session that could not be swept."""
    computed: int
    """Pairs computed in this run (the rest came from the results file)."""
    agents: dict[str, str] = field(default_factory=dict)

    def aggregate(self) -> list[dict[str, Any]]:
        return aggregate(self.plan, self.rows)

    def window(self) -> int | str:
        """The window the sessions were replayed against: "grid" (swept), "session" (each its
        own), or the one number."""
        if "context_window" in self.plan.grid:
            return "grid"
        return "session" if self.plan.own_window else self.plan.base.context_window

    def as_dict(self) -> dict[str, Any]:
        """The ``inspector sweep CORPUS --json`` document."""
        return {
            "sessions": len(self.plan.items),
            "failed": [{"path": k, "error": e} for k, e in self.failed],
            "grid": self.plan.grid,
            "window": self.window(),
            "aggregate": self.aggregate(),
        }


ProgressFn = Callable[[int, int], None]


def run_sweep(
    items: Sequence[CorpusItem],
    base: ReplaySettings,
    grid: Mapping[str, Sequence[Any]],
    *,
    engine: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    out: str | None = None,
    progress: ProgressFn | None = None,
    engine_options: Mapping[str, Any] | None = None,
    own_window: bool = False,
) -> SweepResult:
    """Replay every session of ``items`` under every point of ``grid`` on ``engine`` (``local``:
    a process pool of ``workers``, 0 = in this process; ``dask``: the cluster at ``scheduler``, or
    a new ``LocalCluster``). With ``out``, rows go to that DuckDB file as they arrive and pairs
    already there are skipped. ``progress(done, total)`` is called after each session (pairs);
    an exception it raises stops the sweep (what is written stays written). ``own_window``: each
    session against its own window (:func:`inspector.window.session_window`), not ``base``'s."""
    from .engines import run_tasks
    from .schedule import order, warm_for
    from .store import Store

    plan = SweepPlan.make(items, base, grid, own_window)
    store = Store(out) if out else None
    try:
        done = store.done(plan.keys + (plan.baseline_key,)) if store else {}
        rows: list[dict[str, Any]] = []
        failed: dict[str, str] = {}
        agents: dict[str, str] = {}
        finished = sum(len(v) for v in done.values())
        computed = 0
        if progress:
            progress(finished, plan.pairs())
        tasks = order(plan.tasks(done))
        for res in run_tasks(
            session_task,
            tasks,
            engine=engine,
            workers=workers,
            scheduler=scheduler,
            options=engine_options,
            warm=warm_for(plan.base),
        ):
            if res["error"] is not None:
                failed[res["session"]] = res["error"]
            if store:
                store.add(res)
            rows.extend(res["rows"])
            if res["agent"]:
                agents[res["session"]] = res["agent"]
            computed += len(res["rows"])
            finished += len(res["rows"]) if res["error"] is None else len(plan.points) + 1
            if progress:
                progress(finished, plan.pairs())
        if store:
            rows = store.rows(plan.keys + (plan.baseline_key,), [i.key for i in plan.items])
            agents = {**store.agents(), **agents}
        rows.sort(key=lambda r: (r["session"], r["setting"]))
        return SweepResult(plan, tuple(rows), tuple(sorted(failed.items())), computed, agents)
    finally:
        if store:
            store.close()


# ---------------------------------------------------------------------------------------------
# aggregation (pure)
# ---------------------------------------------------------------------------------------------


def _stats(xs: list[float], digits: int = 1) -> dict[str, float]:
    if not xs:
        return {"median": 0, "p90": 0, "total": 0}
    a = np.asarray(xs, dtype=float)
    return {
        "median": round(float(np.median(a)), digits),
        "p90": round(float(np.percentile(a, 90)), digits),
        "total": round(float(a.sum()), digits),
    }


def aggregate(plan: SweepPlan, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per grid point, in grid order: over the sessions that have both that point's
    row and the baseline — the median, p90 (linear interpolation, numpy's default) and total of
    input tokens and blended cost (``costUsd``) and of the cost billed with the prompt cache
    (:func:`billed_stats`); totals of compactions, overflows, re-reads and pruned tokens;
    and the sessions it makes worse than recorded (:func:`worse_than_recorded`), the worst first."""
    by: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["setting"], {})[r["session"]] = r
    base = by.get(plan.baseline_key, {})
    out = []
    for key, values in zip(plan.keys, plan.points, strict=True):
        cells = [r for s, r in sorted(by.get(key, {}).items()) if s in base]
        worse = sorted(
            (w for r in cells if (w := worse_than_recorded(r, base[r["session"]])) is not None),
            key=lambda w: (-w["overflowsDelta"], -w["inputTokensRatio"], w["session"]),
        )
        inp = _stats([r["total_input_tokens"] for r in cells])
        out.append(
            {
                "settings": dict(values),
                "sessions": len(cells),
                "inputTokens": {k: int(v) if k == "total" else v for k, v in inp.items()},
                "costUsd": _stats([r["cost_usd"] for r in cells], digits=4),
                **billed_stats(cells),
                "compactions": sum(r["compactions"] for r in cells),
                "overflows": sum(r["overflows"] for r in cells),
                "rereads": sum(r["rereads"] for r in cells),
                "prunedTokens": sum(r["tokens_pruned"] for r in cells),
                "worseThanRecorded": len(worse),
                "worse": worse[:WORST_LISTED],
            }
        )
    return out


def billed_stats(cells: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The prompt-cache figures of one setting's cells: ``billedCostUsd`` (median, p90, total of
    the billed cost, :mod:`inspector.cache`), ``cacheHitRate`` (cached share of all prompt tokens,
    weighted by each session's input tokens) and ``invalidations`` (total). Cells without billed
    cost (rows from a results file written before it existed) are left out, counted in
    ``billedSessions``."""
    billed = [r for r in cells if r.get("billed_cost_usd") is not None]
    weights = [
        (r["total_input_tokens"], r["cache_hit_rate"]) for r in billed if r.get("cache_hit_rate") is not None
    ]
    total = sum(w for w, _ in weights)
    return {
        "billedCostUsd": _stats([r["billed_cost_usd"] for r in billed], digits=4),
        "billedSessions": len(billed),
        "cacheHitRate": round(sum(w * h for w, h in weights) / total, 4) if total else None,
        "invalidations": sum(r.get("invalidations") or 0 for r in billed),
    }


def worse_than_recorded(row: Mapping[str, Any], recorded: Mapping[str, Any]) -> dict[str, Any] | None:
    """How ``row`` is worse than the session's as-recorded replay — more input tokens or more
    overflows — or None when it is not."""
    d_in = row["total_input_tokens"] - recorded["total_input_tokens"]
    d_over = row["overflows"] - recorded["overflows"]
    if d_in <= 0 and d_over <= 0:
        return None
    return {
        "session": row["session"],
        "inputTokensDelta": int(d_in),
        "overflowsDelta": int(d_over),
        "reReadsDelta": int(row["rereads"] - recorded["rereads"]),
        "inputTokensRatio": round(row["total_input_tokens"] / max(1, recorded["total_input_tokens"]), 4),
        "billedCostDelta": (
            None
            if row.get("billed_cost_usd") is None or recorded.get("billed_cost_usd") is None
            else round(row["billed_cost_usd"] - recorded["billed_cost_usd"], 6)
        ),
    }
