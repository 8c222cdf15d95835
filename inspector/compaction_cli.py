"""``inspector compact``: where pi's cut would land now, and why, in plain words."""

from __future__ import annotations

import argparse
from typing import Any

from .cli import load_or_exit, print_json
from .compaction import CompactionSettings
from .explain import explain_compaction
from .visible import visible


def cmd_compact(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session)
    settings = CompactionSettings(keepRecentTokens=args.keep_recent_tokens, reserveTokens=args.reserve)
    try:
        plan = explain_compaction(session, args.leaf or "leaf", settings, args.pi_version)
    except KeyError as e:
        raise SystemExit(f"inspector: {e.args[0]}") from None
    if plan is None:
        msg = "pi would not compact here: the branch is empty, ends in a compaction, or the cut entry has no id"
        if args.json:
            print_json({"compactable": False, "reason": msg}, indent=2)
        else:
            print(msg)
        return 0
    if args.json:
        print_json({"compactable": True, **plan.model_dump(mode="json")}, indent=2)
        return 0
    print(f"pi {plan.piVersion} compaction at entry {plan.leafIndex} "
          f"(keepRecentTokens {plan.keepRecentTokens:,}, reserveTokens {plan.reserveTokens:,})")
    for i, s in enumerate(plan.steps, 1):
        print(f"  {i}. {visible(s, inline=True)}")
    print(f"  first kept entry: {plan.firstKeptEntryIndex} ({visible(plan.firstKeptEntryId, inline=True)})"
          + (f", split turn from entry {plan.turnStartEntryIndex}" if plan.isSplitTurn else ""))
    print(f"  tokens before: {plan.tokensBefore:,.0f} (pi's tokensBefore); kept after: {plan.tokensAfter:,} + the summary")
    if plan.readFiles:
        print("  read files:     " + ", ".join(visible(f, inline=True) for f in plan.readFiles))
    if plan.modifiedFiles:
        print("  modified files: " + ", ".join(visible(f, inline=True) for f in plan.modifiedFiles))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("compact", help="where pi's compaction would cut now, and why")
    p.add_argument("session")
    p.add_argument("--keep-recent-tokens", type=int, default=20000)
    p.add_argument("--reserve", type=int, default=16384)
    p.add_argument("--leaf", help="entry id or @INDEX (default: pi's leaf)")
    p.add_argument("--pi-version", choices=["0.73", "0.58"], default="0.73")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_compact)
