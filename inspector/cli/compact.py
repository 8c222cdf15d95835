"""``inspector compact``: where pi's cut would land now, and why, in plain words."""

from __future__ import annotations

import argparse

from ..compaction import CompactionSettings
from ..explain import CompactionPlan, explain_compaction
from ..visible import visible
from .base import Command, checked_leaf, load_or_exit, print_json
from .options import add_budgets, add_json, add_leaf, add_pi_version, add_session

NOT_HERE = "pi would not compact here: the branch is empty, ends in a compaction, or the cut entry has no id"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_session(p)
    add_budgets(p)
    add_leaf(p, "compact the branch ending at this entry")
    add_pi_version(p)
    add_json(p)


def run(args: argparse.Namespace) -> int:
    session = load_or_exit(args.session)
    settings = CompactionSettings(keepRecentTokens=args.keep_recent_tokens, reserveTokens=args.reserve)
    plan = explain_compaction(session, checked_leaf(session, args), settings, args.pi_version)
    if plan is None:
        if args.json:
            print_json({"compactable": False, "reason": NOT_HERE}, indent=2)
        else:
            print(NOT_HERE)
    elif args.json:
        print_json({"compactable": True, **plan.model_dump(mode="json")}, indent=2)
    else:
        print_plan(plan)
    return 0


def print_plan(plan: CompactionPlan) -> None:
    print(
        f"pi {plan.piVersion} compaction at entry {plan.leafIndex} "
        f"(keepRecentTokens {plan.keepRecentTokens:,}, reserveTokens {plan.reserveTokens:,})"
    )
    for i, s in enumerate(plan.steps, 1):
        print(f"  {i}. {visible(s, inline=True)}")
    print(
        f"  first kept entry: {plan.firstKeptEntryIndex} ({visible(plan.firstKeptEntryId, inline=True)})"
        + (f", split turn from entry {plan.turnStartEntryIndex}" if plan.isSplitTurn else "")
    )
    print(
        f"  tokens before: {plan.tokensBefore:,.0f} (pi's tokensBefore); kept after: {plan.tokensAfter:,} + the summary"
    )
    if plan.readFiles:
        print("  read files:     " + ", ".join(visible(f, inline=True) for f in plan.readFiles))
    if plan.modifiedFiles:
        print("  modified files: " + ", ".join(visible(f, inline=True) for f in plan.modifiedFiles))


COMMAND = Command("compact", "where pi's compaction would cut now, and why", add_arguments, run)
