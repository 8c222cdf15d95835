"""``inspector sweep``: a grid of settings replayed, or each agent's own way (``--agents``).

Given a corpus (several sessions, a folder, a glob, ``@AGENT``; or any of ``--engine``,
``--workers``, ``--scheduler``, ``--out``), every session is replayed under every grid point and
the aggregate per setting is printed (:mod:`inspector.cli.corpus_sweep`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ..cache.sweep import OBJECTIVES, billed_metrics, billed_of, rank
from ..policies import trigger_threshold
from ..replay import (
    COMPARED,
    ReplaySettings,
    SweepCell,
    agent_config,
    compare_agents,
    parse_grid,
    replay,
    sweep,
)
from ..retention import SWEEP_KEYS as RETENTION_KEYS
from ..retention import retention
from ..session.tree import Session
from ..visible import visible
from .base import EXIT_USAGE, Command, fail, load_or_exit, print_json
from .corpus_sweep import is_corpus
from .corpus_sweep import run as run_corpus
from .options import add_cache, add_engine, add_json, add_replay, replay_settings
from .replay import assumed_window_over, recorded_window_note

METRICS = ["total_input_tokens", "peak_context", "compactions", "tokens_pruned", "rereads", "overflows"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_replay(p, corpus=True)
    p.add_argument(
        "--grid",
        action="append",
        metavar="KEY=START:STOP:STEP",
        help="a setting and its values, e.g. prune_protect=10000:80000:10000 (repeatable)",
    )
    p.add_argument(
        "--agents",
        nargs="?",
        const="all",
        metavar="A,B,…",
        help="instead of a grid: replay as each agent runs it (its compaction and pruning): "
        f"{', '.join(COMPARED)} (default: all)",
    )
    add_cache(p)
    p.add_argument(
        "--objective",
        choices=list(OBJECTIVES),
        default=None,
        help="rank the cells by billed cost (prompt cache priced), blended cost, input tokens, or the "
        "items compactions forgot (retention scored per cell; fewest first) (default: billed with "
        "--cache model, else blended)",
    )
    add_json(p, csv="setting of a corpus sweep")
    add_engine(p)
    p.add_argument(
        "--out",
        metavar="FILE.duckdb",
        help="corpus: keep rows in this DuckDB file; a sweep run again resumes (pairs done are skipped)",
    )


def _ranked(
    args: argparse.Namespace, session: Session, cells: list[SweepCell], rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Rows with the cache model's billed cost (``--cache model``) and what the compactions forgot
    (``--objective forgotten``), ranked by the objective, the frontier flagged."""
    objective = _objective(args)
    if objective == "billed" and args.cache != "model":
        fail("--objective billed needs --cache model", EXIT_USAGE)
    if args.cache == "model" or objective == "forgotten":
        for c, r in zip(cells, rows, strict=True):
            replayed = replay(session, c.settings)  # once per cell for both (a sweep keeps only metrics)
            if args.cache == "model":
                r.update(billed_of(replayed, args.cache_retention))
            if objective == "forgotten":
                r.update(retention(replayed).totals())
    return rank(rows, objective)


def _objective(args: argparse.Namespace) -> str:
    return str(args.objective or ("billed" if args.cache == "model" else "blended"))


def run(args: argparse.Namespace) -> int:
    if args.objective is not None and (is_corpus(args) or args.agents):
        fail("--objective ranks one session's grid; a corpus sweep and --agents print every row", EXIT_USAGE)
    if is_corpus(args):
        return run_corpus(args)
    if args.csv:
        fail("--csv is for a corpus sweep; use --json for one session", EXIT_USAGE)
    args.session = args.session[0]
    session = load_or_exit(args.session)
    base = replay_settings(args, session)
    if args.agents:
        return run_agents(args, session, base)
    grid: dict[str, Sequence[Any]] = dict(_grid_row(g) for g in args.grid or [])
    if not grid:
        fail("give at least one --grid KEY=START:STOP:STEP, or --agents", EXIT_USAGE)
    try:
        cells = sweep(session, base, grid)
    except (ValueError, TypeError) as e:
        fail(str(e), EXIT_USAGE)
    rows = _ranked(args, session, cells, [{**c.values, **c.metrics.model_dump(mode="json")} for c in cells])
    if args.json:
        print_json({"settings": base.model_dump(mode="json"), "grid": grid, "cells": rows}, indent=1)
        return 0
    cols = [*grid, *_metrics(args)]
    print("  ".join(f"{c:>18}" for c in cols))
    for r in rows:
        print("  ".join(_cell(r.get(c)) for c in cols))
    over = assumed_window_over(session, base) if "context_window" not in grid else ""
    if over:  # the table's overflows and compactions are against a window the session proves too small
        print(f"note: window {base.context_window:,} assumed; {over}", file=sys.stderr)
    return 0


def _metrics(args: argparse.Namespace) -> list[str]:
    return [
        *METRICS,
        "cost_usd",
        *(["billedCostUsd", "cacheHitRate", "invalidations", "frontier"] if args.cache == "model" else []),
        *(RETENTION_KEYS if _objective(args) == "forgotten" else []),
    ]


def _cell(v: Any, width: int = 18) -> str:
    if isinstance(v, bool) or v is None:
        return f"{'yes' if v else '':>{width}}" if isinstance(v, bool) else f"{'—':>{width}}"
    if isinstance(v, int):
        return f"{v:>{width},}"
    if isinstance(v, float):
        return f"{v:>{width},.4f}"
    return f"{v!s:>{width}}"


def _grid_row(spec: str) -> tuple[str, list[Any]]:
    try:
        return parse_grid(spec)
    except ValueError as e:
        fail(str(e), EXIT_USAGE)


def run_agents(args: argparse.Namespace, session: Session, base: ReplaySettings) -> int:
    names = [n.strip() for n in args.agents.split(",") if n.strip()] if args.agents != "all" else None
    try:
        cells = compare_agents(session, base, names)
    except ValueError as e:
        fail(str(e), EXIT_USAGE)
    rows = [
        {
            "agent": c.values["agent"],
            "title": agent_config(c.values["agent"])[0],
            "compaction": c.settings.compaction,
            "strategy": c.settings.strategy,
            **c.metrics.model_dump(mode="json"),
        }
        for c in cells
    ]
    if args.cache == "model":
        for c, r in zip(cells, rows, strict=True):
            r.update(billed_metrics(session, c.settings, args.cache_retention))
    if args.json:
        print_json({"settings": base.model_dump(mode="json"), "agents": rows}, indent=1)
        return 0
    print(
        f"{visible(session.source, inline=True)}: each agent's compaction and pruning, window {base.context_window:,}"
        f"{recorded_window_note(session, base)}, counter {base.counter}"
    )
    cols = [c for c in _metrics(args) if c not in ("frontier", *RETENTION_KEYS)]  # a grid's, not the agents
    print(f"{'agent':<24}" + "".join(f"{c:>20}" for c in cols))
    for r in rows:
        print(f"{r['title']:<24}" + "".join(_cell(r.get(c), 20) for c in cols))
    _print_eager_triggers(cells, base)
    return 0


def _print_eager_triggers(cells: list[SweepCell], base: ReplaySettings) -> None:
    """A note for each agent whose trigger is at or below zero with this window: it compacts before every call."""
    for c in cells:
        t = trigger_threshold(c.settings.compaction, base.context_window, base.policy, base.reserve_tokens)
        if t is not None and t <= 0:
            print(
                f"note: {agent_config(c.values['agent'])[0]} compacts at {t:,} tokens with this window: before "
                "every call (give a larger --window)"
            )


COMMAND = Command("sweep", "replay a grid of settings and compare the metrics", add_arguments, run)
