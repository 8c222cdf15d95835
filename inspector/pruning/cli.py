"""``inspector prune``: what a pruning strategy does to the context of one model call."""

from __future__ import annotations

import argparse
from typing import Any

from ..cli import load_or_exit, print_json
from ..visible import visible
from . import REGISTRY, get_strategy, parse_settings, prune_at


def cmd_prune(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session)
    strat = get_strategy(args.strategy)
    values: dict[str, str] = {}
    for kv in args.set or []:
        if "=" not in kv:
            raise SystemExit(f"inspector: --set {kv!r}: expected KEY=VALUE")
        k, _, v = kv.partition("=")
        values[k.strip()] = v.strip()
    try:
        settings = parse_settings(strat, values)
        res = prune_at(session, args.strategy, settings, leaf=args.leaf or "leaf", at_step=args.at_step,
                       counter=args.counter, context_window=args.window)
    except (KeyError, ValueError) as e:
        raise SystemExit(f"inspector: {e.args[0]}") from None
    st = res.stats
    if args.json:
        print_json({
            "strategy": strat.name,
            "settings": settings.model_dump(mode="json"),
            "stats": {"tokensBefore": st.tokens_before, "tokensAfter": st.tokens_after,
                      "prunedTokens": st.tokens_before - st.tokens_after, "prunedItems": st.items_pruned + st.items_dropped},
            "items": [{"entryIndex": d.entry_index, "role": d.role, "toolName": d.tool_name, "action": d.action,
                       "tokensBefore": d.tokens_before, "tokensAfter": d.tokens_after, "marker": d.marker,
                       "reason": d.reason} for d in res.decisions],
            "events": list(res.events),
        }, indent=1)
        return 0
    note = "" if strat.verified else f"  (UNVERIFIED: {strat.unverified_notes})"
    print(f"{strat.title} — {strat.source}{note}")
    print(f"  tokens before {st.tokens_before:,}  after {st.tokens_after:,}  pruned {st.tokens_before - st.tokens_after:,} "
          f"in {st.items_pruned} item(s), dropped {st.items_dropped}  ({args.counter} counter)")
    for ev in res.events:
        if ev.get("type") != "zone":
            print(f"  event: {ev}")
    changed = [d for d in res.decisions if d.action != "kept"]
    print(f"  {'entry':>6} {'role':<12} {'tool':<10} {'action':<8} {'before':>8} {'after':>7}  why")
    for d in changed[: args.limit]:
        tool = visible(d.tool_name or "", inline=True)
        print(f"  {d.entry_index if d.entry_index is not None else '-':>6} {visible(d.role, inline=True):<12} {tool:<10} "
              f"{d.action:<8} {d.tokens_before:>8,} {d.tokens_after:>7,}  {d.reason}")
    if len(changed) > args.limit:
        print(f"  … and {len(changed) - args.limit} more (use --json for all)")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("prune", help="what a pruning strategy does to the context of one model call")
    p.add_argument("session")
    p.add_argument("--strategy", required=True, choices=list(REGISTRY))
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="a strategy setting (repeatable)")
    p.add_argument("--leaf", help="entry id or @INDEX (default: pi's leaf)")
    p.add_argument("--at-step", type=int, help="the N-th model call on the branch (0-based; default: the next call)")
    p.add_argument("--counter", choices=["pi", "tiktoken"], default="pi")
    p.add_argument("--window", type=int, default=200000, help="context window (for pressure-based strategies)")
    p.add_argument("--limit", type=int, default=40, help="rows shown in the table")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_prune)
