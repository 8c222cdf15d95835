"""``inspector prune``: what a pruning strategy does to the context of one model call."""

from __future__ import annotations

import argparse
from typing import Any

from pydantic import BaseModel

from ..pruning import PruneResult, Strategy, get_strategy
from ..replay import prune_at
from ..visible import visible
from ..window import session_window
from .base import EXIT_USAGE, Command, checked_leaf, error_text, fail, load_or_exit, print_json
from .options import (
    add_counter,
    add_json,
    add_leaf,
    add_session,
    add_strategy,
    add_window,
    key_values,
    limit,
    strategy_settings,
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_session(p)
    add_strategy(p, required=True)
    add_leaf(p, "prune the context at this entry")
    p.add_argument(
        "--at-step", type=int, help="the N-th model call on the branch (0-based; default: the next call)"
    )
    add_counter(p, usage=False)
    add_window(p, " (for pressure-based strategies)")
    p.add_argument("--limit", type=limit, default=40, help="rows shown in the table")
    add_json(p)


def run(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session)
    strat = get_strategy(args.strategy)
    settings = strategy_settings(args.strategy, key_values(args.set))
    try:
        res = prune_at(
            session,
            args.strategy,
            settings,
            leaf=checked_leaf(session, args),
            at_step=args.at_step,
            counter=args.counter,
            context_window=session_window(session, args.window),
        )
    except (KeyError, ValueError) as e:
        fail(error_text(e), EXIT_USAGE)
    if args.json:
        print_json(as_json(strat, settings, res), indent=1)
    else:
        print_table(strat, res, args.counter, args.limit)
    return 0


def as_json(strat: Strategy, settings: BaseModel, res: PruneResult) -> dict[str, Any]:
    st = res.stats
    return {
        "strategy": strat.name,
        "settings": settings.model_dump(mode="json"),
        "stats": {
            "tokensBefore": st.tokens_before,
            "tokensAfter": st.tokens_after,
            "prunedTokens": st.tokens_before - st.tokens_after,
            "prunedItems": st.items_pruned + st.items_dropped,
        },
        "items": [
            {
                "entryIndex": d.entry_index,
                "role": d.role,
                "toolName": d.tool_name,
                "action": d.action,
                "tokensBefore": d.tokens_before,
                "tokensAfter": d.tokens_after,
                "marker": d.marker,
                "reason": d.reason,
            }
            for d in res.decisions
        ],
        "events": list(res.events),
    }


def print_table(strat: Strategy, res: PruneResult, counter: str, limit: int) -> None:
    st = res.stats
    note = "" if strat.verified else f"  (UNVERIFIED: {strat.unverified_notes})"
    print(f"{strat.title} — {strat.source}{note}")
    print(
        f"  tokens before {st.tokens_before:,}  after {st.tokens_after:,}  pruned {st.tokens_before - st.tokens_after:,} "
        f"in {st.items_pruned} item(s), dropped {st.items_dropped}  ({counter} counter)"
    )
    for ev in res.events:
        if ev.get("type") != "zone":
            print(f"  event: {ev}")
    changed = [d for d in res.decisions if d.action != "kept"]
    print(f"  {'entry':>6} {'role':<12} {'tool':<10} {'action':<8} {'before':>8} {'after':>7}  why")
    for d in changed[:limit]:
        tool = visible(d.tool_name or "", inline=True)
        print(
            f"  {d.entry_index if d.entry_index is not None else '-':>6} {visible(d.role, inline=True):<12} {tool:<10} "
            f"{d.action:<8} {d.tokens_before:>8,} {d.tokens_after:>7,}  {d.reason}"
        )
    if len(changed) > limit:
        print(f"  … and {len(changed) - limit} more (use --json for all)")


COMMAND = Command(
    "prune", "what a pruning strategy does to the context of one model call", add_arguments, run
)
