"""``inspector replay`` and ``inspector sweep``."""

from __future__ import annotations

import argparse
import csv
import sys
from typing import Any

from .cli import load_or_exit, print_json
from .policies import POLICIES, trigger_threshold
from .replay import AGENT_CONFIGS, ReplaySettings, compare_agents, parse_grid, replay, sweep
from .visible import visible


def _parse_set(values: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values or []:
        if "=" not in v:
            raise SystemExit(f"inspector: --set {v!r}: expected KEY=VALUE")
        k, _, val = v.partition("=")
        out[k.strip()] = val.strip()
    return out


def settings_from_args(args: argparse.Namespace, session: Any) -> ReplaySettings:
    strategy_settings: dict[str, Any] = {}
    sets = _parse_set(args.set)
    if sets:
        if args.strategy in ("none", ""):
            raise SystemExit("inspector: --set needs a --strategy")
        from .pruning import get_strategy, parse_settings

        try:
            strategy_settings = parse_settings(get_strategy(args.strategy), sets).model_dump()
        except (KeyError, ValueError) as e:
            raise SystemExit(f"inspector: {e}") from None
    leaf = None
    if args.leaf:
        try:
            leaf = session.resolve(args.leaf)
        except KeyError as e:
            raise SystemExit(f"inspector: {e.args[0]}") from None
    from .summarize.llm import operator_key

    return ReplaySettings(
        summarizer_api_key=operator_key(args.summarizer, args.base_url),
        summarizer_redact=not args.send_secrets,
        compaction=args.compaction,
        strategy=args.strategy,
        strategy_settings=tuple(sorted(strategy_settings.items())),
        context_window=args.window,
        reserve_tokens=args.reserve,
        keep_recent_tokens=args.keep_recent_tokens,
        counter=args.counter,
        summarizer=args.summarizer,
        summarizer_model=args.model,
        summarizer_base_url=args.base_url,
        pi_version=args.pi_version,
        leaf=leaf,
    )


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("session")
    p.add_argument("--strategy", default="none", help="pruning strategy (see `inspector prune --help`)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="a pruning setting (repeatable)")
    p.add_argument("--compaction", default="recorded", choices=list(POLICIES), help="compaction policy (default: as recorded)")
    p.add_argument("--window", type=int, default=200000, help="context window (default 200000)")
    p.add_argument("--reserve", type=int, default=16384, help="pi reserveTokens (default 16384)")
    p.add_argument("--keep-recent-tokens", type=int, default=20000, help="pi keepRecentTokens (default 20000)")
    p.add_argument("--counter", default="pi", choices=["pi", "tiktoken", "calibrated", "usage"],
                   help="pi estimate, tiktoken, calibrated (tiktoken × the session's own fitted ratio + per-message "
                        "cost, fitted to its recorded usage), or usage (pi's usage-based context size)")
    p.add_argument("--summarizer", default="offline", help="summarizer for simulated compactions (default offline)")
    p.add_argument("--model", help="LLM summarizer: the model to ask")
    p.add_argument("--base-url", help="OpenAI-compatible summarizer: the endpoint (e.g. http://127.0.0.1:11434/v1)")
    p.add_argument("--send-secrets", action="store_true",
                   help="LLM summarizer: send the session's text without redacting secrets (redacted by default)")
    p.add_argument("--pi-version", default="0.73", choices=["0.73", "0.58"])
    p.add_argument("--leaf", help="replay the branch ending at this entry (id or @INDEX)")


def cmd_replay(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session)
    settings = settings_from_args(args, session)
    r = replay(session, settings)
    if args.json:
        print_json(r.as_dict(), indent=1)
        return 0
    if args.csv:
        w = csv.writer(sys.stdout)
        w.writerow(["step", "entryIndex", "stopReason", "contextTokens", "tokensBeforePruning", "recordedTokens",
                    "messages", "prunedItems", "prunedTokens", "events"])
        for s in r.steps:
            w.writerow([s.step, s.entry_index, s.stop_reason, s.tokens, s.tokens_before_pruning, s.recorded_input,
                        s.messages, s.pruned_items, s.pruned_tokens, ";".join(e["type"] for e in s.events)])
        return 0
    m = r.metrics
    pol = POLICIES[settings.compaction]
    print(f"replay of {visible(session.source, inline=True)}: {m.steps} model calls, compaction: {pol.title}, pruning: {settings.strategy}, "
          f"window {settings.context_window:,}, counter {settings.counter}")
    print(f"  total input tokens   {m.total_input_tokens:>14,}" + (
        f"   (recorded: {m.recorded_total_input:,})" if m.recorded_total_input else ""))
    print(f"  cost (input, USD)    {m.cost_usd:>14,.4f}" + (
        f"   (recorded total incl. output: {m.recorded_cost_usd:,.4f})" if m.recorded_cost_usd else ""))
    print(f"  peak / mean context  {m.peak_context:>14,} / {m.mean_context:,.0f}")
    print(f"  compactions          {m.compactions:>14}   summary tokens {m.summary_tokens:,}")
    print(f"  tokens pruned        {m.tokens_pruned:>14,}")
    print(f"  overflows            {m.overflows:>14}")
    print(f"  re-reads after prune {m.rereads:>14}")
    shown = 0
    for s in r.steps:
        for ev in s.events:
            if ev["type"] in ("compaction", "overflow", "branch_summary", "compaction_skipped") and shown < 40:
                detail = visible(ev.get("reason") or "", inline=True)
                print(f"  step {s.step:>5} (entry {s.entry_index}): {ev['type']} {detail}".rstrip())
                shown += 1
    return 0


def _agents(args: argparse.Namespace, session: Any, base: ReplaySettings) -> int:
    names = [n.strip() for n in args.agents.split(",") if n.strip()] if args.agents != "all" else None
    try:
        cells = compare_agents(session, base, names)
    except ValueError as e:
        print(f"inspector: {e}", file=sys.stderr)
        return 2
    rows = [{"agent": c.values["agent"], "title": AGENT_CONFIGS[c.values["agent"]][0],
             "compaction": c.settings.compaction, "strategy": c.settings.strategy,
             **c.metrics.model_dump(mode="json")} for c in cells]
    if args.json:
        print_json({"settings": base.model_dump(mode="json"), "agents": rows}, indent=1)
        return 0
    print(f"{visible(session.source, inline=True)}: each agent's compaction and pruning, window {base.context_window:,}, "
          f"counter {base.counter}")
    cols = ["total_input_tokens", "peak_context", "compactions", "tokens_pruned", "rereads", "overflows"]
    print(f"{'agent':<24}" + "".join(f"{c:>20}" for c in cols))
    for r in rows:
        print(f"{r['title']:<24}" + "".join(f"{r[c]:>20,}" for c in cols))
    for c in cells:
        t = trigger_threshold(c.settings.compaction, base.context_window, base.policy, base.reserve_tokens)
        if t is not None and t <= 0:
            print(f"note: {AGENT_CONFIGS[c.values['agent']][0]} compacts at {t:,} tokens with this window: before "
                  "every call (give a larger --window)")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session)
    base = settings_from_args(args, session)
    if args.agents:
        return _agents(args, session, base)
    grid: dict[str, list[Any]] = {}
    for g in args.grid or []:
        try:
            k, vals = parse_grid(g)
        except ValueError as e:
            print(f"inspector: {e}", file=sys.stderr)
            return 2
        grid[k] = vals
    if not grid:
        print("inspector: give at least one --grid KEY=START:STOP:STEP, or --agents", file=sys.stderr)
        return 2
    try:
        cells = sweep(session, base, grid)
    except (ValueError, TypeError) as e:
        print(f"inspector: {e}", file=sys.stderr)
        return 2
    rows = [{**c.values, **c.metrics.model_dump(mode="json")} for c in cells]
    if args.json:
        print_json({"settings": base.model_dump(mode="json"), "grid": grid, "cells": rows}, indent=1)
        return 0
    keys = list(grid)
    cols = [*keys, "total_input_tokens", "peak_context", "compactions", "tokens_pruned", "rereads", "overflows"]
    print("  ".join(f"{c:>18}" for c in cols))
    for r in rows:
        print("  ".join(f"{r[c]:>18,}" if isinstance(r[c], int) else f"{r[c]!s:>18}" for c in cols))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("replay", help="replay pruning and compaction one model call at a time")
    _add_common(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true")
    g.add_argument("--csv", action="store_true")
    p.set_defaults(func=cmd_replay)

    s = sub.add_parser("sweep", help="replay a grid of settings and compare the metrics")
    _add_common(s)
    s.add_argument("--grid", action="append", metavar="KEY=START:STOP:STEP",
                   help="a setting and its values, e.g. prune_protect=10000:80000:10000 (repeatable)")
    s.add_argument("--agents", nargs="?", const="all", metavar="A,B,…",
                   help="instead of a grid: replay as each agent runs it (its compaction and pruning): "
                        f"{', '.join(AGENT_CONFIGS)} (default: all)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_sweep)
